--
-- A crash restart of a holder (the same postmaster token, a new nonce) takes
-- its claim back above its floor alone; the promise the registry recorded
-- for the pair must never go down with it, or the next holder of the pair
-- starts below IDs the old incarnation may have issued (issue 23 review:
-- take() overwrites the promise with the registry's clock plus a lease that
-- was lowered meanwhile).  Fails on 6ed35b4.
--
SET TimeZone = 'UTC';
CREATE EXTENSION snowflake_registry;
CREATE ROLE crash_worker NOLOGIN;
GRANT USAGE ON SCHEMA snowflake_registry TO crash_worker;
GRANT EXECUTE ON FUNCTION snowflake_registry.claim, snowflake_registry.extend,
    snowflake_registry.idle TO crash_worker;
CREATE ROLE crash_server_a LOGIN IN ROLE crash_worker;
CREATE ROLE crash_server_b LOGIN IN ROLE crash_worker;

SELECT lease FROM snowflake_registry.configure(lease => '1 s');
SET SESSION AUTHORIZATION crash_server_a;
SELECT status, worker_id, version
FROM snowflake_registry.claim(0, 31, '1288834974657/41/5/5/12',
	'aaaaaaaa-0000-4000-8000-000000000001', '11111111-0000-4000-8000-000000000001');
RESET SESSION AUTHORIZATION;
SELECT lease FROM snowflake_registry.configure(lease => '1 hour');
SET SESSION AUTHORIZATION crash_server_a;
-- the first incarnation's last acknowledged promise: about an hour ahead
SELECT status, version, promise AS acknowledged_promise
FROM snowflake_registry.extend(0, 0, 'aaaaaaaa-0000-4000-8000-000000000001', 1,
	'11111111-0000-4000-8000-000000000001', '11111111-0000-4000-8000-000000000002')
\gset
SELECT :'status' AS status, :version AS version,
	:'acknowledged_promise'::timestamptz > clock_timestamp() + interval '50 min' AS an_hour_ahead;
RESET SESSION AUTHORIZATION;
SELECT lease FROM snowflake_registry.configure(lease => '1 s');
-- the same postmaster after a crash of a backend: same token, new nonce
SET SESSION AUTHORIZATION crash_server_a;
SELECT status, version,
	promise >= :'acknowledged_promise'::timestamptz AS promise_kept
FROM snowflake_registry.claim(0, 31, '1288834974657/41/5/5/12',
	'aaaaaaaa-0000-4000-8000-000000000001', '11111111-0000-4000-8000-000000000003');
RESET SESSION AUTHORIZATION;
-- the pair's row still records a promise above everything the first
-- incarnation may have issued, which is what the next holder's floor is
SELECT promise >= :'acknowledged_promise'::timestamptz AS row_promise_kept
FROM snowflake_registry.claims WHERE datacenter_id = 0 AND worker_id = 0;
-- an operator gives the id to another login; once it passes, the new
-- holder's floor lies above the first incarnation's promise
SET client_min_messages = warning;
SELECT snowflake_registry.reassign(0, 0, 'crash_server_b') IS NOT NULL AS reassigned;
RESET client_min_messages;
SELECT pg_sleep(2.5);
SET SESSION AUTHORIZATION crash_server_b;
SELECT status <> 'claimed' OR floor >= :'acknowledged_promise'::timestamptz AS floor_above
FROM snowflake_registry.claim(0, 31, '1288834974657/41/5/5/12',
	'bbbbbbbb-0000-4000-8000-000000000001', '22222222-0000-4000-8000-000000000001');
RESET SESSION AUTHORIZATION;

DROP EXTENSION snowflake_registry;
DROP OWNED BY crash_worker, crash_server_a, crash_server_b;
DROP ROLE crash_worker, crash_server_a, crash_server_b;
