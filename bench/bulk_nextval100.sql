-- bench/run.sh, bulk: nextval('bench_seq100'), streamed through count()
SELECT count(nextval('bench_seq100')) FROM (SELECT generate_series(1, :n)) g;
