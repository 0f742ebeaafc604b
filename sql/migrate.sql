--
-- Moving tables keyed by bigserial, serial or an identity column over to
-- snowflake IDs: the recipe of docs/functions.md ("Moving a serial or
-- identity table to snowflake IDs"), step by step.  Old rows keep their
-- ids, new rows get larger snowflake IDs, foreign keys keep working, an
-- integer key and the columns that reference it are widened to bigint.
-- The check that comes first stops the switch, which then changes nothing,
-- when a table holds an id that the snowflake IDs of now do not lie above.
-- t/022_migrate_dump.pl dumps and restores the converted tables.
--
CREATE EXTENSION snowflake;
\set SHOW_CONTEXT never

-- the tables (pg_regress runs psql in the top directory)
\i test/migrate_tables.sql

-- a customer whose id reaches into the snowflake range: the check refuses
-- it, every later step of the transaction fails, and COMMIT rolls back
INSERT INTO customers (id, name) VALUES (9000000000000000000, 'from elsewhere');
\i test/migrate_switch.sql
SELECT c.relname, pg_get_expr(d.adbin, d.adrelid) AS default_still
FROM pg_attrdef d JOIN pg_class c ON c.oid = d.adrelid
WHERE c.relname IN ('customers', 'invoices')
ORDER BY 1;
SELECT count(*) AS sequences_kept FROM pg_class WHERE relkind = 'S';
DELETE FROM customers WHERE id = 9000000000000000000;

-- the switch, on the tables as they were made
\i test/migrate_switch.sql

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

DROP TABLE invoice_lines, invoices, customers;
DROP EXTENSION snowflake;
