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
SELECT snowflake_next_ids(3);
SELECT * FROM snowflake_status;

-- decoding uses the configured epoch even without the preload
SELECT * FROM snowflake_parse(175928847299117063);
SELECT * FROM snowflake_parse(175928847299117063, '2015-01-01+00');
SELECT * FROM snowflake_parse(-1);
SELECT snowflake_timestamp(175928847299117063) AS ts,
	snowflake_format(175928847299117063) AS text,
	snowflake_serial(175928847299117063, 'D-') AS serial,
	snowflake_min_id('2016-04-30 11:18:25.796+00') AS min_id,
	snowflake_max_id('2016-04-30 11:18:25.796+00') AS max_id,
	snowflake_compose('2016-04-30 11:18:25.796+00', 1, 0, 7) AS composed,
	snowflake_between(175928847299117063, '2016-04-30 11:18:25.796+00',
		'2016-04-30 11:18:25.796+00') AS between;
SELECT snowflake_json(175928847299117063);

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
\getenv abs_srcdir PG_ABS_SRCDIR
\set sqlstate_of :abs_srcdir '/test/sqlstate_of.sql'
\i :sqlstate_of
SELECT query, pg_temp.sqlstate_of(query) AS sqlstate
FROM (VALUES ('SELECT snowflake_next_id()'), ('SELECT snowflake_last_id()'),
	('SELECT snowflake_next_ids(3)'), ('SELECT * FROM snowflake_status')) v(query);

DROP EXTENSION snowflake;
