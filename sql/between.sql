--
-- snowflake_between through an index gives the function's own answer: its
-- planner support function derives index conditions on id from it, and the
-- call stays as a filter, so NULL bounds, NOT and errors are the function's.
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
-- the index answers the call, which stays as a filter
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
DROP TABLE ids, bounds;
DROP EXTENSION snowflake;
