-- bench/run.sh, bulk: snowflake_next_ids(1000), blocks of 1000 IDs claimed in
-- one step each, counted per ID
SELECT count(x) FROM (SELECT snowflake_next_ids(1000) x FROM generate_series(1, :n / 1000)) g;
