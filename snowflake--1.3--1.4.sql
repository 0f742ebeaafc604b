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
					  HINT = 'Run CREATE EXTENSION snowflake_registry first, which takes the claims in; update snowflake here once every server of the fleet runs 1.4 (see "Upgrading a registry from 1.3" in docs/fleet.md).';
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
