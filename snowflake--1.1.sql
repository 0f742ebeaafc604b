/* snowflake--1.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION snowflake" to load this file. \quit

-- A new ID. VOLATILE: every call differs. PARALLEL RESTRICTED: it records
-- the session's last ID, which a parallel worker could not pass back.
CREATE FUNCTION snowflake_next_id()
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_next_id'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

-- The ID this session's last snowflake_next_id() returned, like lastval().
-- VOLATILE: it changes within a statement. PARALLEL RESTRICTED: session state.
CREATE FUNCTION snowflake_last_id()
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_last_id'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

-- An ID decoded with the configured epoch and layout. STABLE, not IMMUTABLE:
-- they are settings, fixed while the server runs but free to change at a restart,
-- so an index on this would not stay valid. STRICT: NULL in, NULL out.
CREATE FUNCTION snowflake_parse(id bigint,
	OUT ts timestamptz,
	OUT datacenter_id integer,
	OUT worker_id integer,
	OUT sequence integer)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_parse'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

-- An ID of Twitter's layout from any system, decoded with that system's epoch.
-- IMMUTABLE: the result depends on the arguments alone.
CREATE FUNCTION snowflake_parse(id bigint, epoch timestamptz,
	OUT ts timestamptz,
	OUT datacenter_id integer,
	OUT worker_id integer,
	OUT sequence integer)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_parse_with_epoch'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

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
