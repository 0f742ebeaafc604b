--
-- Every error path that a single session can reach: bad input, settings
-- that cannot be changed, and bad values for the ones that can.
--
CREATE EXTENSION snowflake;
SET TimeZone = 'UTC';

-- negative IDs do not exist: bit 63 is always 0
SELECT * FROM snowflake_parse(-1);
SELECT * FROM snowflake_parse(-9223372036854775808, '2015-01-01+00');

-- an epoch that is not a finite time, or that puts the ID past year 294276
SELECT * FROM snowflake_parse(1, 'infinity');
SELECT * FROM snowflake_parse(9223372036854775807, '294270-01-01 00:00:00+00');

-- server-start settings cannot be changed by any session, superuser included
SET snowflake.worker_id = 3;
SET snowflake.datacenter_id = 3;
SET snowflake.epoch = '2015-01-01 00:00:00+00';
BEGIN;
SET LOCAL snowflake.worker_id = 3;
ROLLBACK;
SELECT set_config('snowflake.worker_id', '3', false);
SHOW snowflake.worker_id;
SHOW snowflake.datacenter_id;

-- ... nor by an ordinary role
CREATE ROLE snowflake_user;
SET ROLE snowflake_user;
SET snowflake.worker_id = 3;
-- and the reloadable settings are for superusers only
SET snowflake.max_clock_wait = 0;
SET snowflake.max_lead = 1000;
RESET ROLE;
DROP ROLE snowflake_user;

-- out-of-range and malformed values are refused where they are checked
ALTER SYSTEM SET snowflake.worker_id = 32;
ALTER SYSTEM SET snowflake.datacenter_id = -1;
ALTER SYSTEM SET snowflake.epoch = 'not a time';
ALTER SYSTEM SET snowflake.epoch = '2010-11-04 01:42:54.657';
ALTER SYSTEM SET snowflake.epoch = '2999-01-01 00:00:00+00';
ALTER SYSTEM SET snowflake.epoch = '-1';
ALTER SYSTEM SET snowflake.epoch = '2010-11-04 01:42:54.6571+00';
-- out of range (PostgreSQL 18 words the message otherwise: the ranges are
-- read from pg_settings below)
\set VERBOSITY sqlstate
SET snowflake.max_clock_wait = -1;
SET snowflake.max_clock_wait = '2h';
\set VERBOSITY default
SET snowflake.max_lead = 'soon';
SET snowflake.max_lead = '1s';
SHOW snowflake.max_lead;
SET snowflake.max_clock_wait = 250;
SHOW snowflake.max_clock_wait;
RESET snowflake.max_lead;
RESET snowflake.max_clock_wait;

-- ALTER SYSTEM checks the layout the configuration files will give: widths
-- that do not fit are refused; node ids fit the widths set beside them
ALTER SYSTEM SET snowflake.time_bits = 60;
ALTER SYSTEM SET snowflake.worker_id = 700;
ALTER SYSTEM SET snowflake.datacenter_bits = 0;
ALTER SYSTEM SET snowflake.worker_bits = 10;
ALTER SYSTEM SET snowflake.worker_id = 700;
ALTER SYSTEM SET snowflake.worker_id = 1024;
ALTER SYSTEM RESET snowflake.worker_id;
ALTER SYSTEM RESET snowflake.worker_bits;
ALTER SYSTEM RESET snowflake.datacenter_bits;

-- node ids are plain integers: no fractions to round, no hex
ALTER SYSTEM SET snowflake.worker_id = 31.4;
ALTER SYSTEM SET snowflake.worker_id = '1.5';
ALTER SYSTEM SET snowflake.datacenter_id = '0x1F';

-- the epoch is a fixed moment: no special or relative values, and no zone
-- abbreviations, whose meaning depends on timezone_abbreviations
ALTER SYSTEM SET snowflake.epoch = 'today +00';
ALTER SYSTEM SET snowflake.epoch = 'tomorrow +00';
ALTER SYSTEM SET snowflake.epoch = 'yesterday 10:00 +00';
ALTER SYSTEM SET snowflake.epoch = 'now';
ALTER SYSTEM SET snowflake.epoch = 'epoch';
ALTER SYSTEM SET snowflake.epoch = 'infinity';
ALTER SYSTEM SET snowflake.epoch = '-infinity';
ALTER SYSTEM SET snowflake.epoch = '2015-01-01 00:00:00 IST';
ALTER SYSTEM SET snowflake.epoch = '2015-01-01 00:00:00 EST';
-- numeric offsets, full zone names, UTC and GMT are fixed
ALTER SYSTEM SET snowflake.epoch = '2015-01-01 00:00:00+05:30';
ALTER SYSTEM SET snowflake.epoch = '2015-01-01 00:00:00 Asia/Kolkata';
ALTER SYSTEM SET snowflake.epoch = '2015-01-01 00:00:00 UTC';
ALTER SYSTEM SET snowflake.epoch = '2015-01-01 00:00:00 GMT';
ALTER SYSTEM RESET snowflake.epoch;

-- the prefix is reserved, whatever the case of its letters (quoted names
-- keep their capitals): a misspelt setting is an error, not a placeholder
SET snowflake.wrker_id = 3;
SET "Snowflake"."Wokrer_Id" = 7;
SET "SNOWFLAKE".max_laed = 1;
RESET "Snowflake"."Wokrer_Id";
SELECT set_config('snowflake.wrker_id', '3', false);
ALTER SYSTEM SET "Snowflake"."Wokrer_Id" = 7;
ALTER DATABASE regression SET "SnowFlake"."Max_Laed" = 1;
ALTER ROLE CURRENT_USER SET "Snowflake".max_laed = 1;
CREATE FUNCTION pg_temp.f() RETURNS int LANGUAGE sql
	SET "Snowflake".max_laed = 1 AS 'SELECT 1';
-- real settings may be spelt in any case
SET "SnowFlake"."Max_Lead" = '2s';
SHOW snowflake.max_lead;
RESET "SNOWFLAKE"."MAX_LEAD";
SHOW snowflake.max_lead;
ALTER ROLE CURRENT_USER SET "Snowflake"."Max_Clock_Wait" = 500;
ALTER ROLE CURRENT_USER RESET snowflake.max_clock_wait;
SET snowflake.max_clock_jump = '2h';
SHOW snowflake.max_clock_jump;
\set VERBOSITY sqlstate
SET snowflake.max_clock_jump = -1;
\set VERBOSITY default
RESET snowflake.max_clock_jump;
SELECT name, min_val, max_val, unit FROM pg_settings
WHERE name IN ('snowflake.max_clock_wait', 'snowflake.max_clock_jump')
ORDER BY name;

-- the SQLSTATE of each error above that snowflake raises itself
\getenv abs_srcdir PG_ABS_SRCDIR
\set sqlstate_of :abs_srcdir '/test/sqlstate_of.sql'
\i :sqlstate_of
SELECT query, pg_temp.sqlstate_of(query) AS sqlstate
FROM (VALUES
	('SELECT snowflake_parse(-1)'),
	('SELECT snowflake_parse(1, ''infinity'')'),
	('SELECT snowflake_parse(9223372036854775807, ''294270-01-01+00'')'),
	('SET snowflake.worker_id = 3'),
	('SET snowflake.max_clock_wait = -1'),
	('SET "Snowflake"."Wokrer_Id" = 7'),
	('ALTER SYSTEM SET snowflake.worker_id = 31.4'),
	('ALTER SYSTEM SET snowflake.epoch = ''today +00''')
) v(query);

DROP EXTENSION snowflake;
