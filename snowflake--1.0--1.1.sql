/* snowflake--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.1'" to load this file. \quit

-- An ID of any layout, from any system, decoded with that system's epoch,
-- widths and time unit (10 ms for Sonyflake). IMMUTABLE: the result depends
-- on the arguments alone, so it can be indexed.
CREATE FUNCTION snowflake_parse(id bigint, epoch timestamptz,
	time_bits integer, datacenter_bits integer,
	worker_bits integer, sequence_bits integer,
	time_unit_ms integer DEFAULT 1,
	OUT ts timestamptz,
	OUT datacenter_id integer,
	OUT worker_id integer,
	OUT sequence integer)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_parse_with_layout'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

--
-- The SQL toolbox (1.1): blocks of IDs, an ID's time, the IDs of a time,
-- composing and printing IDs, and the generator's status.
--
-- Labels: the forms that take the epoch as an argument use Twitter's layout,
-- as snowflake_parse(id, epoch) does, depend on their arguments alone and
-- are IMMUTABLE, for indexes and generated columns; the forms that use the
-- configured snowflake.epoch and layout are STABLE, since those may change
-- at a restart.  Every function is STRICT: NULL in, NULL out.
-- The decoders are PARALLEL SAFE; the generator is PARALLEL RESTRICTED, as
-- snowflake_next_id() is, because it records the session's last ID.
--

-- n new IDs in increasing order, claimed with one compare-and-swap.  A set,
-- not an array: INSERT ... SELECT takes it directly, WITH ORDINALITY
-- numbers it, and ARRAY(SELECT ...) makes the array where one is wanted.
CREATE FUNCTION snowflake_next_ids(n integer)
RETURNS SETOF bigint
AS 'MODULE_PATHNAME', 'snowflake_next_ids'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 100;

-- The time an ID carries.
CREATE FUNCTION snowflake_timestamp(id bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'snowflake_timestamp'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_timestamp(id bigint, epoch timestamptz)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'snowflake_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The smallest and the largest ID of a millisecond, on any node.
CREATE FUNCTION snowflake_min_id(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_min_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_min_id(ts timestamptz, epoch timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_min_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_max_id(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_max_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_max_id(ts timestamptz, epoch timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_max_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Is an ID from the millisecond of "from" through the millisecond of "to"?
-- The planner replaces the call with id >= snowflake_min_id(from) AND
-- id <= snowflake_max_id(to), which an index on id answers.
CREATE FUNCTION snowflake_between_support(internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'snowflake_between_support'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_between(id bigint, "from" timestamptz, "to" timestamptz)
RETURNS boolean
AS 'MODULE_PATHNAME', 'snowflake_between'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SUPPORT snowflake_between_support;

-- The ID of these parts, the inverse of snowflake_parse.
CREATE FUNCTION snowflake_compose(ts timestamptz, datacenter_id integer,
	worker_id integer, sequence integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_compose'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_compose(ts timestamptz, datacenter_id integer,
	worker_id integer, sequence integer, epoch timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_compose'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- An ID as a person reads it, in UTC whatever TimeZone and DateStyle are:
-- 2017-09-15T09:35:04.848Z dc=2 worker=5 seq=0
CREATE FUNCTION snowflake_format(id bigint)
RETURNS text
AS 'MODULE_PATHNAME', 'snowflake_format'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_format(id bigint, epoch timestamptz)
RETURNS text
AS 'MODULE_PATHNAME', 'snowflake_format'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- An ID for JSON: the id as a string, safe for JavaScript, and its parts.
CREATE FUNCTION snowflake_json(id bigint)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'snowflake_json'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_json(id bigint, epoch timestamptz)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'snowflake_json'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- A business serial number: prefix, UTC time as yyyyMMddHHmmssSSS, then
-- datacenter, worker and sequence, zero-padded.
CREATE FUNCTION snowflake_serial(id bigint, prefix text)
RETURNS text
AS 'MODULE_PATHNAME', 'snowflake_serial'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_serial(id bigint, prefix text, epoch timestamptz)
RETURNS text
AS 'MODULE_PATHNAME', 'snowflake_serial'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The generator's state and counters.  VOLATILE: they change all the time.
CREATE FUNCTION snowflake_status(
	OUT datacenter_id integer,
	OUT worker_id integer,
	OUT epoch timestamptz,
	OUT last_id bigint,
	OUT last_id_time timestamptz,
	OUT lead_ms bigint,
	OUT ids_issued bigint,
	OUT ids_ahead_of_clock bigint,
	OUT sequence_waits bigint,
	OUT clock_behind_waits bigint,
	OUT clock_errors bigint,
	OUT max_step_back_ms bigint,
	OUT clock_refusing boolean,
	OUT durable_mark timestamptz,
	OUT marks_by_writer bigint,
	OUT marks_by_backends bigint,
	OUT last_write_ms double precision,
	OUT slowest_write_ms double precision,
	OUT mark_writer_running boolean,
	OUT mark_invalid boolean,
	OUT replayed_mark_unwritten boolean,
	OUT time_runs_out timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_status'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- Any role reads it; no role changes it (a view over a function is not
-- updatable, and only SELECT is granted).
CREATE VIEW snowflake_status AS SELECT * FROM snowflake_status();
REVOKE ALL ON snowflake_status FROM PUBLIC;
GRANT SELECT ON snowflake_status TO PUBLIC;

-- end of the SQL toolbox (1.1)
