-- bench/run.sh, bulk: the floor, no generator at all, streamed through count()
SELECT count(1) FROM (SELECT generate_series(1, :n)) g;
