/* snowflake--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.2'" to load this file. \quit

-- 1.2: a registry that never lets two servers hold one worker id at once.
--
-- A claim now passes from one start of a server to another only by
-- observation: the newcomer must see the claim's version (bumped at every
-- check-in) unchanged for the holder's takeover delay, timed by its own
-- monotonic clock, before it may ask for the claim with that version; the
-- registry checks the same on its side.  No wall clock decides a takeover.
-- Each holder reports, at every check-in, a time its IDs never pass before
-- its next check-in (issued_until); whoever takes the claim over starts
-- above it.  Releases and reassignments no longer free a live claim: the
-- holder stops at its next check-in and confirms, or the id waits.  The
-- functions run as their owner (SECURITY DEFINER) with a fixed search_path:
-- the servers' role needs EXECUTE on claim, check-in and idle only, and
-- operators EXECUTE on release and reassign.

-- Claims in use keep their rows.  A row from 1.1 has no issued_until: a
-- takeover of it starts above its last check-in plus its takeover delay.
ALTER TABLE snowflake_claims
	ADD COLUMN version bigint NOT NULL DEFAULT 0,
	ADD COLUMN issued_until timestamptz,
	ADD COLUMN require_check_in boolean NOT NULL DEFAULT false,
	ADD COLUMN reclaim_lease interval,
	ADD COLUMN released boolean NOT NULL DEFAULT false,
	ADD COLUMN reassigned_to bigint,
	ADD COLUMN contested_version bigint,
	ADD COLUMN contested_at timestamptz,
	ADD COLUMN taken_above timestamptz;

COMMENT ON COLUMN snowflake_claims.version IS
	'Bumped by every check-in and change of the claim: a new holder takes it over only once it saw the same version for the takeover delay.';
COMMENT ON COLUMN snowflake_claims.issued_until IS
	'No ID of the holder carries a later time before its next check-in; a new holder starts above it.';
COMMENT ON COLUMN snowflake_claims.taken_above IS
	'The floor the holder was given when it took the claim over: its IDs lie above it.';
COMMENT ON COLUMN snowflake_claims.released IS
	'Released (or reassigned) by an operator: the holder stops at its next check-in and confirms by marking the claim idle.';

-- The operators' and servers' functions are replaced: their arguments and
-- answers change.
DROP VIEW snowflake_registry_status;
DROP FUNCTION snowflake_registry_claim(integer, bigint, integer, uuid, text,
	integer, text, interval, interval, integer, integer);
DROP FUNCTION snowflake_registry_check_in(integer, integer, uuid);
DROP FUNCTION snowflake_registry_idle(integer, integer, uuid);
DROP FUNCTION snowflake_registry_release(integer, integer);
DROP FUNCTION snowflake_registry_reassign(integer, integer, bigint);

-- What the registry answers a server.  status is 'claimed', 'refused' (a
-- new start of this server: another start holds the claim), 'waiting' (a
-- worker id is being freed) or 'full' for a claim; 'held', 'moved' or
-- 'released' for a check-in.  For 'refused' and 'waiting', version and wait
-- say which version of which claim the server must see unchanged, and for
-- how long, before it asks for it again with expected_worker_id and
-- expected_version; for 'claimed', floor is the time the server's IDs must
-- lie after (NULL: none).  The holder's token is never in an answer.
ALTER TYPE snowflake_registry_answer
	ADD ATTRIBUTE version bigint,
	ADD ATTRIBUTE wait interval,
	ADD ATTRIBUTE floor timestamptz;

-- Are these a server's lease terms, within the bounds of its settings?  A
-- server's role may call the registry's functions with anything, and an
-- absurd value would keep operators from freeing the claim, or everyone
-- after it from generating.
CREATE FUNCTION snowflake_registry_valid_terms(
	takeover_delay interval,
	reclaim_lease interval,
	issued_until timestamptz)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
	SELECT coalesce(takeover_delay BETWEEN interval '100 ms' AND interval '1 day', true)
		AND coalesce(reclaim_lease >= interval '1 min'
					 AND pg_catalog.isfinite(reclaim_lease), true)
		AND coalesce(pg_catalog.isfinite(issued_until)
					 AND issued_until < pg_catalog.clock_timestamp() + interval '1 year',
					 true)
$$;

-- Claim a worker id in a datacenter for one start (token) of a server, in one
-- statement.  Claims of one datacenter are serialised by an advisory lock,
-- so two servers starting at once never get the same id.  Only ids from 0
-- to max_worker_id (the caller's layout) are ever granted.  The rules:
--   * a claim this start already holds is renewed;
--   * a claim of this server's system (or reassigned to it) is sticky: this
--     start gets it at once if its holder marked it idle; otherwise only
--     once the caller saw it unchanged (expected_version) for the wait, and
--     the registry saw the same on its own clock: 'refused' until then (a
--     copy of a running server, or a crash restart too early);
--   * otherwise the preferred id (this server's cached claim), if free, then
--     the lowest free id;
--   * otherwise a claim released by an operator, or silent for the reclaim
--     lease: at once if its holder confirmed (idle); after the observed wait
--     if its holder stops by itself without check-ins (require_check_in),
--     or once its last check-in is older than the reclaim lease; 'waiting'
--     until then;
--   * otherwise the datacenter is 'full'.
-- A claim taken over answers floor: the previous holder's issued_until.
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
	preferred_worker_id integer DEFAULT NULL,
	expected_worker_id integer DEFAULT NULL,
	expected_version bigint DEFAULT NULL,
	issued_until timestamptz DEFAULT NULL,
	require_check_in boolean DEFAULT false)
RETURNS snowflake_registry_answer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
	c snowflake_claims;
	free_id integer;
	now_ts timestamptz;
	wait_for interval;
	may_take boolean;
BEGIN
	IF datacenter_id IS NULL OR datacenter_id < 0 OR
	   max_worker_id IS NULL OR max_worker_id < 0 OR
	   system_identifier IS NULL OR token IS NULL OR
	   require_check_in IS NULL OR
	   takeover_delay IS NULL OR reclaim_lease IS NULL OR
	   NOT snowflake_registry_valid_terms(takeover_delay, reclaim_lease,
										  issued_until) THEN
		RAISE EXCEPTION 'invalid claim for datacenter % with largest worker id %',
			datacenter_id, max_worker_id
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'The datacenter id and the largest worker id are integers from 0 up; the system identifier, token and require_check_in are required; the takeover delay lies between 100 ms and 1 day, the reclaim lease is at least a minute, and issued_until, if given, is a time within a year from now.';
	END IF;
	PERFORM pg_catalog.pg_advisory_xact_lock(1397641047,
		snowflake_registry_claim.datacenter_id);
	now_ts := pg_catalog.clock_timestamp();

	-- this start's own claim, asked for again (its answer was lost)
	SELECT * INTO c FROM snowflake_claims s
	WHERE s.datacenter_id = snowflake_registry_claim.datacenter_id
	  AND s.token = snowflake_registry_claim.token
	  AND s.worker_id <= max_worker_id
	  AND NOT s.released AND NOT s.idle
	FOR UPDATE;
	IF FOUND THEN
		RETURN snowflake_registry_take(c, snowflake_registry_claim.system_identifier,
			timeline, token, host, port, data_directory, takeover_delay,
			reclaim_lease, issued_until, require_check_in, c.taken_above);
	END IF;

	-- a claim of this system, or one reassigned to it
	SELECT * INTO c FROM snowflake_claims s
	WHERE s.datacenter_id = snowflake_registry_claim.datacenter_id
	  AND s.worker_id <= max_worker_id
	  AND ((s.system_identifier = snowflake_registry_claim.system_identifier
			AND NOT s.released)
		   OR s.reassigned_to = snowflake_registry_claim.system_identifier)
	ORDER BY s.worker_id IS NOT DISTINCT FROM preferred_worker_id DESC,
			 s.checked_in_at DESC
	LIMIT 1
	FOR UPDATE;
	IF FOUND THEN
		wait_for := GREATEST(c.takeover_delay,
							 snowflake_registry_claim.takeover_delay);
		IF c.idle THEN
			may_take := true;
		ELSIF NOT c.released THEN
			may_take := snowflake_registry_watched(c, expected_worker_id,
				expected_version, wait_for, now_ts);
		ELSE
			may_take := snowflake_registry_watched(c, expected_worker_id,
				expected_version, wait_for, now_ts)
				AND (c.require_check_in OR
					 c.checked_in_at < now_ts - GREATEST(c.reclaim_lease,
														 snowflake_registry_claim.reclaim_lease));
		END IF;
		IF may_take THEN
			RETURN snowflake_registry_take(c, snowflake_registry_claim.system_identifier,
				timeline, token, host, port, data_directory, takeover_delay,
				reclaim_lease, issued_until, require_check_in,
				snowflake_registry_floor(c));
		END IF;
		RETURN snowflake_registry_contest(c,
			CASE WHEN c.released THEN 'waiting' ELSE 'refused' END,
			wait_for, now_ts);
	END IF;

	-- the preferred id, else 0, else the lowest id just above a claimed one
	-- that is free
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
	IF free_id IS NOT NULL THEN
		INSERT INTO snowflake_claims AS s
			(datacenter_id, worker_id, system_identifier, timeline, token,
			 host, port, data_directory, claimed_at, checked_in_at, idle,
			 takeover_delay, version, issued_until, require_check_in,
			 reclaim_lease)
		VALUES (snowflake_registry_claim.datacenter_id, free_id,
				snowflake_registry_claim.system_identifier,
				snowflake_registry_claim.timeline,
				snowflake_registry_claim.token,
				snowflake_registry_claim.host,
				snowflake_registry_claim.port,
				snowflake_registry_claim.data_directory,
				now_ts, now_ts, false,
				snowflake_registry_claim.takeover_delay, 1,
				snowflake_registry_claim.issued_until,
				snowflake_registry_claim.require_check_in,
				snowflake_registry_claim.reclaim_lease)
		RETURNING * INTO c;
		RETURN ROW('claimed', c.worker_id, c.system_identifier, c.host,
				   c.port, c.data_directory, c.claimed_at, c.checked_in_at,
				   c.version, NULL, NULL)::snowflake_registry_answer;
	END IF;

	-- a claim released by an operator, or silent for the reclaim lease, that
	-- no other system was given: the one its holder confirmed, else the one
	-- this caller watched, else the oldest
	SELECT * INTO c FROM snowflake_claims s
	WHERE s.datacenter_id = snowflake_registry_claim.datacenter_id
	  AND s.worker_id <= max_worker_id
	  AND s.reassigned_to IS NULL
	  AND (s.released OR
		   s.checked_in_at < now_ts - GREATEST(s.reclaim_lease,
											   snowflake_registry_claim.reclaim_lease))
	ORDER BY s.released AND s.idle DESC,
			 s.worker_id IS NOT DISTINCT FROM expected_worker_id DESC,
			 s.checked_in_at
	LIMIT 1
	FOR UPDATE;
	IF NOT FOUND THEN
		RETURN ROW('full', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
				   NULL, NULL)::snowflake_registry_answer;
	END IF;
	wait_for := GREATEST(c.takeover_delay,
						 snowflake_registry_claim.takeover_delay);
	IF (c.released AND c.idle) OR
	   (snowflake_registry_watched(c, expected_worker_id, expected_version,
									wait_for, now_ts)
		AND (c.require_check_in OR
			 c.checked_in_at < now_ts - GREATEST(c.reclaim_lease,
												 snowflake_registry_claim.reclaim_lease))) THEN
		RETURN snowflake_registry_take(c, snowflake_registry_claim.system_identifier,
			timeline, token, host, port, data_directory, takeover_delay,
			reclaim_lease, issued_until, require_check_in,
			snowflake_registry_floor(c));
	END IF;
	RETURN snowflake_registry_contest(c, 'waiting', wait_for, now_ts);
END
$$;

-- Has the caller watched claim c unchanged for wait_for (expected_*, timed
-- by the caller's monotonic clock), and has the registry seen the same
-- version contested for as long on its own clock?  The registry's check
-- only keeps a caller that skips the wait from taking a live claim; the
-- caller's own is what no step of the registry's clock can shorten.
CREATE FUNCTION snowflake_registry_watched(
	c snowflake_claims,
	expected_worker_id integer,
	expected_version bigint,
	wait_for interval,
	now_ts timestamptz)
RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $$
	SELECT coalesce(c.worker_id = expected_worker_id
					AND c.version = expected_version
					AND c.contested_version = c.version
					AND c.contested_at <= now_ts - wait_for, false)
$$;

-- The time a new holder of claim c must start above: c's issued_until, or,
-- for a claim from 1.1 that has none, its last check-in plus its takeover
-- delay; and never below the floor its holder was given in turn.
CREATE FUNCTION snowflake_registry_floor(c snowflake_claims)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE
AS $$
	SELECT GREATEST(coalesce(c.issued_until, c.checked_in_at + c.takeover_delay),
					c.taken_above)
$$;

-- Refuse claim c to its caller for now ('refused' or 'waiting'), and note
-- when the registry first saw this version of it contested.
CREATE FUNCTION snowflake_registry_contest(
	c snowflake_claims,
	status text,
	wait_for interval,
	now_ts timestamptz)
RETURNS snowflake_registry_answer
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
	IF c.contested_version IS DISTINCT FROM c.version THEN
		UPDATE snowflake_claims s
		SET contested_version = c.version, contested_at = now_ts
		WHERE s.datacenter_id = c.datacenter_id AND s.worker_id = c.worker_id;
	END IF;
	RETURN ROW(status, c.worker_id, c.system_identifier, c.host, c.port,
			   c.data_directory, c.claimed_at, c.checked_in_at, c.version,
			   wait_for, NULL)::snowflake_registry_answer;
END
$$;

-- Give claim c to a start of a server; floor is what the answer says its
-- IDs must lie above.  The claim's issued_until becomes the new holder's
-- promise, or NULL for a caller that makes none (a 1.1 server), so that no
-- older holder's promise stands for it.
CREATE FUNCTION snowflake_registry_take(
	c snowflake_claims,
	system_identifier bigint,
	timeline integer,
	token uuid,
	host text,
	port integer,
	data_directory text,
	takeover_delay interval,
	reclaim_lease interval,
	issued_until timestamptz,
	require_check_in boolean,
	floor timestamptz)
RETURNS snowflake_registry_answer
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	now_ts timestamptz := pg_catalog.clock_timestamp();
BEGIN
	UPDATE snowflake_claims s
	SET system_identifier = snowflake_registry_take.system_identifier,
		timeline = snowflake_registry_take.timeline,
		token = snowflake_registry_take.token,
		host = snowflake_registry_take.host,
		port = snowflake_registry_take.port,
		data_directory = snowflake_registry_take.data_directory,
		claimed_at = CASE WHEN s.token = snowflake_registry_take.token
						  THEN s.claimed_at ELSE now_ts END,
		checked_in_at = now_ts,
		idle = false,
		takeover_delay = snowflake_registry_take.takeover_delay,
		version = s.version + 1,
		issued_until = CASE
			WHEN snowflake_registry_take.issued_until IS NULL THEN NULL
			ELSE GREATEST(snowflake_registry_take.floor,
						  snowflake_registry_take.issued_until,
						  CASE WHEN s.token = snowflake_registry_take.token
							   THEN s.issued_until END)
		END,
		require_check_in = snowflake_registry_take.require_check_in,
		reclaim_lease = snowflake_registry_take.reclaim_lease,
		released = false,
		reassigned_to = NULL,
		contested_version = NULL,
		contested_at = NULL,
		taken_above = snowflake_registry_take.floor
	WHERE s.datacenter_id = c.datacenter_id AND s.worker_id = c.worker_id
	RETURNING * INTO c;
	RETURN ROW('claimed', c.worker_id, c.system_identifier, c.host, c.port,
			   c.data_directory, c.claimed_at, c.checked_in_at, c.version,
			   NULL, floor)::snowflake_registry_answer;
END
$$;

-- Confirm a claim for one start (token) of its holder: 'held'; or 'moved'
-- (another server holds it, or an operator reassigned it) or 'released',
-- after which the holder stops generating and confirms with
-- snowflake_registry_idle().  takeover_delay and issued_until are the
-- holder's promise until its next check-in: it stops generating once it has
-- not checked in for that delay (with require_check_in), and issues no ID
-- later than issued_until.  The registry keeps the larger issued_until.
CREATE FUNCTION snowflake_registry_check_in(
	datacenter_id integer,
	worker_id integer,
	token uuid,
	takeover_delay interval DEFAULT NULL,
	issued_until timestamptz DEFAULT NULL,
	require_check_in boolean DEFAULT NULL,
	reclaim_lease interval DEFAULT NULL)
RETURNS snowflake_registry_answer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
	c snowflake_claims;
	answer text := 'held';
BEGIN
	IF datacenter_id IS NULL OR worker_id IS NULL OR token IS NULL THEN
		RAISE EXCEPTION 'a check-in names a datacenter id, a worker id and a token'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF NOT snowflake_registry_valid_terms(takeover_delay, reclaim_lease,
										  issued_until) THEN
		RAISE EXCEPTION 'invalid terms in a check-in of worker id % of datacenter %',
			worker_id, datacenter_id
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'The takeover delay lies between 100 ms and 1 day, the reclaim lease is at least a minute, and issued_until is a time within a year from now.';
	END IF;
	UPDATE snowflake_claims s
	SET checked_in_at = pg_catalog.clock_timestamp(),
		version = s.version + 1,
		takeover_delay = coalesce(snowflake_registry_check_in.takeover_delay,
								  s.takeover_delay),
		issued_until = GREATEST(s.issued_until,
								snowflake_registry_check_in.issued_until),
		require_check_in = coalesce(snowflake_registry_check_in.require_check_in,
									s.require_check_in),
		reclaim_lease = coalesce(snowflake_registry_check_in.reclaim_lease,
								 s.reclaim_lease)
	WHERE s.datacenter_id = snowflake_registry_check_in.datacenter_id
	  AND s.worker_id = snowflake_registry_check_in.worker_id
	  AND s.token = snowflake_registry_check_in.token
	  AND NOT s.idle AND NOT s.released
	RETURNING * INTO c;
	IF NOT FOUND THEN
		SELECT * INTO c FROM snowflake_claims s
		WHERE s.datacenter_id = snowflake_registry_check_in.datacenter_id
		  AND s.worker_id = snowflake_registry_check_in.worker_id;
		IF NOT FOUND THEN
			answer := 'released';
		ELSIF c.token IS NOT DISTINCT FROM snowflake_registry_check_in.token THEN
			answer := CASE WHEN c.reassigned_to IS NOT NULL THEN 'moved'
						   ELSE 'released' END;
		ELSE
			answer := 'moved';
		END IF;
	END IF;
	-- moved: the new holder; released: none
	IF answer = 'moved' AND c.token IS NOT DISTINCT FROM snowflake_registry_check_in.token THEN
		RETURN ROW(answer, snowflake_registry_check_in.worker_id,
				   c.reassigned_to, NULL, NULL, NULL, NULL, NULL, c.version,
				   NULL, NULL)::snowflake_registry_answer;
	ELSIF answer = 'released' THEN
		RETURN ROW(answer, snowflake_registry_check_in.worker_id, NULL, NULL,
				   NULL, NULL, NULL, NULL, c.version, NULL,
				   NULL)::snowflake_registry_answer;
	END IF;
	RETURN ROW(answer, snowflake_registry_check_in.worker_id,
			   c.system_identifier, c.host, c.port, c.data_directory,
			   c.claimed_at, c.checked_in_at, c.version, NULL,
			   NULL)::snowflake_registry_answer;
END
$$;

-- Mark a claim idle: at its holder's clean shutdown (the same server's next
-- start takes it back at once, other servers only after the reclaim lease),
-- or when the holder stopped after learning that its claim was released or
-- reassigned (then it is free at once).  issued_until is the time of the
-- holder's newest ID, read after it stopped generating: it replaces the
-- promise of the last check-in, so that the next holder need not start
-- above a time that lies ahead, but never goes below the floor the holder
-- was given itself.  Returns whether this start (token) held it.
CREATE FUNCTION snowflake_registry_idle(
	datacenter_id integer,
	worker_id integer,
	token uuid,
	issued_until timestamptz DEFAULT NULL)
RETURNS boolean
LANGUAGE sql VOLATILE SECURITY DEFINER
AS $$
	WITH marked AS (
		UPDATE snowflake_claims s
		SET idle = true, checked_in_at = pg_catalog.clock_timestamp(),
			version = s.version + 1,
			issued_until = GREATEST(coalesce($4, s.issued_until), s.taken_above)
		WHERE s.datacenter_id = $1 AND s.worker_id = $2 AND s.token = $3
		  AND NOT s.idle
		  AND snowflake_registry_valid_terms(NULL, NULL, $4)
		RETURNING 1)
	SELECT EXISTS (SELECT FROM marked);
$$;

-- For operators: every claim, how long since its holder checked in, and its
-- state (see "The lease as a rule" in docs/fleet.md):
--   'held'       its holder checks in;
--   'contested'  another start of the server asked for it since the last
--                check-in (a copy, or a restart after a crash);
--   'silent'     no check-in for its takeover delay;
--   'idle'       its holder shut down cleanly;
--   'released'   released or reassigned by an operator; free once its holder
--                confirmed (released_confirmed).
-- Tokens are never shown.
CREATE VIEW snowflake_registry_status AS
SELECT c.datacenter_id, c.worker_id, c.system_identifier, c.timeline,
	   c.host, c.port, c.data_directory, c.claimed_at, c.checked_in_at,
	   pg_catalog.clock_timestamp() - c.checked_in_at AS since_check_in,
	   CASE
		 WHEN c.released THEN 'released'
		 WHEN c.idle THEN 'idle'
		 WHEN c.contested_version = c.version THEN 'contested'
		 WHEN pg_catalog.clock_timestamp() - c.checked_in_at > c.takeover_delay
		   THEN 'silent'
		 ELSE 'held'
	   END AS state,
	   c.version, c.takeover_delay, c.require_check_in, c.issued_until,
	   c.released AND c.idle AS released_confirmed, c.reassigned_to
FROM snowflake_claims c;

-- The time from which claim c, just released or reassigned, may pass to
-- another server without its holder's confirmation, by the holder's terms:
-- now if it is idle; else its last check-in plus its takeover delay (when it
-- stops by itself without check-ins) or its reclaim lease.  A claimant with
-- a longer reclaim lease waits for that, and every claimant watches the
-- claim for the takeover delay first.
CREATE FUNCTION snowflake_registry_free_at(c snowflake_claims)
RETURNS timestamptz
LANGUAGE sql STABLE
AS $$
	SELECT CASE
		WHEN c.idle THEN pg_catalog.clock_timestamp()
		WHEN c.require_check_in THEN
			GREATEST(pg_catalog.clock_timestamp(), c.checked_in_at) + c.takeover_delay
		ELSE c.checked_in_at + coalesce(c.reclaim_lease, interval '1 day')
	END
$$;

-- For operators: free a worker id (a server that is gone for good, or one to
-- be retired).  A holder that still runs stops generating at its next
-- check-in and confirms; only then, or once it cannot be generating any
-- more, may another server take the id.  Returns the time from which it may
-- pass without the confirmation (see snowflake_registry_free_at; NULL: no
-- such claim), and says so in a notice.
CREATE FUNCTION snowflake_registry_release(
	datacenter_id integer,
	worker_id integer)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE STRICT SECURITY DEFINER
AS $$
DECLARE
	c snowflake_claims;
	free_at timestamptz;
BEGIN
	UPDATE snowflake_claims s
	SET released = true, reassigned_to = NULL,
		version = s.version + CASE WHEN s.released THEN 0 ELSE 1 END
	WHERE s.datacenter_id = snowflake_registry_release.datacenter_id
	  AND s.worker_id = snowflake_registry_release.worker_id
	RETURNING * INTO c;
	IF NOT FOUND THEN
		RETURN NULL;
	END IF;
	free_at := snowflake_registry_free_at(c);
	IF c.idle THEN
		RAISE NOTICE 'worker id % of datacenter % is free', c.worker_id, c.datacenter_id;
	ELSE
		RAISE NOTICE 'worker id % of datacenter % is free once its holder confirms the release at its next check-in, or else from %',
			c.worker_id, c.datacenter_id, free_at
			USING DETAIL = 'Until then the holder may still be generating IDs with it.';
	END IF;
	RETURN free_at;
END
$$;

-- For operators: give a worker id to another server (its system identifier,
-- from pg_control_system() there), which takes it at its next start, under
-- the same rule as a release.  Returns the time from which the id may pass
-- without the holder's confirmation (NULL: no such claim).
CREATE FUNCTION snowflake_registry_reassign(
	datacenter_id integer,
	worker_id integer,
	system_identifier bigint)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE STRICT SECURITY DEFINER
AS $$
DECLARE
	c snowflake_claims;
	free_at timestamptz;
BEGIN
	UPDATE snowflake_claims s
	SET released = true,
		reassigned_to = snowflake_registry_reassign.system_identifier,
		version = s.version + 1
	WHERE s.datacenter_id = snowflake_registry_reassign.datacenter_id
	  AND s.worker_id = snowflake_registry_reassign.worker_id
	RETURNING * INTO c;
	IF NOT FOUND THEN
		RETURN NULL;
	END IF;
	free_at := snowflake_registry_free_at(c);
	IF NOT c.idle THEN
		RAISE NOTICE 'worker id % of datacenter % passes to system % once its holder confirms at its next check-in, or else from %',
			c.worker_id, c.datacenter_id, system_identifier, free_at
			USING DETAIL = 'Until then the holder may still be generating IDs with it.';
	END IF;
	RETURN free_at;
END
$$;

-- Run as the owner with a search_path of the extension's schema alone (and
-- pg_temp last), so that neither the caller's rights nor its search_path
-- reach the claims table.  The extension is relocatable, so the schema is
-- named here rather than with @extschema@.
DO $$
DECLARE
	f regprocedure;
BEGIN
	FOREACH f IN ARRAY ARRAY[
		'snowflake_registry_claim(integer, bigint, integer, uuid, text, integer, text, interval, interval, integer, integer, integer, bigint, timestamptz, boolean)',
		'snowflake_registry_valid_terms(interval, interval, timestamptz)',
		'snowflake_registry_watched(snowflake_claims, integer, bigint, interval, timestamptz)',
		'snowflake_registry_floor(snowflake_claims)',
		'snowflake_registry_contest(snowflake_claims, text, interval, timestamptz)',
		'snowflake_registry_take(snowflake_claims, bigint, integer, uuid, text, integer, text, interval, interval, timestamptz, boolean, timestamptz)',
		'snowflake_registry_check_in(integer, integer, uuid, interval, timestamptz, boolean, interval)',
		'snowflake_registry_idle(integer, integer, uuid, timestamptz)',
		'snowflake_registry_free_at(snowflake_claims)',
		'snowflake_registry_release(integer, integer)',
		'snowflake_registry_reassign(integer, integer, bigint)']::regprocedure[]
	LOOP
		EXECUTE pg_catalog.format('ALTER FUNCTION %s SET search_path = %I, pg_temp',
								  f, pg_catalog.current_schema());
		EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
	END LOOP;
END
$$;

-- A live registry keeps working: 1.1 told operators to give the servers'
-- role rights on the claims table, and those roles may now call the three
-- functions of their own claims instead (revoke the table rights once every
-- server runs 1.2).
DO $$
DECLARE
	r regrole;
BEGIN
	FOR r IN
		SELECT DISTINCT a.grantee::regrole
		FROM pg_catalog.pg_class c,
			 pg_catalog.aclexplode(c.relacl) a
		WHERE c.oid = 'snowflake_claims'::regclass
		  AND a.privilege_type = 'UPDATE'
		  AND a.grantee <> c.relowner
		  AND a.grantee <> 0
	LOOP
		EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION '
			'snowflake_registry_claim(integer, bigint, integer, uuid, text, integer, text, interval, interval, integer, integer, integer, bigint, timestamptz, boolean), '
			'snowflake_registry_check_in(integer, integer, uuid, interval, timestamptz, boolean, interval), '
			'snowflake_registry_idle(integer, integer, uuid, timestamptz) TO %s', r);
	END LOOP;
END
$$;

-- The servers' role is granted EXECUTE on snowflake_registry_claim,
-- snowflake_registry_check_in and snowflake_registry_idle; operators on
-- snowflake_registry_release and snowflake_registry_reassign, and SELECT on
-- snowflake_registry_status.  Nobody but the owner needs the claims table.
