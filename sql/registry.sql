--
-- The worker id registry (the snowflake_registry extension of 1.4), on a
-- server without the preload (a registry needs none): the roles exactly as
-- docs/fleet.md sets them up, with a second server login and a hostile
-- login beside them; claims, extensions, idle, the operators' functions,
-- the status view and epochs, as snowflake_registry--1.4.sql states them;
-- findings 5 to 9 of issue 23 as things the hostile login cannot do; every
-- function committing with synchronous_commit on; the upgrade of a live 1.3
-- registry.  Each login acts through SET SESSION AUTHORIZATION (the
-- registry knows a login by session_user).  Times are shown relative to
-- the registry's clock, or compared exactly with the times they must equal.
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';
SET IntervalStyle = 'postgres';
SELECT current_user AS regress_super \gset
\set regress_db :DBNAME
\getenv abs_srcdir PG_ABS_SRCDIR
\set sqlstate_of :abs_srcdir '/test/sqlstate_of.sql'

-- docs/fleet.md's setup block, statement for statement (without the
-- password)
CREATE EXTENSION snowflake_registry;
-- what every server's login may do: claim, extend and idle its own claims
CREATE ROLE snowflake_worker NOLOGIN;
GRANT USAGE ON SCHEMA snowflake_registry TO snowflake_worker;
GRANT EXECUTE ON FUNCTION snowflake_registry.claim, snowflake_registry.extend,
    snowflake_registry.idle TO snowflake_worker;
-- one login per server (or per HA group: a primary and its standbys)
CREATE ROLE server_paris_1 LOGIN IN ROLE snowflake_worker;
-- operators: every claim, release, reassign, limits and the lease
CREATE ROLE snowflake_operator;
GRANT USAGE ON SCHEMA snowflake_registry TO snowflake_operator;
GRANT SELECT ON snowflake_registry.status TO snowflake_operator;
GRANT EXECUTE ON FUNCTION snowflake_registry.release, snowflake_registry.reassign,
    snowflake_registry.allow, snowflake_registry.configure TO snowflake_operator;

-- more servers, and a hostile login, made as the docs make every server's
-- login (a login holds one claim unless an operator allows more: the
-- scenarios below each have servers of their own)
CREATE ROLE server_paris_2 LOGIN IN ROLE snowflake_worker;
CREATE ROLE server_paris_3 LOGIN IN ROLE snowflake_worker;
CREATE ROLE server_paris_4 LOGIN IN ROLE snowflake_worker;
CREATE ROLE server_paris_5 LOGIN IN ROLE snowflake_worker;
CREATE ROLE server_paris_6 LOGIN IN ROLE snowflake_worker;
CREATE ROLE server_paris_7 LOGIN IN ROLE snowflake_worker;
CREATE ROLE server_paris_8 LOGIN IN ROLE snowflake_worker;
CREATE ROLE server_paris_9 LOGIN IN ROLE snowflake_worker;
CREATE ROLE server_paris_10 LOGIN IN ROLE snowflake_worker;
CREATE ROLE server_paris_11 LOGIN IN ROLE snowflake_worker;
CREATE ROLE server_paris_12 LOGIN IN ROLE snowflake_worker;
CREATE ROLE mallory LOGIN IN ROLE snowflake_worker;

--
-- The objects and who may use them
--

-- only the seven functions of the API run as their owner, every function
-- has search_path pg_catalog, pg_temp, and PUBLIC may call none
SELECT p.proname, p.prosecdef AS definer, p.proconfig,
	has_function_privilege('public', p.oid, 'EXECUTE') AS public,
	has_function_privilege('server_paris_1', p.oid, 'EXECUTE') AS server,
	has_function_privilege('snowflake_operator', p.oid, 'EXECUTE') AS operator
FROM pg_proc p
WHERE p.pronamespace = 'snowflake_registry'::regnamespace
ORDER BY p.prosecdef DESC, 1;
-- no role but the owner has a right on a table; operators read the view
SELECT r.rolname, c.relname, p.privilege
FROM (VALUES ('public'), ('snowflake_worker'), ('server_paris_1'), ('mallory'),
			 ('snowflake_operator')) r(rolname),
	 pg_class c,
	 (VALUES ('SELECT'), ('INSERT'), ('UPDATE'), ('DELETE'), ('TRUNCATE'),
			 ('REFERENCES'), ('TRIGGER')) p(privilege)
WHERE c.relnamespace = 'snowflake_registry'::regnamespace
  AND c.relkind IN ('r', 'v')
  AND has_table_privilege(r.rolname, c.oid, p.privilege)
ORDER BY 1, 2, 3;
-- nobody but the owner may create anything in the schema
SELECT r.rolname,
	has_schema_privilege(r.rolname, 'snowflake_registry', 'CREATE') AS may_create
FROM (VALUES ('public'), ('snowflake_worker'), ('mallory'),
			 ('snowflake_operator')) r(rolname);
-- neither an answer nor the status view carries a token or a nonce
SELECT a.attrelid::regclass, a.attname
FROM pg_attribute a
WHERE a.attrelid IN ('snowflake_registry.answer'::regclass,
					 'snowflake_registry.status'::regclass)
  AND a.attname IN ('token', 'nonce');

--
-- Helpers.  Tokens and nonces are made from numbers; each login's server has
-- a system identifier (server_paris_N: 100 + N; mallory: 666), host and
-- data directory of its own.  Every answer is
-- kept in pg_temp.answers (pg_temp.last() is the newest) and shown with its
-- times relative to the registry's clock: 'past', 'within lease' (at most
-- the lease ahead) or 'beyond lease'; holder without its times.
--
CREATE FUNCTION pg_temp.u(n integer) RETURNS uuid
LANGUAGE sql AS $$ SELECT lpad(n::text, 32, '0')::uuid $$;
CREATE FUNCTION pg_temp.sysid() RETURNS bigint
LANGUAGE sql AS $$
	SELECT CASE WHEN session_user = 'mallory' THEN 666
		ELSE 100 + substring(session_user FROM '[0-9]+$')::integer END
$$;
CREATE FUNCTION pg_temp.ahead(t timestamptz, lease interval) RETURNS text
LANGUAGE sql AS $$
	SELECT CASE WHEN t <= clock_timestamp() THEN 'past'
		WHEN t <= clock_timestamp() + lease THEN 'within lease'
		WHEN t IS NOT NULL THEN 'beyond lease' END
$$;
CREATE TEMP TABLE answers (n serial PRIMARY KEY, a snowflake_registry.answer);
GRANT ALL ON answers, answers_n_seq TO PUBLIC;
CREATE FUNCTION pg_temp.last() RETURNS snowflake_registry.answer
LANGUAGE sql AS $$ SELECT a FROM pg_temp.answers ORDER BY n DESC LIMIT 1 $$;
CREATE FUNCTION pg_temp.shown()
RETURNS TABLE (status text, worker_id integer, version bigint, floor text,
	promise text, retry_at text, holder text)
LANGUAGE sql AS $$
	SELECT (a).status, (a).worker_id, (a).version,
		pg_temp.ahead((a).floor, (a).lease), pg_temp.ahead((a).promise, (a).lease),
		pg_temp.ahead((a).retry_at, (a).lease),
		split_part((a).holder, ', holding it since', 1)
	FROM (SELECT pg_temp.last() a) l
$$;
-- claim(datacenter, start, nonce) as the session's login, in Twitter's
-- layout (worker ids 0 to 31) unless max_worker or layout say otherwise
CREATE FUNCTION pg_temp.claim(dc integer, start integer, nonce integer,
	preferred integer DEFAULT NULL, max_worker integer DEFAULT 31,
	layout text DEFAULT '1288834974657/41/5/5/12')
RETURNS TABLE (status text, worker_id integer, version bigint, floor text,
	promise text, retry_at text, holder text)
LANGUAGE sql AS $$
	INSERT INTO pg_temp.answers (a)
	SELECT snowflake_registry.claim(dc, max_worker, layout, pg_temp.u(start),
		pg_temp.u(nonce), pg_temp.sysid(), session_user::text, 5432,
		'/srv/' || session_user, preferred);
	SELECT * FROM pg_temp.shown();
$$;
-- extend(datacenter, worker, start, version, nonce, new nonce)
CREATE FUNCTION pg_temp.extend(dc integer, w integer, start integer,
	version bigint, nonce integer, new_nonce integer)
RETURNS TABLE (status text, worker_id integer, version bigint, floor text,
	promise text, retry_at text, holder text)
LANGUAGE sql AS $$
	INSERT INTO pg_temp.answers (a)
	SELECT snowflake_registry.extend(dc, w, pg_temp.u(start), version,
		pg_temp.u(nonce), pg_temp.u(new_nonce));
	SELECT * FROM pg_temp.shown();
$$;
-- idle(datacenter, worker, start, version, nonce, newest ID's time)
CREATE FUNCTION pg_temp.idle(dc integer, w integer, start integer,
	version bigint, nonce integer, newest timestamptz DEFAULT NULL)
RETURNS boolean
LANGUAGE sql AS $$
	SELECT snowflake_registry.idle(dc, w, pg_temp.u(start), version,
		pg_temp.u(nonce), NULL, newest)
$$;
-- the operators' view of one datacenter (all: NULL)
CREATE FUNCTION pg_temp.status(dc integer DEFAULT NULL)
RETURNS TABLE (datacenter_id integer, worker_id integer, owner name,
	state text, confirmed boolean, reassigned_to name, version bigint,
	floor text, promise text, system_identifier bigint)
LANGUAGE sql AS $$
	SELECT s.datacenter_id, s.worker_id, s.owner, s.state, s.confirmed,
		s.reassigned_to, s.version, pg_temp.ahead(s.floor, '30 s'),
		pg_temp.ahead(s.promise, '30 s'), s.system_identifier
	FROM snowflake_registry.status s
	WHERE s.datacenter_id = dc OR dc IS NULL
	ORDER BY s.datacenter_id, s.worker_id
$$;
-- a claim's promise and floor, for exact comparisons (as the superuser)
CREATE FUNCTION pg_temp.promise_of(dc integer, w integer) RETURNS timestamptz
LANGUAGE sql AS $$
	SELECT promise FROM snowflake_registry.claims
	WHERE datacenter_id = dc AND worker_id = w
$$;
CREATE FUNCTION pg_temp.floor_of(dc integer, w integer) RETURNS timestamptz
LANGUAGE sql AS $$
	SELECT floor FROM snowflake_registry.claims
	WHERE datacenter_id = dc AND worker_id = w
$$;
\i :sqlstate_of

--
-- A new registry: its first call starts the first epoch, whose floor lies
-- the lease plus the margin ahead of the registry's clock (the install may
-- be a reinstall, or a dump reloaded, below promises made before).  Here
-- the first call is an extension of a claim that does not exist.
--
-- Its settings' row is made with it, with an identity of its own
SELECT count(*) AS settings_rows,
	bool_and(registry = snowflake_registry.this_registry()) AS identified
FROM snowflake_registry.settings;
-- a dump loaded into it brings its own row, which takes this one's place,
-- and so does the fleet's row of the dump, with its layout
BEGIN;
INSERT INTO snowflake_registry.settings (lease, epoch_key, registry)
VALUES ('45 s', 'the key of the dumped registry',
	'00000000-0000-0000-0000-00000000d0d0');
SELECT count(*) AS settings_rows, min(lease) AS lease, min(epoch_key) AS epoch_key,
	min(registry::text) AS registry
FROM snowflake_registry.settings;
INSERT INTO snowflake_registry.fleet VALUES (true, '1288834974657/41/5/5/12');
INSERT INTO snowflake_registry.fleet VALUES (true, '0/41/5/5/12');
SELECT layout FROM snowflake_registry.fleet;
ROLLBACK;
-- claims of another registry, loaded without its settings (triggers off:
-- the dump's settings' row conflicted with this one), stop every call, as
-- do those of a first epoch started in flight: their lease and epoch floor
-- are unknown here
BEGIN;
INSERT INTO snowflake_registry.claims (datacenter_id, worker_id, state,
	version, epoch, claimed_at, extended_at, registry)
VALUES (9, 0, 'idle', 1, -1, clock_timestamp(), clock_timestamp(),
	'00000000-0000-0000-0000-00000000d0d0');
SELECT snowflake_registry.configure();
ROLLBACK;
SELECT clock_timestamp() AS before_first_call \gset
SET SESSION AUTHORIZATION server_paris_1;
SELECT status, worker_id FROM pg_temp.extend(1, 0, 1, 1, 1, 1);
RESET SESSION AUTHORIZATION;
SELECT epoch, lease, margin, reclaim_after,
	epoch_floor >= :'before_first_call'::timestamptz + lease + margin
		AS floor_ahead
FROM snowflake_registry.settings;
-- for the rest of this test, that floor lies an hour back, as in a registry
-- that has run for a while: the floors below are those of the claims
UPDATE snowflake_registry.settings SET epoch_floor = epoch_floor - interval '1 hour';
-- an older dump of this registry loaded into it (its settings of another
-- time: a shorter lease, no margin, an earlier floor) keeps the larger of
-- each bound, warns, and starts a new epoch with an identity of its own
BEGIN;
SELECT lease AS lease_now, margin AS margin_now, epoch_floor AS floor_now,
	epoch_id AS id_now
FROM snowflake_registry.settings \gset
INSERT INTO snowflake_registry.settings (lease, margin, epoch, epoch_id,
	epoch_key, epoch_floor, registry)
SELECT '1 s', '0 s', 1, gen_random_uuid(), epoch_key,
	epoch_floor - interval '1 day', registry
FROM snowflake_registry.settings;
SELECT (SELECT count(*) FROM snowflake_registry.settings) AS settings_rows,
	lease = :'lease_now' AS lease_kept,
	margin = :'margin_now' AS margin_kept,
	epoch_floor = :'floor_now' AS floor_kept, epoch_key IS NULL AS new_epoch,
	epoch_id <> :'id_now' AS new_identity
FROM snowflake_registry.settings;
ROLLBACK;

--
-- Claims
--
SET SESSION AUTHORIZATION server_paris_1;

-- a new login gets the lowest worker id its datacenter never had: version
-- 1, its floor the epoch's (past), a promise within the lease
SELECT * FROM pg_temp.claim(1, 1, 1);
-- the same call again (its answer was lost) is answered again, unchanged
SELECT * FROM pg_temp.claim(1, 1, 1);
-- another start of the same login (a copy, or a new postmaster after its
-- machine crashed) is refused while the promise runs: retry_at is the
-- promise, and the login sees who holds its claim
SELECT * FROM pg_temp.claim(1, 2, 2);

-- another login asks for the worker id it had last: never claimed, so it
-- gets it
SET SESSION AUTHORIZATION server_paris_2;
SELECT * FROM pg_temp.claim(1, 21, 21, preferred => 5);
-- a third login gets the lowest id never claimed
SET SESSION AUTHORIZATION server_paris_3;
SELECT * FROM pg_temp.claim(1, 31, 31);

-- a dump loaded into this registry, which has made claims: its settings
-- replace this registry's, whose claims then stop every call; the dump's
-- layout does not replace the fleet's
RESET SESSION AUTHORIZATION;
INSERT INTO snowflake_registry.fleet VALUES (true, '0/41/5/5/12');
BEGIN;
INSERT INTO snowflake_registry.settings (epoch_key, registry)
VALUES ('the key of the dumped registry', '00000000-0000-0000-0000-00000000d0d0');
SELECT snowflake_registry.configure();
ROLLBACK;
SELECT layout FROM snowflake_registry.fleet;

--
-- Extensions
--
-- the holder extends, chaining nonce 1 to 11: the promise moves to the
-- registry's clock plus the lease, never below what it was
RESET SESSION AUTHORIZATION;
SELECT pg_temp.promise_of(1, 0) AS promise_before \gset
SET SESSION AUTHORIZATION server_paris_1;
SELECT * FROM pg_temp.extend(1, 0, 1, 1, 1, 11);
RESET SESSION AUTHORIZATION;
SELECT pg_temp.promise_of(1, 0) >= :'promise_before' AS not_lowered;
SET SESSION AUTHORIZATION server_paris_1;
-- the same extension again (its answer was lost): answered again
SELECT * FROM pg_temp.extend(1, 0, 1, 1, 1, 11);
-- the chain goes on from nonce 11
SELECT * FROM pg_temp.extend(1, 0, 1, 1, 11, 12);
-- another process with the same token and version extending from nonce 11
-- (a copy of this start's memory): forked, and the promise stays
RESET SESSION AUTHORIZATION;
SELECT pg_temp.promise_of(1, 0) AS promise_before \gset
SET SESSION AUTHORIZATION server_paris_1;
SELECT * FROM pg_temp.extend(1, 0, 1, 1, 11, 13);
-- another start of the login, or a wrong version: moved, naming the holder
SELECT * FROM pg_temp.extend(1, 0, 2, 1, 12, 14);
SELECT * FROM pg_temp.extend(1, 0, 1, 2, 12, 14);
-- a pair this login has no claim on: moved, and nothing else
SELECT * FROM pg_temp.extend(1, 5, 1, 1, 12, 14);
RESET SESSION AUTHORIZATION;
SELECT pg_temp.promise_of(1, 0) = :'promise_before' AS unchanged;
SET SESSION AUTHORIZATION server_paris_1;

--
-- Idle: a clean shutdown lowers the promise to the newest ID's time
--

-- idle names the claim exactly: another token, version or nonce changes
-- nothing
SELECT pg_temp.idle(1, 0, 2, 1, 12);
SELECT pg_temp.idle(1, 0, 1, 2, 12);
SELECT pg_temp.idle(1, 0, 1, 1, 11);
-- the holder's newest ID is from a minute ago: the promise goes down to it
SELECT clock_timestamp() - interval '1 min' AS newest_1 \gset
SELECT pg_temp.idle(1, 0, 1, 1, 12, :'newest_1');
SELECT pg_temp.idle(1, 0, 1, 1, 12, :'newest_1') AS again;
RESET SESSION AUTHORIZATION;
SELECT pg_temp.promise_of(1, 0) = :'newest_1' AS promise_is_newest;
SET SESSION AUTHORIZATION server_paris_1;
-- the next start of the login takes it at once, above that time: a new
-- version, floor the old promise
SELECT * FROM pg_temp.claim(1, 2, 2);
RESET SESSION AUTHORIZATION;
SELECT pg_temp.floor_of(1, 0) = :'newest_1' AS floor_is_old_promise;
SET SESSION AUTHORIZATION server_paris_1;
-- the previous start learns that its claim moved
SELECT * FROM pg_temp.extend(1, 0, 1, 1, 12, 15);
-- a newest ID below the floor (this start never generated) does not take
-- the promise below the floor
SELECT pg_temp.idle(1, 0, 2, 2, 2, :'newest_1'::timestamptz - interval '1 hour');
RESET SESSION AUTHORIZATION;
SELECT pg_temp.promise_of(1, 0) = pg_temp.floor_of(1, 0) AS promise_is_floor;
-- and the next start takes it at once, above that floor
SET SESSION AUTHORIZATION server_paris_1;
SELECT * FROM pg_temp.claim(1, 3, 3);

--
-- A claim whose promise has passed: the holder stopped generating
--

-- the promise of start 3 moved into the past: the status says expired,
-- and the login's next start takes it at once, above that promise
RESET SESSION AUTHORIZATION;
UPDATE snowflake_registry.claims SET promise = clock_timestamp() - interval '1 s'
WHERE datacenter_id = 1 AND worker_id = 0
RETURNING promise AS promise_3 \gset
SELECT * FROM pg_temp.status(1);
SET SESSION AUTHORIZATION server_paris_1;
SELECT * FROM pg_temp.claim(1, 4, 4);
RESET SESSION AUTHORIZATION;
SELECT pg_temp.floor_of(1, 0) = :'promise_3' AS floor_is_old_promise;

-- the same with a lease of 1 s on the registry's own clock: a claim of
-- server_paris_4 in datacenter 2 promises 1 s, and once it has passed a
-- new start takes it at once, above it
SET ROLE snowflake_operator;
SELECT * FROM snowflake_registry.configure(lease => '1 s');
RESET ROLE;
SET SESSION AUTHORIZATION server_paris_4;
SELECT status, worker_id, version FROM pg_temp.claim(2, 41, 41);
SELECT (pg_temp.last()).promise <= clock_timestamp() + interval '1 s'
	AS promise_within_1_s;
SELECT pg_sleep(1.2);
SELECT status, worker_id, version, floor FROM pg_temp.claim(2, 42, 42);
-- and once that one's promise of 1 s has passed too, it is expired
SELECT pg_sleep(1.2);
RESET SESSION AUTHORIZATION;
SET ROLE snowflake_operator;
SELECT worker_id, owner, state, version FROM pg_temp.status(2);
SELECT * FROM snowflake_registry.configure(lease => '30 s');
RESET ROLE;

--
-- A crash restart: a new incarnation of the same postmaster keeps its
-- token (in no file) and takes its claim at once, above the floor alone
-- (the server's durable mark keeps its IDs above those of the processes
-- that died); not once a copy of its memory was seen (forked)
--

-- server_paris_5 in datacenter 10: a start that shut down cleanly with its
-- newest ID a minute ago, and the next start, which takes it above that
SET SESSION AUTHORIZATION server_paris_5;
SELECT status, worker_id, version FROM pg_temp.claim(10, 51, 51);
SELECT clock_timestamp() - interval '1 min' AS newest_51 \gset
SELECT pg_temp.idle(10, 0, 51, 1, 51, :'newest_51');
SELECT * FROM pg_temp.claim(10, 52, 52);
-- a backend of that start crashes and the postmaster starts its processes
-- again: the same token, a new nonce; a new version at once, the floor
-- unchanged
SELECT * FROM pg_temp.claim(10, 52, 53);
RESET SESSION AUTHORIZATION;
SELECT pg_temp.floor_of(10, 0) = :'newest_51' AS floor_unchanged;
-- two processes extend from the same nonce: forked; a crash restart with
-- that token is then refused while the promise runs
SET SESSION AUTHORIZATION server_paris_5;
SELECT status, version FROM pg_temp.extend(10, 0, 52, 3, 53, 54);
SELECT status, version FROM pg_temp.extend(10, 0, 52, 3, 53, 55);
SELECT * FROM pg_temp.claim(10, 52, 56);
RESET SESSION AUTHORIZATION;

--
-- Limits, layouts and a full datacenter
--

-- server_paris_2 holds worker 5 of datacenter 1: it gets no claim in
-- another datacenter (every claim of a login counts, in any datacenter)
SET SESSION AUTHORIZATION server_paris_2;
SELECT * FROM pg_temp.claim(3, 22, 22);
-- an operator allows it two: another server of the login, in datacenter 1,
-- gets a claim of its own rather than a refusal; a third start is refused
RESET SESSION AUTHORIZATION;
SET ROLE snowflake_operator;
SELECT snowflake_registry.allow('server_paris_2', 2);
RESET ROLE;
SET SESSION AUTHORIZATION server_paris_2;
SELECT * FROM pg_temp.claim(1, 23, 23);
SELECT * FROM pg_temp.claim(1, 24, 24);
SELECT * FROM pg_temp.claim(3, 24, 24);
-- one of its two servers stops cleanly (its claim, worker 2, idle) and the
-- other extends after: a new start of the login takes the idle claim at
-- once, not refused by the one held; so does a start that asks for the
-- running server's id (a copy of it, its claim file and all)
BEGIN;
SELECT pg_temp.idle(1, 2, 23, 1, 23);
SELECT status, version FROM pg_temp.extend(1, 5, 21, 1, 21, 2101);
SELECT * FROM pg_temp.claim(1, 25, 25);
ROLLBACK;
BEGIN;
SELECT pg_temp.idle(1, 2, 23, 1, 23);
SELECT * FROM pg_temp.claim(1, 26, 26, preferred => 5);
ROLLBACK;
RESET SESSION AUTHORIZATION;
SET ROLE snowflake_operator;
SELECT snowflake_registry.allow('server_paris_2', 1);
RESET ROLE;
-- allowed one claim again, the login has one server: a copy of the one
-- running (its id asked for) is refused, though the login owns an idle
-- claim left over from the larger allowance; so is a start that asks for
-- no id, though that idle claim went idle after the running one's last
-- extension (helper-40's N8)
SET SESSION AUTHORIZATION server_paris_2;
BEGIN;
SELECT pg_temp.idle(1, 2, 23, 1, 23);
SELECT status, worker_id FROM pg_temp.claim(1, 27, 27, preferred => 5);
ROLLBACK;
BEGIN;
SELECT status, version FROM pg_temp.extend(1, 5, 21, 1, 21, 2102);
SELECT pg_temp.idle(1, 2, 23, 1, 23);
SELECT status, worker_id FROM pg_temp.claim(1, 28, 28);
ROLLBACK;
RESET SESSION AUTHORIZATION;
-- a server whose layout is not the fleet's, recorded at the first claim,
-- gets nothing, not even a pair of its own: not with another epoch, nor
-- with the same bits split otherwise (worker 32 of datacenter 0 in 4/6 bits
-- is worker 0 of datacenter 1 in 5/5, held by server_paris_1)
SET SESSION AUTHORIZATION server_paris_1;
SELECT * FROM pg_temp.claim(1, 5, 5, layout => '1420070400000/41/5/5/12');
SET SESSION AUTHORIZATION server_paris_8;
SELECT * FROM pg_temp.claim(0, 80, 80, preferred => 32, max_worker => 63,
	layout => '1288834974657/41/4/6/12');
-- a registry whose fleet row lost the layout (a data-only restore of the
-- claims) takes it back from the claims
RESET SESSION AUTHORIZATION;
UPDATE snowflake_registry.fleet SET layout = NULL;
SET SESSION AUTHORIZATION server_paris_8;
SELECT * FROM pg_temp.claim(0, 80, 80, preferred => 32, max_worker => 63,
	layout => '1288834974657/41/4/6/12');
RESET SESSION AUTHORIZATION;
SELECT layout FROM snowflake_registry.fleet;
-- a datacenter of two worker ids (max_worker 1): two logins hold them, a
-- third finds it full
SET SESSION AUTHORIZATION server_paris_6;
SELECT * FROM pg_temp.claim(3, 61, 61, max_worker => 1);
SET SESSION AUTHORIZATION server_paris_7;
SELECT * FROM pg_temp.claim(3, 71, 71, max_worker => 1);
SET SESSION AUTHORIZATION server_paris_8;
SELECT * FROM pg_temp.claim(3, 81, 81, max_worker => 1);
RESET SESSION AUTHORIZATION;
SELECT * FROM pg_temp.status(3);

--
-- Operators: release and reassign
--
SET ROLE snowflake_operator;
-- a release of a live claim returns the time from which the id passes
-- without the holder's confirmation, its promise, and says so in a notice
-- (hidden here: it shows that time; see the expired claim below)
SET client_min_messages = warning;
SELECT snowflake_registry.release(3, 0) AS released_until \gset
RESET client_min_messages;
RESET ROLE;
SELECT :'released_until' = pg_temp.promise_of(3, 0) AS returns_promise;
SELECT * FROM pg_temp.status(3);
-- the released id is no other login's yet
SET SESSION AUTHORIZATION server_paris_8;
SELECT * FROM pg_temp.claim(3, 81, 81, max_worker => 1);
-- the holder learns it at its next extension, stops, and confirms with its
-- newest ID's time, which the promise comes down to
SET SESSION AUTHORIZATION server_paris_6;
SELECT * FROM pg_temp.extend(3, 0, 61, 1, 61, 62);
SELECT clock_timestamp() - interval '1 min' AS newest_61 \gset
SELECT pg_temp.idle(3, 0, 61, 1, 61, :'newest_61');
RESET SESSION AUTHORIZATION;
SELECT * FROM pg_temp.status(3);
-- now it passes to whoever claims: above the holder's newest ID
SET SESSION AUTHORIZATION server_paris_8;
SELECT * FROM pg_temp.claim(3, 81, 81, max_worker => 1);
RESET SESSION AUTHORIZATION;
SELECT pg_temp.floor_of(3, 0) = :'newest_61' AS floor_is_newest;
-- its old login, asking again, gets no claim: the datacenter is full
SET SESSION AUTHORIZATION server_paris_6;
SELECT * FROM pg_temp.claim(3, 63, 63, max_worker => 1);

-- a release of an idle claim frees it at once, and says so
SET SESSION AUTHORIZATION server_paris_7;
SELECT pg_temp.idle(3, 1, 71, 1, 71);
RESET SESSION AUTHORIZATION;
SET ROLE snowflake_operator;
SELECT snowflake_registry.release(3, 1) <= clock_timestamp() AS free_now;
-- a release of a claim whose promise passed long ago (server_paris_2's
-- first claim, worker 5 of datacenter 1; the promise set to a fixed time
-- here, so that the notice shows it) says from when it is free: that
-- promise
RESET ROLE;
UPDATE snowflake_registry.claims SET promise = '2024-01-01 00:00:00+00'
WHERE datacenter_id = 1 AND worker_id = 5;
SET ROLE snowflake_operator;
SELECT snowflake_registry.release(1, 5);
-- no such claim: NULL, and no notice
SELECT snowflake_registry.release(3, 7) IS NULL AS no_claim;
SELECT snowflake_registry.reassign(3, 7, 'server_paris_1') IS NULL AS no_claim;
SELECT snowflake_registry.reassign(3, 0, NULL) IS NULL AS no_login;
SELECT * FROM pg_temp.status(3);
RESET ROLE;

-- a reassignment: server_paris_1's worker 0 of datacenter 1 goes to
-- server_paris_2, under the same rule as a release
SET ROLE snowflake_operator;
SET client_min_messages = warning;
SELECT snowflake_registry.reassign(1, 0, 'server_paris_2') AS reassigned_until \gset
RESET client_min_messages;
RESET ROLE;
SELECT :'reassigned_until' = pg_temp.promise_of(1, 0) AS returns_promise;
-- the login named waits until the holder confirms (retry_at: the promise);
-- it is not told who holds it
SET SESSION AUTHORIZATION server_paris_2;
SELECT * FROM pg_temp.claim(1, 25, 25, preferred => 0);
-- no other login gets it, not even the holder's own next start
SET SESSION AUTHORIZATION server_paris_6;
SELECT * FROM pg_temp.claim(1, 64, 64, max_worker => 0);
SET SESSION AUTHORIZATION server_paris_1;
SELECT * FROM pg_temp.claim(1, 9, 9, max_worker => 0);
-- the holder learns it, stops, confirms.  The login named, allowed one
-- claim, has a server running on worker 2: another start of it is a second
-- server, refused; once that one stops, the start takes worker 0
SELECT * FROM pg_temp.extend(1, 0, 4, 4, 4, 41);
SELECT pg_temp.idle(1, 0, 4, 4, 4);
SET SESSION AUTHORIZATION server_paris_2;
SELECT status, worker_id FROM pg_temp.claim(1, 25, 25, preferred => 0);
SELECT pg_temp.idle(1, 2, 23, 1, 23);
SELECT * FROM pg_temp.claim(1, 25, 25, preferred => 0);
RESET SESSION AUTHORIZATION;

-- every claim so far, as operators see them: held, expired (datacenter 2),
-- idle (server_paris_3 shuts down cleanly now), released (confirmed, or
-- not yet), reassigned and taken
SET SESSION AUTHORIZATION server_paris_3;
SELECT pg_temp.idle(1, 1, 31, 1, 31);
RESET SESSION AUTHORIZATION;
SET ROLE snowflake_operator;
SELECT datacenter_id, worker_id, owner, state, confirmed, version
FROM pg_temp.status();
RESET ROLE;
-- server_paris_2, allowed one claim, runs on worker 0 of datacenter 1; an
-- operator gives it worker 1 of datacenter 3, released and confirmed: a
-- start of it there is one server too many ('limit'), not a second holder
-- (helper-44's review of fbabe09)
BEGIN;
SET ROLE snowflake_operator;
SET client_min_messages = warning;
SELECT snowflake_registry.reassign(3, 1, 'server_paris_2') IS NOT NULL AS reassigned;
RESET client_min_messages;
RESET ROLE;
SET SESSION AUTHORIZATION server_paris_2;
SELECT status, worker_id FROM pg_temp.claim(3, 29, 29, preferred => 1);
ROLLBACK;
-- its server is cut off and its promise passes; a server of the login
-- rebuilt meanwhile takes its idle worker 2.  The first one is the server
-- too many: it does not take its claim back by a crash restart (the same
-- token), nor by asking for its claim again (the same nonce: its answer
-- lost; helper-46's review of e2697db); back, its extension answers
-- 'moved', its claim goes idle with its promise, and a claim of it again
-- is refused (helper-45's A1)
BEGIN;
UPDATE snowflake_registry.claims SET promise = clock_timestamp() - interval '1 s'
WHERE datacenter_id = 1 AND worker_id = 0;
SET SESSION AUTHORIZATION server_paris_2;
SELECT status, worker_id FROM pg_temp.claim(1, 30, 30, preferred => 2);
SELECT status, worker_id FROM pg_temp.claim(1, 25, 2503);
SELECT status, worker_id FROM pg_temp.claim(1, 25, 25);
SELECT status, worker_id, version FROM pg_temp.extend(1, 0, 25, 5, 25, 2501);
SELECT status, worker_id FROM pg_temp.claim(1, 25, 2502);
RESET SESSION AUTHORIZATION;
SELECT worker_id, state, promise < clock_timestamp() AS promise_passed
FROM snowflake_registry.claims WHERE datacenter_id = 1 AND worker_id IN (0, 2)
ORDER BY worker_id;
ROLLBACK;

--
-- Finding 5: a login that can create objects where the registry's
-- functions might look for them cannot make them run its code.  Here it may
-- create in public (as PostgreSQL 14 and earlier let every role, and as
-- pg_upgrade keeps), and the snowflake extension is installed there: it
-- overloads names the registry uses, with functions that record that they
-- ran and try to make it superuser, then calls claim, extend and idle.
--
CREATE EXTENSION snowflake;
GRANT CREATE ON SCHEMA public TO snowflake_worker;
SET SESSION AUTHORIZATION mallory;
CREATE TABLE public.overload_ran (what text, as_role name);
CREATE FUNCTION public.hostile(what text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO public.overload_ran VALUES (what, current_user);
	BEGIN
		ALTER ROLE mallory SUPERUSER;
	EXCEPTION WHEN insufficient_privilege THEN
		NULL;
	END;
END
$$;
-- the registry's own helpers, by name
CREATE FUNCTION public.free(c snowflake_registry.claims) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('free'); RETURN true; END $$;
CREATE FUNCTION public.promise(previous timestamptz) RETURNS timestamptz
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('promise'); RETURN 'infinity'; END $$;
CREATE FUNCTION public.holder(c snowflake_registry.claims) RETURNS text
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('holder'); RETURN ''; END $$;
CREATE FUNCTION public.durable() RETURNS text
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('durable'); RETURN ''; END $$;
CREATE FUNCTION public.epoch_key() RETURNS text
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('epoch_key'); RETURN ''; END $$;
-- functions of pg_catalog, with argument types that match better
CREATE FUNCTION public.format(text, text) RETURNS text
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('format'); RETURN $1; END $$;
CREATE FUNCTION public.length(text) RETURNS integer
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('length'); RETURN 0; END $$;
CREATE FUNCTION public.clock_timestamp() RETURNS timestamptz
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('clock_timestamp'); RETURN 'infinity'; END $$;
CREATE FUNCTION public.set_config(text, text, boolean) RETURNS text
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('set_config'); RETURN ''; END $$;
-- operators on the types the registry compares
CREATE FUNCTION public.eq_uuid(uuid, uuid) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('= uuid'); RETURN true; END $$;
CREATE OPERATOR public.= (FUNCTION = public.eq_uuid, LEFTARG = uuid, RIGHTARG = uuid);
CREATE FUNCTION public.eq_text(text, text) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('= text'); RETURN true; END $$;
CREATE OPERATOR public.= (FUNCTION = public.eq_text, LEFTARG = text, RIGHTARG = text);
CREATE FUNCTION public.eq_name(name, name) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('= name'); RETURN true; END $$;
CREATE OPERATOR public.= (FUNCTION = public.eq_name, LEFTARG = name, RIGHTARG = name);
CREATE FUNCTION public.eq_int(integer, integer) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('= integer'); RETURN true; END $$;
CREATE OPERATOR public.= (FUNCTION = public.eq_int, LEFTARG = integer, RIGHTARG = integer);
CREATE FUNCTION public.lt_ts(timestamptz, timestamptz) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('< timestamptz'); RETURN true; END $$;
CREATE OPERATOR public.< (FUNCTION = public.lt_ts, LEFTARG = timestamptz, RIGHTARG = timestamptz);
CREATE FUNCTION public.plus_ts(timestamptz, interval) RETURNS timestamptz
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('+ timestamptz'); RETURN 'infinity'; END $$;
CREATE OPERATOR public.+ (FUNCTION = public.plus_ts, LEFTARG = timestamptz, RIGHTARG = interval);
CREATE FUNCTION public.nomatch(text, text) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('!~'); RETURN false; END $$;
CREATE OPERATOR public.!~ (FUNCTION = public.nomatch, LEFTARG = text, RIGHTARG = text);
-- the 1.3 claims table, which the registry reads while a 1.3 registry is
-- in this database: here a view of the hostile login's, in the schema of
-- the snowflake extension (at 1.4, it has no such table)
CREATE FUNCTION public.read_hostile() RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('snowflake_claims'); RETURN false; END $$;
CREATE VIEW public.snowflake_claims AS
SELECT 5 AS datacenter_id, 9 AS worker_id, 0::bigint AS system_identifier,
	NULL::uuid AS token, NULL::text AS host, NULL::integer AS port,
	NULL::text AS data_directory, now() AS claimed_at, now() AS checked_in_at,
	public.read_hostile() AS idle, interval '1 s' AS takeover_delay,
	1::bigint AS version, NULL::timestamptz AS issued_until,
	NULL::interval AS reclaim_lease, false AS released,
	NULL::bigint AS reassigned_to, NULL::timestamptz AS taken_above;
-- the same names, and tables named as the registry's, in its own temporary
-- schema
CREATE FUNCTION pg_temp.free(c snowflake_registry.claims) RETURNS boolean
LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('pg_temp.free'); RETURN true; END $$;
CREATE TEMP TABLE claims (datacenter_id integer, worker_id integer);
CREATE TEMP TABLE settings (lease interval);
-- the calls, with the temporary schema and public first in the search_path:
-- a claim, an extension, the same from another process (forked), idle, and
-- the claim again, taken back
SET search_path = pg_temp, public, pg_catalog;
SELECT a.status, a.worker_id, a.version
FROM snowflake_registry.claim(5, 31, '1288834974657/41/5/5/12', pg_temp.u(65),
	pg_temp.u(65), 666, 'mallory', 5432, '/srv/mallory') a;
SELECT a.status, a.worker_id, a.version
FROM snowflake_registry.extend(5, 0, pg_temp.u(65), 1, pg_temp.u(65),
	pg_temp.u(66)) a;
SELECT a.status, a.worker_id, a.version
FROM snowflake_registry.extend(5, 0, pg_temp.u(65), 1, pg_temp.u(65),
	pg_temp.u(67)) a;
SELECT snowflake_registry.idle(5, 0, pg_temp.u(65), 1, pg_temp.u(66), NULL,
	'2024-01-01 00:00:00+00');
SELECT a.status, a.worker_id, a.version
FROM snowflake_registry.claim(5, 31, '1288834974657/41/5/5/12', pg_temp.u(66),
	pg_temp.u(68), 666, 'mallory', 5432, '/srv/mallory') a;
RESET search_path;
RESET SESSION AUTHORIZATION;
-- the victims' calls run no overload either: another server's claim and
-- extension, and the operators' functions; the operator frees both claims,
-- and mallory confirms
SET SESSION AUTHORIZATION server_paris_9;
SELECT * FROM pg_temp.claim(5, 91, 91);
SELECT * FROM pg_temp.extend(5, 1, 91, 1, 91, 92);
RESET SESSION AUTHORIZATION;
SET ROLE snowflake_operator;
SET client_min_messages = warning;
SELECT snowflake_registry.release(5, 0) IS NOT NULL AS released;
SELECT snowflake_registry.release(5, 1) IS NOT NULL AS released;
RESET client_min_messages;
SELECT snowflake_registry.allow('server_paris_9', 1);
SELECT * FROM snowflake_registry.configure();
RESET ROLE;
SET SESSION AUTHORIZATION mallory;
SELECT status, worker_id, version FROM pg_temp.extend(5, 0, 66, 2, 68, 69);
SELECT pg_temp.idle(5, 0, 66, 2, 68);
RESET SESSION AUTHORIZATION;
SELECT worker_id, owner, state, confirmed FROM pg_temp.status(5);
-- no overload ran, and the login is no superuser
SELECT count(*) AS overloads_ran FROM public.overload_ran;
SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory';
SET SESSION AUTHORIZATION mallory;
DROP VIEW public.snowflake_claims;
DROP TABLE pg_temp.claims, pg_temp.settings;
RESET SESSION AUTHORIZATION;

--
-- Finding 6: a login neither reads nor acts on another login's claim.
-- server_paris_10 holds worker 0 of datacenter 6; mallory names it every
-- way it can: its pair, its preferred id, its system, host and data
-- directory, and even its token, version and nonce (which it could not
-- know: no answer and no view shows them).
--
SET SESSION AUTHORIZATION server_paris_10;
SELECT * FROM pg_temp.claim(6, 101, 101, max_worker => 1);
RESET SESSION AUTHORIZATION;
CREATE TEMP TABLE victim_before AS
SELECT * FROM snowflake_registry.claims WHERE datacenter_id = 6 AND worker_id = 0;
SET SESSION AUTHORIZATION mallory;
BEGIN;
-- a claim under the victim's system, host and data directory, with the
-- victim's id alone in its layout: full, and nothing else
SELECT a.*
FROM snowflake_registry.claim(6, 0, '1288834974657/41/5/5/12', pg_temp.u(98),
	pg_temp.u(98), 110, 'server_paris_10', 5432, '/srv/server_paris_10', 0) a;
-- the same with two ids, asking for the victim's: the other id, and not a
-- word about the victim
SELECT a.status, a.worker_id, a.version, a.holder
FROM snowflake_registry.claim(6, 1, '1288834974657/41/5/5/12', pg_temp.u(99),
	pg_temp.u(99), 110, 'server_paris_10', 5432, '/srv/server_paris_10', 0) a;
-- extend and idle with the victim's very token, version and nonce: moved,
-- with nothing but the worker id; false
SELECT a.*
FROM snowflake_registry.extend(6, 0, pg_temp.u(101), 1, pg_temp.u(101),
	pg_temp.u(97)) a;
SELECT snowflake_registry.idle(6, 0, pg_temp.u(101), 1, pg_temp.u(101), NULL,
	'2024-01-01 00:00:00+00');
-- in the same transaction, still open: the victim's row is not locked by
-- it (a lock would block the victim's extensions until it ends)
RESET SESSION AUTHORIZATION;
SELECT xmax = pg_current_xact_id()::xid AS victim_row_locked
FROM snowflake_registry.claims WHERE datacenter_id = 6 AND worker_id = 0;
COMMIT;
-- the victim's row is as it was, and its extension succeeds
SELECT c::text = b::text AS victim_unchanged
FROM snowflake_registry.claims c, victim_before b
WHERE c.datacenter_id = 6 AND c.worker_id = 0;
SET SESSION AUTHORIZATION server_paris_10;
SELECT * FROM pg_temp.extend(6, 0, 101, 1, 101, 102);
-- and nothing to read: not the view, not a table
SET SESSION AUTHORIZATION mallory;
SELECT pg_temp.sqlstate_of(q) AS sqlstate, q AS query
FROM (VALUES ('SELECT * FROM snowflake_registry.status'),
	('SELECT * FROM snowflake_registry.claims'),
	('SELECT host FROM snowflake_registry.claims'),
	('SELECT * FROM snowflake_registry.settings'),
	('UPDATE snowflake_registry.claims SET owner = session_user'),
	('DELETE FROM snowflake_registry.claims'),
	('SELECT snowflake_registry.holder(NULL)'),
	('SELECT snowflake_registry.take(NULL, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)'),
	('SELECT snowflake_registry.legacy_refresh(NULL)')) v(q);
RESET SESSION AUTHORIZATION;

--
-- Finding 7: no input takes a promise beyond the registry's clock plus the
-- lease.  mallory's own claim of datacenter 6 (worker 1): idle with a
-- newest ID far in the future keeps the promise where it was; a new start
-- takes it within the lease
--
SELECT pg_temp.promise_of(6, 1) AS promise_before \gset
SET SESSION AUTHORIZATION mallory;
SELECT pg_temp.idle(6, 1, 99, 1, 99, clock_timestamp() + interval '360 days');
RESET SESSION AUTHORIZATION;
SELECT pg_temp.promise_of(6, 1) = :'promise_before' AS promise_kept;
SET SESSION AUTHORIZATION mallory;
SELECT * FROM pg_temp.claim(6, 600, 600, max_worker => 1);
RESET SESSION AUTHORIZATION;
SELECT pg_temp.promise_of(6, 1) AS promise_before \gset
SET SESSION AUTHORIZATION mallory;
SELECT pg_temp.idle(6, 1, 600, 2, 600, 'infinity');
RESET SESSION AUTHORIZATION;
SELECT pg_temp.promise_of(6, 1) = :'promise_before' AS promise_kept;
SET SESSION AUTHORIZATION mallory;
SELECT * FROM pg_temp.claim(6, 601, 601, max_worker => 1);
SELECT * FROM pg_temp.extend(6, 1, 601, 3, 601, 602);
RESET SESSION AUTHORIZATION;
-- no promise of any claim lies beyond the clock plus the lease
SELECT count(*) AS beyond_lease FROM snowflake_registry.claims
WHERE promise > clock_timestamp() + (SELECT lease FROM snowflake_registry.settings);
-- and no floor is lost: not even the owner may delete a claim
DELETE FROM snowflake_registry.claims WHERE datacenter_id = 6;
TRUNCATE snowflake_registry.claims;

--
-- Finding 8: one claim per login (idle ones count too), every input
-- bounded, and only operators change anything
--

-- mallory holds worker 1 of datacenter 6, live: another start of it is
-- refused, and it gets no second id, there or in any datacenter; nor once
-- its claim is idle (an idle claim counts until others may take it), so
-- no login fills a datacenter with idle claims
SET SESSION AUTHORIZATION mallory;
SELECT * FROM pg_temp.claim(6, 603, 603, preferred => 0);
SELECT * FROM pg_temp.claim(6, 604, 604, max_worker => 0);
SELECT * FROM pg_temp.claim(7, 604, 604);
SELECT pg_temp.idle(6, 1, 601, 3, 602);
SELECT * FROM pg_temp.claim(7, 605, 605);
SELECT * FROM pg_temp.claim(7, 606, 606, preferred => 31, max_worker => 31);
-- a login at its limit leaves nothing behind: naming a hundred datacenters
-- it never used adds no row to the registry
RESET SESSION AUTHORIZATION;
SELECT (SELECT count(*) FROM snowflake_registry.datacenters) AS datacenters,
	(SELECT count(*) FROM snowflake_registry.claims) AS claims \gset
SET SESSION AUTHORIZATION mallory;
SELECT a.status, count(*)
FROM generate_series(100, 199) dc,
	snowflake_registry.claim(dc, 31, '1288834974657/41/5/5/12', pg_temp.u(dc),
		pg_temp.u(dc)) a
GROUP BY 1;
RESET SESSION AUTHORIZATION;
SELECT (SELECT count(*) FROM snowflake_registry.datacenters) - :datacenters
		AS datacenters_added,
	(SELECT count(*) FROM snowflake_registry.claims) - :claims AS claims_added;
-- a claim in an older snapshot than its locks is refused: sessions of one
-- login at REPEATABLE READ, each counting no claim of the others, could
-- fill a datacenter
SET SESSION AUTHORIZATION mallory;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT status FROM snowflake_registry.claim(7, 31, '1288834974657/41/5/5/12',
	pg_temp.u(700), pg_temp.u(700));
ROLLBACK;
-- and so is every other call: an extension in such a snapshot would
-- promise under a lease lowered since, further than any epoch's floor
-- covers; a configure() would compute the floors from stale claims
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT status FROM snowflake_registry.extend(7, 0, pg_temp.u(700), 1,
	pg_temp.u(700), pg_temp.u(701));
ROLLBACK;
RESET SESSION AUTHORIZATION;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT lease FROM snowflake_registry.configure(lease => '3 s');
ROLLBACK;
-- a login that prepares its transaction after a call (helper-50's H3)
-- holds the fleet's row with no session, across restarts too: a change
-- of the lease that cannot wait names the prepared transaction, and how to
-- end it
SET SESSION AUTHORIZATION mallory;
BEGIN;
SELECT status IS NOT NULL AS answered
FROM snowflake_registry.claim(7, 31, '1288834974657/41/5/5/12',
	pg_temp.u(702), pg_temp.u(702));
PREPARE TRANSACTION 'snowflake_held';
RESET SESSION AUTHORIZATION;
SET lock_timeout = '100ms';
DO $$
DECLARE
	detail text;
	hint text;
BEGIN
	PERFORM snowflake_registry.configure(lease => '3 s');
EXCEPTION WHEN lock_not_available THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
	RAISE NOTICE 'the detail names it: %; the hint: %',
		detail LIKE '%prepared transaction ''snowflake_held'' (mallory, prepared at %', hint;
END
$$;
RESET lock_timeout;
ROLLBACK PREPARED 'snowflake_held';
SET SESSION AUTHORIZATION mallory;
-- bounds
SELECT pg_temp.sqlstate_of(q) AS sqlstate, q AS query
FROM (VALUES
	('SELECT snowflake_registry.claim(2147483647, 31, ''1288834974657/41/5/5/12'', pg_temp.u(1), pg_temp.u(1))'),
	('SELECT snowflake_registry.claim(1073741824, 31, ''1288834974657/41/5/5/12'', pg_temp.u(1), pg_temp.u(1))'),
	('SELECT snowflake_registry.claim(-1, 31, ''1288834974657/41/5/5/12'', pg_temp.u(1), pg_temp.u(1))'),
	('SELECT snowflake_registry.claim(7, 2147483647, ''1288834974657/41/5/5/12'', pg_temp.u(1), pg_temp.u(1))'),
	('SELECT snowflake_registry.claim(7, 31, ''a layout'', pg_temp.u(1), pg_temp.u(1))'),
	('SELECT snowflake_registry.claim(7, 31, ''1288834974657/41/5/5/12'', NULL, pg_temp.u(1))'),
	('SELECT snowflake_registry.claim(7, 31, ''1288834974657/41/5/5/12'', pg_temp.u(1), NULL)'),
	('SELECT snowflake_registry.claim(7, 31, ''1288834974657/41/5/5/12'', pg_temp.u(1), pg_temp.u(1), 1, repeat(''h'', 256))'),
	('SELECT snowflake_registry.claim(7, 31, ''1288834974657/41/5/5/12'', pg_temp.u(1), pg_temp.u(1), 1, ''h'', 65536)'),
	('SELECT snowflake_registry.claim(7, 31, ''1288834974657/41/5/5/12'', pg_temp.u(1), pg_temp.u(1), 1, ''h'', 1, repeat(''d'', 32 * 1024 * 1024))'),
	('SELECT snowflake_registry.extend(6, 1, pg_temp.u(601), NULL, pg_temp.u(602), pg_temp.u(603))'),
	('SELECT snowflake_registry.extend(6, NULL, pg_temp.u(601), 3, pg_temp.u(602), pg_temp.u(603))')) v(q);
-- none of the operators' functions
SELECT pg_temp.sqlstate_of(q) AS sqlstate, q AS query
FROM (VALUES ('SELECT snowflake_registry.configure(lease => ''1 h'')'),
	('SELECT snowflake_registry.allow(''mallory'', 32)'),
	('SELECT snowflake_registry.release(6, 0)'),
	('SELECT snowflake_registry.reassign(6, 0, ''mallory'')'),
	('SELECT * FROM snowflake_registry.status')) v(q);
RESET SESSION AUTHORIZATION;
-- and even an operator cannot set absurd bounds
SET ROLE snowflake_operator;
SELECT pg_temp.sqlstate_of(q) AS sqlstate, q AS query
FROM (VALUES ('SELECT snowflake_registry.configure(lease => ''1000 years'')'),
	('SELECT snowflake_registry.configure(lease => ''0 s'')'),
	-- 1 h, 30 s and 1 h as PostgreSQL compares them, but the calendar's
	-- months and days added to a time stretch them to 25 h or back 47 h
	('SELECT snowflake_registry.configure(lease => ''1 mon -29 days -23 hours'')'),
	('SELECT snowflake_registry.configure(lease => ''1 day -23 hours -59 min -30 s'')'),
	('SELECT snowflake_registry.configure(lease => ''1 year -11 mons -29 days -23 hours'')'),
	('SELECT snowflake_registry.configure(reclaim_after => ''1000 years'')'),
	('SELECT snowflake_registry.configure(reclaim_after => ''-1 s'')'),
	-- 0 and 1 day as PostgreSQL compares them, but a day ahead of the
	-- clock or behind it on the calendar (helper-39's N5)
	('SELECT snowflake_registry.configure(reclaim_after => ''1 mon -30 days'')'),
	('SELECT snowflake_registry.configure(reclaim_after => ''-1 year 361 days'')'),
	('SELECT snowflake_registry.allow(''mallory'', 1025)'),
	('SELECT snowflake_registry.allow(''mallory'', 0)')) v(q);
SELECT * FROM snowflake_registry.configure();
-- days and seconds are taken, and counted as seconds: a day of 24 hours
SELECT reclaim_after FROM snowflake_registry.configure(reclaim_after => '1 day -86399 s');
SELECT reclaim_after FROM snowflake_registry.configure(reclaim_after => '365 days');
SELECT reclaim_after FROM snowflake_registry.configure(reclaim_after => '1 day');
RESET ROLE;
-- nor the owner a margin of days
SELECT pg_temp.sqlstate_of('UPDATE snowflake_registry.settings SET margin = ''1 day -23 hours -59 min''') AS sqlstate;

--
-- Finding 9: there is no advisory lock to take (but 1.3's own, which
-- legacy_refresh takes only while a 1.3 registry is still in the database,
-- as every 1.3 server does), and no role but the owner may lock the
-- registry's rows or tables
--
SELECT proname AS functions_taking_advisory_locks FROM pg_proc
WHERE pronamespace = 'snowflake_registry'::regnamespace
  AND prosrc ~* 'advisory';
SET SESSION AUTHORIZATION mallory;
BEGIN;
SELECT status, worker_id FROM pg_temp.claim(6, 607, 607, max_worker => 1);
SELECT count(*) AS advisory_locks_held FROM pg_locks
WHERE locktype = 'advisory' AND pid = pg_backend_pid();
COMMIT;
SELECT pg_temp.sqlstate_of(q) AS sqlstate, q AS query
FROM (VALUES ('SELECT FROM snowflake_registry.claims FOR UPDATE'),
	('SELECT FROM snowflake_registry.datacenters FOR UPDATE'),
	('SELECT FROM snowflake_registry.settings FOR UPDATE'),
	('SELECT FROM snowflake_registry.logins FOR KEY SHARE'),
	('SELECT FROM snowflake_registry.status FOR UPDATE'),
	('LOCK TABLE snowflake_registry.claims IN ACCESS SHARE MODE'),
	('LOCK TABLE snowflake_registry.datacenters')) v(q);
RESET SESSION AUTHORIZATION;

--
-- Epochs: a registry that went back in time.  The epoch key is set to
-- another value, as a restore, PITR, a failover or a restart would change
-- it; the next call starts a new epoch, whose floor lies at least the lease
-- plus the margin ahead of the registry's clock
--
SELECT epoch AS epoch_before FROM snowflake_registry.settings \gset
-- the key depends on nothing a caller sets: other settings start no epoch
SET SESSION AUTHORIZATION server_paris_10;
SET TimeZone = 'Asia/Tokyo';
SET DateStyle = 'German';
SET extra_float_digits = -15;
SELECT status FROM pg_temp.extend(6, 0, 101, 1, 102, 103);
RESET TimeZone;
RESET DateStyle;
RESET extra_float_digits;
RESET SESSION AUTHORIZATION;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';
SELECT epoch = :epoch_before AS same_epoch FROM snowflake_registry.settings;

UPDATE snowflake_registry.settings SET epoch_key = 'another';
SELECT clock_timestamp() AS before_epoch \gset
-- the holder's next extension is a new grant: regranted, a new version,
-- a floor at or above the epoch's (its promise starts there too)
SET SESSION AUTHORIZATION server_paris_10;
SELECT status, worker_id, version FROM pg_temp.extend(6, 0, 101, 1, 103, 104);
RESET SESSION AUTHORIZATION;
SELECT epoch = :epoch_before + 1 AS new_epoch,
	epoch_floor >= :'before_epoch'::timestamptz + lease + margin AS floor_ahead,
	epoch_floor <= clock_timestamp() + lease + margin AS floor_not_further
FROM snowflake_registry.settings;
SELECT epoch_floor AS epoch_floor FROM snowflake_registry.settings \gset
SELECT (pg_temp.last()).floor >= :'epoch_floor' AS floor_above_epoch,
	(pg_temp.last()).promise >= (pg_temp.last()).floor AS promise_from_floor;
-- the same call again (its answer was lost): answered again
SET SESSION AUTHORIZATION server_paris_10;
SELECT status, worker_id, version FROM pg_temp.extend(6, 0, 101, 1, 103, 104);
-- the next extension, in the same epoch, is an extension again; the old
-- version is moved
SELECT status, worker_id, version FROM pg_temp.extend(6, 0, 101, 2, 104, 105);
SELECT status, worker_id, version FROM pg_temp.extend(6, 0, 101, 1, 105, 106);
RESET SESSION AUTHORIZATION;
-- a new grant in the new epoch starts above its floor too
SET SESSION AUTHORIZATION server_paris_11;
SELECT status, worker_id, version FROM pg_temp.claim(8, 111, 111);
RESET SESSION AUTHORIZATION;
SELECT (pg_temp.last()).floor >= :'epoch_floor' AS floor_above_epoch;
-- one epoch: the next calls see the same
SELECT epoch = :epoch_before + 1 AS same_epoch FROM snowflake_registry.settings;
-- a claim with this epoch's number but another epoch's identity, as the
-- claims of another registry's dump loaded here carry (a new install
-- numbers its first epoch 1 again): its holder's next extension is a new
-- grant above this epoch's floor, never an extension of a promise made by
-- a registry whose later history this one does not know
UPDATE snowflake_registry.claims SET epoch_id = gen_random_uuid()
WHERE datacenter_id = 6 AND worker_id = 0;
SELECT c.epoch = s.epoch AS same_number
FROM snowflake_registry.claims c, snowflake_registry.settings s
WHERE c.datacenter_id = 6 AND c.worker_id = 0;
SET SESSION AUTHORIZATION server_paris_10;
SELECT status, worker_id, version FROM pg_temp.extend(6, 0, 101, 2, 105, 106);
RESET SESSION AUTHORIZATION;
SELECT (pg_temp.last()).floor >= :'epoch_floor' AS floor_above_epoch;

--
-- Every registry function commits with synchronous_commit on, whatever the
-- caller set: the server's and the operator's logins have it off
--
CREATE ROLE operator_paris LOGIN IN ROLE snowflake_operator;
ALTER ROLE server_paris_12 SET synchronous_commit = off;
ALTER ROLE operator_paris SET synchronous_commit = off;
\c - server_paris_12
SHOW synchronous_commit;
BEGIN;
SELECT (a).status, (a).worker_id
FROM (SELECT snowflake_registry.claim(9, 31, '1288834974657/41/5/5/12',
	'00000000-0000-0000-0000-000000000031', '00000000-0000-0000-0000-000000000031') a) c;
SHOW synchronous_commit;
COMMIT;
BEGIN;
SELECT (a).status
FROM (SELECT snowflake_registry.extend(9, 0, '00000000-0000-0000-0000-000000000031', 1,
	'00000000-0000-0000-0000-000000000031', '00000000-0000-0000-0000-000000000032') a) e;
SHOW synchronous_commit;
COMMIT;
BEGIN;
SELECT snowflake_registry.idle(9, 0, '00000000-0000-0000-0000-000000000031', 1,
	'00000000-0000-0000-0000-000000000032');
SHOW synchronous_commit;
COMMIT;
\c - operator_paris
SHOW synchronous_commit;
SET client_min_messages = warning;
BEGIN;
SELECT snowflake_registry.release(9, 0) IS NOT NULL AS released;
SHOW synchronous_commit;
COMMIT;
BEGIN;
SELECT snowflake_registry.reassign(9, 0, 'server_paris_12') IS NOT NULL AS reassigned;
SHOW synchronous_commit;
COMMIT;
RESET client_min_messages;
BEGIN;
SELECT snowflake_registry.allow('server_paris_12', 1);
SHOW synchronous_commit;
COMMIT;
BEGIN;
SELECT lease IS NOT NULL AS configured FROM snowflake_registry.configure();
SHOW synchronous_commit;
COMMIT;
\c - :regress_super

--
-- The fleet's layout, in a registry of its own: a stray server of another
-- layout claims first, and an operator puts the layout right
--
CREATE DATABASE regression_registry_layout;
\c regression_registry_layout
CREATE EXTENSION snowflake_registry;
GRANT USAGE ON SCHEMA snowflake_registry TO snowflake_worker, snowflake_operator;
GRANT EXECUTE ON FUNCTION snowflake_registry.claim, snowflake_registry.extend,
    snowflake_registry.idle TO snowflake_worker;
GRANT EXECUTE ON FUNCTION snowflake_registry.configure TO snowflake_operator;
GRANT SELECT ON snowflake_registry.status TO snowflake_operator;
-- claim(datacenter, max worker, layout, start) as the session's login
CREATE FUNCTION pg_temp.claim_in(dc integer, max_worker integer,
	layout text, start integer)
RETURNS TABLE (status text, worker_id integer, version bigint, holder text)
LANGUAGE sql AS $$
	SELECT a.status, a.worker_id, a.version, a.holder
	FROM snowflake_registry.claim(dc, max_worker, layout,
		lpad(start::text, 32, '0')::uuid, lpad(start::text, 32, '0')::uuid) a
$$;
-- the stray server, with 4 datacenter and 6 worker bits, claims first: its
-- layout becomes the fleet's, and a server of Twitter's layout gets nothing
SET SESSION AUTHORIZATION server_paris_1;
SELECT * FROM pg_temp.claim_in(1, 63, '1288834974657/41/4/6/12', 1);
SET SESSION AUTHORIZATION server_paris_2;
SELECT * FROM pg_temp.claim_in(2, 31, '1288834974657/41/5/5/12', 2);
-- a layout is compared as numbers, whatever its spelling; one that no
-- server accepts is refused
SET SESSION AUTHORIZATION server_paris_3;
SELECT * FROM pg_temp.claim_in(3, 63, '01288834974657/41/04/06/12', 3);
SELECT * FROM pg_temp.claim_in(3, 31, '1288834974657/41/5/5/40', 3);
RESET SESSION AUTHORIZATION;
SELECT snowflake_registry.layout_of(l)
FROM unnest(ARRAY['0/32/0/0/1', '1/31/0/0/1', '1/41/31/0/12', '1/41/5/5/0',
	'1/41/10/10/3']) l;
-- the stray's promise, as if recorded while the registry's clock ran an
-- hour ahead of its clock now (a clock stepped back since)
UPDATE snowflake_registry.claims SET promise = promise + interval '1 hour'
WHERE datacenter_id = 1;
-- an operator sets the fleet's layout; not one with another epoch, or with
-- the time at another bit, whose IDs could equal the stray's
SET ROLE snowflake_operator;
SELECT layout FROM snowflake_registry.configure();
SELECT layout FROM snowflake_registry.configure(layout => '1420070400000/41/5/5/12');
SELECT layout FROM snowflake_registry.configure(layout => '1288834974657/40/5/5/13');
SELECT layout FROM snowflake_registry.configure(layout => 'twitter');
SELECT layout FROM snowflake_registry.configure(layout => '1288834974657/41/5/5/12');
RESET ROLE;
-- the stray's claim is no longer extended: it stops, and claims again in
-- vain; the Twitter server gets its claim above the stray's promise (a new
-- epoch, whose floor lies above every promise recorded, whatever the
-- registry's clock says now), though its worker 0 of datacenter 2 has the
-- node bits of the stray's
SELECT promise AS stray_promise FROM snowflake_registry.claims
WHERE datacenter_id = 1 \gset
SET SESSION AUTHORIZATION server_paris_1;
SELECT a.status, a.worker_id, a.holder
FROM snowflake_registry.extend(1, 0, lpad('1', 32, '0')::uuid, 1,
	lpad('1', 32, '0')::uuid, lpad('11', 32, '0')::uuid) a;
SELECT * FROM pg_temp.claim_in(1, 63, '1288834974657/41/4/6/12', 1);
SET SESSION AUTHORIZATION server_paris_2;
SELECT status, worker_id FROM pg_temp.claim_in(2, 31, '1288834974657/41/5/5/12', 2);
RESET SESSION AUTHORIZATION;
-- (a floor at the promise will do: a holder's IDs lie at or below its
-- promise, and the next holder's strictly above its floor)
SELECT floor >= :'stray_promise' AS above_the_stray
FROM snowflake_registry.claims WHERE datacenter_id = 2;
-- the same layout set again changes nothing: no new epoch
SET ROLE snowflake_operator;
SELECT layout FROM snowflake_registry.configure(layout => '1288834974657/41/5/5/12');
RESET ROLE;
SELECT epoch_key IS NOT NULL AS same_epoch FROM snowflake_registry.settings;
\c :regress_db
DROP DATABASE regression_registry_layout;

--
-- Upgrading a live 1.3 registry, in a database of its own
--
CREATE DATABASE regression_registry_13;
\c regression_registry_13
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';
SET IntervalStyle = 'postgres';
CREATE EXTENSION snowflake VERSION '1.3';
-- 1.3 servers claim in datacenter 0, through 1.3's functions: system 1301
-- shuts down cleanly; 1302 runs; 1303 is released by an operator and
-- confirms; 1304 has not checked in for two days; 1305 runs
CREATE FUNCTION pg_temp.claim_13(sysid bigint, token integer)
RETURNS TABLE (status text, worker_id integer)
LANGUAGE sql AS $$
	SELECT a.status, a.worker_id
	FROM snowflake_registry_claim(0, sysid, 1, lpad(token::text, 32, '0')::uuid,
		'host', 5432, '/data', interval '10 s', interval '1 day', 31) a
$$;
SELECT * FROM pg_temp.claim_13(1301, 1);
SELECT * FROM pg_temp.claim_13(1302, 2);
SELECT * FROM pg_temp.claim_13(1303, 3);
SELECT * FROM pg_temp.claim_13(1304, 4);
SELECT * FROM pg_temp.claim_13(1305, 5);
SELECT * FROM pg_temp.claim_13(1307, 7);
SELECT snowflake_registry_idle(0, 0, lpad('1', 32, '0')::uuid,
	clock_timestamp() - interval '1 min');
SET client_min_messages = warning;
SELECT snowflake_registry_release(0, 2) IS NOT NULL AS released;
RESET client_min_messages;
SELECT snowflake_registry_idle(0, 2, lpad('3', 32, '0')::uuid,
	clock_timestamp() - interval '1 min');
UPDATE snowflake_claims SET checked_in_at = checked_in_at - interval '2 days'
WHERE worker_id = 3;
-- a login with 1.3's rights marks system 1307's claim idle with IDs up to
-- almost a year ahead, which 1.3 took
SELECT snowflake_registry_idle(0, 5, lpad('7', 32, '0')::uuid,
	clock_timestamp() + interval '360 days');
SELECT worker_id, system_identifier, state, released_confirmed
FROM snowflake_registry_status ORDER BY 1;

-- updating snowflake to 1.4 would drop these claims: refused (without the
-- context, which names the script's lines on PostgreSQL 18)
\set SHOW_CONTEXT never
ALTER EXTENSION snowflake UPDATE;
\set SHOW_CONTEXT errors

-- the registry extension takes them in as claims of 1.3 servers, with no
-- login; the 1.3 table keeps them.  It warns that a worker login that may
-- create objects in the schema of 1.3's registry functions (as public let
-- everyone before PostgreSQL 15) could have them call its own
GRANT CREATE ON SCHEMA public TO snowflake_worker;
CREATE EXTENSION snowflake_registry;
REVOKE CREATE ON SCHEMA public FROM snowflake_worker;
GRANT USAGE ON SCHEMA snowflake_registry TO snowflake_worker;
GRANT EXECUTE ON FUNCTION snowflake_registry.claim, snowflake_registry.extend,
    snowflake_registry.idle TO snowflake_worker;
GRANT USAGE ON SCHEMA snowflake_registry TO snowflake_operator;
GRANT SELECT ON snowflake_registry.status TO snowflake_operator;
GRANT EXECUTE ON FUNCTION snowflake_registry.release, snowflake_registry.reassign,
    snowflake_registry.allow, snowflake_registry.configure TO snowflake_operator;
CREATE FUNCTION pg_temp.status()
RETURNS TABLE (worker_id integer, owner name, state text, confirmed boolean,
	version bigint, system_identifier bigint)
LANGUAGE sql AS $$
	SELECT s.worker_id, s.owner, s.state, s.confirmed, s.version,
		s.system_identifier
	FROM snowflake_registry.status s WHERE s.datacenter_id = 0
	ORDER BY s.worker_id
$$;
SELECT * FROM pg_temp.status();
SELECT c.worker_id, c.promise = GREATEST(coalesce(o.issued_until,
	o.checked_in_at + o.takeover_delay), o.taken_above) AS promise_is_13s
FROM snowflake_registry.claims c
JOIN snowflake_claims o USING (datacenter_id, worker_id)
ORDER BY 1;

-- 1.4 claims, as the servers' logins do, for worker ids 0 to 3 (max_worker
-- 3: none of them was never claimed).  The first call starts the first
-- epoch, a lease and a margin ahead: these grants lie above it too.
CREATE FUNCTION pg_temp.claim_14(token integer, sysid bigint)
RETURNS TABLE (status text, worker_id integer, version bigint, holder text)
LANGUAGE sql AS $$
	SELECT a.status, a.worker_id, a.version,
		split_part(a.holder, ', holding it since', 1)
	FROM snowflake_registry.claim(0, 3, '1288834974657/41/5/5/12',
		lpad(token::text, 32, '0')::uuid, lpad(token::text, 32, '0')::uuid,
		sysid, session_user::text, 5432, '/srv/' || session_user) a
$$;
-- nothing is granted until an operator sets the layout the 1.3 servers
-- use, which nobody recorded; it must hold their claims
SET SESSION AUTHORIZATION server_paris_2;
SELECT * FROM pg_temp.claim_14(21, 102);
RESET SESSION AUTHORIZATION;
SET ROLE snowflake_operator;
SELECT layout FROM snowflake_registry.configure(layout => '1288834974657/41/5/1/16');
SELECT layout FROM snowflake_registry.configure(layout => '1288834974657/41/5/5/12');
-- and, while 1.3's registry is here, it cannot change: a 1.3 server would
-- never learn of it
SELECT layout FROM snowflake_registry.configure(layout => '1288834974657/41/4/6/12');
RESET ROLE;
-- a new server gets the claim whose release its holder confirmed, above its
-- 1.3 promise and above the registry's clock (a 1.3 holder was never
-- stopped by its promise); the 1.3 table marks it held for good, so that no
-- 1.3 server takes it (mirror)
SELECT promise AS promise_13, clock_timestamp() AS before_claim
FROM snowflake_registry.claims WHERE worker_id = 2 \gset
SET SESSION AUTHORIZATION server_paris_2;
SELECT * FROM pg_temp.claim_14(21, 102);
RESET SESSION AUTHORIZATION;
SELECT floor >= :'promise_13' AS above_13_promise,
	floor >= :'before_claim' AS above_clock
FROM snowflake_registry.claims WHERE worker_id = 2;
SELECT worker_id, system_identifier, token IS NULL AS no_token,
	checked_in_at = '9999-12-31 00:00:00+00' AS held_for_good, idle, released,
	issued_until = '9999-12-31 00:00:00+00' AS issued_until_end_of_time
FROM snowflake_claims WHERE worker_id = 2;
-- another new server gets the claim silent for longer than its 1.3 reclaim
-- lease
SET SESSION AUTHORIZATION server_paris_3;
SELECT * FROM pg_temp.claim_14(31, 103);
-- a third finds none: system 1301's is idle, but only its own next start
-- takes it at once; 1302's is held
SET SESSION AUTHORIZATION mallory;
SELECT * FROM pg_temp.claim_14(61, 666);
-- a 1.3 server finds none either, not even the ids held by 1.4 servers
RESET SESSION AUTHORIZATION;
SELECT a.status, a.worker_id
FROM snowflake_registry_claim(0, 1306, 1, lpad('6', 32, '0')::uuid, 'host',
	5432, '/data', interval '10 s', interval '1 day', 3) a;
-- system 1301 restarted with 1.4, as server_paris_1: it takes its claim
-- back at once (its clean shutdown), above its newest ID
SET SESSION AUTHORIZATION server_paris_1;
SELECT * FROM pg_temp.claim_14(11, 1301);
-- system 1307 restarted with 1.4, as mallory: it is refused until its 1.3
-- time is within the lease, rather than carry a time no 1.4 promise may
-- reach into a claim of 1.4 (a change of layout would floor every pair
-- above it); the claim stays 1.3's
SET SESSION AUTHORIZATION mallory;
SELECT a.status, a.worker_id,
	a.retry_at > clock_timestamp() + interval '359 days' AS in_a_year,
	a.holder LIKE 'a snowflake 1.3 server, which reported IDs up to %' AS says_why
FROM snowflake_registry.claim(0, 31, '1288834974657/41/5/5/12',
	lpad('71', 32, '0')::uuid, lpad('71', 32, '0')::uuid, 1307, 'mallory',
	5432, '/srv/mallory') a;
RESET SESSION AUTHORIZATION;
SELECT legacy, state FROM snowflake_registry.claims WHERE worker_id = 5;
-- system 1302 restarted with 1.4 while its 1.3 start still runs: refused
-- by the 1.3 rules, even with its 1.3 promise passed ...
RESET SESSION AUTHORIZATION;
UPDATE snowflake_claims SET issued_until = clock_timestamp() - interval '1 min'
WHERE worker_id = 1;
UPDATE snowflake_registry.claims SET promise = clock_timestamp() - interval '1 min'
WHERE worker_id = 1;
SET SESSION AUTHORIZATION server_paris_4;
SELECT * FROM pg_temp.claim_14(41, 1302);
RESET SESSION AUTHORIZATION;
SELECT worker_id, state FROM pg_temp.status() WHERE worker_id = 1;
-- ... until its 1.3 start shuts down cleanly
SELECT snowflake_registry_idle(0, 1, lpad('2', 32, '0')::uuid,
	clock_timestamp() - interval '2 min');
SET SESSION AUTHORIZATION server_paris_4;
SELECT * FROM pg_temp.claim_14(41, 1302);
RESET SESSION AUTHORIZATION;
SELECT * FROM pg_temp.status();
-- an operator releases system 1305's claim on the 1.4 registry: the 1.3
-- server learns it at its next check-in, through the 1.3 table, stops and
-- confirms; then a release says it is free (the time the first one names
-- is hidden)
SET ROLE snowflake_operator;
SET client_min_messages = warning;
SELECT snowflake_registry.release(0, 4) IS NOT NULL AS released;
RESET client_min_messages;
RESET ROLE;
SELECT a.status, a.worker_id
FROM snowflake_registry_check_in(0, 4, lpad('5', 32, '0')::uuid) a;
SELECT snowflake_registry_idle(0, 4, lpad('5', 32, '0')::uuid,
	clock_timestamp() - interval '1 min');
SET ROLE snowflake_operator;
SELECT snowflake_registry.release(0, 4) <= clock_timestamp() AS free_now;
SELECT * FROM pg_temp.status() WHERE worker_id = 4;
RESET ROLE;
-- the 1.3 table shows every pair held for good by 1.4 servers
SELECT worker_id, checked_in_at = '9999-12-31 00:00:00+00' AS held_for_good, released
FROM snowflake_claims ORDER BY 1;

-- every server runs 1.4: the update goes through and drops 1.3's registry
ALTER EXTENSION snowflake UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
SELECT to_regclass('public.snowflake_claims') AS claims_13,
	(SELECT count(*) FROM pg_proc WHERE proname LIKE 'snowflake\_registry\_%')
		AS functions_13;
SELECT * FROM pg_temp.status();
-- with 1.3's registry gone the layout may change, but not while a 1.3 time
-- lies further ahead than the lease: every pair would wait for it (the
-- time in the message is hidden)
CREATE FUNCTION pg_temp.configure_layout(layout text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	detail text;
BEGIN
	PERFORM snowflake_registry.configure(layout => layout);
	RETURN 'changed';
EXCEPTION WHEN object_not_in_prerequisite_state THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RETURN regexp_replace(SQLERRM, 'before .*', 'before <time>') || ': ' || detail;
END
$$;
SET ROLE snowflake_operator;
SELECT pg_temp.configure_layout('1288834974657/41/4/6/12');
RESET ROLE;
\c :regress_db
DROP DATABASE regression_registry_13;

--
-- A registry dropped and made again in its database while a holder cut off
-- from it still generates up to its promise (an hour here): the new
-- install knows nothing of the old one's claims nor of its lease, and with
-- a lease of 1 s it would have started its first epoch two seconds ahead.
-- The drop noted the old promises in the database's settings; the new
-- install's first epoch starts above them.
--
CREATE DATABASE regression_registry_reinstall;
\c regression_registry_reinstall
CREATE FUNCTION pg_temp.install(lease interval)
RETURNS interval
LANGUAGE plpgsql AS $$
BEGIN
	CREATE EXTENSION snowflake_registry;
	GRANT USAGE ON SCHEMA snowflake_registry TO snowflake_worker;
	GRANT EXECUTE ON FUNCTION snowflake_registry.claim TO snowflake_worker;
	RETURN (SELECT c.lease FROM snowflake_registry.configure(lease => lease,
		layout => '1288834974657/41/5/5/12') c);
END
$$;
SELECT pg_temp.install('1 h');
-- a role with no right on the registry's schema drops its own objects (the
-- session's first drop: note_floor is compiled as that role)
CREATE ROLE schema_keeper;
CREATE SCHEMA keeper_own AUTHORIZATION schema_keeper;
SET ROLE schema_keeper;
DROP SCHEMA keeper_own;
RESET ROLE;
SET SESSION AUTHORIZATION server_paris_1;
SELECT status, worker_id FROM snowflake_registry.claim(0, 0,
	'1288834974657/41/5/5/12', lpad('1', 32, '0')::uuid, lpad('1', 32, '0')::uuid);
RESET SESSION AUTHORIZATION;
SELECT promise AS old_promise FROM snowflake_registry.claims \gset
DROP EXTENSION snowflake_registry;
-- the event trigger went with it; the note stays
SELECT count(*) AS event_triggers FROM pg_event_trigger;
SELECT count(*) AS notes FROM pg_db_role_setting r, unnest(r.setconfig) c
WHERE r.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND c LIKE 'snowflake\_registry.floor=%';
SELECT pg_temp.install('1 s');
SET SESSION AUTHORIZATION server_paris_2;
SELECT status, worker_id FROM snowflake_registry.claim(0, 0,
	'1288834974657/41/5/5/12', lpad('2', 32, '0')::uuid, lpad('2', 32, '0')::uuid);
RESET SESSION AUTHORIZATION;
SELECT floor >= :'old_promise' AS above_the_old_promise,
	floor > clock_timestamp() + interval '50 min' AS not_two_seconds_ahead
FROM snowflake_registry.claims;
-- DROP SCHEMA ... CASCADE notes it as well, and so does a session that
-- replicates (pg_restore --disable-triggers sets it so)
SELECT snowflake_registry.noted_floor() AS note_before \gset
UPDATE snowflake_registry.claims SET promise = promise + interval '1 h';
SET session_replication_role = replica;
DROP SCHEMA snowflake_registry CASCADE;
RESET session_replication_role;
SELECT pg_temp.install('1 s');
SELECT snowflake_registry.noted_floor() >= :'note_before'::timestamptz + interval '1 h'
	AS raised;
-- a login that cannot drop the registry leaves the note as it is, and
-- takes no lock, whatever it drops
SELECT snowflake_registry.noted_floor() AS note_before \gset
SET SESSION AUTHORIZATION server_paris_1;
SELECT status FROM snowflake_registry.claim(0, 0, '1288834974657/41/5/5/12',
	lpad('3', 32, '0')::uuid, lpad('3', 32, '0')::uuid);
RESET SESSION AUTHORIZATION;
UPDATE snowflake_registry.claims SET promise = promise + interval '5 h';
SET SESSION AUTHORIZATION server_paris_1;
DROP SCHEMA IF EXISTS no_such_schema;
RESET SESSION AUTHORIZATION;
SELECT snowflake_registry.noted_floor() = :'note_before' AS unchanged;
-- DROP OWNED notes it too, whatever role it names
DROP OWNED BY mallory;
SELECT snowflake_registry.noted_floor() >= max(promise) AS raised
FROM snowflake_registry.claims;
-- a role that owns the registry's schema, but lacks the rights of the
-- registry's owner, could drop it without reading the claims: refused
ALTER SCHEMA snowflake_registry OWNER TO schema_keeper;
SET ROLE schema_keeper;
\set VERBOSITY terse
DROP SCHEMA snowflake_registry CASCADE;
\set VERBOSITY default
RESET ROLE;
ALTER SCHEMA snowflake_registry OWNER TO CURRENT_USER;
-- the drop of another schema, which left the registry in place, raised the
-- note all the same: a claim after it starts above (a new holder waits up
-- to the lease; a note is taken at its word)
SET SESSION AUTHORIZATION server_paris_3;
SELECT status FROM snowflake_registry.claim(0, 31, '1288834974657/41/5/5/12',
	lpad('6', 32, '0')::uuid, lpad('6', 32, '0')::uuid);
RESET SESSION AUTHORIZATION;
SELECT floor >= snowflake_registry.noted_floor() AS above_the_note
FROM snowflake_registry.claims WHERE owner = 'server_paris_3';
-- a drop notes the claims' promises even with the settings' row gone
UPDATE snowflake_registry.claims SET promise = promise + interval '6 h';
SELECT max(promise) AS top_promise FROM snowflake_registry.claims \gset
DELETE FROM snowflake_registry.settings;
DROP EXTENSION snowflake_registry;
SELECT pg_catalog.to_timestamp(pg_catalog.substr(c, 26)::float8) >= :'top_promise'
	AS noted_without_settings
FROM pg_db_role_setting r, unnest(r.setconfig) c
WHERE r.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND c LIKE 'snowflake\_registry.floor=%';
-- a registry rebuilt from nothing elsewhere: the operator's note by hand,
-- made before CREATE EXTENSION as docs/fleet.md says, floors its claims
SELECT format('ALTER DATABASE %I RESET snowflake_registry.floor',
	current_database()) \gexec
SELECT current_database() AS db,
	extract(epoch FROM clock_timestamp() + interval '1 hour') AS note \gset
ALTER DATABASE :"db" SET snowflake_registry.floor = :'note';
SELECT pg_temp.install('1 s');
SET SESSION AUTHORIZATION server_paris_1;
SELECT status, worker_id FROM snowflake_registry.claim(0, 0,
	'1288834974657/41/5/5/12', lpad('4', 32, '0')::uuid, lpad('4', 32, '0')::uuid);
RESET SESSION AUTHORIZATION;
SELECT floor > clock_timestamp() + interval '50 min' AS above_the_note
FROM snowflake_registry.claims;
-- and a note made after the install floors the claims made after it
SELECT extract(epoch FROM clock_timestamp() + interval '2 hours') AS note \gset
ALTER DATABASE :"db" SET snowflake_registry.floor = :'note';
SET SESSION AUTHORIZATION server_paris_2;
SELECT status, worker_id FROM snowflake_registry.claim(0, 1,
	'1288834974657/41/5/5/12', lpad('5', 32, '0')::uuid, lpad('5', 32, '0')::uuid);
RESET SESSION AUTHORIZATION;
SELECT worker_id, floor > clock_timestamp() + interval '110 min' AS above_the_later_note
FROM snowflake_registry.claims ORDER BY worker_id;
-- a new install takes the lease of the registry dropped before it (1 s),
-- not the longer default: a copy of the old registry promoted or restored
-- later starts its epoch under the old lease, below the promises the
-- default would let the new one make (a review made 5,868 IDs twice so,
-- through an asynchronous standby that missed a reinstall, 5 s to 30 s)
DROP EXTENSION snowflake_registry;
SELECT c AS note FROM pg_db_role_setting r, unnest(r.setconfig) c
WHERE r.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND c LIKE 'snowflake\_registry.lease=%';
CREATE EXTENSION snowflake_registry;
SELECT lease FROM snowflake_registry.settings;
-- a note that is not a lease in seconds, 1 to 3600, stops the install
DROP EXTENSION snowflake_registry;
SELECT format('ALTER DATABASE %I SET snowflake_registry.lease = %L',
	current_database(), '7200') \gexec
\set SHOW_CONTEXT never
CREATE EXTENSION snowflake_registry;
\set SHOW_CONTEXT errors
SELECT format('ALTER DATABASE %I SET snowflake_registry.lease = %L',
	current_database(), '1') \gexec
CREATE EXTENSION snowflake_registry;
-- a drop in a transaction whose snapshot may be older than the command is
-- refused: it could miss a promise
BEGIN ISOLATION LEVEL REPEATABLE READ;
DROP EXTENSION snowflake_registry;
ROLLBACK;
-- a note that is not a number of seconds stops every epoch, saying so
DROP EXTENSION snowflake_registry;
SELECT format('ALTER DATABASE %I SET snowflake_registry.floor = %L',
	current_database(), 'tomorrow') \gexec
CREATE EXTENSION snowflake_registry;
SELECT floor FROM snowflake_registry.epoch();
-- a schema of that name that another role owns, made before the install,
-- is refused: its owner could create objects in it, and drop the registry
DROP EXTENSION snowflake_registry;
ALTER SCHEMA snowflake_registry OWNER TO schema_keeper;
CREATE ROLE registry_admin SUPERUSER;
SET ROLE registry_admin;
\set SHOW_CONTEXT never
CREATE EXTENSION snowflake_registry;
\set SHOW_CONTEXT errors
RESET ROLE;
DROP ROLE registry_admin;
\c :regress_db
DROP DATABASE regression_registry_reinstall;

--
-- A fleet that sets pairs by hand: snowflake_shared_pairs on a hub (the
-- snowflake extension, no preload) finds the pairs that more than one
-- origin used; origins c and b share datacenter 1, worker 2; a has its own
--
CREATE TABLE merged (id bigint PRIMARY KEY, origin text NOT NULL);
INSERT INTO merged VALUES
	((1000::bigint << 22) | (1 << 17) | (1 << 12), 'a'),
	((1000::bigint << 22) | (1 << 17) | (2 << 12), 'b'),
	((1001::bigint << 22) | (1 << 17) | (2 << 12), 'b'),
	((1002::bigint << 22) | (1 << 17) | (2 << 12), 'c');
SELECT * FROM snowflake_shared_pairs('merged', 'origin');
-- one table per origin: a view with a literal origin
CREATE TABLE from_a (event_id bigint);
CREATE TABLE from_b (event_id bigint);
INSERT INTO from_a VALUES ((5::bigint << 22) | (7 << 17) | (3 << 12));
INSERT INTO from_b VALUES ((6::bigint << 22) | (7 << 17) | (3 << 12));
CREATE VIEW merged_by_table AS
	SELECT 'from_a' AS origin, event_id FROM from_a
	UNION ALL SELECT 'from_b', event_id FROM from_b;
SELECT * FROM snowflake_shared_pairs('merged_by_table', 'origin', 'event_id');
SELECT * FROM snowflake_shared_pairs('merged', 'no_such_column');
DROP VIEW merged_by_table;
DROP TABLE merged, from_a, from_b;

DROP OWNED BY snowflake_worker, server_paris_1, server_paris_2,
	server_paris_3, server_paris_4, server_paris_5, server_paris_6,
	server_paris_7, server_paris_8, server_paris_9, server_paris_10,
	server_paris_11, server_paris_12, mallory, snowflake_operator,
	operator_paris, schema_keeper;
DROP EXTENSION snowflake;
DROP EXTENSION snowflake_registry;
DROP ROLE snowflake_worker, server_paris_1, server_paris_2, server_paris_3,
	server_paris_4, server_paris_5, server_paris_6, server_paris_7,
	server_paris_8, server_paris_9, server_paris_10, server_paris_11,
	server_paris_12, mallory, snowflake_operator, operator_paris,
	schema_keeper;
