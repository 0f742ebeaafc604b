-- pgbench script for bench/run.sh: one row a transaction, the key from the
-- column default: id bigint PRIMARY KEY DEFAULT snowflake_next_id().
INSERT INTO t_snowflake DEFAULT VALUES;
