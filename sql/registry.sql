--
-- The worker id registry's SQL side (1.2), on a server without the preload
-- (a registry needs none): the claim rules, check-ins, the operators'
-- functions, the roles of servers and operators, upgrading a live registry,
-- and snowflake_shared_pairs for fleets that set pairs by hand.  System
-- identifiers and tokens are made up; the registry's clock is moved by hand
-- (UPDATE of snowflake_claims as the superuser).  ID times a holder reports
-- (issued_until) are fixed past dates, so that every floor answered is one of
-- them, exactly.
--
CREATE EXTENSION snowflake;
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';

-- the objects of a new install, to compare with an upgrade from 1.0 below
-- (not the row types of its tables and views, nor array types, which
-- PostgreSQL 18 lists as members where 15 does not)
CREATE FUNCTION pg_temp.extension_objects() RETURNS SETOF text
LANGUAGE sql AS $$
	SELECT pg_describe_object(d.classid, d.objid, 0)
	FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
	WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	  AND e.extname = 'snowflake'
	  AND NOT (d.classid = 'pg_type'::regclass AND EXISTS (
		SELECT FROM pg_type t LEFT JOIN pg_class c ON c.oid = t.typrelid
		WHERE t.oid = d.objid AND (t.typcategory = 'A' OR c.relkind <> 'c')))
$$;
CREATE TEMP TABLE installed AS SELECT * FROM pg_temp.extension_objects() o;
SELECT count(*) FROM installed;

-- claim(datacenter, system id, token) with the settings the servers use
-- (takeover delay 10 s, reclaim lease 1 day), in Twitter's layout (worker
-- ids 0-31) unless max_worker says otherwise.  Each call is one call of
-- snowflake_registry_claim (FROM f(...), never (f(...)).*).
CREATE FUNCTION pg_temp.claim(dc integer, sysid bigint, token uuid,
	preferred integer DEFAULT NULL, max_worker integer DEFAULT 31,
	expected_worker integer DEFAULT NULL, expected_version bigint DEFAULT NULL,
	issued_until timestamptz DEFAULT NULL,
	require_check_in boolean DEFAULT false)
RETURNS TABLE (status text, worker_id integer, holder_sysid bigint,
	version bigint, wait interval, floor timestamptz)
LANGUAGE sql AS $$
	SELECT a.status, a.worker_id, a.system_identifier, a.version, a.wait,
		a.floor
	FROM snowflake_registry_claim(dc, sysid, 1, token, 'host', 5432, '/data',
		interval '10 s', interval '1 day', max_worker, preferred,
		expected_worker, expected_version, issued_until,
		require_check_in) a
$$;
-- a check-in of the holder, with the ID time it promises not to pass
CREATE FUNCTION pg_temp.check_in(dc integer, w integer, token uuid,
	issued_until timestamptz DEFAULT NULL,
	require_check_in boolean DEFAULT NULL)
RETURNS TABLE (status text, worker_id integer, holder_sysid bigint,
	version bigint)
LANGUAGE sql AS $$
	SELECT a.status, a.worker_id, a.system_identifier, a.version
	FROM snowflake_registry_check_in(dc, w, token, NULL, issued_until,
		require_check_in, NULL) a
$$;
CREATE FUNCTION pg_temp.tok(n integer) RETURNS uuid
LANGUAGE sql AS $$ SELECT lpad(n::text, 32, '0')::uuid $$;
-- the operators' view of one datacenter
CREATE FUNCTION pg_temp.status(dc integer)
RETURNS TABLE (worker_id integer, system_identifier bigint, state text,
	version bigint, issued_until timestamptz, released_confirmed boolean,
	reassigned_to bigint)
LANGUAGE sql AS $$
	SELECT s.worker_id, s.system_identifier, s.state, s.version,
		s.issued_until, s.released_confirmed, s.reassigned_to
	FROM snowflake_registry_status s WHERE s.datacenter_id = dc
	ORDER BY s.worker_id
$$;
-- the registry saw the claim contested for 11 s, longer than the wait
CREATE FUNCTION pg_temp.contested_long_ago(dc integer, w integer)
RETURNS void
LANGUAGE sql AS $$
	UPDATE snowflake_claims SET contested_at = contested_at - interval '11 s'
	WHERE datacenter_id = dc AND worker_id = w
$$;

--
-- Claims of new servers
--

-- the first server gets the lowest free id; a repeated claim of the same
-- start (its answer was lost) is answered the same, with the next version
SELECT * FROM pg_temp.claim(3, 101, pg_temp.tok(1));
SELECT * FROM pg_temp.claim(3, 101, pg_temp.tok(1));

-- another server gets another id; a server may ask for its cached one
SELECT * FROM pg_temp.claim(3, 102, pg_temp.tok(2));
SELECT * FROM pg_temp.claim(3, 103, pg_temp.tok(3), 17);

--
-- A new start of the same server (same system identifier, another token)
--

-- while the holder checks in, a new start (a clone, or a crash restart too
-- early) is refused, told which version of which claim to watch and for how
-- long; each check-in bumps the version
SELECT * FROM pg_temp.claim(3, 101, pg_temp.tok(4));
SELECT * FROM pg_temp.check_in(3, 0, pg_temp.tok(1));
SELECT * FROM pg_temp.status(3);

-- the holder shuts down cleanly, saying when its last ID was: its next
-- start takes the claim at once, and its IDs start above that time
SELECT snowflake_registry_idle(3, 0, pg_temp.tok(1), '2024-01-01 00:00:00+00');
SELECT * FROM pg_temp.claim(3, 101, pg_temp.tok(5));
SELECT * FROM pg_temp.check_in(3, 0, pg_temp.tok(1));
SELECT * FROM pg_temp.check_in(3, 0, pg_temp.tok(5), '2024-01-02 00:00:00+00');

-- Findings 2 and 8: a holder that stops checking in is taken over only by
-- observation.  Silent for its takeover delay, it is still refused to a new
-- start that has not watched it: the registry first notes the version
-- contested ...
UPDATE snowflake_claims SET checked_in_at = checked_in_at - interval '11 s'
WHERE datacenter_id = 3 AND worker_id = 0;
SELECT * FROM pg_temp.claim(3, 101, pg_temp.tok(6));
SELECT worker_id, state FROM pg_temp.status(3) WHERE worker_id = 0;
-- ... and a caller that names that version at once (it skipped the wait)
-- is refused: the registry has not seen it contested for the wait
SELECT * FROM pg_temp.claim(3, 101, pg_temp.tok(6), expected_worker => 0,
	expected_version => 6);
-- a check-in in between bumps the version: the version watched before is
-- of no use, even once the registry's wait is over
SELECT pg_temp.contested_long_ago(3, 0);
SELECT * FROM pg_temp.check_in(3, 0, pg_temp.tok(5));
SELECT * FROM pg_temp.claim(3, 101, pg_temp.tok(6), expected_worker => 0,
	expected_version => 6);
SELECT pg_temp.contested_long_ago(3, 0);
SELECT * FROM pg_temp.claim(3, 101, pg_temp.tok(6), expected_worker => 0,
	expected_version => 6);
-- the version the registry saw contested for the wait, unchanged: granted,
-- with floor the old holder's issued_until
SELECT * FROM pg_temp.claim(3, 101, pg_temp.tok(6), expected_worker => 0,
	expected_version => 7);
-- the same start asks again (the answer was lost): the same floor
SELECT * FROM pg_temp.claim(3, 101, pg_temp.tok(6));
-- the old holder learns at its next check-in that the claim moved
SELECT * FROM pg_temp.check_in(3, 0, pg_temp.tok(5));
SELECT * FROM pg_temp.status(3);
-- the new holder goes idle reporting a newest ID below the floor it was
-- given (it never generated): the next start still starts above the floor
SELECT snowflake_registry_idle(3, 0, pg_temp.tok(6), '2023-01-01 00:00:00+00');
SELECT * FROM pg_temp.claim(3, 101, pg_temp.tok(8));

-- lease terms no server's settings allow are refused
SELECT * FROM snowflake_registry_claim(3, 109, 1, pg_temp.tok(99), 'host',
	5432, '/data', interval '0 s', interval '1 day', 31);
SELECT * FROM snowflake_registry_claim(3, 109, 1, pg_temp.tok(99), 'host',
	5432, '/data', interval '10 s', interval '-1 day', 31);
SELECT * FROM snowflake_registry_claim(3, 109, 1, pg_temp.tok(99), 'host',
	5432, '/data', interval '10 s', interval '1 day', 31, NULL, NULL, NULL,
	'infinity');
SELECT * FROM snowflake_registry_check_in(3, 0, pg_temp.tok(6),
	interval '100000 years');

-- an idle or silent claim is no other server's before the reclaim lease
SELECT snowflake_registry_idle(3, 1, pg_temp.tok(2));
SELECT * FROM pg_temp.claim(3, 104, pg_temp.tok(7), 1);
SELECT * FROM pg_temp.status(3);

--
-- Finding 1: only ids of the caller's layout are granted
--

-- system 111 holds worker 40 in a layout with worker ids 0-63; a new start
-- of it with worker ids 0-31 is not refused over 40 (nor given it): it gets
-- an id it can use
SELECT * FROM pg_temp.claim(8, 111, pg_temp.tok(11), 40, max_worker => 63);
SELECT * FROM pg_temp.claim(8, 111, pg_temp.tok(12), 40);
-- nor is an idle claim outside the layout handed back, which a new start of
-- its system would otherwise take at once
SELECT * FROM pg_temp.claim(8, 113, pg_temp.tok(15), 45, max_worker => 63);
SELECT snowflake_registry_idle(8, 45, pg_temp.tok(15), '2024-02-01 00:00:00+00');
SELECT * FROM pg_temp.claim(8, 113, pg_temp.tok(16), 45);
-- and the start's own claim is not renewed outside its layout either
SELECT * FROM pg_temp.claim(8, 112, pg_temp.tok(14), 50, max_worker => 63);
SELECT * FROM pg_temp.claim(8, 112, pg_temp.tok(14), 50);
SELECT * FROM pg_temp.status(8);

--
-- A full datacenter, and a claim silent for the reclaim lease
--

-- all 32 ids held
INSERT INTO snowflake_claims (datacenter_id, worker_id, system_identifier,
	timeline, claimed_at, checked_in_at, takeover_delay, version)
SELECT 4, w, 1000 + w, 1, now(), now(), '10 s', 1
FROM generate_series(0, 31) w;
SELECT * FROM pg_temp.claim(4, 200, pg_temp.tok(20));
-- once one claim is silent for longer than the lease, the caller waits: the
-- registry notes it contested, and only the version it saw contested for
-- the wait passes, with floor the holder's issued_until
UPDATE snowflake_claims SET checked_in_at = now() - interval '2 days',
	issued_until = '2024-03-01 00:00:00+00'
WHERE datacenter_id = 4 AND worker_id = 9;
SELECT * FROM pg_temp.claim(4, 200, pg_temp.tok(20));
SELECT * FROM pg_temp.claim(4, 200, pg_temp.tok(20), expected_worker => 9,
	expected_version => 1);
SELECT pg_temp.contested_long_ago(4, 9);
SELECT * FROM pg_temp.claim(4, 200, pg_temp.tok(20), expected_worker => 9,
	expected_version => 1);

--
-- Finding 4: releases and reassignments the holder confirms
--

-- a datacenter of two worker ids (max_worker_id 1), both held
SELECT * FROM pg_temp.claim(6, 201, pg_temp.tok(21), max_worker => 1,
	issued_until => '2024-04-01 00:00:00+00');
SELECT * FROM pg_temp.claim(6, 202, pg_temp.tok(22), max_worker => 1);
SELECT * FROM pg_temp.claim(6, 203, pg_temp.tok(23), max_worker => 1);

-- a release returns the latest time the id is free (here the holder's last
-- check-in plus its reclaim lease: it checks in without require_check_in),
-- in a notice too (hidden here: it shows the time), NULL for no claim
SELECT checked_in_at AS checked_in_21 FROM snowflake_claims
WHERE datacenter_id = 6 AND worker_id = 0 \gset
SET client_min_messages = warning;
SELECT snowflake_registry_release(6, 0) - :'checked_in_21' AS free_after;
SELECT snowflake_registry_release(6, 5) IS NULL AS no_claim;
RESET client_min_messages;
-- the live claim is not free: another system waits
SELECT * FROM pg_temp.claim(6, 203, pg_temp.tok(23), max_worker => 1);
SELECT * FROM pg_temp.status(6);
-- the holder learns it at its next check-in, and stops ...
SELECT * FROM pg_temp.check_in(6, 0, pg_temp.tok(21));
SELECT * FROM pg_temp.claim(6, 203, pg_temp.tok(23), max_worker => 1);
-- ... and confirms with the time of its last ID: the id passes at once,
-- with that floor
SELECT snowflake_registry_idle(6, 0, pg_temp.tok(21), '2024-04-02 00:00:00+00');
SELECT * FROM pg_temp.status(6) WHERE worker_id = 0;
SELECT * FROM pg_temp.claim(6, 203, pg_temp.tok(23), max_worker => 1);
SELECT * FROM pg_temp.check_in(6, 0, pg_temp.tok(21));

-- a reassignment: only the system named may take the id, once the holder
-- confirmed; no other system
SELECT checked_in_at AS checked_in_22 FROM snowflake_claims
WHERE datacenter_id = 6 AND worker_id = 1 \gset
SET client_min_messages = warning;
SELECT snowflake_registry_reassign(6, 1, 204) - :'checked_in_22' AS free_after;
SELECT snowflake_registry_reassign(6, 5, 204) IS NULL AS no_claim;
RESET client_min_messages;
SELECT * FROM pg_temp.claim(6, 205, pg_temp.tok(25), max_worker => 1);
SELECT * FROM pg_temp.claim(6, 204, pg_temp.tok(24), max_worker => 1);
SELECT * FROM pg_temp.check_in(6, 1, pg_temp.tok(22));
SELECT snowflake_registry_idle(6, 1, pg_temp.tok(22), '2024-05-01 00:00:00+00');
SELECT * FROM pg_temp.claim(6, 205, pg_temp.tok(25), max_worker => 1);
SELECT * FROM pg_temp.claim(6, 204, pg_temp.tok(24), max_worker => 1);
SELECT * FROM pg_temp.check_in(6, 1, pg_temp.tok(22));

-- a holder that stops by itself without check-ins (require_check_in) need
-- not confirm: a released claim of it passes once the registry saw it
-- contested for the wait; the release says it is free within the delay
SELECT * FROM pg_temp.check_in(6, 0, pg_temp.tok(23), '2024-06-01 00:00:00+00',
	true);
SET client_min_messages = warning;
SELECT r BETWEEN now() + interval '10 s' AND clock_timestamp() + interval '10 s'
	AS free_within_the_delay
FROM snowflake_registry_release(6, 0) r;
RESET client_min_messages;
SELECT * FROM pg_temp.claim(6, 205, pg_temp.tok(25), max_worker => 1);
SELECT pg_temp.contested_long_ago(6, 0);
SELECT * FROM pg_temp.claim(6, 205, pg_temp.tok(25), max_worker => 1,
	expected_worker => 0, expected_version => 6);

-- a release of an idle claim frees it at once, and says so
SELECT snowflake_registry_idle(6, 0, pg_temp.tok(25), '2024-07-01 00:00:00+00');
SELECT r <= clock_timestamp() AS free_now FROM snowflake_registry_release(6, 0) r;
SELECT * FROM pg_temp.claim(6, 206, pg_temp.tok(26), max_worker => 1);

--
-- Finding 3: the roles of servers and operators, with exactly the grants
-- docs/fleet.md gives them
--
CREATE ROLE regress_snowflake_worker LOGIN;
GRANT USAGE ON SCHEMA public TO regress_snowflake_worker;
GRANT EXECUTE ON FUNCTION snowflake_registry_claim, snowflake_registry_check_in,
	snowflake_registry_idle TO regress_snowflake_worker;
CREATE ROLE regress_snowflake_operator;
GRANT SELECT ON snowflake_registry_status TO regress_snowflake_operator;
GRANT EXECUTE ON FUNCTION snowflake_registry_release, snowflake_registry_reassign
	TO regress_snowflake_operator;
-- a role with PUBLIC's rights alone
CREATE ROLE regress_snowflake_nobody;

-- every registry function runs as its owner with a fixed search_path, and
-- PUBLIC may call none of them
SELECT p.proname, p.prosecdef, p.proconfig,
	has_function_privilege('public', p.oid, 'EXECUTE') AS public,
	has_function_privilege('regress_snowflake_worker', p.oid, 'EXECUTE') AS worker,
	has_function_privilege('regress_snowflake_operator', p.oid, 'EXECUTE') AS operator
FROM pg_proc p
WHERE p.proname LIKE 'snowflake_registry_%'
ORDER BY 1;
-- nobody but the owner has the claims table
SELECT r.rolname, t.relname, p.privilege,
	has_table_privilege(r.rolname, t.relname, p.privilege) AS granted
FROM (VALUES ('regress_snowflake_worker'), ('regress_snowflake_operator'),
			 ('regress_snowflake_nobody')) r(rolname),
	 (VALUES ('snowflake_claims'), ('snowflake_registry_status')) t(relname),
	 (VALUES ('SELECT'), ('INSERT'), ('UPDATE'), ('DELETE')) p(privilege)
WHERE has_table_privilege(r.rolname, t.relname, p.privilege)
ORDER BY 1, 2, 3;
-- no answer and no view column carries a token
SELECT a.attrelid::regclass, a.attname
FROM pg_attribute a
WHERE a.attrelid IN ('snowflake_registry_answer'::regclass,
					 'snowflake_registry_status'::regclass)
  AND a.attname = 'token';

\set VERBOSITY terse
-- the servers' role: claim, check in and mark idle its own claim
SET ROLE regress_snowflake_worker;
SELECT * FROM pg_temp.claim(5, 300, pg_temp.tok(30));
SELECT * FROM pg_temp.check_in(5, 0, pg_temp.tok(30));
-- a check-in or an idle with another token changes nothing
SELECT * FROM pg_temp.check_in(5, 0, pg_temp.tok(31));
SELECT snowflake_registry_idle(5, 0, pg_temp.tok(31));
SELECT * FROM pg_temp.check_in(5, 0, pg_temp.tok(30));
-- nothing else: not the table, not the view, not the operators' functions,
-- not the functions the registry calls inside
SELECT * FROM snowflake_claims;
SELECT token FROM snowflake_claims;
UPDATE snowflake_claims SET checked_in_at = now() - interval '2 days';
DELETE FROM snowflake_claims;
INSERT INTO snowflake_claims (datacenter_id, worker_id, system_identifier,
	claimed_at, checked_in_at, takeover_delay)
VALUES (5, 1, 300, now(), now(), '10 s');
SELECT * FROM snowflake_registry_status;
SELECT snowflake_registry_release(5, 0);
SELECT snowflake_registry_reassign(5, 0, 301);
SELECT snowflake_registry_floor(NULL::snowflake_claims);
-- a search_path trick does not redirect the functions: the role may not
-- make a schema, and a temporary claims table of its own, first in its
-- search_path (worker ids 0 and 1 "held" there), is not the one the
-- functions use
CREATE SCHEMA regress_snowflake_trick;
CREATE TEMP TABLE snowflake_claims (
	datacenter_id integer NOT NULL, worker_id integer NOT NULL,
	system_identifier bigint NOT NULL, timeline integer, token uuid,
	host text, port integer, data_directory text,
	claimed_at timestamptz NOT NULL, checked_in_at timestamptz NOT NULL,
	idle boolean NOT NULL DEFAULT false, takeover_delay interval NOT NULL,
	version bigint NOT NULL DEFAULT 0, issued_until timestamptz,
	require_check_in boolean NOT NULL DEFAULT false, reclaim_lease interval,
	released boolean NOT NULL DEFAULT false, reassigned_to bigint,
	contested_version bigint, contested_at timestamptz,
	PRIMARY KEY (datacenter_id, worker_id));
INSERT INTO snowflake_claims (datacenter_id, worker_id, system_identifier,
	claimed_at, checked_in_at, takeover_delay)
VALUES (5, 0, 999, now(), now(), '10 s'), (5, 1, 999, now(), now(), '10 s');
SET search_path = pg_temp, public;
SELECT count(*) AS in_my_table FROM snowflake_claims;
SELECT * FROM pg_temp.claim(5, 301, pg_temp.tok(32));
SELECT * FROM pg_temp.check_in(5, 1, pg_temp.tok(32));
SELECT worker_id, system_identifier FROM pg_temp.snowflake_claims ORDER BY 1;
DROP TABLE pg_temp.snowflake_claims;
RESET search_path;
RESET ROLE;
-- the real table has both claims
SELECT worker_id, system_identifier, token = pg_temp.tok(30) AS token_30,
	token = pg_temp.tok(32) AS token_32
FROM public.snowflake_claims WHERE datacenter_id = 5 ORDER BY 1;

-- operators: the status view (no tokens), release and reassign; not the
-- table, and not the servers' functions
SET ROLE regress_snowflake_operator;
SELECT * FROM pg_temp.status(5);
SET client_min_messages = warning;
SELECT snowflake_registry_release(5, 0) IS NOT NULL AS released;
SELECT snowflake_registry_reassign(5, 1, 302) IS NOT NULL AS reassigned;
RESET client_min_messages;
SELECT * FROM pg_temp.status(5);
SELECT * FROM snowflake_claims;
UPDATE snowflake_claims SET released = false;
DELETE FROM snowflake_claims;
SELECT * FROM pg_temp.claim(5, 303, pg_temp.tok(33));
SELECT * FROM pg_temp.check_in(5, 0, pg_temp.tok(30));
RESET ROLE;

-- the holders learn it and confirm, as the servers' role
SET ROLE regress_snowflake_worker;
SELECT * FROM pg_temp.check_in(5, 0, pg_temp.tok(30));
SELECT * FROM pg_temp.check_in(5, 1, pg_temp.tok(32));
SELECT snowflake_registry_idle(5, 0, pg_temp.tok(30), '2024-07-01 00:00:00+00');
SELECT snowflake_registry_idle(5, 1, pg_temp.tok(32), '2024-07-02 00:00:00+00');
-- the system named takes the id reassigned to it, above its last ID
SELECT * FROM pg_temp.claim(5, 302, pg_temp.tok(34), 1);
RESET ROLE;

-- PUBLIC's rights call none of the functions, nor read the view
SET ROLE regress_snowflake_nobody;
SELECT * FROM pg_temp.claim(5, 304, pg_temp.tok(35));
SELECT * FROM pg_temp.check_in(5, 0, pg_temp.tok(30));
SELECT snowflake_registry_idle(5, 0, pg_temp.tok(30));
SELECT snowflake_registry_release(5, 0);
SELECT snowflake_registry_reassign(5, 0, 304);
SELECT * FROM snowflake_registry_status;
SELECT * FROM snowflake_claims;
RESET ROLE;

-- invalid claims
SELECT * FROM pg_temp.claim(-1, 101, pg_temp.tok(9));
SELECT * FROM pg_temp.claim(3, 101, pg_temp.tok(9), max_worker => -1);
SELECT * FROM pg_temp.claim(3, 101, NULL);
SELECT * FROM pg_temp.check_in(3, 0, NULL);
\set VERBOSITY default

-- a fleet that sets pairs by hand: origins c and b share datacenter 1,
-- worker 2; a has its own pair
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
DROP EXTENSION snowflake;

DROP OWNED BY regress_snowflake_worker, regress_snowflake_operator,
	regress_snowflake_nobody;
DROP ROLE regress_snowflake_worker, regress_snowflake_operator,
	regress_snowflake_nobody;

-- an upgrade from 1.0 gives the same objects as a new install of the
-- default version
CREATE EXTENSION snowflake VERSION '1.0';
ALTER EXTENSION snowflake UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
(SELECT * FROM pg_temp.extension_objects() EXCEPT SELECT * FROM installed)
UNION ALL
(SELECT * FROM installed EXCEPT SELECT * FROM pg_temp.extension_objects());
DROP EXTENSION snowflake;

--
-- Upgrading a live registry from 1.1 keeps its claims
--
CREATE EXTENSION snowflake VERSION '1.1';
-- two servers claim with 1.1's call (11 arguments); one checks in
SELECT a.status, a.worker_id, a.system_identifier
FROM snowflake_registry_claim(3, 401, 1, pg_temp.tok(41), 'host', 5432,
	'/data', interval '10 s', interval '1 day', 31) a;
SELECT a.status, a.worker_id, a.system_identifier
FROM snowflake_registry_claim(3, 402, 1, pg_temp.tok(42), 'host', 5432,
	'/data', interval '10 s', interval '1 day', 31) a;
SELECT a.status, a.worker_id
FROM snowflake_registry_check_in(3, 0, pg_temp.tok(41)) a;
CREATE TEMP TABLE before_update AS SELECT * FROM snowflake_claims;
-- the servers' role as 1.1 told operators to set it up
CREATE ROLE regress_snowflake_worker_1_1;
GRANT SELECT, INSERT, UPDATE, DELETE ON snowflake_claims
	TO regress_snowflake_worker_1_1;

ALTER EXTENSION snowflake UPDATE;
-- it may go on claiming and checking in, now through the functions alone
SELECT p.proname,
	has_function_privilege('regress_snowflake_worker_1_1', p.oid, 'EXECUTE')
		AS may_execute
FROM pg_proc p
WHERE p.proname IN ('snowflake_registry_claim', 'snowflake_registry_check_in',
	'snowflake_registry_idle', 'snowflake_registry_release')
ORDER BY 1;
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
-- every row is there, unchanged, with the new columns at their defaults
SELECT count(*) AS rows,
	count(*) FILTER (WHERE c.token = b.token AND c.claimed_at = b.claimed_at
		AND c.checked_in_at = b.checked_in_at AND NOT c.idle) AS unchanged
FROM before_update b
JOIN snowflake_claims c USING (datacenter_id, worker_id, system_identifier);
SELECT worker_id, system_identifier, version, issued_until, require_check_in,
	reclaim_lease, released, reassigned_to, contested_version
FROM snowflake_claims ORDER BY 1;
-- the holder checks in as a 1.1 server does (three arguments): held
SELECT a.status, a.worker_id, a.system_identifier, a.version
FROM snowflake_registry_check_in(3, 0, pg_temp.tok(41)) a;
-- a claim of 1.2 by the same start renews it
SELECT * FROM pg_temp.claim(3, 401, pg_temp.tok(41));
-- a new start of the same server is refused while the holder checks in
SELECT * FROM pg_temp.claim(3, 401, pg_temp.tok(43));
SELECT * FROM pg_temp.check_in(3, 0, pg_temp.tok(41));
SELECT * FROM pg_temp.claim(3, 401, pg_temp.tok(43), expected_worker => 0,
	expected_version => 3);
-- a takeover of a row of 1.1 (no issued_until) starts above its last
-- check-in plus its takeover delay
SELECT * FROM pg_temp.claim(3, 402, pg_temp.tok(44));
SELECT pg_temp.contested_long_ago(3, 1);
SELECT a.status, a.worker_id, a.version,
	a.floor = b.checked_in_at + interval '10 s' AS floor_is_check_in_plus_delay
FROM pg_temp.claim(3, 402, pg_temp.tok(44), expected_worker => 1,
	expected_version => 0) a,
	before_update b
WHERE b.worker_id = 1;
SELECT a.status, a.worker_id, a.system_identifier
FROM snowflake_registry_check_in(3, 1, pg_temp.tok(42)) a;
DROP EXTENSION snowflake;
DROP ROLE regress_snowflake_worker_1_1;
