/* snowflake--1.0.sql */

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

-- An ID decoded with the configured epoch. STABLE, not IMMUTABLE: the epoch
-- is a setting, fixed while the server runs but free to change at a restart,
-- so an index on this would not stay valid. STRICT: NULL in, NULL out.
CREATE FUNCTION snowflake_parse(id bigint,
	OUT ts timestamptz,
	OUT datacenter_id integer,
	OUT worker_id integer,
	OUT sequence integer)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_parse'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

-- An ID of this layout from any system, decoded with that system's epoch.
-- IMMUTABLE: the result depends on the arguments alone.
CREATE FUNCTION snowflake_parse(id bigint, epoch timestamptz,
	OUT ts timestamptz,
	OUT datacenter_id integer,
	OUT worker_id integer,
	OUT sequence integer)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_parse_with_epoch'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
