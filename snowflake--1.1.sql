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

-- The worker id registry: on the registry server, the claims of every server
-- that sets snowflake.registry to this database.  The registry server does
-- not need the preload.  The registry worker of each server calls
-- snowflake_registry_claim() at start, snowflake_registry_check_in()
-- periodically and snowflake_registry_idle() at a clean shutdown; operators
-- use snowflake_registry_status, snowflake_registry_release() and
-- snowflake_registry_reassign().  Every time here is the registry's clock:
-- the servers' clocks never take part in a lease.

-- One row a claimed (datacenter_id, worker_id) pair.
CREATE TABLE snowflake_claims (
	-- the widths of the ids are the servers' layout (snowflake.*_bits)
	datacenter_id integer NOT NULL CHECK (datacenter_id >= 0),
	worker_id integer NOT NULL CHECK (worker_id >= 0),
	-- the holder's system identifier, shared by its standbys and copies
	system_identifier bigint NOT NULL,
	timeline integer,
	-- made at each start of the holder; NULL after a reassignment
	token uuid,
	host text,
	port integer,
	data_directory text,
	claimed_at timestamptz NOT NULL,
	checked_in_at timestamptz NOT NULL,
	-- marked at a clean shutdown: the holder's next start takes it at once
	idle boolean NOT NULL DEFAULT false,
	-- the holder's snowflake.registry_takeover_delay
	takeover_delay interval NOT NULL,
	PRIMARY KEY (datacenter_id, worker_id)
);
CREATE INDEX ON snowflake_claims (datacenter_id, system_identifier);

-- The claims are the registry's state: pg_dump keeps them.
SELECT pg_catalog.pg_extension_config_dump('snowflake_claims', '');

-- What the registry answers a server: status is 'claimed', 'refused' or
-- 'full' for a claim, 'held', 'moved' or 'released' for a check-in; the
-- other fields describe the claim and its holder.
CREATE TYPE snowflake_registry_answer AS (
	status text,
	worker_id integer,
	system_identifier bigint,
	host text,
	port integer,
	data_directory text,
	claimed_at timestamptz,
	checked_in_at timestamptz
);

-- Claim a worker id in a datacenter for one start (token) of a server, in one
-- statement.  Claims of one datacenter are serialised by an advisory lock,
-- so two servers starting at once never get the same id.  The rules:
--   * a claim of this server's system is sticky: this start gets it back if
--     its holder marked it idle or has not checked in for the takeover delay
--     (the holder's or this server's, whichever is longer); otherwise it is
--     refused (a copy of a running server, or a crash restart too early);
--   * otherwise the preferred id (this server's cached claim), if free, then
--     the lowest free id up to max_worker_id (the server's layout decides
--     how many worker ids a datacenter has);
--   * otherwise the claim that has not checked in for the longest, if that
--     is longer than the reclaim lease; otherwise the datacenter is full.
-- VOLATILE: it changes the table. search_path is fixed at creation, so the
-- caller's search_path cannot redirect the table.
CREATE FUNCTION snowflake_registry_claim(
	datacenter_id integer,
	system_identifier bigint,
	timeline integer,
	token uuid,
	host text,
	port integer,
	data_directory text,
	takeover_delay interval,
	reclaim_lease interval,
	max_worker_id integer,
	preferred_worker_id integer DEFAULT NULL)
RETURNS snowflake_registry_answer
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
	c snowflake_claims;
	answer text := 'claimed';
	free_id integer;
	now_ts timestamptz;
BEGIN
	IF datacenter_id IS NULL OR datacenter_id < 0 OR
	   max_worker_id IS NULL OR max_worker_id < 0 THEN
		RAISE EXCEPTION 'datacenter id % or largest worker id % is out of range',
			datacenter_id, max_worker_id
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Both are integers from 0 up.';
	END IF;
	PERFORM pg_catalog.pg_advisory_xact_lock(1397641047,
		snowflake_registry_claim.datacenter_id);
	now_ts := pg_catalog.clock_timestamp();

	SELECT * INTO c FROM snowflake_claims s
	WHERE s.datacenter_id = snowflake_registry_claim.datacenter_id
	  AND s.system_identifier = snowflake_registry_claim.system_identifier
	ORDER BY s.worker_id IS NOT DISTINCT FROM preferred_worker_id DESC,
			 s.checked_in_at DESC
	LIMIT 1
	FOR UPDATE;
	IF FOUND THEN
		IF c.token IS DISTINCT FROM snowflake_registry_claim.token
		   AND NOT c.idle
		   AND c.checked_in_at > now_ts - GREATEST(c.takeover_delay,
			   snowflake_registry_claim.takeover_delay) THEN
			answer := 'refused';
		ELSE
			UPDATE snowflake_claims s
			SET timeline = snowflake_registry_claim.timeline,
				token = snowflake_registry_claim.token,
				host = snowflake_registry_claim.host,
				port = snowflake_registry_claim.port,
				data_directory = snowflake_registry_claim.data_directory,
				claimed_at = CASE WHEN s.token = snowflake_registry_claim.token
								  THEN s.claimed_at ELSE now_ts END,
				checked_in_at = now_ts,
				idle = false,
				takeover_delay = snowflake_registry_claim.takeover_delay
			WHERE s.datacenter_id = c.datacenter_id
			  AND s.worker_id = c.worker_id
			RETURNING * INTO c;
		END IF;
	ELSE
		-- the preferred id, else 0, else the lowest id just above a claimed
		-- one that is free
		IF preferred_worker_id BETWEEN 0 AND max_worker_id AND
		   NOT EXISTS (SELECT FROM snowflake_claims s
					   WHERE s.datacenter_id = snowflake_registry_claim.datacenter_id
						 AND s.worker_id = preferred_worker_id) THEN
			free_id := preferred_worker_id;
		ELSIF NOT EXISTS (SELECT FROM snowflake_claims s
						  WHERE s.datacenter_id = snowflake_registry_claim.datacenter_id
							AND s.worker_id = 0) THEN
			free_id := 0;
		ELSE
			SELECT pg_catalog.min(s.worker_id) + 1 INTO free_id
			FROM snowflake_claims s
			WHERE s.datacenter_id = snowflake_registry_claim.datacenter_id
			  AND s.worker_id < max_worker_id
			  AND NOT EXISTS (SELECT FROM snowflake_claims n
							  WHERE n.datacenter_id = s.datacenter_id
								AND n.worker_id = s.worker_id + 1);
		END IF;
		IF free_id IS NULL THEN
			DELETE FROM snowflake_claims s
			WHERE (s.datacenter_id, s.worker_id) =
				(SELECT o.datacenter_id, o.worker_id FROM snowflake_claims o
				 WHERE o.datacenter_id = snowflake_registry_claim.datacenter_id
				   AND o.worker_id <= max_worker_id
				   AND o.checked_in_at < now_ts - reclaim_lease
				 ORDER BY o.checked_in_at
				 LIMIT 1
				 FOR UPDATE)
			RETURNING s.worker_id INTO free_id;
		END IF;
		IF free_id IS NULL THEN
			answer := 'full';
		ELSE
			INSERT INTO snowflake_claims
			VALUES (snowflake_registry_claim.datacenter_id, free_id,
					snowflake_registry_claim.system_identifier,
					snowflake_registry_claim.timeline,
					snowflake_registry_claim.token,
					snowflake_registry_claim.host,
					snowflake_registry_claim.port,
					snowflake_registry_claim.data_directory,
					now_ts, now_ts, false,
					snowflake_registry_claim.takeover_delay)
			RETURNING * INTO c;
		END IF;
	END IF;
	-- refused: the holder; full: no claim (all NULL)
	RETURN ROW(answer, c.worker_id, c.system_identifier, c.host, c.port,
			   c.data_directory, c.claimed_at,
			   c.checked_in_at)::snowflake_registry_answer;
END
$$;

-- Confirm a claim for one start (token) of its holder: 'held', or 'moved'
-- with the new holder, or 'released' when the claim is gone.
CREATE FUNCTION snowflake_registry_check_in(
	datacenter_id integer,
	worker_id integer,
	token uuid)
RETURNS snowflake_registry_answer
LANGUAGE plpgsql VOLATILE STRICT
SET search_path FROM CURRENT
AS $$
DECLARE
	c snowflake_claims;
	answer text := 'held';
BEGIN
	UPDATE snowflake_claims s
	SET checked_in_at = pg_catalog.clock_timestamp()
	WHERE s.datacenter_id = snowflake_registry_check_in.datacenter_id
	  AND s.worker_id = snowflake_registry_check_in.worker_id
	  AND s.token = snowflake_registry_check_in.token
	  AND NOT s.idle
	RETURNING * INTO c;
	IF NOT FOUND THEN
		SELECT * INTO c FROM snowflake_claims s
		WHERE s.datacenter_id = snowflake_registry_check_in.datacenter_id
		  AND s.worker_id = snowflake_registry_check_in.worker_id;
		answer := CASE WHEN FOUND THEN 'moved' ELSE 'released' END;
	END IF;
	-- moved: the new holder; released: no holder (NULL)
	RETURN ROW(answer, snowflake_registry_check_in.worker_id,
			   c.system_identifier, c.host, c.port, c.data_directory,
			   c.claimed_at, c.checked_in_at)::snowflake_registry_answer;
END
$$;

-- Mark a claim idle at its holder's clean shutdown: the same server's next
-- start takes it back at once, other servers only after the reclaim lease.
-- Returns whether this start (token) still held it.
CREATE FUNCTION snowflake_registry_idle(
	datacenter_id integer,
	worker_id integer,
	token uuid)
RETURNS boolean
LANGUAGE sql VOLATILE STRICT
SET search_path FROM CURRENT
AS $$
	WITH marked AS (
		UPDATE snowflake_claims s
		SET idle = true, checked_in_at = pg_catalog.clock_timestamp()
		WHERE s.datacenter_id = $1 AND s.worker_id = $2 AND s.token = $3
		RETURNING 1)
	SELECT EXISTS (SELECT FROM marked);
$$;

-- For operators: every claim, how long since its holder checked in, and its
-- state: 'active' (checking in), 'idle' (shut down cleanly) or 'silent' (no
-- check-in for the takeover delay: a new start of the same server may take
-- it; another server only once since_check_in passes its reclaim lease).
CREATE VIEW snowflake_registry_status AS
SELECT c.datacenter_id, c.worker_id, c.system_identifier, c.timeline,
	   c.host, c.port, c.data_directory, c.claimed_at, c.checked_in_at,
	   pg_catalog.clock_timestamp() - c.checked_in_at AS since_check_in,
	   CASE
		 WHEN c.idle THEN 'idle'
		 WHEN pg_catalog.clock_timestamp() - c.checked_in_at > c.takeover_delay
		   THEN 'silent'
		 ELSE 'active'
	   END AS state
FROM snowflake_claims c;

-- For operators: free a worker id (a server that is gone for good).  If its
-- holder still runs, it learns at its next check-in that the claim is gone
-- and stops generating.  Returns whether there was such a claim.
CREATE FUNCTION snowflake_registry_release(
	datacenter_id integer,
	worker_id integer)
RETURNS boolean
LANGUAGE sql VOLATILE STRICT
SET search_path FROM CURRENT
AS $$
	WITH released AS (
		DELETE FROM snowflake_claims s
		WHERE s.datacenter_id = $1 AND s.worker_id = $2
		RETURNING 1)
	SELECT EXISTS (SELECT FROM released);
$$;

-- For operators: give a worker id to another server (its system identifier,
-- from pg_control_system() there), which takes it at its next start.  If the
-- old holder still runs, it learns at its next check-in that the claim moved
-- and stops generating.  Returns whether there was such a claim.
CREATE FUNCTION snowflake_registry_reassign(
	datacenter_id integer,
	worker_id integer,
	system_identifier bigint)
RETURNS boolean
LANGUAGE sql VOLATILE STRICT
SET search_path FROM CURRENT
AS $$
	WITH reassigned AS (
		UPDATE snowflake_claims s
		SET system_identifier = $3, token = NULL, timeline = NULL, host = NULL,
			port = NULL, data_directory = NULL, idle = true,
			claimed_at = pg_catalog.clock_timestamp(),
			checked_in_at = pg_catalog.clock_timestamp()
		WHERE s.datacenter_id = $1 AND s.worker_id = $2
		RETURNING 1)
	SELECT EXISTS (SELECT FROM reassigned);
$$;

-- The servers' registry workers call these three; operators call the rest.
REVOKE ALL ON FUNCTION snowflake_registry_release(integer, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION snowflake_registry_reassign(integer, integer, bigint) FROM PUBLIC;

-- On a hub that merges rows from several servers (logical replication, ETL):
-- every (datacenter_id, worker_id) pair whose IDs arrived from more than one
-- origin, that is, two servers sharing a pair.  rows is a table or view with
-- a column naming each row's origin and a column of snowflake IDs; with one
-- table per origin, make it a view that UNIONs them with a literal origin.
-- STABLE: it only reads, in one snapshot (a data-modifying query is refused).
-- Not IMMUTABLE: its result follows the table's contents. PARALLEL UNSAFE
-- (the default): it runs a query of its own, once, from the top level.
CREATE FUNCTION snowflake_shared_pairs(
	rows regclass,
	origin_column name,
	id_column name DEFAULT 'id',
	OUT datacenter_id integer,
	OUT worker_id integer,
	OUT origins text[],
	OUT ids bigint)
RETURNS SETOF record
LANGUAGE plpgsql STABLE STRICT
SET search_path FROM CURRENT
AS $$
BEGIN
	RETURN QUERY EXECUTE format(
		'SELECT p.datacenter_id, p.worker_id, '
		'       pg_catalog.array_agg(DISTINCT t.%1$I::text ORDER BY t.%1$I::text), '
		'       pg_catalog.count(*) '
		'FROM %3$s t, snowflake_parse(t.%2$I) p '
		'GROUP BY 1, 2 '
		'HAVING pg_catalog.count(DISTINCT t.%1$I) > 1 '
		'ORDER BY 1, 2',
		origin_column, id_column, rows);
END
$$;
