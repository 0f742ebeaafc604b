--
-- The tables that the recipe of docs/functions.md ("Moving a serial or
-- identity table to snowflake IDs") moves, with a few rows: one keyed by
-- bigserial, one by serial, one by an identity column.  Word for word the
-- first block of the recipe (t/026_docs_examples.pl checks it); run by
-- sql/migrate.sql and t/022_migrate_dump.pl before test/migrate_switch.sql.
--
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
