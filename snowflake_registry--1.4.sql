/* snowflake_registry--1.4.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION snowflake_registry" to load this file. \quit

-- The worker id registry of a snowflake fleet, in a schema of its own
-- (snowflake_registry), installed only in the registry's database.  Servers
-- that set snowflake.registry claim their worker id here, each through a
-- login of its own; operators watch and move claims.  docs/fleet.md states
-- the rule; in short:
--
--   * A claim (datacenter_id, worker_id) has one holder at a time: one start
--     (token) of a server, connected as the login that owns the claim.  Its
--     version grows at every change of holder.
--   * The holder issues no ID later than its promise, the time the registry
--     recorded for it; it extends the promise by a compare-and-set on the
--     claim's version and on the nonce of its previous extension.  The
--     registry bounds every promise by its own clock plus the lease.
--   * Every new holder starts above the highest promise the pair ever had
--     (the floor), so two holders' IDs lie in disjoint ranges of time,
--     whatever clocks, outages and delays do.  When the claim passes (its
--     holder went idle, its promise is behind the registry's clock, or an
--     operator released it) decides only availability.
--   * A registry that went back in time (a restore, PITR, a failover to a
--     standby that missed commits, a dump reloaded) is noticed by a key of
--     the timeline, the postmaster's start, and the database's and the
--     claims table's OIDs: a new epoch, whose floor lies above every promise
--     it may have forgotten; every grant and every holder's first extension
--     in it starts above that floor.
--   * A promise counts once its commit is durable: every function here
--     commits with synchronous_commit on.
--
-- The functions run as their owner (SECURITY DEFINER) with search_path
-- pg_catalog, pg_temp; every object of this schema is named with it, and
-- nobody but the owner may create anything in it.  A worker login acts on,
-- and sees, only the claims it owns.

-- The schema, which CREATE EXTENSION makes unless it exists, must belong to
-- a role with the rights of the registry's owner: its owner may create
-- objects in it and drop it with the registry, and a drop by a role that
-- cannot read the claims could not note their promises (see note_floor).
DO $$
DECLARE
	owner pg_catalog.oid := (SELECT n.nspowner FROM pg_catalog.pg_namespace n
							 WHERE n.nspname OPERATOR(pg_catalog.=) 'snowflake_registry');
BEGIN
	IF NOT pg_catalog.pg_has_role(owner, CURRENT_USER, 'USAGE') THEN
		RAISE EXCEPTION 'schema "snowflake_registry" belongs to role "%", which lacks the rights of role "%"',
			pg_catalog.pg_get_userbyid(owner), CURRENT_USER
			USING ERRCODE = 'insufficient_privilege',
				  DETAIL = 'The owner of the registry''s schema could create objects in it and drop the registry.',
				  HINT = 'Drop the schema, or give it to the role that installs the registry, then create the extension again.';
	END IF;
END
$$;

-- A note that a drop of a registry left in this database's settings for
-- the next install (see note_floor), "snowflake_registry.<name>", or NULL.
-- A database setting outlives the extension.
CREATE FUNCTION snowflake_registry.note(name text)
RETURNS text
LANGUAGE sql STABLE
AS $$
	SELECT pg_catalog.substr(c.setting,
		pg_catalog.length(name) OPERATOR(pg_catalog.+) 21)
	FROM pg_catalog.pg_db_role_setting r
	CROSS JOIN LATERAL pg_catalog.unnest(r.setconfig) c(setting)
	WHERE r.setrole OPERATOR(pg_catalog.=) 0
	  AND r.setdatabase OPERATOR(pg_catalog.=)
		  (SELECT d.oid FROM pg_catalog.pg_database d
		   WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())
	  AND pg_catalog.starts_with(c.setting,
		  pg_catalog.concat('snowflake_registry.', name, '='))
$$;

-- The lease of the registry that a drop in this database noted (see
-- note_floor), or NULL: a new install takes it as its own.  Under a longer
-- lease, its promises could pass the floor of an epoch that a copy of the
-- old registry (a standby that missed the drop, a backup from before it)
-- starts under the old lease once promoted or restored, as after a raise
-- that a copy missed (see set_settings), but with no operator to warn.  A
-- note that is not a lease in seconds (1 to 3600) stops the install,
-- saying so: read as none, it would let the default lease raise it.
CREATE FUNCTION snowflake_registry.noted_lease()
RETURNS interval
LANGUAGE plpgsql STABLE
AS $$
DECLARE
	note text := snowflake_registry.note('lease');
BEGIN
	IF note IS NULL THEN
		RETURN NULL;
	ELSIF note OPERATOR(pg_catalog.!~) '^[0-9]{1,4}(\.[0-9]{1,6})?$'
		  OR note::pg_catalog.numeric OPERATOR(pg_catalog.<) 1
		  OR note::pg_catalog.numeric OPERATOR(pg_catalog.>) 3600 THEN
		RAISE EXCEPTION 'invalid value for "snowflake_registry.lease" in the settings of database "%": "%"',
			pg_catalog.current_database(), note
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'It is the lease in seconds, from 1 to 3600, of the registry last dropped from this database, as the drop notes it.';
	END IF;
	RETURN pg_catalog.make_interval(secs => note::pg_catalog.float8);
END
$$;

-- What the registry is told to keep: the lease, how long a silent claim
-- stays reserved for its login, and the epoch.
CREATE TABLE snowflake_registry.settings (
	only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
	-- how far ahead of the registry's clock a promise may reach
	-- (in hours, minutes and seconds: a month or a day added to a time is
	-- one of the calendar, from 28 to 31 days and from 23 to 25 hours); a
	-- new install takes the lease of the registry dropped before it here
	lease interval NOT NULL
		DEFAULT coalesce(snowflake_registry.noted_lease(), interval '30 s')
		CHECK (lease BETWEEN interval '1 s' AND interval '1 hour')
		CONSTRAINT lease_in_hours_minutes_seconds
		CHECK (EXTRACT(year FROM lease) = 0 AND EXTRACT(month FROM lease) = 0
			   AND EXTRACT(day FROM lease) = 0),
	-- the lease before the last change, and when it changed: promises made
	-- under it may reach that far past the change
	previous_lease interval NOT NULL DEFAULT interval '0',
	lease_changed_at timestamptz NOT NULL DEFAULT '-infinity',
	-- how long a claim whose promise has passed stays its login's (in
	-- days of 24 hours, hours, minutes and seconds, as free() counts it: a
	-- month or a year is refused, which compares as 30 or 360 days)
	reclaim_after interval NOT NULL DEFAULT interval '1 day'
		CHECK (reclaim_after BETWEEN interval '0' AND interval '365 days')
		CONSTRAINT reclaim_after_in_days_hours_minutes_seconds
		CHECK (EXTRACT(year FROM reclaim_after) = 0
			   AND EXTRACT(month FROM reclaim_after) = 0),
	-- how far the registry's clock may be behind its clock of before an epoch
	margin interval NOT NULL DEFAULT interval '1 s'
		CHECK (margin BETWEEN interval '0' AND interval '1 hour')
		CONSTRAINT margin_in_hours_minutes_seconds
		CHECK (EXTRACT(year FROM margin) = 0 AND EXTRACT(month FROM margin) = 0
			   AND EXTRACT(day FROM margin) = 0),
	-- epochs counted, for people; what a claim compares is epoch_id, random
	-- (or drawn from it while an epoch starts: see epoch): a new install
	-- counts from 1 again, and the claims of a dump of another install
	-- loaded into it may carry the number of its first epoch
	epoch bigint NOT NULL DEFAULT 0,
	epoch_id uuid,
	epoch_key text,
	epoch_floor timestamptz,
	-- this registry's identity, drawn when CREATE EXTENSION made the row: a
	-- dump's row brings the identity of the registry dumped, and every claim
	-- carries the identity of the registry that made it (see durable)
	registry uuid NOT NULL DEFAULT pg_catalog.gen_random_uuid()
);

-- This registry's identity, NULL if its settings' row is missing.
CREATE FUNCTION snowflake_registry.this_registry()
RETURNS uuid
LANGUAGE sql STABLE
AS $$
	SELECT s.registry FROM snowflake_registry.settings s
$$;

-- The fleet's layout, set by an operator (configure) or recorded at the
-- first claim (see fleet_layout).  A row of its own: every claim and
-- extension holds it in share mode from the moment it reads the layout,
-- and a change of layout or of the lease waits for them, without touching
-- the settings row that an epoch's start locks.  Its one row is made by the
-- first call that needs it.
CREATE TABLE snowflake_registry.fleet (
	only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
	layout text CHECK (layout ~ '^[0-9]{1,16}(/[0-9]{1,2}){4}$')
);

-- One row a datacenter, locked by every claim in it: two servers starting at
-- once never get the same worker id.  Only the owner can lock it.
CREATE TABLE snowflake_registry.datacenters (
	datacenter_id integer PRIMARY KEY
		CHECK (datacenter_id BETWEEN 0 AND 1073741823)
);

-- Every login that claimed, and how many claims it may hold (1 unless an
-- operator allowed more).  Each claim locks its login's row, so that two
-- starts of one login count each other's claims.
CREATE TABLE snowflake_registry.logins (
	login name PRIMARY KEY,
	claims integer NOT NULL
		CHECK (claims BETWEEN 1 AND 1024)
);

-- One row a pair ever claimed: rows are never deleted, so no floor is lost.
CREATE TABLE snowflake_registry.claims (
	datacenter_id integer NOT NULL
		CHECK (datacenter_id BETWEEN 0 AND 1073741823),
	worker_id integer NOT NULL CHECK (worker_id BETWEEN 0 AND 1073741823),
	-- the login the claim belongs to; NULL for a claim of a 1.3 server
	owner name,
	-- held: its holder generates; idle: its holder shut down cleanly;
	-- released: an operator freed it (confirmed once the holder stopped)
	state text NOT NULL CHECK (state IN ('held', 'idle', 'released')),
	confirmed boolean NOT NULL DEFAULT false,
	reassigned_to name,
	-- grows at every change of holder
	version bigint NOT NULL,
	token uuid,
	-- the holder's last extension, to which the next one chains
	nonce uuid,
	-- another process extended the claim with the holder's token and
	-- version: a copy of the holder's memory runs
	forked boolean NOT NULL DEFAULT false,
	-- the holder's IDs lie above floor and never pass promise
	floor timestamptz,
	promise timestamptz,
	-- the epoch in which the holder was granted or last extended the claim
	-- (negative: while that epoch was being started by another call), and
	-- its identity (see settings.epoch_id; NULL: an epoch of no 1.4 registry)
	epoch bigint NOT NULL,
	epoch_id uuid,
	-- the holders' layout: "epoch ms/time/datacenter/worker/sequence bits"
	layout text CHECK (layout ~ '^[0-9]{1,16}(/[0-9]{1,2}){4}$'),
	-- who holds it, for people
	system_identifier bigint,
	host text CHECK (pg_catalog.length(host) <= 255),
	port integer,
	data_directory text CHECK (pg_catalog.length(data_directory) <= 1024),
	claimed_at timestamptz NOT NULL,
	extended_at timestamptz NOT NULL,
	-- a claim of a 1.3 server, and its reclaim lease
	legacy boolean NOT NULL DEFAULT false,
	legacy_reclaim_lease interval,
	-- the registry that made the row (see settings.registry): a dump's
	-- rows keep their registry's
	registry uuid NOT NULL DEFAULT snowflake_registry.this_registry(),
	PRIMARY KEY (datacenter_id, worker_id)
);
CREATE INDEX ON snowflake_registry.claims (owner, datacenter_id);

-- A pair's row is its floor: deleting it would let the next holder start
-- below IDs already issued.  Operators free a worker id with release().
CREATE FUNCTION snowflake_registry.keep_claims()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
	RAISE EXCEPTION 'the claims of a snowflake registry are never deleted'
		USING ERRCODE = 'object_not_in_prerequisite_state',
			  DETAIL = 'A claim''s row keeps the time above which the next holder of its worker id must start.',
			  HINT = 'Free a worker id with snowflake_registry.release().';
END
$$;
CREATE TRIGGER keep_claims BEFORE DELETE ON snowflake_registry.claims
	FOR EACH ROW EXECUTE FUNCTION snowflake_registry.keep_claims();
CREATE TRIGGER keep_claims_truncate BEFORE TRUNCATE ON snowflake_registry.claims
	FOR EACH STATEMENT EXECUTE FUNCTION snowflake_registry.keep_claims();

-- The registry's state: pg_dump keeps it.
SELECT pg_catalog.pg_extension_config_dump('snowflake_registry.settings', '');
SELECT pg_catalog.pg_extension_config_dump('snowflake_registry.fleet', '');
SELECT pg_catalog.pg_extension_config_dump('snowflake_registry.datacenters', '');
SELECT pg_catalog.pg_extension_config_dump('snowflake_registry.logins', '');
SELECT pg_catalog.pg_extension_config_dump('snowflake_registry.claims', '');

-- What the registry answers a server.  status: 'claimed', 'refused' (another
-- start of this login holds it), 'waiting' (a worker id is being freed for
-- it), 'full', 'limit' (this login holds as many claims as it may) or
-- 'layout' (the server's layout is not the fleet's) for a claim; 'extended',
-- 'regranted' (a new epoch: a new version, above floor), 'moved',
-- 'released' or 'forked' (another process extended this claim with its
-- version and token) for an extension.  retry_at: when a refused claim may
-- pass.  holder describes the holder of a claim this login owns; with
-- 'layout', it is the fleet's layout.
CREATE TYPE snowflake_registry.answer AS (
	status text,
	worker_id integer,
	version bigint,
	floor timestamptz,
	promise timestamptz,
	lease interval,
	retry_at timestamptz,
	holder text
);

-- What every call of the registry does first.  Refuse a transaction whose
-- snapshot may be older than the call: the registry reads claims and
-- settings under locks, and a snapshot taken before them would miss what
-- was committed meanwhile (a claim of the same login, a lowered lease, a
-- promise), so that a claim could pass the login's allowance and a promise
-- could reach further than any epoch's floor will (the worker sets READ
-- COMMITTED on its connection).  Make this transaction's commit durable
-- whatever the caller set: a promise counts only once it cannot be lost.
-- And wait no more than five seconds for a row, or the caller's
-- lock_timeout if it is shorter: another call that holds it too long (a
-- login that keeps its transaction open) delays this server's call, never
-- for good.  Refuse, too, while a claim was made by another registry than
-- the one these settings are of: a dump's claims loaded without its
-- settings (with triggers off, the dump's settings' row conflicts with this
-- one and is not loaded), or a dump loaded into a registry that had made
-- claims of its own (the dump's settings replaced this registry's: see
-- settings_loaded).  The lease and epoch floor under which the other
-- registry's promises were made are not those of these settings.
CREATE FUNCTION snowflake_registry.durable()
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
	IF pg_catalog.current_setting('transaction_isolation') OPERATOR(pg_catalog.<>)
	   ALL (ARRAY['read committed', 'read uncommitted']) THEN
		RAISE EXCEPTION 'cannot call the snowflake registry in a % transaction',
			pg_catalog.current_setting('transaction_isolation')
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The registry reads claims and settings under locks; a snapshot older than the locks could miss a claim, a promise or a change of the lease committed meanwhile.',
				  HINT = 'Call the registry''s functions at isolation level READ COMMITTED.';
	END IF;
	IF EXISTS (SELECT FROM snowflake_registry.claims c
			   WHERE c.registry IS DISTINCT FROM
					 (SELECT snowflake_registry.this_registry())) THEN
		RAISE EXCEPTION 'the snowflake registry holds claims of another registry'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'Claims were loaded without the settings of the registry that made them, or beside claims this registry made: the lease and epoch floor under which their promises were made are unknown here, and a floor computed now could lie below them.',
				  HINT = 'Drop the extension, create it again and load the whole dump with triggers enabled (no --disable-triggers), as "From a dump" in docs/fleet.md says.';
	END IF;
	PERFORM pg_catalog.set_config('synchronous_commit', 'on', true);
	PERFORM pg_catalog.set_config('lock_timeout',
		CASE WHEN t.setting::pg_catalog.int4 OPERATOR(pg_catalog.>) 0
			 THEN LEAST(t.setting::pg_catalog.int4, 5000)
			 ELSE 5000 END::pg_catalog.text, true)
	FROM pg_catalog.pg_settings t
	WHERE t.name OPERATOR(pg_catalog.=) 'lock_timeout';
END
$$;

-- What tells this registry's history apart: the timeline, the postmaster's
-- start, and the OIDs of this database and of the claims table.  A restore
-- from a file copy, PITR, a failover to a standby and a dump reloaded into
-- another database or table each change one of them.  Nothing in it
-- depends on the caller's settings (the start is in seconds since 1970, not
-- in the caller's TimeZone and DateStyle), or every caller with other
-- settings would start an epoch.
CREATE FUNCTION snowflake_registry.epoch_key()
RETURNS text
LANGUAGE sql STABLE
AS $$
	SELECT pg_catalog.concat_ws('/',
		pg_catalog.substr(pg_catalog.pg_walfile_name(pg_catalog.pg_current_wal_insert_lsn()), 1, 8),
		EXTRACT(epoch FROM pg_catalog.pg_postmaster_start_time()),
		(SELECT d.oid FROM pg_catalog.pg_database d
		 WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()),
		'snowflake_registry.claims'::pg_catalog.regclass::pg_catalog.oid)
$$;

-- The settings' row, made with the install.  A lowered lease takes its
-- full effect only once the lease before it has run out (previous_lease),
-- even on an install that never granted a claim: a copy of it may have.
-- A dump loaded brings its own row, which replaces this one, whatever was
-- done here before (the operator's setup, or claims: those are then of
-- another registry than the settings, and durable refuses every call), so
-- that the dump's registry, its lease and its epoch floor go on here, in a
-- new epoch with an identity of its own.  The same registry's settings of
-- another time (an older dump of this registry loaded into it, or a dump
-- of its original into a copy) keep the larger of each bound the two rows
-- recorded, as either may bound promises that the claims here carry, and
-- the operator hears of it.  With triggers off, the dump's row conflicts
-- with this one and is not loaded.
CREATE FUNCTION snowflake_registry.settings_loaded()
RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
	present snowflake_registry.settings;
BEGIN
	SELECT * INTO present FROM snowflake_registry.settings FOR UPDATE;
	IF NOT FOUND THEN
		RETURN NEW;
	END IF;
	IF present.registry OPERATOR(pg_catalog.=) NEW.registry THEN
		NEW.lease := GREATEST(NEW.lease, present.lease);
		NEW.margin := GREATEST(NEW.margin, present.margin);
		NEW.epoch_floor := GREATEST(NEW.epoch_floor, present.epoch_floor);
		IF (present.lease_changed_at OPERATOR(pg_catalog.+) present.previous_lease) OPERATOR(pg_catalog.>)
		   (NEW.lease_changed_at OPERATOR(pg_catalog.+) NEW.previous_lease) THEN
			NEW.previous_lease := present.previous_lease;
			NEW.lease_changed_at := present.lease_changed_at;
		END IF;
		RAISE WARNING 'the snowflake registry''s settings were replaced by its settings of another time'
			USING DETAIL = pg_catalog.format('A dump of this registry (or of the registry it is a copy of) was loaded. The lease is now %s, the larger of the two.', NEW.lease),
				  HINT = 'Set the lease again with configure() if it should be shorter; a new epoch starts at the next call.';
	END IF;
	NEW.epoch_key := NULL;
	NEW.epoch_id := pg_catalog.gen_random_uuid();
	DELETE FROM snowflake_registry.settings;
	RETURN NEW;
END
$$;
CREATE TRIGGER settings_loaded BEFORE INSERT ON snowflake_registry.settings
	FOR EACH ROW EXECUTE FUNCTION snowflake_registry.settings_loaded();
INSERT INTO snowflake_registry.settings DEFAULT VALUES;

-- Likewise the fleet's row of a dump, with its layout, replaces the one
-- that the operator's setup made before the load, in a registry that has
-- made no claim (a layout changed under claims would need set_layout's
-- floor).  The registry's own calls insert the row without a layout, when
-- it is missing, and never replace it.  (The load starts a new epoch, as
-- the dump's settings come from another registry's history, whose floor
-- lies above every promise of the other layout.)
CREATE FUNCTION snowflake_registry.fleet_loaded()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
	IF NEW.layout IS NOT NULL AND
	   NOT EXISTS (SELECT FROM snowflake_registry.claims c
				   WHERE c.registry OPERATOR(pg_catalog.=)
						 (SELECT snowflake_registry.this_registry())) THEN
		DELETE FROM snowflake_registry.fleet;
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER fleet_loaded BEFORE INSERT ON snowflake_registry.fleet
	FOR EACH ROW EXECUTE FUNCTION snowflake_registry.fleet_loaded();

-- The registry's epoch and its floor.  A registry whose key changed may
-- have gone back in time: then a new epoch starts, whose floor lies above
-- every promise the registry may have recorded and forgotten (each was
-- bounded by the registry's clock of its day plus the lease of that day:
-- the one in force, or the one before it), as long as the clock now is not
-- behind those days' clocks by more than the margin, and no change of the
-- lease was forgotten with them.  A restart starts an epoch too: nothing in
-- a restored state tells a restart from a restore; and so does the first
-- call of a new install, which may be a reinstall or a dump reloaded.
CREATE FUNCTION snowflake_registry.epoch(OUT number bigint, OUT floor timestamptz,
	OUT id uuid)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	key text := snowflake_registry.epoch_key();
	s snowflake_registry.settings;
BEGIN
	SELECT * INTO s FROM snowflake_registry.settings;
	IF NOT FOUND THEN
		INSERT INTO snowflake_registry.settings DEFAULT VALUES
		ON CONFLICT DO NOTHING;
		SELECT * INTO s FROM snowflake_registry.settings;
	END IF;
	IF s.epoch_key IS DISTINCT FROM key THEN
		-- Any floor computed after the key changed covers what was forgotten,
		-- so a call that finds another one starting the epoch (whose
		-- transaction may stay open) does not wait for it: it starts the
		-- epoch for itself, with a floor of its own, a number that no
		-- committed epoch has (the negative of the one to come), and an
		-- identity that none has either.  That identity is drawn from the
		-- committed epoch's and the key, so it is the same for every such
		-- call while both stay (were it new at each call, each extension
		-- would be a new grant whose promise is its floor, and no server
		-- would generate while the other transaction stayed open), and
		-- another once either changes: a restore changes the key, a change
		-- of layout the committed identity.
		BEGIN
			SELECT * INTO s FROM snowflake_registry.settings FOR UPDATE NOWAIT;
			IF s.epoch_key IS DISTINCT FROM key THEN
				UPDATE snowflake_registry.settings
				SET epoch = s.epoch OPERATOR(pg_catalog.+) 1,
					epoch_id = pg_catalog.gen_random_uuid(),
					epoch_key = key,
					epoch_floor = snowflake_registry.epoch_floor(s)
				RETURNING * INTO s;
			END IF;
		EXCEPTION WHEN lock_not_available THEN
			number := OPERATOR(pg_catalog.-) (s.epoch OPERATOR(pg_catalog.+) 1);
			floor := snowflake_registry.epoch_floor(s);
			id := pg_catalog.md5(pg_catalog.concat_ws('/', 'in flight',
				s.epoch_id, key))::uuid;
			RETURN;
		END;
	END IF;
	number := s.epoch;
	floor := s.epoch_floor;
	id := s.epoch_id;
END
$$;

-- The floor that a registry dropped from this database noted for the next
-- one (see note_floor), or NULL: a database setting, which outlives the
-- extension, in seconds since 1970.  A note that is not such a number
-- stops every epoch from starting and every claim from passing, saying so
-- (extensions of the claims held go on): read as none, it would let the
-- floor it meant go.
CREATE FUNCTION snowflake_registry.noted_floor()
RETURNS timestamptz
LANGUAGE plpgsql STABLE
AS $$
DECLARE
	note text := snowflake_registry.note('floor');
BEGIN
	IF note IS NULL THEN
		RETURN NULL;
	ELSIF note OPERATOR(pg_catalog.!~) '^[0-9]{1,11}(\.[0-9]{1,6})?$' THEN
		RAISE EXCEPTION 'invalid value for "snowflake_registry.floor" in the settings of database "%": "%"',
			pg_catalog.current_database(), note
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'It is a time in seconds since 1970, as a drop of the registry notes it and as docs/fleet.md''s "Replacing a registry" makes it by hand.';
	END IF;
	RETURN pg_catalog.to_timestamp(note::pg_catalog.float8);
END
$$;

-- The floor of an epoch that starts now: the registry's clock plus the lease
-- plus the margin, past the end of every promise made under the lease
-- before the last change, and above the floor a registry dropped from this
-- database noted.  A claim's own recorded promise floors its next holder
-- (take, and a regrant): other pairs' promises matter only across a change
-- of layout, whose epoch set_layout floors above them.
CREATE FUNCTION snowflake_registry.epoch_floor(s snowflake_registry.settings)
RETURNS timestamptz
LANGUAGE sql VOLATILE
AS $$
	SELECT GREATEST(s.epoch_floor,
		pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+)
		s.lease OPERATOR(pg_catalog.+) s.margin,
		s.lease_changed_at OPERATOR(pg_catalog.+) s.previous_lease
		OPERATOR(pg_catalog.+) s.margin,
		snowflake_registry.noted_floor())
$$;

-- Before a command that may drop the registry (DROP EXTENSION, DROP SCHEMA
-- ... CASCADE, DROP OWNED) runs, note in this database's settings the floor
-- above which a registry made here next must start: every promise and
-- floor recorded, and the floor of an epoch starting now.  A new install
-- knows nothing of the old one's claims, and a holder cut off from the
-- registry while it was replaced generates up to its promise: the new
-- install's first epoch starts above the note (epoch_floor), so no new
-- holder of that pair meets it.  Note the lease too, which the new install
-- takes (noted_lease): under the default lease, longer, its promises would
-- pass the epoch floor of a copy of the old registry promoted or restored
-- later (a review made 5,868 IDs twice so, with a lease of 5 s).  An event trigger cannot tell what a
-- command will drop, so every such command of this database notes it,
-- where its role could drop the registry: with the rights of the
-- extension's owner or of its schema's (refused, saying why, where it has
-- only the schema's: it could not read the claims).  Any other returns at
-- once, before it names an object of the registry (a login could
-- otherwise lock the claims, or raise the note, and one without USAGE on
-- the schema could drop nothing in this database).  A note is only ever
-- raised, and floors every epoch that starts and every claim that passes
-- after it (a drop that leaves the registry in place makes new holders
-- wait up to the lease; extensions of the claims held go on).  The claims
-- are locked against claims and extensions,
-- even those that have only read their row, before anything is read, so
-- that none in flight gets a promise past the note (a registry's first
-- claim included: the claims are not empty once the lock is had); and read
-- in a snapshot of their own, which a transaction of another isolation
-- level would not take.  A 1.3 server's time counts up to the lease ahead
-- at most: 1.3 took any time, up to a year, from any holder of its rights,
-- and a note that far ahead would stop the fleet at the registry's next
-- start (docs/operations.md says to stop 1.3 servers cleanly before a
-- drop).  Where no trigger fires (DROP
-- DATABASE, event triggers off, single-user mode) nothing is noted:
-- docs/fleet.md, "Replacing a registry".
CREATE FUNCTION snowflake_registry.note_floor()
RETURNS event_trigger
LANGUAGE plpgsql
AS $$
DECLARE
	ext_owner pg_catalog.oid;
	schema_owner pg_catalog.oid;
	f timestamptz;
	l interval;
BEGIN
	SELECT e.extowner, n.nspowner INTO ext_owner, schema_owner
	FROM pg_catalog.pg_extension e
	JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace
	WHERE e.extname OPERATOR(pg_catalog.=) 'snowflake_registry';
	IF NOT FOUND OR
	   NOT (pg_catalog.pg_has_role(CURRENT_USER, ext_owner, 'USAGE') OR
			pg_catalog.pg_has_role(CURRENT_USER, schema_owner, 'USAGE')) THEN
		RETURN;
	END IF;
	IF NOT pg_catalog.pg_has_role(CURRENT_USER, ext_owner, 'USAGE') THEN
		RAISE EXCEPTION 'permission denied to drop objects in the snowflake registry''s database as role "%"', CURRENT_USER
			USING ERRCODE = 'insufficient_privilege',
				  DETAIL = pg_catalog.format('Role "%s" owns schema "snowflake_registry", and so may drop the registry, whose promises a drop first notes for the next install in this database; only roles with the rights of the registry''s owner "%s" may read them.',
					  pg_catalog.pg_get_userbyid(schema_owner), pg_catalog.pg_get_userbyid(ext_owner)),
				  HINT = pg_catalog.format('Run the command as "%s", or give the schema back to it with ALTER SCHEMA snowflake_registry OWNER TO.',
					  pg_catalog.pg_get_userbyid(ext_owner));
	END IF;
	IF pg_catalog.current_setting('transaction_isolation') OPERATOR(pg_catalog.<>)
	   ALL (ARRAY['read committed', 'read uncommitted']) THEN
		RAISE EXCEPTION 'cannot note the snowflake registry''s floor in a % transaction',
			pg_catalog.current_setting('transaction_isolation')
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'Before this command may drop the registry, it notes every promise the registry recorded for the next install in this database; a snapshot older than the command could miss one.',
				  HINT = 'Run the command at isolation level READ COMMITTED.';
	END IF;
	LOCK TABLE snowflake_registry.settings, snowflake_registry.claims
		IN EXCLUSIVE MODE;
	-- the lease, with or without claims: a copy of this registry, which the
	-- next install cannot see, assumes promises no longer than it
	SELECT s.lease INTO l FROM snowflake_registry.settings s;
	IF l IS NOT NULL AND l IS DISTINCT FROM snowflake_registry.noted_lease() THEN
		EXECUTE pg_catalog.format('ALTER DATABASE %I SET snowflake_registry.lease = %L',
			pg_catalog.current_database(),
			EXTRACT(epoch FROM l)::pg_catalog.text);
	END IF;
	IF NOT EXISTS (SELECT FROM snowflake_registry.claims) THEN
		RETURN;
	END IF;
	SELECT GREATEST((SELECT pg_catalog.max(CASE WHEN c.legacy
												THEN LEAST(GREATEST(c.promise, c.floor),
														   pg_catalog.clock_timestamp()
														   OPERATOR(pg_catalog.+)
														   coalesce(s.lease, interval '1 hour'))
												ELSE GREATEST(c.promise, c.floor) END)
					 FROM snowflake_registry.claims c),
					snowflake_registry.epoch_floor(s))
	INTO f
	FROM (SELECT) one LEFT JOIN snowflake_registry.settings s ON true;
	IF f OPERATOR(pg_catalog.>)
	   coalesce(snowflake_registry.noted_floor(), '-infinity') THEN
		EXECUTE pg_catalog.format('ALTER DATABASE %I SET snowflake_registry.floor = %L',
			pg_catalog.current_database(),
			EXTRACT(epoch FROM f)::pg_catalog.text);
	END IF;
END
$$;

-- The promise a holder gets now: the registry's clock plus the lease, never
-- below what it had.
CREATE FUNCTION snowflake_registry.promise(previous timestamptz)
RETURNS timestamptz
LANGUAGE sql VOLATILE
AS $$
	SELECT GREATEST(previous,
		pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) s.lease)
	FROM snowflake_registry.settings s
$$;

-- Who holds claim c, for its own login: system, host, port, data directory,
-- since when, and its promise.
CREATE FUNCTION snowflake_registry.holder(c snowflake_registry.claims)
RETURNS text
LANGUAGE sql STABLE
AS $$
	SELECT pg_catalog.format('system %s (%s:%s, %s), holding it since %s with IDs up to %s',
		c.system_identifier, c.host, c.port, c.data_directory, c.claimed_at,
		c.promise)
$$;

-- The answer about claim c.
CREATE FUNCTION snowflake_registry.answer_of(
	c snowflake_registry.claims,
	status text,
	retry_at timestamptz DEFAULT NULL,
	holder text DEFAULT NULL)
RETURNS snowflake_registry.answer
LANGUAGE sql STABLE
AS $$
	SELECT ROW(status, c.worker_id, c.version, c.floor, c.promise, s.lease,
			   retry_at, holder)::snowflake_registry.answer
	FROM snowflake_registry.settings s
$$;

-- The claims table of the snowflake extension of 1.3 in this database, if it
-- is there: the 1.3 servers of a fleet being upgraded still use it.  Only
-- the extension's own member counts: a table of that name that a login made
-- is never read or written.
CREATE FUNCTION snowflake_registry.legacy_table()
RETURNS regclass
LANGUAGE sql STABLE
AS $$
	SELECT c.oid::pg_catalog.regclass
	FROM pg_catalog.pg_extension e
	JOIN pg_catalog.pg_depend d
	  ON d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
	 AND d.refobjid OPERATOR(pg_catalog.=) e.oid
	 AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
	 AND d.deptype OPERATOR(pg_catalog.=) 'e'
	JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) d.objid
	WHERE e.extname OPERATOR(pg_catalog.=) 'snowflake'
	  AND c.relname OPERATOR(pg_catalog.=) 'snowflake_claims'
	  AND c.relnamespace OPERATOR(pg_catalog.=) e.extnamespace
	  AND c.relkind OPERATOR(pg_catalog.=) 'r'
$$;

-- Bring the claims of 1.3 servers in datacenter dc (all of them: NULL) up to
-- date from the 1.3 table: a pair there that this registry does not know is
-- added as a legacy claim, and a legacy claim takes the 1.3 row's state.
-- Such a claim passes on only by the 1.3 rules: its holder's clean shutdown,
-- a release it confirmed, or its reclaim lease; and above its promise.
-- What is read stays true until this transaction ends: the lock that every
-- 1.3 claim takes first for its datacenter keeps 1.3 claims out, and the
-- rows are locked against 1.3 check-ins, idles and releases.  (Without them,
-- a 1.3 server that claimed meanwhile got a worker id that this transaction
-- then gave a 1.4 server as well.)  The lock's key is 1.3's, which any role
-- can take, holding back the claims of a datacenter as under 1.3, until the
-- 1.3 registry is dropped.
CREATE FUNCTION snowflake_registry.legacy_refresh(dc integer)
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	legacy regclass := snowflake_registry.legacy_table();
BEGIN
	IF legacy IS NULL THEN
		RETURN;
	END IF;
	IF dc IS NOT NULL THEN
		PERFORM pg_catalog.pg_advisory_xact_lock(1397641047, dc);
	END IF;
	EXECUTE pg_catalog.format($q$
		SELECT FROM %s o
		WHERE ($1 IS NULL OR o.datacenter_id OPERATOR(pg_catalog.=) $1)
		FOR UPDATE$q$, legacy) USING dc;
	EXECUTE pg_catalog.format($q$
		INSERT INTO snowflake_registry.claims AS c
			(datacenter_id, worker_id, owner, state, confirmed, version, token,
			 floor, promise, epoch, system_identifier, host, port,
			 data_directory, claimed_at, extended_at, legacy,
			 legacy_reclaim_lease)
		SELECT o.datacenter_id, o.worker_id, NULL,
			   CASE WHEN o.released THEN 'released'
					WHEN o.idle THEN 'idle' ELSE 'held' END,
			   o.released AND o.idle, o.version, o.token, o.taken_above,
			   GREATEST(coalesce(o.issued_until,
								 o.checked_in_at OPERATOR(pg_catalog.+) o.takeover_delay),
						o.taken_above),
			   0, o.system_identifier, o.host, o.port, o.data_directory,
			   o.claimed_at, o.checked_in_at, true,
			   coalesce(o.reclaim_lease, interval '1 day')
		FROM %s o
		WHERE ($1 IS NULL OR o.datacenter_id OPERATOR(pg_catalog.=) $1)
		  AND o.checked_in_at OPERATOR(pg_catalog.<>) '9999-12-31 00:00:00+00'
		ON CONFLICT (datacenter_id, worker_id) DO UPDATE
		SET state = CASE WHEN c.state OPERATOR(pg_catalog.=) 'released'
						 THEN c.state ELSE excluded.state END,
			confirmed = excluded.confirmed,
			version = excluded.version, token = excluded.token,
			-- a clean shutdown lowers the promise to the newest ID, as 1.4's
			-- idle does; otherwise it only grows
			promise = CASE WHEN excluded.state OPERATOR(pg_catalog.=) 'idle'
						   THEN excluded.promise
						   ELSE GREATEST(c.promise, excluded.promise) END,
			system_identifier = excluded.system_identifier,
			extended_at = excluded.extended_at,
			legacy_reclaim_lease = excluded.legacy_reclaim_lease
		WHERE c.legacy$q$, legacy) USING dc;
END
$$;

-- A 1.4 holder took claim c: the 1.3 table shows the pair held for good by
-- its system, so that no 1.3 server claims it, nor takes it over.  Its last
-- check-in lies in the year 9999 too, not at 'infinity': a 1.3 server reads
-- the time since a row's check-in in every answer about it, and when that
-- failed it took the registry for unreachable and generated on (a 1.3
-- holder whose row this replaced never learnt that its claim moved).
CREATE FUNCTION snowflake_registry.legacy_mirror(c snowflake_registry.claims)
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	legacy regclass := snowflake_registry.legacy_table();
BEGIN
	IF legacy IS NULL THEN
		RETURN;
	END IF;
	EXECUTE pg_catalog.format($q$
		INSERT INTO %1$s AS o
			(datacenter_id, worker_id, system_identifier, token, claimed_at,
			 checked_in_at, idle, takeover_delay, version, issued_until,
			 taken_above, released, reclaim_lease)
		VALUES ($1, $2, $3, NULL, $4, '9999-12-31 00:00:00+00', false,
				interval '1 day', 1,
				'9999-12-31 00:00:00+00', '9999-12-31 00:00:00+00', false,
				interval '1 year')
		ON CONFLICT (datacenter_id, worker_id) DO UPDATE
		SET system_identifier = $3, token = NULL,
			checked_in_at = '9999-12-31 00:00:00+00',
			idle = false, released = false, reassigned_to = NULL,
			takeover_delay = interval '1 day', version = o.version + 1,
			issued_until = '9999-12-31 00:00:00+00',
			taken_above = '9999-12-31 00:00:00+00',
			reclaim_lease = interval '1 year'$q$, legacy)
	USING c.datacenter_id, c.worker_id, coalesce(c.system_identifier, 0),
		c.claimed_at;
END
$$;

-- A layout as the registry records and compares it: "epoch ms/time/
-- datacenter/worker/sequence bits", each a number with no leading zero,
-- within the bounds a server accepts; NULL if it is not one.  Two spellings
-- of one layout are one layout.
CREATE FUNCTION snowflake_registry.layout_of(layout text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
	b integer[];
BEGIN
	IF layout IS NULL OR layout !~ '^[0-9]{1,16}(/[0-9]{1,2}){4}$' THEN
		RETURN NULL;
	END IF;
	b := pg_catalog.string_to_array(pg_catalog.substr(layout,
				pg_catalog.strpos(layout, '/') OPERATOR(pg_catalog.+) 1),
			'/')::integer[];
	IF b[1] NOT BETWEEN 32 AND 63 OR b[2] NOT BETWEEN 0 AND 30 OR
	   b[3] NOT BETWEEN 0 AND 30 OR b[4] NOT BETWEEN 1 AND 31 OR
	   b[1] OPERATOR(pg_catalog.+) b[2] OPERATOR(pg_catalog.+) b[3]
	   OPERATOR(pg_catalog.+) b[4] OPERATOR(pg_catalog.>) 63 THEN
		RETURN NULL;
	END IF;
	RETURN pg_catalog.concat_ws('/',
		pg_catalog.split_part(layout, '/', 1)::bigint, b[1], b[2], b[3], b[4]);
END
$$;

-- The fleet's layout: the one an operator set (configure), or else the one
-- the claims were made with, or else proposed, the first claim's, recorded
-- at once; NULL while it cannot be told: the claims name several, or a
-- registry of 1.3 is in this database (its servers' layout was never
-- recorded).  Every server of a fleet must use it, not merely each pair the
-- layout it was used with: with other widths the same pair means other
-- bits (datacenter 1, worker 0 in 5/5 bits is datacenter 0, worker 32 in
-- 4/6), and other sequence bits move every field, so two servers of two
-- layouts can make the same ID whatever their pairs.  Returns holding the
-- fleet's row until the transaction ends, in share mode at least: a change
-- of layout (set_layout) waits for every claim and extension that read the
-- layout before it, so that the new epoch it starts lies above their
-- promises, and every one after it reads the new layout.
CREATE FUNCTION snowflake_registry.fleet_layout(proposed text)
RETURNS text
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	fleet text;
BEGIN
	IF NOT EXISTS (SELECT FROM snowflake_registry.fleet) THEN
		INSERT INTO snowflake_registry.fleet DEFAULT VALUES ON CONFLICT DO NOTHING;
	END IF;
	-- record one, if it can be told: a first claim that races another waits
	-- for its row, then finds the layout the other recorded
	IF (SELECT f.layout FROM snowflake_registry.fleet f) IS NULL AND
	   snowflake_registry.legacy_table() IS NULL AND
	   NOT EXISTS (SELECT FROM snowflake_registry.claims c WHERE c.legacy) AND
	   (SELECT pg_catalog.count(DISTINCT c.layout)
		FROM snowflake_registry.claims c) OPERATOR(pg_catalog.<=) 1 THEN
		UPDATE snowflake_registry.fleet f
		SET layout = coalesce(
			(SELECT c.layout FROM snowflake_registry.claims c
			 WHERE c.layout IS NOT NULL LIMIT 1),
			proposed)
		WHERE f.layout IS NULL;
	END IF;
	SELECT f.layout INTO fleet FROM snowflake_registry.fleet f FOR SHARE;
	RETURN fleet;
END
$$;

-- Give claim c to this start (token, nonce) of the calling login: a new
-- version, above every promise the pair had, above the epoch's floor, and
-- above the note of a drop (noted_floor), which an operator may make by
-- hand after the epoch started: a new holder waits where an old one may
-- still run.
CREATE FUNCTION snowflake_registry.take(
	c snowflake_registry.claims,
	epoch_number bigint,
	epoch_uuid uuid,
	epoch_floor timestamptz,
	layout text,
	token uuid,
	nonce uuid,
	system_identifier bigint,
	host text,
	port integer,
	data_directory text)
RETURNS snowflake_registry.answer
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	now_ts timestamptz := pg_catalog.clock_timestamp();
	lease interval := (SELECT s.lease FROM snowflake_registry.settings s);
	floor_ts timestamptz;
BEGIN
	-- a 1.3 server's time may lie up to a year ahead (1.3 took any, and any
	-- login with 1.3's rights could set it): the claim waits until it is
	-- within the lease, so that the row it becomes holds no promise further
	-- ahead than one of 1.4 (a change of layout floors every pair above
	-- every promise)
	IF c.legacy AND c.promise OPERATOR(pg_catalog.>)
	   (now_ts OPERATOR(pg_catalog.+) lease) THEN
		RETURN snowflake_registry.answer_of(c, 'refused',
			c.promise OPERATOR(pg_catalog.-) lease,
			pg_catalog.format('a snowflake 1.3 server, which reported IDs up to %s',
				c.promise));
	END IF;
	-- a 1.3 holder whose claim passed by its reclaim lease may still
	-- generate (1.3 did not stop it): above the clock, at least
	floor_ts := GREATEST(c.promise, c.floor, epoch_floor,
						 CASE WHEN c.legacy THEN now_ts END,
						 snowflake_registry.noted_floor());
	UPDATE snowflake_registry.claims s
	SET owner = SESSION_USER, state = 'held', confirmed = false,
		reassigned_to = NULL,
		version = s.version OPERATOR(pg_catalog.+) 1,
		token = take.token, nonce = take.nonce, forked = false,
		floor = floor_ts,
		-- never below the promise the row had: a crash restart's floor
		-- leaves it out, but the next holder's floor is built from it
		promise = snowflake_registry.promise(GREATEST(floor_ts, s.promise)),
		epoch = epoch_number, epoch_id = epoch_uuid, layout = take.layout,
		system_identifier = take.system_identifier, host = take.host,
		port = take.port, data_directory = take.data_directory,
		claimed_at = now_ts, extended_at = now_ts,
		legacy = false, legacy_reclaim_lease = NULL
	WHERE s.datacenter_id OPERATOR(pg_catalog.=) c.datacenter_id
	  AND s.worker_id OPERATOR(pg_catalog.=) c.worker_id
	RETURNING * INTO c;
	PERFORM snowflake_registry.legacy_mirror(c);
	RETURN snowflake_registry.answer_of(c, 'claimed');
END
$$;

-- May claim c, not held by this login, pass to it now?  A released claim
-- once its holder confirmed or its promise is behind the clock; a claim
-- whose promise has been behind the clock for reclaim_after, counted in
-- seconds as the settings' CHECK does (on the calendar of the caller's
-- TimeZone, a day spelled '1 day -24 hours' could reach a day past the
-- clock, and a day across a change of DST lasts 23 or 25 hours); a 1.3
-- server's claim only by the 1.3 rules.
CREATE FUNCTION snowflake_registry.free(c snowflake_registry.claims)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
	SELECT CASE
		WHEN c.legacy THEN
			(c.state OPERATOR(pg_catalog.=) 'released' AND c.confirmed)
			OR c.extended_at OPERATOR(pg_catalog.<) (pg_catalog.clock_timestamp()
				OPERATOR(pg_catalog.-) c.legacy_reclaim_lease)
		WHEN c.state OPERATOR(pg_catalog.=) 'released' THEN
			c.confirmed OR c.promise OPERATOR(pg_catalog.<) pg_catalog.clock_timestamp()
		ELSE
			c.promise OPERATOR(pg_catalog.<) (pg_catalog.clock_timestamp()
				OPERATOR(pg_catalog.-) (pg_catalog.date_part('epoch', s.reclaim_after)
					OPERATOR(pg_catalog.*) interval '1 s'))
	END
	FROM snowflake_registry.settings s
$$;

-- May the login that owns c, or to which it is reassigned, take it now?
-- Once it is idle, released and confirmed, or its promise is behind the
-- clock; a 1.3 server's claim only by the 1.3 rules.
CREATE FUNCTION snowflake_registry.free_to_owner(c snowflake_registry.claims)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
	SELECT c.state OPERATOR(pg_catalog.=) 'idle' OR
		   (c.state OPERATOR(pg_catalog.=) 'released' AND c.confirmed) OR
		   (NOT c.legacy AND
			c.promise OPERATOR(pg_catalog.<) pg_catalog.clock_timestamp()) OR
		   (c.legacy AND snowflake_registry.free(c))
$$;

-- How many claims a login may hold: 1, unless an operator allowed more.
CREATE FUNCTION snowflake_registry.allowance(login name)
RETURNS integer
LANGUAGE sql STABLE
AS $$
	SELECT coalesce((SELECT l.claims FROM snowflake_registry.logins l
					 WHERE l.login OPERATOR(pg_catalog.=) allowance.login), 1)
$$;

-- How many claims a login holds, in any datacenter and with any worker id:
-- every claim it owns that is not free to others yet (held, or idle within
-- the reclaim period).
CREATE FUNCTION snowflake_registry.claims_of(login name)
RETURNS bigint
LANGUAGE sql STABLE
AS $$
	SELECT pg_catalog.count(*) FROM snowflake_registry.claims s
	WHERE s.owner OPERATOR(pg_catalog.=) claims_of.login
	  AND s.state OPERATOR(pg_catalog.<>) 'released'
	  AND NOT snowflake_registry.free(s)
$$;

-- How many of a login's claims its servers run on: held, their promise
-- ahead (a server generates up to it).  A start of the login takes or
-- resumes a claim only while these are fewer than it may hold.
CREATE FUNCTION snowflake_registry.running_claims(login name)
RETURNS bigint
LANGUAGE sql STABLE
AS $$
	SELECT pg_catalog.count(*) FROM snowflake_registry.claims s
	WHERE s.owner OPERATOR(pg_catalog.=) running_claims.login
	  AND s.state OPERATOR(pg_catalog.=) 'held'
	  AND NOT snowflake_registry.free_to_owner(s)
$$;

-- Lock the row of the session's login, made if absent: the claims of one
-- login, and the extensions of its claims whose promise passed, run one
-- at a time, so that each counts the claims the others took.  Taken
-- before any claim's row, as everywhere.
CREATE FUNCTION snowflake_registry.lock_login()
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
	PERFORM FROM snowflake_registry.logins l
	WHERE l.login OPERATOR(pg_catalog.=) SESSION_USER
	FOR UPDATE;
	IF NOT FOUND THEN
		INSERT INTO snowflake_registry.logins AS l VALUES (SESSION_USER, 1)
		ON CONFLICT (login) DO NOTHING;
		PERFORM FROM snowflake_registry.logins l
		WHERE l.login OPERATOR(pg_catalog.=) SESSION_USER
		FOR UPDATE;
	END IF;
END
$$;

-- Claim a worker id in datacenter_id, from 0 to max_worker_id, for one start
-- (token) of a server connected as its login, in one transaction; nonce
-- starts the chain of its extensions.  The rules:
--   * this start's own claim, asked for again with the same nonce (its answer
--     was lost), is answered again;
--   * a claim of an earlier incarnation of the same postmaster (the same
--     token: a crash restart) is taken at once, above its floor alone;
--   * a claim of this login, or reassigned to it, is its own (for a login
--     allowed more than one, one it may take at once first; for a login
--     allowed one, one it may not take yet first; then the preferred id,
--     then the one extended last): taken at once if idle,
--     released and confirmed, or with its promise behind the registry's
--     clock, unless the login's claims held with their promise ahead, in
--     any datacenter, are as many as it may hold ('limit'); otherwise
--     'refused' (another start of this login holds it: a
--     running copy, or a previous start whose promise has not passed) or
--     'waiting' (reassigned, its holder not done), with retry_at; unless the
--     login may hold more claims than it does (snowflake_registry.allow):
--     then it is another server of the login, which gets a claim of its own;
--   * otherwise, within the login's allowance ('limit' beyond it: every
--     claim it holds counts, in any datacenter, idle ones until they are free
--     to others), the
--     preferred id if never claimed, then the lowest id never claimed, then
--     a claim that is free (see snowflake_registry.free), the one whose
--     promise passed first;
--   * otherwise 'full'.
-- A server whose layout is not the fleet's gets nothing ('layout', with the
-- fleet's layout as holder, NULL while an operator must set it).
CREATE FUNCTION snowflake_registry.claim(
	datacenter_id integer,
	max_worker_id integer,
	layout text,
	token uuid,
	nonce uuid,
	system_identifier bigint DEFAULT NULL,
	host text DEFAULT NULL,
	port integer DEFAULT NULL,
	data_directory text DEFAULT NULL,
	preferred_worker_id integer DEFAULT NULL)
RETURNS snowflake_registry.answer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
	c snowflake_registry.claims;
	ep record;
	free_id integer;
	fleet text;
	dc integer := claim.datacenter_id;
	allowed integer;
BEGIN
	layout := snowflake_registry.layout_of(layout);
	IF dc IS NULL OR dc NOT BETWEEN 0 AND 1073741823 OR
	   max_worker_id IS NULL OR max_worker_id NOT BETWEEN 0 AND 1073741823 OR
	   layout IS NULL OR
	   token IS NULL OR nonce IS NULL OR
	   pg_catalog.length(host) > 255 OR pg_catalog.length(data_directory) > 1024 OR
	   port NOT BETWEEN 0 AND 65535 THEN
		RAISE EXCEPTION 'invalid claim for datacenter % with largest worker id %',
			dc, max_worker_id
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'The datacenter id and the largest worker id lie between 0 and 1073741823; the layout is one a server accepts; the token and nonce are required; the host has at most 255 characters and the data directory at most 1024.';
	END IF;
	PERFORM snowflake_registry.durable();
	-- the layout before the epoch: a change of layout commits a new epoch
	-- with it, which this call then sees too
	fleet := snowflake_registry.fleet_layout(layout);
	IF fleet IS DISTINCT FROM layout THEN
		RETURN ROW('layout', NULL, NULL, NULL, NULL, NULL, NULL,
				   fleet)::snowflake_registry.answer;
	END IF;
	SELECT * INTO ep FROM snowflake_registry.epoch();
	-- one claim of a login at a time: two starts of it (copies of a
	-- server, or servers sharing the login), each counting its claims
	-- without the other's, would together hold more than it may.  The
	-- login's own row, so that no other login waits; before any claim's
	-- row, which the 1.3 claims' refresh may lock.
	PERFORM snowflake_registry.lock_login();
	PERFORM snowflake_registry.legacy_refresh(dc);
	allowed := snowflake_registry.allowance(SESSION_USER);

	-- this start's claim, asked for again (not once its promise passed while
	-- the login's other servers hold as many claims as it may have: see
	-- below)
	SELECT * INTO c FROM snowflake_registry.claims s
	WHERE s.datacenter_id OPERATOR(pg_catalog.=) dc
	  AND s.token OPERATOR(pg_catalog.=) claim.token
	  AND s.nonce OPERATOR(pg_catalog.=) claim.nonce
	  AND s.owner OPERATOR(pg_catalog.=) SESSION_USER
	  AND s.state OPERATOR(pg_catalog.=) 'held'
	  AND s.worker_id OPERATOR(pg_catalog.<=) max_worker_id
	  AND NOT (s.promise OPERATOR(pg_catalog.<) pg_catalog.clock_timestamp() AND
			   snowflake_registry.running_claims(SESSION_USER)
			   OPERATOR(pg_catalog.>=) allowed)
	FOR UPDATE;
	IF FOUND AND c.epoch_id OPERATOR(pg_catalog.=) ep.id THEN
		RETURN snowflake_registry.answer_of(c, 'claimed');
	ELSIF FOUND THEN
		RETURN snowflake_registry.take(c, ep.number, ep.id, ep.floor, layout, token,
			nonce, system_identifier, host, port, data_directory);
	END IF;

	-- a new incarnation of the same postmaster (a crash restart: the token
	-- is the postmaster's, kept in no file): the old incarnation's processes
	-- are gone, and the server's durable mark keeps its new IDs above theirs,
	-- so it takes the claim at once, above the floor alone.  Not once a copy
	-- of the holder's memory was seen (forked): then the copies' IDs meet up
	-- to their shared promise at most, and whoever takes the claim next
	-- starts above it.  Nor, once its promise passed, while the login's
	-- other servers hold as many claims as it may have (as extend() would
	-- stop it): then it is the server too many.
	SELECT * INTO c FROM snowflake_registry.claims s
	WHERE s.datacenter_id OPERATOR(pg_catalog.=) dc
	  AND s.token OPERATOR(pg_catalog.=) claim.token
	  AND s.owner OPERATOR(pg_catalog.=) SESSION_USER
	  AND s.state OPERATOR(pg_catalog.=) 'held'
	  AND NOT s.forked
	  AND s.worker_id OPERATOR(pg_catalog.<=) max_worker_id
	  AND NOT (s.promise OPERATOR(pg_catalog.<) pg_catalog.clock_timestamp() AND
			   snowflake_registry.running_claims(SESSION_USER)
			   OPERATOR(pg_catalog.>=) allowed)
	FOR UPDATE;
	IF FOUND THEN
		c.promise := NULL;
		RETURN snowflake_registry.take(c, ep.number, ep.id, ep.floor, layout, token,
			nonce, system_identifier, host, port, data_directory);
	END IF;

	-- a claim of this login, or reassigned to it; or one of a 1.3 server of
	-- this system.  For a login allowed more than one claim, one it may
	-- take at once comes first: the others are held by its other servers,
	-- and its idle or expired claim, which still counts, would be left
	-- unused.  A login allowed one has one server, so for it a claim it may
	-- not take yet comes first: a start that finds one held is a copy of a
	-- running server, refused even when the login owns another claim it
	-- could take (left over from a larger allowance, or reassigned to it),
	-- whichever of the two was touched last.  Read without a lock: a start
	-- that goes on to a new claim must not hold the row of a claim its
	-- login's other server runs on, or that server's extensions would wait
	-- for as long as the start waits for a datacenter below.  A claim is
	-- taken, or refused, only as read again under its lock (its promise,
	-- state and holder may have changed since the first read: a claim
	-- whose holder is marking it idle, as at a switchover, is taken once
	-- that commits); if an operator, or another login taking a free claim,
	-- moved it meanwhile, the login's claims are read again.
	LOOP
		SELECT * INTO c FROM snowflake_registry.claims s
		WHERE s.datacenter_id OPERATOR(pg_catalog.=) dc
		  AND s.worker_id OPERATOR(pg_catalog.<=) max_worker_id
		  AND ((s.owner OPERATOR(pg_catalog.=) SESSION_USER
				AND s.state OPERATOR(pg_catalog.<>) 'released')
			   OR s.reassigned_to OPERATOR(pg_catalog.=) SESSION_USER
			   OR (s.legacy AND s.system_identifier OPERATOR(pg_catalog.=) claim.system_identifier
				   AND s.state OPERATOR(pg_catalog.<>) 'released'))
		ORDER BY snowflake_registry.free_to_owner(s) OPERATOR(pg_catalog.=)
				 (allowed OPERATOR(pg_catalog.>) 1) DESC,
				 s.worker_id IS NOT DISTINCT FROM preferred_worker_id DESC,
				 s.extended_at DESC
		LIMIT 1;
		EXIT WHEN NOT FOUND;
		-- held by another server of this login, which may hold one more:
		-- on to a new claim, with no claim locked
		EXIT WHEN NOT snowflake_registry.free_to_owner(c) AND
			NOT c.legacy AND c.state OPERATOR(pg_catalog.=) 'held' AND
			snowflake_registry.claims_of(SESSION_USER) OPERATOR(pg_catalog.<)
			allowed;
		SELECT * INTO c FROM snowflake_registry.claims s
		WHERE s.datacenter_id OPERATOR(pg_catalog.=) c.datacenter_id
		  AND s.worker_id OPERATOR(pg_catalog.=) c.worker_id
		  AND ((s.owner OPERATOR(pg_catalog.=) SESSION_USER
				AND s.state OPERATOR(pg_catalog.<>) 'released')
			   OR s.reassigned_to OPERATOR(pg_catalog.=) SESSION_USER
			   OR (s.legacy AND s.system_identifier OPERATOR(pg_catalog.=) claim.system_identifier
				   AND s.state OPERATOR(pg_catalog.<>) 'released'))
		FOR UPDATE;
		CONTINUE WHEN NOT FOUND;
		IF snowflake_registry.free_to_owner(c) THEN
			-- not while the login's other servers, in any datacenter, hold
			-- as many claims as it may have: the start would be one server
			-- too many
			IF snowflake_registry.running_claims(SESSION_USER)
			   OPERATOR(pg_catalog.>=) allowed THEN
				RETURN ROW('limit', NULL, NULL, NULL, NULL, NULL, NULL,
						   NULL)::snowflake_registry.answer;
			END IF;
			RETURN snowflake_registry.take(c, ep.number, ep.id, ep.floor, layout,
				token, nonce, system_identifier, host, port, data_directory);
		ELSIF c.legacy OR c.state OPERATOR(pg_catalog.<>) 'held' OR
			  snowflake_registry.claims_of(SESSION_USER) OPERATOR(pg_catalog.>=)
			  allowed THEN
			RETURN snowflake_registry.answer_of(c,
				CASE WHEN c.state OPERATOR(pg_catalog.=) 'released'
					 THEN 'waiting' ELSE 'refused' END,
				CASE WHEN c.legacy
					 THEN c.extended_at OPERATOR(pg_catalog.+) c.legacy_reclaim_lease
					 ELSE c.promise END,
				CASE WHEN c.owner OPERATOR(pg_catalog.=) SESSION_USER
					 THEN snowflake_registry.holder(c) END);
		END IF;
		-- it changed since the first read (another server of this login
		-- now holds it, and the login may hold one more): read again
	END LOOP;

	-- a new claim: one at a time in a datacenter, within this login's
	-- allowance (only here: another login never delays a server that takes
	-- its own claim back, and a start that waits here has locked none of
	-- its login's claims above, so that the login's running servers extend
	-- theirs meanwhile; but for one it locked after its first read found
	-- it free, which was then extended: a lock cannot be given back before
	-- the transaction ends).  A login at its limit neither adds a datacenter
	-- (naming every id would fill the table) nor locks one (it would delay
	-- every other login's new claims there for as long as it kept its
	-- transaction open); the count is read again under the lock, for which
	-- another claim of this login may have waited.
	IF snowflake_registry.claims_of(SESSION_USER) OPERATOR(pg_catalog.>=)
	   allowed THEN
		RETURN ROW('limit', NULL, NULL, NULL, NULL, NULL, NULL,
				   NULL)::snowflake_registry.answer;
	END IF;
	INSERT INTO snowflake_registry.datacenters VALUES (dc) ON CONFLICT DO NOTHING;
	PERFORM FROM snowflake_registry.datacenters d
	WHERE d.datacenter_id OPERATOR(pg_catalog.=) dc FOR UPDATE;
	IF snowflake_registry.claims_of(SESSION_USER) OPERATOR(pg_catalog.>=)
	   allowed THEN
		RETURN ROW('limit', NULL, NULL, NULL, NULL, NULL, NULL,
				   NULL)::snowflake_registry.answer;
	END IF;

	-- the preferred id, else the lowest one, never claimed
	IF preferred_worker_id BETWEEN 0 AND max_worker_id AND
	   NOT EXISTS (SELECT FROM snowflake_registry.claims s
				   WHERE s.datacenter_id OPERATOR(pg_catalog.=) dc
					 AND s.worker_id OPERATOR(pg_catalog.=) preferred_worker_id) THEN
		free_id := preferred_worker_id;
	ELSIF NOT EXISTS (SELECT FROM snowflake_registry.claims s
					  WHERE s.datacenter_id OPERATOR(pg_catalog.=) dc
						AND s.worker_id OPERATOR(pg_catalog.=) 0) THEN
		free_id := 0;
	ELSE
		SELECT pg_catalog.min(s.worker_id) OPERATOR(pg_catalog.+) 1 INTO free_id
		FROM snowflake_registry.claims s
		WHERE s.datacenter_id OPERATOR(pg_catalog.=) dc
		  AND s.worker_id OPERATOR(pg_catalog.<) max_worker_id
		  AND NOT EXISTS (SELECT FROM snowflake_registry.claims n
						  WHERE n.datacenter_id OPERATOR(pg_catalog.=) s.datacenter_id
							AND n.worker_id OPERATOR(pg_catalog.=)
								(s.worker_id OPERATOR(pg_catalog.+) 1));
	END IF;
	IF free_id IS NOT NULL THEN
		INSERT INTO snowflake_registry.claims AS s
			(datacenter_id, worker_id, owner, state, version, epoch, epoch_id,
			 layout, claimed_at, extended_at)
		VALUES (dc, free_id, SESSION_USER, 'held', 0, ep.number, ep.id,
				claim.layout,
				pg_catalog.clock_timestamp(), pg_catalog.clock_timestamp())
		RETURNING * INTO c;
		RETURN snowflake_registry.take(c, ep.number, ep.id, ep.floor, layout, token,
			nonce, system_identifier, host, port, data_directory);
	END IF;

	-- a claim that is free, not reassigned to another login (nor one of a
	-- 1.3 server whose time lies further ahead than the lease: take()
	-- would refuse it)
	SELECT * INTO c FROM snowflake_registry.claims s
	WHERE s.datacenter_id OPERATOR(pg_catalog.=) dc
	  AND s.worker_id OPERATOR(pg_catalog.<=) max_worker_id
	  AND s.reassigned_to IS NULL
	  AND snowflake_registry.free(s)
	  AND NOT (s.legacy AND s.promise OPERATOR(pg_catalog.>)
			   (pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+)
				(SELECT t.lease FROM snowflake_registry.settings t)))
	ORDER BY s.state OPERATOR(pg_catalog.=) 'released' AND s.confirmed DESC,
			 s.promise
	LIMIT 1
	FOR UPDATE;
	IF FOUND THEN
		RETURN snowflake_registry.take(c, ep.number, ep.id, ep.floor, layout, token,
			nonce, system_identifier, host, port, data_directory);
	END IF;
	RETURN ROW('full', NULL, NULL, NULL, NULL, NULL, NULL,
			   NULL)::snowflake_registry.answer;
END
$$;

-- Extend the promise of a claim held by this start (token) under version,
-- chaining new_nonce to nonce, the holder's previous extension: 'extended'
-- with the new promise.  The same call again (its answer was lost) is
-- answered again.  In a new epoch the first extension is a new grant:
-- 'regranted', with a new version and a floor above the epoch's.  'moved'
-- (another start or login took it over), 'released' (an operator freed it:
-- the holder stops and confirms with snowflake_registry.idle), 'forked'
-- (another process extended it under the same token and version: a copy of
-- this one), 'layout' (the claim is not of the fleet's layout, which an
-- operator changed: the holder stops and claims again).
CREATE FUNCTION snowflake_registry.extend(
	datacenter_id integer,
	worker_id integer,
	token uuid,
	version bigint,
	nonce uuid,
	new_nonce uuid)
RETURNS snowflake_registry.answer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
	c snowflake_registry.claims;
	ep record;
	floor_ts timestamptz;
	fleet text;
	login_locked boolean := false;
	expired boolean;
BEGIN
	IF datacenter_id IS NULL OR worker_id IS NULL OR token IS NULL OR
	   version IS NULL OR nonce IS NULL OR new_nonce IS NULL THEN
		RAISE EXCEPTION 'an extension names a datacenter id, a worker id, a token, a version and two nonces'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	PERFORM snowflake_registry.durable();
	-- the fleet's row before the epoch, as in claim(): a change of layout
	-- commits a new epoch with it, which this call then sees too (read
	-- the other way round, an extension racing a change was granted anew
	-- under the old epoch's floor); and the rows in one order everywhere:
	-- the fleet's, the settings', then the claim's
	PERFORM FROM snowflake_registry.fleet f FOR SHARE;
	SELECT * INTO ep FROM snowflake_registry.epoch();
	-- the login's row before the claim's, as in claim(), but only for a
	-- claim whose promise has passed: only then are the login's other
	-- claims counted (below), and a running holder's extensions wait for
	-- no other call of its login
	IF EXISTS (SELECT FROM snowflake_registry.claims s
			   WHERE s.datacenter_id OPERATOR(pg_catalog.=) extend.datacenter_id
				 AND s.worker_id OPERATOR(pg_catalog.=) extend.worker_id
				 AND s.owner OPERATOR(pg_catalog.=) SESSION_USER
				 AND s.promise OPERATOR(pg_catalog.<) pg_catalog.clock_timestamp()) THEN
		PERFORM snowflake_registry.lock_login();
		login_locked := true;
	END IF;
	SELECT * INTO c FROM snowflake_registry.claims s
	WHERE s.datacenter_id OPERATOR(pg_catalog.=) extend.datacenter_id
	  AND s.worker_id OPERATOR(pg_catalog.=) extend.worker_id
	  AND s.owner OPERATOR(pg_catalog.=) SESSION_USER
	FOR UPDATE;
	IF NOT FOUND THEN
		RETURN ROW('moved', worker_id, NULL, NULL, NULL, NULL, NULL,
				   NULL)::snowflake_registry.answer;
	END IF;
	-- a claim of another layout than the fleet's is never extended, nor
	-- granted anew: its holder stops, and claims in the fleet's layout
	fleet := snowflake_registry.fleet_layout(c.layout);
	IF NOT c.legacy AND c.layout IS DISTINCT FROM fleet THEN
		RETURN snowflake_registry.answer_of(c, 'layout', NULL, fleet);
	END IF;
	-- a regrant whose answer was lost
	IF c.token OPERATOR(pg_catalog.=) extend.token AND
	   c.version OPERATOR(pg_catalog.=) (extend.version OPERATOR(pg_catalog.+) 1) AND
	   c.nonce OPERATOR(pg_catalog.=) new_nonce AND
	   c.state OPERATOR(pg_catalog.=) 'held' THEN
		RETURN snowflake_registry.answer_of(c, 'regranted');
	END IF;
	IF c.token IS DISTINCT FROM extend.token OR
	   c.version OPERATOR(pg_catalog.<>) extend.version THEN
		RETURN snowflake_registry.answer_of(c, 'moved', NULL,
											snowflake_registry.holder(c));
	ELSIF c.state OPERATOR(pg_catalog.<>) 'held' THEN
		RETURN snowflake_registry.answer_of(c, 'released');
	END IF;

	-- a holder back after its promise passed, while another start of its
	-- login took the login's last claim (a server rebuilt beside one cut
	-- off): it is the server too many, and stops.  Its claim goes idle,
	-- its promise kept, so that neither this start nor a restart of it
	-- takes it back while the other runs.
	expired := c.promise OPERATOR(pg_catalog.<) pg_catalog.clock_timestamp();
	IF expired AND NOT login_locked THEN
		-- it passed between the two reads: the claim's row is locked now,
		-- so the login's is taken without waiting (this round fails if
		-- another call of the login holds it, and the next one retries)
		PERFORM FROM snowflake_registry.logins l
		WHERE l.login OPERATOR(pg_catalog.=) SESSION_USER
		FOR UPDATE NOWAIT;
	END IF;
	IF expired AND
	   snowflake_registry.running_claims(SESSION_USER) OPERATOR(pg_catalog.>=)
	   snowflake_registry.allowance(SESSION_USER) THEN
		UPDATE snowflake_registry.claims s SET state = 'idle'
		WHERE s.datacenter_id OPERATOR(pg_catalog.=) c.datacenter_id
		  AND s.worker_id OPERATOR(pg_catalog.=) c.worker_id
		RETURNING * INTO c;
		RETURN snowflake_registry.answer_of(c, 'moved');
	END IF;

	-- in a new epoch, a grant above its floor: the registry may have
	-- forgotten this holder's last extensions, so its nonce is not compared
	IF c.epoch_id IS DISTINCT FROM ep.id THEN
		floor_ts := GREATEST(c.promise, c.floor, ep.floor);
		UPDATE snowflake_registry.claims s
		SET version = s.version OPERATOR(pg_catalog.+) 1, nonce = new_nonce,
			floor = floor_ts, promise = snowflake_registry.promise(floor_ts),
			epoch = ep.number, epoch_id = ep.id,
			extended_at = pg_catalog.clock_timestamp()
		WHERE s.datacenter_id OPERATOR(pg_catalog.=) c.datacenter_id
		  AND s.worker_id OPERATOR(pg_catalog.=) c.worker_id
		RETURNING * INTO c;
		RETURN snowflake_registry.answer_of(c, 'regranted');
	ELSIF c.nonce OPERATOR(pg_catalog.=) new_nonce THEN
		RETURN snowflake_registry.answer_of(c, 'extended');
	ELSIF c.nonce IS DISTINCT FROM extend.nonce THEN
		UPDATE snowflake_registry.claims s SET forked = true
		WHERE s.datacenter_id OPERATOR(pg_catalog.=) c.datacenter_id
		  AND s.worker_id OPERATOR(pg_catalog.=) c.worker_id;
		RETURN snowflake_registry.answer_of(c, 'forked');
	END IF;
	UPDATE snowflake_registry.claims s
	SET nonce = new_nonce, promise = snowflake_registry.promise(s.promise),
		extended_at = pg_catalog.clock_timestamp()
	WHERE s.datacenter_id OPERATOR(pg_catalog.=) c.datacenter_id
	  AND s.worker_id OPERATOR(pg_catalog.=) c.worker_id
	RETURNING * INTO c;
	RETURN snowflake_registry.answer_of(c, 'extended');
END
$$;

-- Mark a claim idle: at its holder's clean shutdown, or once the holder
-- stopped after learning that its claim was released (which confirms the
-- release).  newest, the time of the holder's newest ID, read after it
-- stopped generating, lowers the promise to it (never below the floor), so
-- that the next holder starts there rather than at a promise that lies
-- ahead.  That rests on no copy of the holder's memory running on: a copy
-- would still issue up to the old promise.  The caller names its last
-- extension's nonce, or the one whose answer it has not had (pending).
-- Returns whether this start held the claim.
CREATE FUNCTION snowflake_registry.idle(
	datacenter_id integer,
	worker_id integer,
	token uuid,
	version bigint,
	nonce uuid,
	pending uuid DEFAULT NULL,
	newest timestamptz DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
	c snowflake_registry.claims;
BEGIN
	PERFORM snowflake_registry.durable();
	SELECT * INTO c FROM snowflake_registry.claims s
	WHERE s.datacenter_id OPERATOR(pg_catalog.=) idle.datacenter_id
	  AND s.worker_id OPERATOR(pg_catalog.=) idle.worker_id
	  AND s.owner OPERATOR(pg_catalog.=) SESSION_USER
	  AND s.token OPERATOR(pg_catalog.=) idle.token
	  AND s.version OPERATOR(pg_catalog.=) idle.version
	  AND (s.nonce OPERATOR(pg_catalog.=) idle.nonce OR
		   s.nonce OPERATOR(pg_catalog.=) idle.pending)
	  AND (s.state OPERATOR(pg_catalog.=) 'held' OR
		   (s.state OPERATOR(pg_catalog.=) 'released' AND NOT s.confirmed))
	FOR UPDATE;
	IF NOT FOUND THEN
		RETURN false;
	END IF;
	UPDATE snowflake_registry.claims s
	SET state = CASE WHEN c.state OPERATOR(pg_catalog.=) 'held'
					 THEN 'idle' ELSE 'released' END,
		confirmed = c.state OPERATOR(pg_catalog.=) 'released',
		promise = CASE WHEN newest IS NULL OR NOT pg_catalog.isfinite(newest)
					   THEN c.promise
					   ELSE GREATEST(LEAST(newest, c.promise), c.floor) END,
		extended_at = pg_catalog.clock_timestamp()
	WHERE s.datacenter_id OPERATOR(pg_catalog.=) c.datacenter_id
	  AND s.worker_id OPERATOR(pg_catalog.=) c.worker_id;
	RETURN true;
END
$$;

-- For operators: every claim, its state and promise.  Tokens and nonces are
-- never shown.
--   held      its holder extends its promise
--   expired   held, but its promise is behind the registry's clock: the
--             holder stopped generating; another start of its login takes it
--             at once, another login after the reclaim period
--   idle      its holder shut down cleanly
--   released  freed by an operator; free once confirmed, or its promise passed
--   legacy    a claim of a 1.3 server (its 1.3 state follows)
CREATE VIEW snowflake_registry.status AS
SELECT c.datacenter_id, c.worker_id, c.owner,
	   CASE
		 WHEN c.legacy THEN 'legacy ' OPERATOR(pg_catalog.||) c.state
		 WHEN c.state OPERATOR(pg_catalog.=) 'held' AND
			  c.promise OPERATOR(pg_catalog.<) pg_catalog.clock_timestamp()
		   THEN 'expired'
		 ELSE c.state
	   END AS state,
	   c.confirmed, c.reassigned_to, c.version, c.floor, c.promise,
	   c.epoch, c.layout, c.system_identifier, c.host, c.port,
	   c.data_directory, c.claimed_at, c.extended_at,
	   pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) c.extended_at
		 AS since_extended
FROM snowflake_registry.claims c;

-- For operators: free a worker id (a server gone for good, or to retire).  A
-- holder that still runs stops at its next extension and confirms; the id
-- passes once it confirmed, or once its promise is behind the clock.
-- Returns the time from which it passes without the confirmation (NULL: no
-- such claim).
CREATE FUNCTION snowflake_registry.release(
	datacenter_id integer,
	worker_id integer,
	reassign_to name DEFAULT NULL)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
	c snowflake_registry.claims;
BEGIN
	PERFORM snowflake_registry.durable();
	PERFORM snowflake_registry.legacy_refresh(release.datacenter_id);
	UPDATE snowflake_registry.claims s
	SET state = 'released', reassigned_to = reassign_to,
		confirmed = s.state OPERATOR(pg_catalog.=) 'idle' OR
					(s.state OPERATOR(pg_catalog.=) 'released' AND s.confirmed)
	WHERE s.datacenter_id OPERATOR(pg_catalog.=) release.datacenter_id
	  AND s.worker_id OPERATOR(pg_catalog.=) release.worker_id
	RETURNING * INTO c;
	IF NOT FOUND THEN
		RETURN NULL;
	END IF;
	-- a 1.3 holder learns it from the 1.3 table, at its next check-in
	IF c.legacy AND snowflake_registry.legacy_table() IS NOT NULL THEN
		EXECUTE pg_catalog.format('UPDATE %s SET released = true, reassigned_to = NULL '
								  'WHERE datacenter_id OPERATOR(pg_catalog.=) $1 '
								  'AND worker_id OPERATOR(pg_catalog.=) $2',
								  snowflake_registry.legacy_table())
		USING c.datacenter_id, c.worker_id;
	END IF;
	IF c.confirmed THEN
		RAISE NOTICE 'worker id % of datacenter % is free', c.worker_id,
			c.datacenter_id;
		RETURN pg_catalog.clock_timestamp();
	END IF;
	RAISE NOTICE 'worker id % of datacenter % is free once its holder confirms the release at its next extension, or else from %',
		c.worker_id, c.datacenter_id,
		CASE WHEN c.legacy THEN c.extended_at OPERATOR(pg_catalog.+) c.legacy_reclaim_lease
			 ELSE c.promise END
		USING DETAIL = CASE WHEN c.legacy
			THEN 'Until then the holder, a 1.3 server, may still be generating IDs with it; and after that too, without snowflake.registry_require_check_in, for as long as it cannot reach the registry.'
			ELSE 'Until then the holder may still be generating IDs with it.' END;
	RETURN CASE WHEN c.legacy
				THEN c.extended_at OPERATOR(pg_catalog.+) c.legacy_reclaim_lease
				ELSE c.promise END;
END
$$;

-- For operators: give a worker id to another login, which takes it at its
-- next claim, under the same rule as a release.
CREATE FUNCTION snowflake_registry.reassign(
	datacenter_id integer,
	worker_id integer,
	login name)
RETURNS timestamptz
LANGUAGE sql VOLATILE STRICT SECURITY DEFINER
AS $$
	SELECT snowflake_registry.release(datacenter_id, worker_id, login)
$$;

-- For operators: let a login hold more than one claim, for servers that
-- share it (1 restores the default).  A lower number stops no running
-- server: it applies to the login's next starts, and to a server back
-- after its promise passed.
CREATE FUNCTION snowflake_registry.allow(login name, claims integer)
RETURNS void
LANGUAGE sql VOLATILE STRICT SECURITY DEFINER
AS $$
	SELECT snowflake_registry.durable();
	INSERT INTO snowflake_registry.logins AS l VALUES (login, claims)
	ON CONFLICT (login) DO UPDATE SET claims = excluded.claims
$$;

-- Set the fleet's layout (see fleet_layout), for configure.  Once it waits
-- for every claim and extension that read the layout before, a change keeps
-- every ID apart from those made under the layouts before only if it keeps
-- the epoch and the bit the time starts at: then a new epoch, whose floor
-- lies above every promise recorded (whatever the registry's clock says
-- now), puts every later grant above those IDs in time, and so in value;
-- and the claims of the old layout are neither extended nor granted anew
-- (extend answers 'layout').  So a change
-- of the epoch or of where the time starts is refused where a claim may
-- have made IDs (IDs made before could come again at any time), and so is
-- any change while 1.3's registry is in the database: a 1.3 server, which
-- may claim or take its claim back there, never learns of it.  The first
-- layout set where 1.3 servers' claims are is theirs, as the operator says;
-- it must hold their claims.
CREATE FUNCTION snowflake_registry.set_layout(layout text)
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	wanted text := snowflake_registry.layout_of(layout);
	current_layout text;
	other text;
	legacy snowflake_registry.claims;
BEGIN
	IF wanted IS NULL THEN
		RAISE EXCEPTION 'invalid snowflake layout "%"', layout
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A layout is "epoch ms/time/datacenter/worker/sequence bits", as a server sends it: 32 to 63 bits of time, at most 30 datacenter and 30 worker bits, 1 to 31 sequence bits, at most 63 bits in all.';
	END IF;
	INSERT INTO snowflake_registry.fleet DEFAULT VALUES ON CONFLICT DO NOTHING;
	SELECT f.layout INTO current_layout FROM snowflake_registry.fleet f
	FOR UPDATE;
	IF current_layout IS NOT DISTINCT FROM wanted THEN
		RETURN;
	END IF;
	-- the claims of 1.3 servers, as they are now, under 1.3's locks
	PERFORM snowflake_registry.legacy_refresh(NULL);
	IF current_layout IS NOT NULL AND
	   snowflake_registry.legacy_table() IS NOT NULL THEN
		RAISE EXCEPTION 'cannot change the fleet''s layout while snowflake 1.3 servers may claim'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The registry of snowflake 1.3 is still in this database: a 1.3 server never learns of the change, and would make IDs in the old layout.',
				  HINT = 'Move every server to 1.4 and update snowflake in this database first.';
	END IF;
	-- the layouts IDs may have been made with: the claims', and the current
	-- one wherever a claim is (those of 1.3 servers were made in it)
	FOR other IN
		SELECT DISTINCT l.layout
		FROM (SELECT current_layout AS layout
			  WHERE EXISTS (SELECT FROM snowflake_registry.claims)
			  UNION ALL
			  SELECT c.layout FROM snowflake_registry.claims c) l
		WHERE l.layout IS NOT NULL
		  AND l.layout OPERATOR(pg_catalog.<>) wanted
	LOOP
		IF pg_catalog.split_part(other, '/', 1) OPERATOR(pg_catalog.<>)
		   pg_catalog.split_part(wanted, '/', 1) OR
		   snowflake_registry.time_shift(other) OPERATOR(pg_catalog.<>)
		   snowflake_registry.time_shift(wanted) THEN
			RAISE EXCEPTION 'cannot change the fleet''s layout from "%" to "%"',
				other, wanted
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = 'The IDs made under the old layout count time from another epoch, or from another bit: IDs of the new one could equal them.',
					  HINT = 'Keep snowflake.epoch and the sum of the datacenter, worker and sequence bits, or start a new ID space with a new registry database.';
		END IF;
		-- a time of a 1.3 server further ahead than a promise of 1.4 would
		-- hold the whole fleet back until then
		SELECT * INTO legacy FROM snowflake_registry.claims c
		WHERE c.legacy
		  AND c.promise OPERATOR(pg_catalog.>)
			  (pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+)
			   (SELECT s.lease FROM snowflake_registry.settings s))
		ORDER BY c.promise DESC
		LIMIT 1;
		IF FOUND THEN
			RAISE EXCEPTION 'cannot change the fleet''s layout before %', legacy.promise
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = pg_catalog.format('Worker id %s of datacenter %s, last claimed by a snowflake 1.3 server, has IDs up to that time, further ahead than the lease: every pair of the new layout would start above it.',
						  legacy.worker_id, legacy.datacenter_id),
					  HINT = 'Change the layout after that time, or keep it.';
		END IF;
		-- a new epoch: every grant from now on lies above every promise,
		-- those recorded while the registry's clock was ahead of its clock
		-- now included (a holder of the old layout cut off from the
		-- registry generates up to its promise, and a pair of the new one
		-- may have its node bits); and a new identity, or an epoch started
		-- in flight after it (see epoch) would have the identity of one
		-- started in flight before it, under which claims of the old layout
		-- may have been granted below this floor
		UPDATE snowflake_registry.settings s
		SET epoch_key = NULL,
			epoch_id = pg_catalog.gen_random_uuid(),
			epoch_floor = GREATEST(s.epoch_floor,
				(SELECT pg_catalog.max(GREATEST(c.promise, c.floor))
				 FROM snowflake_registry.claims c));
	END LOOP;
	SELECT * INTO legacy FROM snowflake_registry.claims c
	WHERE c.legacy
	  AND (c.datacenter_id OPERATOR(pg_catalog.>=)
		   (1::bigint OPERATOR(pg_catalog.<<)
			pg_catalog.split_part(wanted, '/', 3)::integer)
		   OR c.worker_id OPERATOR(pg_catalog.>=)
		   (1::bigint OPERATOR(pg_catalog.<<)
			pg_catalog.split_part(wanted, '/', 4)::integer))
	LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'layout "%" cannot hold worker id % of datacenter %, claimed by a snowflake 1.3 server',
			wanted, legacy.worker_id, legacy.datacenter_id
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The layout of the fleet''s 1.3 servers was never recorded: the one set now is taken for theirs.',
				  HINT = 'Set the layout the 1.3 servers use.';
	END IF;
	UPDATE snowflake_registry.fleet SET layout = wanted;
END
$$;

-- Where an ID of layout starts its time: the datacenter, worker and
-- sequence bits below it.
CREATE FUNCTION snowflake_registry.time_shift(layout text)
RETURNS integer
LANGUAGE sql IMMUTABLE
AS $$
	SELECT pg_catalog.split_part(layout, '/', 3)::integer
		OPERATOR(pg_catalog.+) pg_catalog.split_part(layout, '/', 4)::integer
		OPERATOR(pg_catalog.+) pg_catalog.split_part(layout, '/', 5)::integer
$$;

-- Set the lease, reclaim_after and the layout where given (see configure),
-- and return them as they are now.  A claim or extension under way holds
-- the rows it changes until its transaction ends: after the lock timeout
-- (see durable), fail saying so, naming the sessions that may keep one open.
CREATE FUNCTION snowflake_registry.set_settings(
	new_lease interval,
	new_reclaim_after interval,
	new_layout text,
	OUT lease interval,
	OUT reclaim_after interval,
	OUT layout text)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	open_sessions text;
	old_lease interval;
BEGIN
	-- A lease or a layout given waits for every claim and extension under
	-- way, which hold the fleet's row from before they read the lease until
	-- they commit, and holds back those to come until this transaction
	-- ends: none then gets a promise under the old lease after the change,
	-- nor makes the first claim unseen.  A change of reclaim_after alone
	-- holds back none.  (The row first, as claims take it: a claim makes
	-- the settings' row once it holds the fleet's.)
	IF new_lease IS NOT NULL OR new_layout IS NOT NULL THEN
		INSERT INTO snowflake_registry.fleet DEFAULT VALUES ON CONFLICT DO NOTHING;
		PERFORM FROM snowflake_registry.fleet f FOR UPDATE;
	END IF;
	IF NOT EXISTS (SELECT FROM snowflake_registry.settings) THEN
		INSERT INTO snowflake_registry.settings DEFAULT VALUES
		ON CONFLICT DO NOTHING;
	END IF;
	IF new_layout IS NOT NULL THEN
		PERFORM snowflake_registry.set_layout(new_layout);
	END IF;
	SELECT s.lease INTO old_lease FROM snowflake_registry.settings s FOR UPDATE;
	UPDATE snowflake_registry.settings s
	SET lease = coalesce(new_lease, s.lease),
		previous_lease = CASE WHEN new_lease IS NULL OR new_lease OPERATOR(pg_catalog.=) s.lease
							  THEN s.previous_lease
							  WHEN pg_catalog.clock_timestamp() OPERATOR(pg_catalog.<)
								   (s.lease_changed_at OPERATOR(pg_catalog.+) s.previous_lease)
							  THEN GREATEST(s.lease, s.previous_lease)
							  ELSE s.lease END,
		lease_changed_at = CASE WHEN new_lease IS NULL OR new_lease OPERATOR(pg_catalog.=) s.lease
								THEN s.lease_changed_at
								ELSE pg_catalog.clock_timestamp() END,
		reclaim_after = coalesce(new_reclaim_after, s.reclaim_after)
	RETURNING s.lease, s.reclaim_after,
		(SELECT f.layout FROM snowflake_registry.fleet f)
	INTO lease, reclaim_after, layout;
	-- a copy of the registry from before a raise starts its epochs under the
	-- shorter lease, below the promises made under the longer one (those
	-- of claims made after the raise too): nothing in the copy can tell, so
	-- the operator must hear it now
	IF new_lease OPERATOR(pg_catalog.>) old_lease THEN
		RAISE WARNING 'the registry''s lease grows from % to %, which a copy of the registry made before now does not know',
			old_lease, new_lease
			USING DETAIL = 'A standby that has not replayed this change, or a backup, dump or recovery target from before it, would start its epoch under the shorter lease once promoted or restored: below the promises servers get from now on.',
				  HINT = 'Let every standby that may be promoted replay this change, and take new backups. After promoting or restoring an older copy, run configure() with this lease again before the servers'' logins connect.';
	END IF;
EXCEPTION WHEN lock_not_available THEN
	-- the sessions in a transaction, and the prepared transactions, which
	-- hold their locks with no session (and across restarts)
	SELECT pg_catalog.string_agg(o.what, ', ' ORDER BY o.since)
	INTO open_sessions
	FROM (SELECT pg_catalog.format('%s (%s, %s, in a transaction since %s)',
			   a.pid, a.usename, a.state, a.xact_start), a.xact_start
		  FROM pg_catalog.pg_stat_activity a
		  WHERE a.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
			AND a.pid OPERATOR(pg_catalog.<>) pg_catalog.pg_backend_pid()
			AND a.xact_start IS NOT NULL
		  UNION ALL
		  SELECT pg_catalog.format('prepared transaction %L (%s, prepared at %s)',
			   p.gid, p.owner, p.prepared), p.prepared
		  FROM pg_catalog.pg_prepared_xacts p
		  WHERE p.database OPERATOR(pg_catalog.=) pg_catalog.current_database())
		 AS o(what, since);
	RAISE EXCEPTION 'could not configure the registry: another transaction holds its settings or its layout'
		USING ERRCODE = 'lock_not_available',
			  DETAIL = pg_catalog.concat('Claims, extensions and operators'' calls hold them until their transactions end. Sessions of this database in a transaction, and prepared transactions, the oldest first: ',
										 coalesce(open_sessions, 'none'), '.'),
			  HINT = 'End the session that keeps its transaction open (pg_terminate_backend), or the prepared transaction (ROLLBACK PREPARED), and configure again.';
END
$$;

-- For operators: the lease (how far ahead of the registry's clock a promise
-- reaches), how long a claim whose promise passed stays its login's, and
-- the fleet's layout (see set_layout).  Returns them as they are now.
CREATE FUNCTION snowflake_registry.configure(
	lease interval DEFAULT NULL,
	reclaim_after interval DEFAULT NULL,
	layout text DEFAULT NULL,
	OUT lease interval,
	OUT reclaim_after interval,
	OUT layout text)
LANGUAGE sql VOLATILE SECURITY DEFINER
AS $$
	SELECT snowflake_registry.durable();
	SELECT * FROM snowflake_registry.set_settings($1, $2, $3)
$$;

-- One line each, for \df+, \dv+ and \dT+.
COMMENT ON FUNCTION snowflake_registry.claim(integer, integer, text, uuid, uuid, bigint, text, integer, text, integer) IS
	'Claims a worker id in a datacenter for one start of a server, as its login: the answer says which, above what floor and up to what promise.';
COMMENT ON FUNCTION snowflake_registry.extend(integer, integer, uuid, bigint, uuid, uuid) IS
	'Extends the promise of a claim held by this start, chained to its previous extension; in a new epoch, grants it anew above the epoch''s floor.';
COMMENT ON FUNCTION snowflake_registry.idle(integer, integer, uuid, bigint, uuid, uuid, timestamptz) IS
	'Marks a claim idle at its holder''s clean shutdown, or confirms a release, lowering its promise to the holder''s newest ID.';
COMMENT ON VIEW snowflake_registry.status IS
	'Every claim: whose it is, its state (held, expired, idle, released, legacy), its floor and its promise.';
COMMENT ON FUNCTION snowflake_registry.release(integer, integer, name) IS
	'Frees a worker id (or gives it to another login): its holder stops at its next extension; returns when it passes without the holder''s confirmation.';
COMMENT ON FUNCTION snowflake_registry.reassign(integer, integer, name) IS
	'Gives a worker id to another login, under the rule of a release.';
COMMENT ON FUNCTION snowflake_registry.allow(name, integer) IS
	'Lets a login hold more than one claim, for servers that share it.';
COMMENT ON FUNCTION snowflake_registry.configure(interval, interval, text) IS
	'Sets the lease (how far past the registry''s clock a promise reaches), how long a claim whose promise passed stays its login''s, and the fleet''s layout.';
COMMENT ON TYPE snowflake_registry.answer IS
	'What the registry answers a server about its claim.';
COMMENT ON FUNCTION snowflake_registry.settings_loaded() IS
	'Lets the settings of a dump loaded take the place of this registry''s (trigger, internal).';
COMMENT ON FUNCTION snowflake_registry.fleet_loaded() IS
	'Lets the fleet''s layout of a dump loaded take the place of this registry''s (trigger, internal).';
COMMENT ON FUNCTION snowflake_registry.this_registry() IS
	'This registry''s identity, which every claim it makes carries (internal).';
COMMENT ON FUNCTION snowflake_registry.durable() IS
	'Refuses a snapshot older than the call, and makes this transaction''s commit durable whatever the caller set (internal).';
COMMENT ON FUNCTION snowflake_registry.epoch_key() IS
	'The key of the registry''s history: timeline, postmaster start, database and claims table (internal).';
COMMENT ON FUNCTION snowflake_registry.epoch() IS
	'The registry''s epoch and its floor, starting a new epoch when the key changed (internal).';
COMMENT ON FUNCTION snowflake_registry.note(text) IS
	'A note that a drop of the registry left in this database''s settings for the next install (internal).';
COMMENT ON FUNCTION snowflake_registry.noted_lease() IS
	'The lease of the registry dropped from this database, which a new install takes (internal).';
COMMENT ON FUNCTION snowflake_registry.noted_floor() IS
	'The floor a registry dropped from this database noted for the next one (internal).';
COMMENT ON FUNCTION snowflake_registry.note_floor() IS
	'Notes, before a drop, the floor above which the next registry of this database starts (internal).';
COMMENT ON FUNCTION snowflake_registry.epoch_floor(snowflake_registry.settings) IS
	'The floor of an epoch that starts now (internal).';
COMMENT ON FUNCTION snowflake_registry.promise(timestamptz) IS
	'The promise a holder gets now: the registry''s clock plus the lease, never below the one it had (internal).';
COMMENT ON FUNCTION snowflake_registry.holder(snowflake_registry.claims) IS
	'Who holds a claim, for its own login (internal).';
COMMENT ON FUNCTION snowflake_registry.answer_of(snowflake_registry.claims, text, timestamptz, text) IS
	'The answer about a claim (internal).';
COMMENT ON FUNCTION snowflake_registry.legacy_table() IS
	'The claims table of a 1.3 registry in this database, if any (internal).';
COMMENT ON FUNCTION snowflake_registry.legacy_refresh(integer) IS
	'Brings the claims of 1.3 servers up to date from the 1.3 table (internal).';
COMMENT ON FUNCTION snowflake_registry.legacy_mirror(snowflake_registry.claims) IS
	'Marks a pair granted to a 1.4 server as held for good in the 1.3 table (internal).';
COMMENT ON FUNCTION snowflake_registry.fleet_layout(text) IS
	'The fleet''s layout, recorded at its first claim or set by an operator (internal).';
COMMENT ON FUNCTION snowflake_registry.layout_of(text) IS
	'A layout as the registry records and compares it, or NULL (internal).';
COMMENT ON FUNCTION snowflake_registry.set_settings(interval, interval, text) IS
	'Sets the lease, how long a passed claim stays its login''s, and the fleet''s layout, for configure (internal).';
COMMENT ON FUNCTION snowflake_registry.set_layout(text) IS
	'Sets the fleet''s layout, keeping every ID apart from those made before (internal).';
COMMENT ON FUNCTION snowflake_registry.time_shift(text) IS
	'The bit an ID of a layout starts its time at (internal).';
COMMENT ON FUNCTION snowflake_registry.take(snowflake_registry.claims, bigint, uuid, timestamptz, text, uuid, uuid, bigint, text, integer, text) IS
	'Gives a claim to this start of the calling login, above every promise the pair had (internal).';
COMMENT ON FUNCTION snowflake_registry.allowance(name) IS
	'How many claims a login may hold (internal).';
COMMENT ON FUNCTION snowflake_registry.claims_of(name) IS
	'How many claims a login holds that are not free to others yet (internal).';
COMMENT ON FUNCTION snowflake_registry.running_claims(name) IS
	'How many claims of a login are held with their promise ahead (internal).';
COMMENT ON FUNCTION snowflake_registry.lock_login() IS
	'Locks the row of the session''s login, so that its claims, and the extensions of its claims whose promise passed, run one at a time (internal).';
COMMENT ON FUNCTION snowflake_registry.keep_claims() IS
	'Refuses to delete a claim, whose row keeps its floor (internal).';
COMMENT ON FUNCTION snowflake_registry.free(snowflake_registry.claims) IS
	'Whether a claim not held by the calling login may pass to it now (internal).';
COMMENT ON FUNCTION snowflake_registry.free_to_owner(snowflake_registry.claims) IS
	'Whether the login that owns a claim, or to which it is reassigned, may take it now (internal).';

-- Every function runs with a search_path of pg_catalog and pg_temp only; no
-- role but the owner may call one, until an operator grants it.
DO $$
DECLARE
	f regprocedure;
BEGIN
	FOR f IN
		SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
		WHERE p.pronamespace = 'snowflake_registry'::regnamespace
	LOOP
		EXECUTE pg_catalog.format('ALTER FUNCTION %s SET search_path = pg_catalog, pg_temp', f);
		EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
	END LOOP;
END
$$;
REVOKE ALL ON ALL TABLES IN SCHEMA snowflake_registry FROM PUBLIC;

CREATE EVENT TRIGGER snowflake_registry_note_floor ON ddl_command_start
	WHEN TAG IN ('DROP EXTENSION', 'DROP SCHEMA', 'DROP OWNED')
	EXECUTE FUNCTION snowflake_registry.note_floor();
-- in sessions that replicate too (session_replication_role = replica, as
-- pg_restore --disable-triggers sets it)
ALTER EVENT TRIGGER snowflake_registry_note_floor ENABLE ALWAYS;
COMMENT ON EVENT TRIGGER snowflake_registry_note_floor IS
	'Notes the floor above which the next registry of this database starts, before a drop.';

-- A registry of 1.3 in this database: its claims come along, as claims of
-- 1.3 servers (see legacy_refresh).
SELECT snowflake_registry.legacy_refresh(NULL);

-- 1.3's registry functions stay, for the 1.3 servers, until snowflake is
-- updated here.  They run as their owner with a search_path of their own
-- schema: a role that may create objects there could have them call its
-- own functions (an overload), as 1.4's cannot.  Say so, while they stay.
DO $$
DECLARE
	nsp name;
BEGIN
	SELECT n.nspname INTO nsp
	FROM pg_catalog.pg_namespace n
	JOIN pg_catalog.pg_class c ON c.relnamespace OPERATOR(pg_catalog.=) n.oid
	WHERE c.oid OPERATOR(pg_catalog.=) snowflake_registry.legacy_table()
	  AND EXISTS (SELECT FROM pg_catalog.aclexplode(n.nspacl) a
				  WHERE a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
					AND a.grantee OPERATOR(pg_catalog.<>) n.nspowner);
	IF FOUND THEN
		RAISE WARNING 'roles other than its owner may create objects in schema "%", where the registry functions of snowflake 1.3 run as their owner', nsp
			USING DETAIL = 'A login that creates a function there can have 1.3''s registry functions call it with their owner''s rights.',
				  HINT = pg_catalog.format('Revoke CREATE on schema %I from every role but its owner until snowflake is updated in this database, which drops those functions.', nsp);
	END IF;
END
$$;

-- The servers' logins are granted EXECUTE on claim, extend and idle (through
-- a role such as snowflake_worker), and USAGE on the schema; operators
-- SELECT on status and EXECUTE on release, reassign, allow and configure.
