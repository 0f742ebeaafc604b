-- pgbench script for bench/run.sh, PostgreSQL 18 and later: one row a
-- transaction, the key from the column default: id uuid PRIMARY KEY DEFAULT
-- uuidv7().
INSERT INTO t_uuidv7 DEFAULT VALUES;
