--
-- Generation: ordering, the node bits, DEFAULT on a primary key, the
-- master/detail flow and snowflake_last_id().
-- The test server runs with snowflake.datacenter_id = 17, worker_id = 9.
--
CREATE EXTENSION snowflake;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

-- a fresh session has no last ID yet
SELECT snowflake_last_id();

-- every ID carries this server's datacenter and worker, and the current time
SELECT p.datacenter_id, p.worker_id,
	abs(extract(epoch FROM p.ts - clock_timestamp())) < 5 AS time_is_now
FROM (SELECT snowflake_next_id() AS id) g, snowflake_parse(g.id) p;

-- snowflake_last_id() is the ID this session's last call returned
SELECT snowflake_next_id() = snowflake_last_id() AS last_id_matches;
SELECT snowflake_last_id() = snowflake_last_id() AS last_id_is_stable;

-- 100,000 IDs in one statement: distinct, strictly increasing, positive,
-- and never more than 4096 in one millisecond
CREATE TEMP TABLE burst AS
	SELECT n, snowflake_next_id() AS id FROM generate_series(1, 100000) n;
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
	bool_and(id > 0) AS all_positive
FROM burst;
SELECT count(*) AS out_of_order
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM burst) b
WHERE id <= prev;
SELECT max(per_ms) <= 4096 AS at_most_4096_per_ms
FROM (SELECT count(*) AS per_ms FROM burst GROUP BY id >> 22) m;
SELECT max(id) = snowflake_last_id() AS last_id_is_newest FROM burst;

-- later statements get greater IDs
SELECT snowflake_next_id() > (SELECT max(id) FROM burst) AS later_is_greater;

-- DEFAULT snowflake_next_id() on a primary key
CREATE TABLE orders (
	id bigint PRIMARY KEY DEFAULT snowflake_next_id(),
	customer text NOT NULL
);
CREATE TABLE order_items (
	id bigint PRIMARY KEY DEFAULT snowflake_next_id(),
	order_id bigint NOT NULL REFERENCES orders (id),
	product text NOT NULL
);
INSERT INTO orders (customer) SELECT 'customer ' || n FROM generate_series(1, 1000) n;
SELECT count(*) AS orders, count(DISTINCT id) AS distinct_ids FROM orders;

-- master/detail: the master's ID is known before the insert, so the master
-- and its details go in one transaction
BEGIN;
SELECT snowflake_next_id() AS order_id \gset
INSERT INTO orders (id, customer) VALUES (:order_id, 'master/detail');
INSERT INTO order_items (order_id, product)
	VALUES (:order_id, 'apple'), (:order_id, 'pear'), (:order_id, 'plum');
COMMIT;
SELECT o.customer, i.product,
	i.id > o.id AS item_after_order,
	(snowflake_parse(i.id)).worker_id AS item_worker
FROM orders o JOIN order_items i ON i.order_id = o.id
WHERE o.id = :order_id
ORDER BY i.id;

-- IDs are not transactional: a rolled-back ID is never handed out again
BEGIN;
SELECT snowflake_next_id() AS rolled_back \gset
ROLLBACK;
SELECT snowflake_next_id() > :rolled_back AS greater_after_rollback;

-- like nextval(), the generator refuses a read-only transaction: a server
-- fenced by default_transaction_read_only hands out no IDs
BEGIN READ ONLY;
SELECT snowflake_next_id();
ROLLBACK;
SET default_transaction_read_only = on;
SELECT snowflake_next_id();
RESET default_transaction_read_only;
SELECT snowflake_next_id() > :rolled_back AS works_read_write;

-- DISCARD ALL and DISCARD SEQUENCES forget the session's last ID, as they
-- forget lastval(), so that a pooled connection does not show it to the
-- next client
SELECT snowflake_next_id() IS NOT NULL AS have_id;
SELECT snowflake_last_id() IS NOT NULL AS have_last_id;
DISCARD SEQUENCES;
SELECT snowflake_last_id();
SELECT snowflake_next_id() IS NOT NULL AS have_id;
DISCARD ALL;
SELECT snowflake_last_id();
SELECT snowflake_next_id() IS NOT NULL AS have_id;
DISCARD PLANS;
DISCARD TEMP;
SELECT snowflake_last_id() IS NOT NULL AS last_id_kept_by_other_discards;

-- a parallel query may still call it: it runs in the leader
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT count(DISTINCT snowflake_next_id()) AS distinct_ids FROM orders;
RESET ALL;

DROP TABLE order_items, orders;

DROP EXTENSION snowflake;
