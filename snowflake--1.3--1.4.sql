/* snowflake--1.3--1.4.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.4'" to load this file. \quit

-- snowflake_status (issue 24): ticks_burnt, the ticks that claims took and
-- did not issue; coarse_margin_ms, how far the coarse clock is trusted to
-- lag the clock; coarse_clock_misses, the claims that the exact clock caught
-- it lagging more.  A view's columns and a function's result cannot change
-- in place: both are made again, as 1.1 made them, with the new columns
-- last.
DROP VIEW snowflake_status;
DROP FUNCTION snowflake_status();

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
	OUT time_runs_out timestamptz,
	OUT ticks_burnt bigint,
	OUT coarse_margin_ms bigint,
	OUT coarse_clock_misses bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_status'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- Any role reads it; no role changes it (a view over a function is not
-- updatable, and only SELECT is granted).
CREATE VIEW snowflake_status AS SELECT * FROM snowflake_status();
REVOKE ALL ON snowflake_status FROM PUBLIC;
GRANT SELECT ON snowflake_status TO PUBLIC;
