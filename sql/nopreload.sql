--
-- A server without snowflake in shared_preload_libraries: CREATE EXTENSION
-- and the decoding functions work; generating is refused with a hint.
-- The server's configuration sets snowflake.epoch to 2015-01-01.
--
CREATE EXTENSION snowflake;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

SELECT snowflake_next_id();
SELECT snowflake_last_id();

-- decoding uses the configured epoch even without the preload
SELECT * FROM snowflake_parse(175928847299117063);
SELECT * FROM snowflake_parse(175928847299117063, '2015-01-01+00');
SELECT * FROM snowflake_parse(-1);

-- no session can change the epoch that snowflake_parse(id) uses, or set a
-- snowflake setting that does not exist: without the preload the
-- server-start settings are settings of the configuration file
SHOW snowflake.epoch;
SET snowflake.epoch = '2010-11-04 01:42:54.657+00';
SET snowflake.datacenter_id = 3;
SET snowflake.wrker_id = 3;
SET "Snowflake"."Wokrer_Id" = 3;
SELECT * FROM snowflake_parse(175928847299117063);

-- a table can still declare the default; inserting without an ID fails clearly
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next_id());
INSERT INTO t DEFAULT VALUES;
INSERT INTO t VALUES (1);
DROP TABLE t;

-- the SQLSTATE of the refusals
CREATE FUNCTION pg_temp.sqlstate_of(query text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE query;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE;
END
$$;
SELECT query, pg_temp.sqlstate_of(query) AS sqlstate
FROM (VALUES ('SELECT snowflake_next_id()'), ('SELECT snowflake_last_id()')) v(query);

DROP EXTENSION snowflake;
