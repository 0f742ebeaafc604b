--
-- The switch of the recipe of docs/functions.md ("Moving a serial or
-- identity table to snowflake IDs"), in one transaction, on the tables of
-- test/migrate_tables.sql.  Word for word the second block of the recipe
-- (t/026_docs_examples.pl checks it); sql/migrate.sql runs it on tables
-- whose check fails, then on the tables as they were made.
--
BEGIN;
LOCK TABLE customers, invoices, invoice_lines IN ACCESS EXCLUSIVE MODE;

-- 1. every old id lies below the snowflake IDs of now, in each table
DO $$
DECLARE
    t regclass;
    largest bigint;
BEGIN
    FOREACH t IN ARRAY ARRAY['customers', 'invoices', 'invoice_lines']::regclass[] LOOP
        EXECUTE format('SELECT max(id) FROM %s', t) INTO largest;
        IF largest >= snowflake_min_id(clock_timestamp()) THEN
            RAISE EXCEPTION '% holds id %, not below the snowflake IDs of now', t, largest;
        END IF;
    END LOOP;
END
$$;

-- 2. bigserial: a new default, then the sequence goes
ALTER TABLE customers ALTER COLUMN id SET DEFAULT snowflake_next_id();
DROP SEQUENCE customers_id_seq;

-- 3. serial (integer): a snowflake ID does not fit in integer, so the key
--    AND every column that references it become bigint (the table is
--    rewritten, under the lock)
ALTER TABLE invoices ALTER COLUMN id TYPE bigint,
    ALTER COLUMN id SET DEFAULT snowflake_next_id();
ALTER TABLE invoice_lines ALTER COLUMN invoice_id TYPE bigint;
DROP SEQUENCE invoices_id_seq;

-- 4. identity: dropping the identity drops its sequence
ALTER TABLE invoice_lines ALTER COLUMN id DROP IDENTITY,
    ALTER COLUMN id TYPE bigint,               -- if it was integer
    ALTER COLUMN id SET DEFAULT snowflake_next_id();
COMMIT;
