/* snowflake--1.2--1.3.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.3'" to load this file. \quit

-- 1.3: tables partitioned by range of id.

-- The bounds on id that snowflake_between(id, "from", "to") is planned as:
-- id >= snowflake_between_min_id("from", "to") AND
-- id <= snowflake_between_max_id("from", "to"), which partition pruning, an
-- index on id and the planner's range estimates understand.  Each checks
-- both bounds, as snowflake_between does: NULL if either is NULL, an error
-- (22008) if either is a time no ID can carry; so the two comparisons
-- answer what the call answers.  STABLE: the configured epoch and layout
-- may change at a restart.
CREATE FUNCTION snowflake_between_min_id("from" timestamptz, "to" timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_between_min_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_between_max_id("from" timestamptz, "to" timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_between_max_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

-- The partitions of whole steps from "from" that cover the time up to "to",
-- one row each: where each starts and ends, and the smallest ID of each,
-- under the configured epoch and layout, for
--   CREATE TABLE ... PARTITION OF ... FOR VALUES FROM (from_id) TO (to_id)
-- The partitions meet: each ends where the next starts, and the last ends
-- at or after "to".  Steps in days and months follow TimeZone, as
-- timestamptz + interval does.  Errors: a step that is not positive or is
-- shorter than a millisecond, or "from" not before "to" (22023); a time no
-- ID can carry (22008); more than 10000 partitions (54000).  STABLE: it
-- depends on the configured epoch and layout and on TimeZone.
CREATE FUNCTION snowflake_partition_bounds("from" timestamptz, "to" timestamptz,
	step interval DEFAULT interval '1 day')
RETURNS TABLE (starts timestamptz, ends timestamptz, from_id bigint, to_id bigint)
AS 'MODULE_PATHNAME', 'snowflake_partition_bounds'
LANGUAGE C STABLE STRICT PARALLEL SAFE ROWS 100;
