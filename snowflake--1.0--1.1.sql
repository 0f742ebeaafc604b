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
