-- bench/run.sh, bulk: snowflake_next_id(), streamed through count()
SELECT count(snowflake_next_id()) FROM (SELECT generate_series(1, :n)) g;
