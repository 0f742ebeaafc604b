--
-- The SQL toolbox of 1.1: blocks of IDs, an ID's time, the IDs of a time,
-- snowflake_between through an index, compose as the inverse of parse,
-- format, JSON, serials and the status view, with every error path and
-- NULL.  The test server runs with snowflake.datacenter_id = 17,
-- worker_id = 9 and the default epoch, 2010-11-04 01:42:54.657 UTC.
--
CREATE EXTENSION snowflake;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

--
-- snowflake_next_ids(n)
--

-- n increasing IDs of this node, and the session's last ID is the block's last
CREATE TEMP TABLE block AS
	SELECT id, n FROM snowflake_next_ids(1000) WITH ORDINALITY AS b(id, n);
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
	bool_and((snowflake_parse(id)).datacenter_id = 17
		AND (snowflake_parse(id)).worker_id = 9) AS all_this_node
FROM block;
SELECT count(*) AS out_of_order
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM block) b
WHERE id <= prev;
SELECT max(id) = snowflake_last_id() AS last_id_is_block_end FROM block;
SELECT snowflake_next_id() > (SELECT max(id) FROM block) AS later_is_greater;

-- one ID, the largest block the default max_lead of 0 allows (one
-- millisecond's sequence), and blocks one after the other
SELECT count(*) FROM snowflake_next_ids(1);
SELECT count(*), count(DISTINCT id) FROM snowflake_next_ids(4096) id;
SELECT count(*) AS out_of_order
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev
	  FROM generate_series(1, 20) g,
		   LATERAL snowflake_next_ids(500 + 0 * g) WITH ORDINALITY AS b(id, i),
		   LATERAL (SELECT g * 1000 + i AS n) o) b
WHERE id <= prev;

-- an array where one is wanted, and INSERT ... SELECT for a master and its
-- details
SELECT cardinality(ARRAY(SELECT snowflake_next_ids(3))) AS array_length;
CREATE TABLE orders (id bigint PRIMARY KEY, customer text);
CREATE TABLE order_items (id bigint PRIMARY KEY,
	order_id bigint REFERENCES orders (id), product text);
WITH ids AS (SELECT id, n FROM snowflake_next_ids(4) WITH ORDINALITY AS b(id, n)),
	master AS (INSERT INTO orders
			   SELECT id, 'block' FROM ids WHERE n = 1 RETURNING id)
INSERT INTO order_items
	SELECT ids.id, master.id, 'item ' || (ids.n - 1)
	FROM ids, master WHERE ids.n > 1;
SELECT o.customer, i.product, i.id > o.id AS item_after_order
FROM orders o JOIN order_items i ON i.order_id = o.id ORDER BY i.id;
DROP TABLE order_items, orders;

-- a larger max_lead lets a block span milliseconds ahead of the clock
SET snowflake.max_lead = 10;
SELECT count(*), count(DISTINCT id) FROM snowflake_next_ids(40000) id;
SELECT snowflake_next_ids(45057);
RESET snowflake.max_lead;
-- that block ran ahead of the clock: let the clock pass it, or the next
-- call, back at a max_lead of 0, would wait for it (clock_behind_waits, in
-- the status view below, counts such calls: with none, it stays 0)
DO $$
BEGIN
	WHILE clock_timestamp() <= snowflake_timestamp(snowflake_last_id()) LOOP
		PERFORM pg_sleep(0.001);
	END LOOP;
END
$$;

-- a block of 0, a count a caller computed, is empty: it issues no ID and
-- leaves the session's last ID as it was
SELECT snowflake_last_id() AS last_before \gset
SELECT ids_issued AS issued_before FROM snowflake_status \gset
SELECT count(*) AS zero_gives_no_rows FROM snowflake_next_ids(0);
SELECT cardinality(ARRAY(SELECT snowflake_next_ids(0))) AS empty_array;
SELECT snowflake_last_id() = :last_before AS last_id_unchanged,
	(SELECT ids_issued FROM snowflake_status) = :issued_before AS none_issued;

-- errors: a negative n, above the cap, more than max_lead allows,
-- read-only (for 0 too, as an INSERT of no rows is refused there), and NULL
-- in gives no rows
SELECT snowflake_next_ids(-1);
SELECT snowflake_next_ids(-5);
SELECT snowflake_next_ids(1000001);
SELECT snowflake_next_ids(4097);
BEGIN READ ONLY;
SELECT snowflake_next_ids(1);
ROLLBACK;
BEGIN READ ONLY;
SELECT snowflake_next_ids(0);
ROLLBACK;
SELECT count(*) AS null_gives_no_rows FROM snowflake_next_ids(NULL);

--
-- snowflake_timestamp
--
SELECT snowflake_timestamp(0) AS epoch, snowflake_timestamp(1::bigint << 22) AS one_ms;
SELECT snowflake_timestamp(175928847299117063, '2015-01-01+00') AS discord;
SELECT snowflake_timestamp(id) = (snowflake_parse(id)).ts AS same_as_parse
FROM (SELECT snowflake_next_id() AS id) g;
SELECT abs(extract(epoch FROM snowflake_timestamp(snowflake_next_id()) - clock_timestamp())) < 5
	AS time_is_now;
SELECT snowflake_timestamp(-1);
SELECT snowflake_timestamp(1, 'infinity');
SELECT snowflake_timestamp(9223372036854775807, '294270-01-01+00');
SELECT snowflake_timestamp(NULL) IS NULL AS null1,
	snowflake_timestamp(NULL, now()) IS NULL AS null2,
	snowflake_timestamp(1, NULL) IS NULL AS null3;

--
-- snowflake_min_id and snowflake_max_id
--
SELECT snowflake_min_id('2010-11-04 01:42:54.657+00') AS min_at_epoch,
	snowflake_max_id('2010-11-04 01:42:54.657+00') AS max_at_epoch;
-- fractions of a millisecond belong to their millisecond
SELECT snowflake_min_id('2020-01-01 00:00:00.0009+00') = snowflake_min_id('2020-01-01 00:00:00+00')
	AS same_ms,
	snowflake_max_id('2020-01-01 00:00:00+00') + 1 = snowflake_min_id('2020-01-01 00:00:00.001+00')
	AS next_ms_follows;
SELECT snowflake_min_id('2016-04-30 11:18:25.796+00', '2015-01-01+00') AS discord_min,
	snowflake_max_id('2016-04-30 11:18:25.796+00', '2015-01-01+00') AS discord_max;
-- the whole last millisecond of the time bits, and the parts of each bound
SELECT snowflake_max_id('2080-07-10 17:30:30.208+00') AS largest_id;
SELECT p.* FROM snowflake_parse(snowflake_min_id('2020-01-01+00')) p
UNION ALL
SELECT p.* FROM snowflake_parse(snowflake_max_id('2020-01-01+00')) p;
-- every ID of a millisecond lies within its bounds
SELECT bool_and(id BETWEEN snowflake_min_id(snowflake_timestamp(id))
	AND snowflake_max_id(snowflake_timestamp(id))) AS within_bounds
FROM snowflake_next_ids(100) id;
-- errors: before the epoch, past the time bits, infinities, a bad epoch
SELECT snowflake_min_id('2010-11-04 01:42:54.656+00');
SELECT snowflake_max_id('2080-07-10 17:30:30.209+00');
SELECT snowflake_min_id('infinity');
SELECT snowflake_max_id('-infinity');
SELECT snowflake_min_id(now(), 'infinity');
SELECT snowflake_max_id(now(), '-infinity');
SELECT snowflake_min_id(NULL) IS NULL AS null1, snowflake_max_id(NULL) IS NULL AS null2,
	snowflake_min_id(now(), NULL) IS NULL AS null3,
	snowflake_max_id(NULL, now()) IS NULL AS null4;

--
-- time ranges through the primary key
--
CREATE TABLE events (id bigint PRIMARY KEY, payload text);
INSERT INTO events
	SELECT snowflake_compose(ts, 1, 2, 0), 'event'
	FROM generate_series(now() - interval '3 days', now(), interval '1 minute') ts;
ANALYZE events;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF)
SELECT * FROM events WHERE id >= snowflake_min_id(now() - interval '1 hour');
-- snowflake_between is planned as two comparisons on id, which the index
-- answers (sql/between.sql has more)
EXPLAIN (COSTS OFF)
SELECT * FROM events WHERE snowflake_between(id, now() - interval '2 hours', now() - interval '1 hour');
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT count(*) AS last_hour
FROM events WHERE id >= snowflake_min_id(now() - interval '1 hour');
SELECT count(*) AS between_rows,
	count(*) FILTER (WHERE snowflake_timestamp(id) >= date_trunc('milliseconds', now() - interval '2 hours')
		AND snowflake_timestamp(id) <= now() - interval '1 hour') AS by_timestamp
FROM events WHERE snowflake_between(id, now() - interval '2 hours', now() - interval '1 hour');
-- the function itself, outside a WHERE clause, gives the same answer
SELECT snowflake_between(id, ts, ts) AS same_ms,
	snowflake_between(id, ts + interval '1 ms', ts + interval '1 hour') AS later,
	snowflake_between(id, ts - interval '1 hour', ts - interval '1 ms') AS earlier
FROM (SELECT snowflake_next_id() AS id) g, LATERAL snowflake_timestamp(g.id) ts;
-- an ID argument that is volatile is evaluated once
EXPLAIN (COSTS OFF)
SELECT snowflake_between(snowflake_next_id(), now() - interval '1 hour', now());
SELECT snowflake_between(snowflake_next_id(), now() - interval '1 hour', now() + interval '1 hour')
	AS volatile_id_in_range;
SELECT snowflake_between(1, '2010-01-01+00', now());
SELECT snowflake_between(NULL, now(), now()) IS NULL AS null1,
	snowflake_between(1, NULL, now()) IS NULL AS null2,
	snowflake_between(1, now(), NULL) IS NULL AS null3;
DROP TABLE events;
-- the bounds make partition bounds
CREATE TABLE events (id bigint PRIMARY KEY, payload text) PARTITION BY RANGE (id);
CREATE TABLE events_2027 PARTITION OF events
	FOR VALUES FROM (snowflake_min_id('2027-01-01+00')) TO (snowflake_min_id('2028-01-01+00'));
INSERT INTO events VALUES (snowflake_compose('2027-06-01+00', 1, 1, 1), 'in 2027');
INSERT INTO events VALUES (snowflake_compose('2028-01-01+00', 0, 0, 0), 'in 2028');
SELECT tableoid::regclass, snowflake_format(id), payload FROM events;
DROP TABLE events;

--
-- snowflake_compose, the inverse of snowflake_parse
--
SELECT snowflake_compose('2010-11-04 01:42:54.657+00', 0, 0, 0) AS zero,
	snowflake_compose('2010-11-04 01:42:55.657+00', 3, 7, 42) AS hand_made;
SELECT snowflake_compose('2016-04-30 11:18:25.796+00', 0, 1, 7, '2015-01-01+00') AS discord;
SELECT snowflake_compose('2080-07-10 17:30:30.208+00', 31, 31, 4095) AS largest_id;
-- fractions of a millisecond are dropped
SELECT snowflake_compose('2020-01-01 00:00:00.0009+00', 1, 1, 1)
	= snowflake_compose('2020-01-01 00:00:00+00', 1, 1, 1) AS fraction_dropped;

-- property: compose(parse(x)) = x for thousands of random valid IDs, with
-- the configured epoch and with another, and for the edges
SELECT setseed(0.42);
CREATE TEMP TABLE random_ids AS
	SELECT floor(random() * 9223372036854775807::numeric)::bigint AS id
	FROM generate_series(1, 5000);
INSERT INTO random_ids VALUES (0), (1), (4095), (4096), (131071), (131072),
	(4194303), (4194304), (8388607), (9223372036854775807),
	(9223372036854775807 - 4095), ((1::bigint << 62)), ((1::bigint << 62) - 1);
SELECT count(*) AS ids,
	count(*) FILTER (WHERE snowflake_compose(p.ts, p.datacenter_id, p.worker_id, p.sequence) = id)
		AS round_trips
FROM random_ids, snowflake_parse(id) p;
SELECT count(*) AS ids,
	count(*) FILTER (WHERE snowflake_compose(p.ts, p.datacenter_id, p.worker_id, p.sequence,
		'2015-01-01 00:00:00.000999+00') = id) AS round_trips
FROM random_ids, snowflake_parse(id, '2015-01-01 00:00:00.000999+00') p;
-- ... and parse(compose(parts)) = parts
SELECT count(*) AS parts_round_trip
FROM random_ids, snowflake_parse(id) p,
	snowflake_parse(snowflake_compose(p.ts, p.datacenter_id, p.worker_id, p.sequence)) q
WHERE (p.*) = (q.*);

-- each part is checked against its range
SELECT snowflake_compose(now(), 32, 0, 0);
SELECT snowflake_compose(now(), -1, 0, 0);
SELECT snowflake_compose(now(), 0, 32, 0);
SELECT snowflake_compose(now(), 0, -1, 0);
SELECT snowflake_compose(now(), 0, 0, 4096);
SELECT snowflake_compose(now(), 0, 0, -1);
SELECT snowflake_compose('2010-11-04 01:42:54.656+00', 0, 0, 0);
SELECT snowflake_compose('2080-07-10 17:30:30.209+00', 0, 0, 0);
SELECT snowflake_compose('infinity', 0, 0, 0);
SELECT snowflake_compose(now(), 0, 0, 0, 'infinity');
SELECT snowflake_compose('2014-12-31 23:59:59.999+00', 0, 0, 0, '2015-01-01+00');
SELECT snowflake_compose(NULL, 0, 0, 0) IS NULL AS null1,
	snowflake_compose(now(), NULL, 0, 0) IS NULL AS null2,
	snowflake_compose(now(), 0, NULL, 0) IS NULL AS null3,
	snowflake_compose(now(), 0, 0, NULL) IS NULL AS null4,
	snowflake_compose(now(), 0, 0, 0, NULL) IS NULL AS null5;

--
-- snowflake_format and snowflake_json: the same text in any TimeZone and
-- DateStyle
--
SELECT snowflake_format(175928847299117063, '2015-01-01+00');
SELECT snowflake_format(snowflake_compose('2017-09-15 09:35:04.848+00', 2, 5, 0));
SET TimeZone = 'Asia/Kolkata';
SET DateStyle = 'SQL, DMY';
SELECT snowflake_format(snowflake_compose('2017-09-15 09:35:04.848+00', 2, 5, 0));
SELECT snowflake_json(snowflake_compose('2017-09-15 09:35:04.848+00', 2, 5, 0));
RESET TimeZone;
RESET DateStyle;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';
SELECT snowflake_format(0) AS epoch, snowflake_format(9223372036854775807) AS largest;
SELECT snowflake_json(175928847299117063, '2015-01-01+00');
-- the id is a JSON string, exact past 2^53 where a JSON number is not
SELECT jsonb_typeof(j -> 'id') AS id_type, (j ->> 'id')::bigint = 9007199254740993 AS exact,
	(j ->> 'ts')::timestamptz = snowflake_timestamp(9007199254740993) AS ts_parses
FROM snowflake_json(9007199254740993) j;
-- a time before year 1 or after year 9999 has no fixed-width text
SELECT snowflake_format(1, '4714-11-24 00:00:00+00 BC');
SELECT snowflake_format(9223372036854775807, '9999-12-01+00');
SELECT snowflake_json(-1);
SELECT snowflake_format(-1);
SELECT snowflake_format(1, 'infinity');
SELECT snowflake_format(NULL) IS NULL AS null1, snowflake_format(1, NULL) IS NULL AS null2,
	snowflake_json(NULL) IS NULL AS null3, snowflake_json(1, NULL) IS NULL AS null4;

--
-- snowflake_serial
--
SELECT snowflake_serial(snowflake_compose('2017-09-15 09:35:04.848+00', 2, 5, 0), 'INV-');
SELECT snowflake_serial(175928847299117063, 'PAY', '2015-01-01+00');
SELECT snowflake_serial(0, '') AS epoch, snowflake_serial(9223372036854775807, '') AS largest;
-- unique, and in ID order as text, in the default collation and in "C"
SELECT count(DISTINCT snowflake_serial(id, 'ORD-')) AS distinct_serials,
	count(*) AS ids FROM random_ids;
SELECT count(*) AS out_of_order
FROM (SELECT s, lag(s) OVER (ORDER BY id) AS prev
	  FROM (SELECT id, snowflake_serial(id, 'ORD-') AS s FROM random_ids) r) o
WHERE s <= prev;
SELECT count(*) AS out_of_order
FROM (SELECT s, lag(s) OVER (ORDER BY id) AS prev
	  FROM (SELECT id, snowflake_serial(id, 'ORD-') COLLATE "C" AS s FROM random_ids) r) o
WHERE s <= prev;
SELECT snowflake_serial(-1, 'X');
SELECT snowflake_serial(1, 'X', 'infinity');
SELECT snowflake_serial(1, 'X', '4714-11-24 00:00:00+00 BC');
SELECT snowflake_json(9223372036854775807, '9999-12-01+00');
SELECT snowflake_serial(NULL, 'X') IS NULL AS null1, snowflake_serial(1, NULL) IS NULL AS null2,
	snowflake_serial(1, 'X', NULL) IS NULL AS null3;

-- the epoch forms are IMMUTABLE: an index and a generated column can use them
CREATE TABLE invoices (
	id bigint PRIMARY KEY DEFAULT snowflake_next_id(),
	number text GENERATED ALWAYS AS
		(snowflake_serial(id, 'INV-', '2010-11-04 01:42:54.657+00')) STORED
);
CREATE INDEX ON invoices (snowflake_timestamp(id, '2010-11-04 01:42:54.657+00'));
INSERT INTO invoices DEFAULT VALUES;
SELECT number = snowflake_serial(id, 'INV-') AS generated_number FROM invoices;
DROP TABLE invoices;

--
-- the status view
--
SELECT datacenter_id, worker_id, epoch, time_runs_out,
	last_id = snowflake_last_id() AS last_id_is_mine,
	last_id_time = snowflake_timestamp(last_id) AS last_id_time_matches,
	lead_ms >= 0 AS has_lead, ids_issued >= 57000 AS counts_ids,
	ids_ahead_of_clock > 0 AS block_ran_ahead,
	sequence_waits >= 0 AS sequence_waits, clock_behind_waits, clock_errors,
	max_step_back_ms, clock_refusing, replayed_mark_unwritten,
	durable_mark > last_id_time AS mark_above_last_id,
	marks_by_writer + marks_by_backends > 0 AS marks_written,
	last_write_ms >= 0 AND slowest_write_ms >= last_write_ms AS write_times,
	mark_writer_running, mark_invalid
FROM snowflake_status;
-- IDs issued counts every ID, one by one and in blocks
SELECT ids_issued AS before FROM snowflake_status \gset
SELECT count(snowflake_next_id()) FROM generate_series(1, 10);
SELECT count(*) FROM snowflake_next_ids(90);
SELECT ids_issued - :before AS issued FROM snowflake_status;
-- any role reads it; no role changes it
CREATE ROLE snowflake_reader;
SET ROLE snowflake_reader;
SELECT count(*) AS readable FROM snowflake_status;
UPDATE snowflake_status SET clock_errors = 0;
DELETE FROM snowflake_status;
RESET ROLE;
UPDATE snowflake_status SET clock_errors = 0;
INSERT INTO snowflake_status DEFAULT VALUES;
DROP ROLE snowflake_reader;

-- the SQLSTATE of each error above that snowflake raises itself
\getenv abs_srcdir PG_ABS_SRCDIR
\set sqlstate_of :abs_srcdir '/test/sqlstate_of.sql'
\i :sqlstate_of
SELECT query, pg_temp.sqlstate_of(query) AS sqlstate
FROM (VALUES
	('SELECT snowflake_next_ids(-1)'),
	('SELECT snowflake_next_ids(4097)'),
	('SELECT snowflake_timestamp(-1)'),
	('SELECT snowflake_min_id(''infinity'')'),
	('SELECT snowflake_compose(now(), 32, 0, 0)'),
	('SELECT snowflake_format(1, ''infinity'')'),
	('SELECT snowflake_format(1, ''4714-11-24 00:00:00+00 BC'')')
) v(query);

DROP EXTENSION snowflake;
