--
-- The recipe of docs/functions.md for moving tables keyed by bigserial,
-- serial and an identity column to snowflake IDs, on three such tables with
-- a few rows.  Run by sql/migrate.sql, which checks the result, and by
-- t/022_migrate_dump.pl, which dumps and restores it.
--
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
