-- pgbench script for bench/run.sh: one row a transaction, the key from the
-- column default: id uuid PRIMARY KEY DEFAULT gen_random_uuid().
INSERT INTO t_uuid DEFAULT VALUES;
