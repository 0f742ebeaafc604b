-- bench/run.sh, bulk: nextval('bench_seq'), streamed through count()
SELECT count(nextval('bench_seq')) FROM (SELECT generate_series(1, :n)) g;
