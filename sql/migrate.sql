--
-- Moving tables keyed by bigserial, serial or an identity column over to
-- snowflake IDs: the README's recipe ("Moving a serial or identity table
-- to snowflake IDs"), step by step.  Old rows keep their ids, new rows get
-- larger snowflake IDs, foreign keys keep working, an integer key and the
-- columns that reference it are widened to bigint.  t/021_migrate_dump.pl
-- dumps and restores the converted tables.
--
CREATE EXTENSION snowflake;
\set SHOW_CONTEXT never

-- the tables as an application made them, with a few rows
CREATE TABLE customers (id bigserial PRIMARY KEY, name text NOT NULL);
CREATE TABLE invoices (id serial PRIMARY KEY,
	customer_id bigint NOT NULL REFERENCES customers (id));
CREATE TABLE invoice_lines (
	id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	invoice_id integer NOT NULL REFERENCES invoices (id) ON DELETE CASCADE,
	amount numeric NOT NULL);
INSERT INTO customers (name) SELECT 'customer ' || n FROM generate_series(1, 3) n;
INSERT INTO invoices (customer_id) SELECT id FROM customers;
INSERT INTO invoice_lines (invoice_id, amount) SELECT id, id * 10 FROM invoices;

-- The check that comes first: every old id lies below the IDs generated
-- from now on, so that new rows sort after old ones.
CREATE FUNCTION pg_temp.check_below_snowflake(tbl regclass, col name)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	largest bigint;
BEGIN
	EXECUTE format('SELECT max(%I) FROM %s', col, tbl) INTO largest;
	IF largest >= snowflake_min_id(clock_timestamp()) THEN
		RAISE EXCEPTION '%.% holds ids at or above the snowflake IDs of now', tbl, col;
	END IF;
END
$$;

BEGIN;
LOCK TABLE customers, invoices, invoice_lines IN ACCESS EXCLUSIVE MODE;
SELECT pg_temp.check_below_snowflake('customers', 'id');
SELECT pg_temp.check_below_snowflake('invoices', 'id');
SELECT pg_temp.check_below_snowflake('invoice_lines', 'id');

-- bigserial: a new default, then the sequence goes
ALTER TABLE customers ALTER COLUMN id SET DEFAULT snowflake_next_id();
DROP SEQUENCE customers_id_seq;

-- serial: integer is too small for a snowflake ID, so the key and every
-- column that references it become bigint
ALTER TABLE invoices ALTER COLUMN id TYPE bigint,
	ALTER COLUMN id SET DEFAULT snowflake_next_id();
ALTER TABLE invoice_lines ALTER COLUMN invoice_id TYPE bigint;
DROP SEQUENCE invoices_id_seq;

-- identity: dropping the identity drops its sequence
ALTER TABLE invoice_lines ALTER COLUMN id DROP IDENTITY,
	ALTER COLUMN id TYPE bigint,
	ALTER COLUMN id SET DEFAULT snowflake_next_id();
COMMIT;

-- the keys are bigint with snowflake defaults, and no sequence is left
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) AS type,
	a.attidentity <> '' AS identity, pg_get_expr(d.adbin, d.adrelid) AS default
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE c.relname IN ('customers', 'invoices', 'invoice_lines')
	AND a.attname IN ('id', 'customer_id', 'invoice_id')
ORDER BY 1, 2;
SELECT count(*) AS sequences_left FROM pg_class WHERE relkind = 'S';

-- new rows: snowflake IDs larger than every old id; old rows keep theirs
INSERT INTO customers (name) VALUES ('new customer');
INSERT INTO invoices (customer_id) SELECT id FROM customers WHERE name = 'new customer';
INSERT INTO invoice_lines (invoice_id, amount)
	SELECT id, 99 FROM invoices WHERE id > 3;
SELECT 'customers' AS tbl, count(*) FILTER (WHERE id <= 3) AS old_rows,
	count(*) FILTER (WHERE id > 3) AS new_rows,
	min(id) FILTER (WHERE id > 3) > 3 AND min(id) FILTER (WHERE id > 3) > 1000000 AS new_are_larger
FROM customers
UNION ALL
SELECT 'invoices', count(*) FILTER (WHERE id <= 3), count(*) FILTER (WHERE id > 3),
	min(id) FILTER (WHERE id > 3) > 1000000 FROM invoices
UNION ALL
SELECT 'invoice_lines', count(*) FILTER (WHERE id <= 3), count(*) FILTER (WHERE id > 3),
	min(id) FILTER (WHERE id > 3) > 1000000 FROM invoice_lines
ORDER BY 1;
SELECT (snowflake_parse(id)).datacenter_id, (snowflake_parse(id)).worker_id
FROM customers WHERE id > 3;

-- the foreign keys still hold, for old and new rows
SELECT c.name, count(l.*) AS lines, sum(l.amount) AS total
FROM customers c JOIN invoices i ON i.customer_id = c.id
JOIN invoice_lines l ON l.invoice_id = i.id
GROUP BY c.name ORDER BY c.name;
INSERT INTO invoices (customer_id) VALUES (12345);
INSERT INTO invoice_lines (invoice_id, amount) VALUES (12345, 1);
DELETE FROM invoices WHERE id = 1;
SELECT count(*) AS lines_of_invoice_1 FROM invoice_lines WHERE invoice_id = 1;
-- an identity column that was GENERATED ALWAYS now takes explicit ids too
INSERT INTO invoice_lines (id, invoice_id, amount) VALUES (100, 2, 5);

-- A table whose ids already reach into the snowflake range is refused by
-- the check: its new rows would not sort after the old ones.
CREATE TABLE big (id bigserial PRIMARY KEY);
SELECT setval('big_id_seq', 9000000000000000000);
INSERT INTO big DEFAULT VALUES;
SELECT pg_temp.check_below_snowflake('big', 'id');

DROP TABLE big, invoice_lines, invoices, customers;
DROP EXTENSION snowflake;
