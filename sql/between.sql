--
-- snowflake_between through an index gives the function's own answer: its
-- planner support function puts id >= snowflake_between_min_id(from, to)
-- AND id <= snowflake_between_max_id(from, to) in its place, which an index
-- answers, and each of which checks both bounds, so NULL bounds, NOT and
-- errors are the function's.  Where the call stays (a volatile or subquery
-- argument), it derives index conditions and rechecks.
--
CREATE EXTENSION snowflake;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';
\getenv abs_srcdir PG_ABS_SRCDIR
\set sqlstate_of :abs_srcdir '/test/sqlstate_of.sql'
\i :sqlstate_of
CREATE TABLE ids (id bigint PRIMARY KEY);
INSERT INTO ids
	SELECT snowflake_compose(ts, 1, 2, 0)
	FROM generate_series(timestamptz '2026-11-01+00', '2026-11-30+00', interval '1 hour') ts;
ANALYZE ids;
-- bounds read from a table, so that nothing is folded at plan time
CREATE TABLE bounds (name text PRIMARY KEY, lo timestamptz, hi timestamptz);
INSERT INTO bounds VALUES
	('day', '2026-11-10+00', '2026-11-10 23:59:59.999+00'),
	('null lo', NULL, '2026-11-10+00'),
	('null hi', '2026-11-10+00', NULL),
	('infinity lo', 'infinity', '2026-11-10+00'),
	('infinity hi', '2026-11-10+00', 'infinity'),
	('infinity hi, lo past all ids', '2027-01-01+00', 'infinity'),
	('-infinity lo', '-infinity', '2026-11-10+00');
ANALYZE bounds;
SET enable_seqscan = off;
-- the index answers the two comparisons the call is planned as
EXPLAIN (COSTS OFF)
SELECT * FROM ids
WHERE snowflake_between(id, '2026-11-10+00', '2026-11-10 23:59:59.999+00');
EXPLAIN (COSTS OFF)
SELECT count(*) FROM ids, bounds
WHERE bounds.name = 'day' AND snowflake_between(ids.id, bounds.lo, bounds.hi);
SET enable_indexscan = off;
EXPLAIN (COSTS OFF)
SELECT * FROM ids
WHERE snowflake_between(id, '2026-11-10+00', '2026-11-10 23:59:59.999+00');
RESET enable_indexscan;
SELECT count(*) AS day_rows FROM ids
WHERE snowflake_between(id, '2026-11-10+00', '2026-11-10 23:59:59.999+00');
SELECT count(*) AS day_rows FROM ids, bounds
WHERE bounds.name = 'day' AND snowflake_between(ids.id, bounds.lo, bounds.hi);
-- a NULL bound: the call is NULL, and so is NOT of it, for every row
SELECT b.name,
	(SELECT count(*) FROM ids WHERE snowflake_between(ids.id, b.lo, b.hi)) AS in_range,
	(SELECT count(*) FROM ids WHERE NOT snowflake_between(ids.id, b.lo, b.hi)) AS not_in_range
FROM bounds b WHERE b.name LIKE 'null%' ORDER BY b.name;
SELECT count(*) AS null_lo FROM ids WHERE snowflake_between(id, NULL, '2026-11-10+00');
SELECT count(*) AS not_null_lo FROM ids WHERE NOT snowflake_between(id, NULL, '2026-11-10+00');
SELECT count(*) AS not_null_hi FROM ids WHERE NOT snowflake_between(id, '2026-11-10+00', NULL);
-- an infinite bound is the function's error, whichever plan runs, and even
-- where the other bound alone shows that no ID is in range
SELECT b.name, pg_temp.sqlstate_of(format(
	'SELECT count(*) FROM ids, bounds WHERE bounds.name = %L AND snowflake_between(ids.id, bounds.lo, bounds.hi)',
	b.name)) AS through_index,
	pg_temp.sqlstate_of(format(
	'SELECT count(*) FROM ids, bounds WHERE bounds.name = %L AND NOT snowflake_between(ids.id, bounds.lo, bounds.hi)',
	b.name)) AS negated,
	pg_temp.sqlstate_of(format(
	'SELECT snowflake_between(1, lo, hi) FROM bounds WHERE name = %L', b.name)) AS function_itself
FROM bounds b WHERE b.name LIKE '%infinity%' ORDER BY b.name;
SELECT pg_temp.sqlstate_of($$SELECT count(*) FROM ids WHERE snowflake_between(id, '2026-11-10+00', 'infinity')$$) AS constant_hi,
	pg_temp.sqlstate_of($$SELECT count(*) FROM ids WHERE snowflake_between(id, 'infinity', '2026-11-10+00')$$) AS constant_lo,
	pg_temp.sqlstate_of($$WITH b AS MATERIALIZED (SELECT timestamptz 'infinity' AS hi)
		SELECT count(*) FROM ids, b WHERE snowflake_between(ids.id, '2026-11-10+00', b.hi)$$) AS cte_hi;
RESET enable_seqscan;
-- the same answers without the index
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS day_rows FROM ids, bounds
WHERE bounds.name = 'day' AND snowflake_between(ids.id, bounds.lo, bounds.hi);
SELECT b.name,
	(SELECT count(*) FROM ids WHERE snowflake_between(ids.id, b.lo, b.hi)) AS in_range,
	(SELECT count(*) FROM ids WHERE NOT snowflake_between(ids.id, b.lo, b.hi)) AS not_in_range
FROM bounds b WHERE b.name LIKE 'null%' ORDER BY b.name;
SELECT b.name, pg_temp.sqlstate_of(format(
	'SELECT count(*) FROM ids, bounds WHERE bounds.name = %L AND snowflake_between(ids.id, bounds.lo, bounds.hi)',
	b.name)) AS seqscan
FROM bounds b WHERE b.name LIKE '%infinity%' ORDER BY b.name;
RESET enable_indexscan;
RESET enable_bitmapscan;
-- the comparisons check both bounds: either NULL makes each of them NULL,
-- either infinite makes each an error
SELECT b.name,
	snowflake_between_min_id(b.lo, b.hi) AS min_id,
	snowflake_between_max_id(b.lo, b.hi) AS max_id
FROM bounds b WHERE b.name = 'day' OR b.name LIKE 'null%' ORDER BY b.name;
SELECT b.name,
	pg_temp.sqlstate_of(format(
	'SELECT snowflake_between_min_id(lo, hi) FROM bounds WHERE name = %L', b.name)) AS min_id,
	pg_temp.sqlstate_of(format(
	'SELECT snowflake_between_max_id(lo, hi) FROM bounds WHERE name = %L', b.name)) AS max_id
FROM bounds b WHERE b.name LIKE '%infinity%' ORDER BY b.name;
-- a NULL id: NULL with valid bounds; with a bound no ID can carry, the
-- comparisons' error, where the call alone would be NULL
CREATE TABLE maybe_ids (id bigint);
INSERT INTO maybe_ids VALUES (NULL), (snowflake_compose('2026-11-10 12:00+00', 1, 2, 0));
SELECT count(*) FILTER (WHERE snowflake_between(m.id, b.lo, b.hi)) AS in_range,
	count(*) FILTER (WHERE snowflake_between(m.id, b.lo, b.hi) IS NULL) AS null_rows
FROM maybe_ids m, bounds b WHERE b.name = 'day';
SELECT pg_temp.sqlstate_of($$SELECT count(*) FROM maybe_ids m, bounds b
	WHERE m.id IS NULL AND b.name = 'infinity hi' AND snowflake_between(m.id, b.lo, b.hi) IS NULL$$)
	AS null_id_infinite_bound;
DROP TABLE maybe_ids;
-- a volatile argument keeps the call: the two comparisons would evaluate it
-- twice
EXPLAIN (COSTS OFF)
SELECT * FROM ids
WHERE snowflake_between(id, clock_timestamp() - interval '1 hour', clock_timestamp());
-- so does a subquery (which they would run twice); an index still answers
-- the call, through the index conditions it derives, and the answers are the
-- call's
SET enable_seqscan = off;
SELECT count(*) AS subquery_day_rows FROM ids
WHERE snowflake_between(id, (SELECT lo FROM bounds WHERE name = 'day'),
						(SELECT hi FROM bounds WHERE name = 'day'));
SELECT count(*) AS subquery_null_rows FROM ids
WHERE NOT snowflake_between(id, (SELECT lo FROM bounds WHERE name = 'null lo'),
							(SELECT hi FROM bounds WHERE name = 'null lo'));
RESET enable_seqscan;
DROP TABLE ids, bounds;
DROP EXTENSION snowflake;
