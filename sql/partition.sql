--
-- Tables partitioned by time through their IDs, as docs/partitioning.md
-- shows: PARTITION BY RANGE (id) with a partition a day, bounded by
-- snowflake_min_id of each midnight, from snowflake_partition_bounds.  Rows
-- land in the partition of their day, to the last ID of its last
-- millisecond; snowflake_between(id, ...) and id >= snowflake_min_id(...)
-- skip the other partitions, with constant bounds and with the parameters
-- of a generic plan ("Subplans Removed", when the executor starts, since
-- both are STABLE); and snowflake_partition_bounds itself, with its errors.
-- IDs are composed for given times, so that every answer is fixed.
--
CREATE EXTENSION snowflake;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';
SET IntervalStyle = 'postgres';
\getenv abs_srcdir PG_ABS_SRCDIR
\set sqlstate_of :abs_srcdir '/test/sqlstate_of.sql'
\i :sqlstate_of

-- the bounds of a partition a day, in the configured epoch and layout
SELECT * FROM snowflake_partition_bounds('2026-11-01', '2026-11-04');
SELECT bool_and(from_id = snowflake_min_id(starts) AND to_id = snowflake_min_id(ends))
	AS bounds_are_min_ids,
	bool_and(to_id - 1 = snowflake_max_id(ends - interval '1 ms')) AS last_id_fits
FROM snowflake_partition_bounds('2026-11-01', '2026-11-04');
-- whole steps: the last partition ends at or after "to"
SELECT starts, ends FROM snowflake_partition_bounds('2026-11-01', '2026-11-03 06:00', '1 day');
-- a step of months counts from "from" (January 31, then February 28, then
-- March 31), and the partitions meet
SELECT starts, ends FROM snowflake_partition_bounds('2026-01-31', '2026-05-01', '1 month');
-- days follow TimeZone: in Berlin, October 25 has 25 hours
SET TimeZone = 'Europe/Berlin';
SELECT starts, ends, ends - starts AS length
FROM snowflake_partition_bounds('2026-10-24', '2026-10-27');
SET TimeZone = 'UTC';
-- hours, and the most partitions it makes
SELECT count(*) AS hours, min(starts), max(ends)
FROM snowflake_partition_bounds('2026-11-01', '2026-11-02', '1 hour');
SELECT count(*) AS partitions
FROM snowflake_partition_bounds('2026-01-01', '2026-01-01'::timestamptz + 10000 * interval '1 hour', '1 hour');
-- NULL in, no rows out
SELECT count(*) AS null_rows FROM snowflake_partition_bounds(NULL, '2026-11-04');
SELECT count(*) AS null_rows FROM snowflake_partition_bounds('2026-11-01', '2026-11-04', NULL);
-- errors: a step that is not positive, shorter than a millisecond, or
-- infinite; an empty range; a time no ID can carry; too many partitions
SELECT pg_temp.sqlstate_of($$SELECT * FROM snowflake_partition_bounds('2026-11-01', '2026-11-04', '0')$$) AS zero_step,
	pg_temp.sqlstate_of($$SELECT * FROM snowflake_partition_bounds('2026-11-01', '2026-11-04', '-1 day')$$) AS negative_step,
	pg_temp.sqlstate_of($$SELECT * FROM snowflake_partition_bounds('2026-11-01', '2026-11-04', '1 mon -29 days')$$) AS negative_part,
	pg_temp.sqlstate_of($$SELECT * FROM snowflake_partition_bounds('2026-11-01', '2026-11-04', '0.5 ms')$$) AS below_1_ms;
SELECT pg_temp.sqlstate_of($$SELECT * FROM snowflake_partition_bounds('2026-11-04', '2026-11-04')$$) AS empty_range,
	pg_temp.sqlstate_of($$SELECT * FROM snowflake_partition_bounds('2026-11-04', '2026-11-01')$$) AS backwards,
	pg_temp.sqlstate_of($$SELECT * FROM snowflake_partition_bounds('2000-01-01', '2026-11-04')$$) AS before_epoch,
	pg_temp.sqlstate_of($$SELECT * FROM snowflake_partition_bounds('2026-11-01', 'infinity')$$) AS infinite_to,
	pg_temp.sqlstate_of($$SELECT * FROM snowflake_partition_bounds('2080-07-01', '2080-07-10', '1 month')$$) AS past_the_time_bits,
	pg_temp.sqlstate_of($$SELECT * FROM snowflake_partition_bounds('2026-01-01', '2027-12-31', '1 hour')$$) AS too_many;
SELECT * FROM snowflake_partition_bounds('2026-11-04', '2026-11-01');
SELECT * FROM snowflake_partition_bounds('2026-11-01', '2026-11-04', '1 mon -29 days');
SELECT * FROM snowflake_partition_bounds('2026-11-01', '2026-11-04', '0.5 ms');
SELECT * FROM snowflake_partition_bounds('2026-01-01', '2027-12-31', '1 hour');

-- the recipe: a table partitioned by range of id, a partition a day
CREATE TABLE events (
	id bigint PRIMARY KEY DEFAULT snowflake_next_id(),
	payload text NOT NULL
) PARTITION BY RANGE (id);
SELECT format('CREATE TABLE %I PARTITION OF events FOR VALUES FROM (%s) TO (%s)',
			  'events_' || to_char(starts, 'YYYYMMDD'), from_id, to_id)
FROM snowflake_partition_bounds('2026-11-01', '2026-11-04', '1 day') \gexec
SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bound
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'events'::regclass ORDER BY c.relname;

-- rows land in the partition of their day: the first and the last ID of
-- each day (the first millisecond, node 0, sequence 0; the last
-- millisecond, the largest node and sequence), and one an hour
INSERT INTO events (id, payload)
SELECT snowflake_min_id(day), 'first of the day'
FROM generate_series(timestamptz '2026-11-01', '2026-11-03', '1 day') day
UNION ALL
SELECT snowflake_max_id(day + interval '1 day' - interval '1 ms'), 'last of the day'
FROM generate_series(timestamptz '2026-11-01', '2026-11-03', '1 day') day
UNION ALL
SELECT snowflake_compose(ts, 3, 7, 42), 'hourly'
FROM generate_series(timestamptz '2026-11-01 00:30', '2026-11-03 23:30', '1 hour') ts;
ANALYZE events;
SELECT tableoid::regclass AS partition, count(*) AS rows,
	min(snowflake_timestamp(id)) AS first, max(snowflake_timestamp(id)) AS last,
	bool_and(tableoid::regclass::text = 'events_' || to_char(snowflake_timestamp(id), 'YYYYMMDD'))
		AS every_row_in_its_day
FROM events GROUP BY 1 ORDER BY 1;
-- the next millisecond has no partition yet
SELECT pg_temp.sqlstate_of($$INSERT INTO events VALUES (snowflake_min_id('2026-11-04'), 'too late')$$)
	AS no_partition;

-- pruning: the seq scans keep the plans the same on every major
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
-- constant bounds: the bounds are STABLE, so the partitions are skipped when
-- the executor starts
EXPLAIN (COSTS OFF)
SELECT * FROM events WHERE snowflake_between(id, '2026-11-02', '2026-11-02 23:59:59.999');
SELECT count(*) AS day_rows
FROM events WHERE snowflake_between(id, '2026-11-02', '2026-11-02 23:59:59.999');
EXPLAIN (COSTS OFF)
SELECT * FROM events WHERE id >= snowflake_min_id('2026-11-03');
SELECT count(*) AS from_day_rows FROM events WHERE id >= snowflake_min_id('2026-11-03');
EXPLAIN (COSTS OFF)
SELECT * FROM events WHERE snowflake_between(id, '2026-11-01 12:00', '2026-11-02 12:00');
SELECT count(*) AS two_day_rows
FROM events WHERE snowflake_between(id, '2026-11-01 12:00', '2026-11-02 12:00');
-- a generic plan: the parameters are known when the executor starts
SET plan_cache_mode = force_generic_plan;
PREPARE day_events(timestamptz, timestamptz) AS
	SELECT * FROM events WHERE snowflake_between(id, $1, $2) ORDER BY id;
EXPLAIN (COSTS OFF) EXECUTE day_events('2026-11-02', '2026-11-02 23:59:59.999');
EXECUTE day_events('2026-11-03 23:30', '2026-11-03 23:59:59.999');
PREPARE since(timestamptz) AS
	SELECT count(*) FROM events WHERE id >= snowflake_min_id($1);
EXPLAIN (COSTS OFF) EXECUTE since('2026-11-03');
EXECUTE since('2026-11-03');
-- NULL and NOT give what the call gives, with every partition skipped for
-- a NULL bound
EXPLAIN (COSTS OFF) EXECUTE day_events(NULL, '2026-11-02');
EXECUTE day_events(NULL, '2026-11-02');
PREPARE not_day(timestamptz, timestamptz) AS
	SELECT count(*) FROM events WHERE NOT snowflake_between(id, $1, $2);
EXECUTE not_day(NULL, '2026-11-02');
EXECUTE not_day('2026-11-02', '2026-11-02 23:59:59.999');
SELECT pg_temp.sqlstate_of($$EXECUTE day_events('2026-11-02', 'infinity')$$) AS infinite_bound;
DEALLOCATE ALL;
RESET plan_cache_mode;
-- a condition on the ID's time rather than on the ID skips nothing
EXPLAIN (COSTS OFF)
SELECT * FROM events WHERE snowflake_timestamp(id) >= '2026-11-03';
RESET enable_indexscan;
RESET enable_indexonlyscan;
RESET enable_bitmapscan;

-- new IDs land in the partition of their day (yesterday to tomorrow, in
-- a table of their own, whatever today is), made by a DO block as a job
-- that runs every day would make them
CREATE TABLE new_events (LIKE events INCLUDING DEFAULTS) PARTITION BY RANGE (id);
DO $$
DECLARE
	b record;
BEGIN
	FOR b IN SELECT * FROM snowflake_partition_bounds(date_trunc('day', now()) - interval '1 day',
													   date_trunc('day', now()) + interval '2 days')
	LOOP
		EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF new_events FOR VALUES FROM (%s) TO (%s)',
					   'new_events_' || to_char(b.starts, 'YYYYMMDD'), b.from_id, b.to_id);
	END LOOP;
END
$$;
SELECT count(*) AS partitions FROM pg_inherits WHERE inhparent = 'new_events'::regclass;
INSERT INTO new_events (payload) VALUES ('new'), ('newer')
RETURNING tableoid::regclass::text = 'new_events_' || to_char(snowflake_timestamp(id), 'YYYYMMDD')
	AS in_its_day;
DROP TABLE new_events;
DROP TABLE events;
DROP EXTENSION snowflake;
