-- bench/run.sh, bulk: gen_random_uuid(), streamed through count()
SELECT count(gen_random_uuid()) FROM (SELECT generate_series(1, :n)) g;
