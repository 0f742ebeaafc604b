-- bench/run.sh, bulk: uuidv7(), PostgreSQL 18's built-in time-ordered UUID
-- (run on 18 and later only), streamed through count()
SELECT count(uuidv7()) FROM (SELECT generate_series(1, :n)) g;
