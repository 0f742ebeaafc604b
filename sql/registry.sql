--
-- The worker id registry's SQL side, on a server without the preload (a
-- registry needs none): the claim rules, check-ins, the operators'
-- functions, and snowflake_shared_pairs for fleets that set pairs by hand.
-- System identifiers and tokens are made up; times are moved by hand.
--
CREATE EXTENSION snowflake;

-- the objects of a new install, to compare with an upgrade from 1.0 below
CREATE FUNCTION pg_temp.extension_objects() RETURNS SETOF text
LANGUAGE sql AS $$
	SELECT pg_describe_object(d.classid, d.objid, 0)
	FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
	WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	  AND e.extname = 'snowflake'
$$;
CREATE TEMP TABLE installed AS SELECT * FROM pg_temp.extension_objects() o;
SELECT count(*) FROM installed;

-- claim(datacenter, system id, token) with the defaults the servers use,
-- in Twitter's layout (worker ids 0-31)
CREATE FUNCTION pg_temp.claim(dc integer, sysid bigint, token uuid,
	preferred integer DEFAULT NULL)
RETURNS TABLE (status text, worker_id integer, holder_sysid bigint)
LANGUAGE sql AS $$
	SELECT a.status, a.worker_id, a.system_identifier
	FROM snowflake_registry_claim(dc, sysid, 1, token, 'host', 5432, '/data',
		interval '10 s', interval '1 day', 31, preferred) a
$$;
CREATE FUNCTION pg_temp.tok(n integer) RETURNS uuid
LANGUAGE sql AS $$ SELECT lpad(n::text, 32, '0')::uuid $$;

-- the first server gets the lowest free id; a repeated claim of the same
-- start is answered the same
SELECT * FROM pg_temp.claim(3, 101, pg_temp.tok(1));
SELECT * FROM pg_temp.claim(3, 101, pg_temp.tok(1));

-- another server gets another id; a server may ask for its cached one
SELECT * FROM pg_temp.claim(3, 102, pg_temp.tok(2));
SELECT * FROM pg_temp.claim(3, 103, pg_temp.tok(3), 17);

-- a new start of server 101 (a clone, or a crash restart too early) is
-- refused while the holder checks in, and told who holds the claim
SELECT * FROM pg_temp.claim(3, 101, pg_temp.tok(4));
SELECT a.status FROM snowflake_registry_check_in(3, 0, pg_temp.tok(1)) a;

-- the holder shuts down cleanly: its next start takes the claim at once
SELECT snowflake_registry_idle(3, 0, pg_temp.tok(1));
SELECT * FROM pg_temp.claim(3, 101, pg_temp.tok(5));
SELECT a.status, a.worker_id FROM snowflake_registry_check_in(3, 0, pg_temp.tok(1)) a;
SELECT a.status FROM snowflake_registry_check_in(3, 0, pg_temp.tok(5)) a;

-- a holder silent for the takeover delay loses the claim to a new start of
-- its own server, and learns it at its next check-in
UPDATE snowflake_claims SET checked_in_at = checked_in_at - interval '11 s'
WHERE datacenter_id = 3 AND worker_id = 0;
SELECT * FROM pg_temp.claim(3, 101, pg_temp.tok(6));
SELECT a.status, a.worker_id, a.system_identifier
FROM snowflake_registry_check_in(3, 0, pg_temp.tok(5)) a;

-- but an idle or silent claim is no other server's before the reclaim lease
SELECT snowflake_registry_idle(3, 1, pg_temp.tok(2));
SELECT datacenter_id, worker_id, state FROM snowflake_registry_status
ORDER BY 1, 2;

-- a full datacenter: all 32 ids held
INSERT INTO snowflake_claims
SELECT 4, w, 1000 + w, 1, NULL, NULL, NULL, NULL, now(), now(), false, '10 s'
FROM generate_series(0, 31) w;
SELECT * FROM pg_temp.claim(4, 200, pg_temp.tok(7));
-- ... until one claim goes silent for longer than the lease
UPDATE snowflake_claims SET checked_in_at = now() - interval '2 days'
WHERE datacenter_id = 4 AND worker_id = 9;
SELECT * FROM pg_temp.claim(4, 200, pg_temp.tok(7));

-- operators: release a claim, or give it to another server
SELECT snowflake_registry_release(3, 17);
SELECT a.status FROM snowflake_registry_check_in(3, 17, pg_temp.tok(3)) a;
SELECT snowflake_registry_release(3, 17);
SELECT snowflake_registry_reassign(3, 1, 104);
SELECT * FROM pg_temp.claim(3, 104, pg_temp.tok(8));
SELECT a.status, a.system_identifier
FROM snowflake_registry_check_in(3, 1, pg_temp.tok(2)) a;
SELECT snowflake_registry_reassign(3, 31, 104);

-- the servers' role needs only the claims table (and the schema, which
-- PUBLIC may use here)
CREATE ROLE regress_snowflake_worker;
GRANT SELECT, INSERT, UPDATE, DELETE ON snowflake_claims
	TO regress_snowflake_worker;
SET ROLE regress_snowflake_worker;
SELECT * FROM pg_temp.claim(5, 300, pg_temp.tok(10));
SELECT a.status FROM snowflake_registry_check_in(5, 0, pg_temp.tok(10)) a;
SELECT snowflake_registry_idle(5, 0, pg_temp.tok(10));
SELECT snowflake_registry_release(5, 0);
RESET ROLE;

-- out of range
SELECT * FROM pg_temp.claim(-1, 101, pg_temp.tok(9));

-- the operator's functions are not for everyone
SELECT p.proname, has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
FROM pg_proc p
WHERE p.proname LIKE 'snowflake_registry_%'
ORDER BY 1;

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

DROP ROLE regress_snowflake_worker;

-- an upgrade from 1.0 gives the same objects as a new install
CREATE EXTENSION snowflake VERSION '1.0';
ALTER EXTENSION snowflake UPDATE TO '1.1';
(SELECT * FROM pg_temp.extension_objects() EXCEPT SELECT * FROM installed)
UNION ALL
(SELECT * FROM installed EXCEPT SELECT * FROM pg_temp.extension_objects());
DROP EXTENSION snowflake;
