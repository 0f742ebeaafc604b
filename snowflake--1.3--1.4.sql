/* snowflake--1.3--1.4.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.4'" to load this file. \quit

-- 1.4: the worker id registry leaves this extension.  It is an extension of
-- its own now, snowflake_registry, installed only where a registry runs, in
-- a schema nobody but its owner can write (see docs/fleet.md).  A database
-- that was a 1.3 registry with claims keeps them: CREATE EXTENSION
-- snowflake_registry takes them in, and this update refuses to run before it
-- (it brings the claims up to date one last time, then drops 1.3's registry).
DO $$
BEGIN
	IF EXISTS (SELECT FROM snowflake_claims) THEN
		IF NOT EXISTS (SELECT FROM pg_catalog.pg_extension e
					   WHERE e.extname OPERATOR(pg_catalog.=) 'snowflake_registry') THEN
			RAISE EXCEPTION 'this database is a snowflake registry with claims'
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = 'In 1.4 the registry is the extension snowflake_registry, and updating snowflake drops the registry of 1.3 with its claims.',
					  HINT = 'Run CREATE EXTENSION snowflake_registry first, which takes the claims in; update snowflake here once every server of the fleet runs 1.4 (see "Upgrading a registry from 1.3" in docs/operations.md).';
		END IF;
		PERFORM snowflake_registry.legacy_refresh(NULL);
	END IF;
END
$$;
DROP VIEW snowflake_registry_status;
DROP FUNCTION snowflake_registry_claim(integer, bigint, integer, uuid, text,
	integer, text, interval, interval, integer, integer, integer, bigint,
	timestamptz, boolean);
DROP FUNCTION snowflake_registry_check_in(integer, integer, uuid, interval,
	timestamptz, boolean, interval);
DROP FUNCTION snowflake_registry_idle(integer, integer, uuid, timestamptz);
DROP FUNCTION snowflake_registry_release(integer, integer);
DROP FUNCTION snowflake_registry_reassign(integer, integer, bigint);
DROP FUNCTION snowflake_registry_free_at(snowflake_claims);
DROP FUNCTION snowflake_registry_take(snowflake_claims, bigint, integer, uuid,
	text, integer, text, interval, interval, timestamptz, boolean, timestamptz);
DROP FUNCTION snowflake_registry_contest(snowflake_claims, text, interval,
	timestamptz);
DROP FUNCTION snowflake_registry_floor(snowflake_claims);
DROP FUNCTION snowflake_registry_watched(snowflake_claims, integer, bigint,
	interval, timestamptz);
DROP FUNCTION snowflake_registry_valid_terms(interval, interval, timestamptz);
DROP TYPE snowflake_registry_answer;
DROP TABLE snowflake_claims;


-- snowflake_status (issue 24): ticks_burnt, the ticks that claims took and
-- did not issue; coarse_margin_ms, how far the coarse clock is trusted to
-- lag the clock; coarse_clock_misses, the claims that the exact clock caught
-- it lagging more; coarse_unchecked_ids, the IDs claimed on the coarse
-- clock between the exact clock's checks.  A view's columns and a function's result cannot change
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
	OUT coarse_clock_misses bigint,
	OUT coarse_unchecked_ids bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_status'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- Any role reads it; no role changes it (a view over a function is not
-- updatable, and only SELECT is granted).
CREATE VIEW snowflake_status AS SELECT * FROM snowflake_status();
REVOKE ALL ON snowflake_status FROM PUBLIC;
GRANT SELECT ON snowflake_status TO PUBLIC;

--
-- Descriptions: every function and view of the generator and the toolbox
-- says in one line what it does, so that \df+ and \dv+ explain the API.
-- The words are the first sentence of its row in the reference of
-- docs/functions.md (t/026_docs_examples.pl holds them to it).  The
-- registry's functions, type, view and table get none: they leave the
-- extension in 1.4.
--
COMMENT ON FUNCTION snowflake_next_id() IS
	'A new ID, greater than every ID this server issued before.';
COMMENT ON FUNCTION snowflake_last_id() IS
	'The last ID that this session''s snowflake_next_id() or snowflake_next_ids() returned, like lastval().';
COMMENT ON FUNCTION snowflake_next_ids(integer) IS
	'n new IDs in increasing order, claimed at once.';
COMMENT ON FUNCTION snowflake_parse(bigint) IS
	'The ID decoded with the configured epoch and layout; ts has millisecond precision.';
COMMENT ON FUNCTION snowflake_parse(bigint, timestamptz) IS
	'An ID of Twitter''s layout decoded with the given epoch, for IDs of other systems.';
COMMENT ON FUNCTION snowflake_parse(bigint, timestamptz, integer, integer, integer, integer, integer) IS
	'An ID of any layout decoded with its epoch, widths and time unit.';
COMMENT ON FUNCTION snowflake_timestamp(bigint) IS
	'The ID''s time, to the millisecond.';
COMMENT ON FUNCTION snowflake_timestamp(bigint, timestamptz) IS
	'The ID''s time, to the millisecond.';
COMMENT ON FUNCTION snowflake_min_id(timestamptz) IS
	'The smallest and largest ID of that millisecond, on any node.';
COMMENT ON FUNCTION snowflake_min_id(timestamptz, timestamptz) IS
	'The smallest and largest ID of that millisecond, on any node.';
COMMENT ON FUNCTION snowflake_max_id(timestamptz) IS
	'The smallest and largest ID of that millisecond, on any node.';
COMMENT ON FUNCTION snowflake_max_id(timestamptz, timestamptz) IS
	'The smallest and largest ID of that millisecond, on any node.';
COMMENT ON FUNCTION snowflake_between(bigint, timestamptz, timestamptz) IS
	'Is the ID from the millisecond of from through that of to?';
COMMENT ON FUNCTION snowflake_between_min_id(timestamptz, timestamptz) IS
	'snowflake_min_id(from) and snowflake_max_id(to), each checking both bounds: the comparisons snowflake_between is planned as.';
COMMENT ON FUNCTION snowflake_between_max_id(timestamptz, timestamptz) IS
	'snowflake_min_id(from) and snowflake_max_id(to), each checking both bounds: the comparisons snowflake_between is planned as.';
COMMENT ON FUNCTION snowflake_between_support(internal) IS
	'The planner support function of snowflake_between, which plans the call as two comparisons on id.';
COMMENT ON FUNCTION snowflake_partition_bounds(timestamptz, timestamptz, interval) IS
	'The partitions of whole steps (default a day) from from that cover the time up to to, with their smallest IDs.';
COMMENT ON FUNCTION snowflake_compose(timestamptz, integer, integer, integer) IS
	'The ID of these parts, the inverse of snowflake_parse.';
COMMENT ON FUNCTION snowflake_compose(timestamptz, integer, integer, integer, timestamptz) IS
	'The ID of these parts, the inverse of snowflake_parse.';
COMMENT ON FUNCTION snowflake_format(bigint) IS
	'The ID as text for a person, in UTC: 2017-09-15T09:35:04.848Z dc=2 worker=5 seq=0.';
COMMENT ON FUNCTION snowflake_format(bigint, timestamptz) IS
	'The ID as text for a person, in UTC: 2017-09-15T09:35:04.848Z dc=2 worker=5 seq=0.';
COMMENT ON FUNCTION snowflake_json(bigint) IS
	'The ID as JSON: the id as a string, which JavaScript reads exactly, and its decoded parts.';
COMMENT ON FUNCTION snowflake_json(bigint, timestamptz) IS
	'The ID as JSON: the id as a string, which JavaScript reads exactly, and its decoded parts.';
COMMENT ON FUNCTION snowflake_serial(bigint, text) IS
	'A business serial number: the prefix, the UTC time and the ID''s parts, each of fixed width.';
COMMENT ON FUNCTION snowflake_serial(bigint, text, timestamptz) IS
	'A business serial number: the prefix, the UTC time and the ID''s parts, each of fixed width.';
COMMENT ON FUNCTION snowflake_status() IS
	'The generator''s state and counters.';
COMMENT ON VIEW snowflake_status IS
	'The generator''s state and counters.';
COMMENT ON FUNCTION snowflake_shared_pairs(regclass, name, name) IS
	'On a hub, each pair whose IDs arrived from more than one origin: servers that share a pair.';
