--
-- quickstart.sql: the quick start's demo, which scripts/quickstart.sh runs
-- with psql in its server's "postgres" database, as root, once the server
-- is up.  Safe to run again: each run adds one order.
--
-- The tables are those of the README's "Getting started", word for word
-- (t/026_docs_examples.pl checks it, and runs the README and every page of
-- docs/ in a database this file has set up), so that a newcomer can paste
-- the README's examples here.
--
SET TimeZone = 'UTC';
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;

\echo '--- the settings of snowflake (\\dconfig snowflake.*)'
\dconfig snowflake.*

\echo '--- tables orders and order_items, both with id bigint PRIMARY KEY DEFAULT snowflake_next_id()'
CREATE TABLE IF NOT EXISTS orders (
    id bigint PRIMARY KEY DEFAULT snowflake_next_id(),
    customer text NOT NULL
);
CREATE TABLE IF NOT EXISTS order_items (
    id bigint PRIMARY KEY DEFAULT snowflake_next_id(),
    order_id bigint NOT NULL REFERENCES orders (id),
    product text NOT NULL,
    quantity int NOT NULL
);
RESET client_min_messages;

\echo '--- take the order''s id first: SELECT snowflake_next_id() AS order_id \\gset'
SELECT snowflake_next_id() AS order_id \gset
\echo 'order_id =' :order_id

\echo '--- insert the order and its items in one transaction (item ids come from the column default)'
BEGIN;
INSERT INTO orders (id, customer) VALUES (:order_id, 'ACME Corp');
INSERT INTO order_items (order_id, product, quantity) VALUES
	(:order_id, 'anvil', 1),
	(:order_id, 'rocket skates', 2),
	(:order_id, 'giant magnet', 1);
COMMIT;

\echo '--- decode the order id: snowflake_parse(:order_id)'
SELECT * FROM snowflake_parse(:order_id);

\echo '--- join the order with its items and decode the item ids'
SELECT o.id AS order_id, o.customer, i.id AS item_id, i.product, i.quantity,
	   p.ts, p.datacenter_id, p.worker_id, p.sequence
FROM orders o
JOIN order_items i ON i.order_id = o.id
CROSS JOIN LATERAL snowflake_parse(i.id) p
WHERE o.id = :order_id
ORDER BY i.id;

\echo '--- IDs only grow, and orders sort by creation time by their id alone'
SELECT count(*) AS orders_so_far, min(id) AS first_order_id, max(id) AS last_order_id
FROM orders;

\echo '--- for JavaScript, IDs go as text: above 2^53 a JSON number loses digits there'
SELECT snowflake_json(:order_id);
