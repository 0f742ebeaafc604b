--
-- Decoding: IDs worked out by hand from the layout
--   bit 63 = 0 | 41 bits ms since epoch | 5 bits datacenter | 5 bits worker | 12 bits sequence
-- and IDs made by other systems of this layout, each with its own epoch.
--
CREATE EXTENSION snowflake;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

-- the configured epoch (Twitter's by default), shown in UTC in any session
SHOW snowflake.epoch;
SET TimeZone = 'America/New_York';
SHOW snowflake.epoch;
SET TimeZone = 'UTC';

-- the extremes: zero is the epoch itself; 2^63-1 sets every field to its maximum
SELECT * FROM snowflake_parse(0);
SELECT * FROM snowflake_parse(9223372036854775807);

-- each field alone at its largest value
SELECT * FROM snowflake_parse(4095);                    -- sequence 4095
SELECT * FROM snowflake_parse(31::bigint << 17);        -- datacenter 31
SELECT * FROM snowflake_parse(31::bigint << 12);        -- worker 31
SELECT * FROM snowflake_parse(1::bigint << 22);         -- 1 ms after the epoch
SELECT * FROM snowflake_parse(8388607);                 -- all of the above at once

-- an ID assembled from its parts: 1000 ms, datacenter 3, worker 7, sequence 42
SELECT (1000::bigint << 22) | (3 << 17) | (7 << 12) | 42 AS id;
SELECT * FROM snowflake_parse(4194725930);

-- IDs of other systems: Twitter's (its epoch is ours by default) ...
SELECT * FROM snowflake_parse(1212092628029698048);
SELECT * FROM snowflake_parse(1212092628029698048, '2010-11-04 01:42:54.657+00');
-- ... and Discord's, epoch 2015-01-01 (Discord's documented example:
-- 2016-04-30 11:18:25.796 UTC, internal worker 1, process 0, increment 7)
SELECT * FROM snowflake_parse(175928847299117063, '2015-01-01 00:00:00+00');

-- millisecond precision, and the epoch's own fraction is kept
SELECT ts FROM snowflake_parse((1::bigint << 22), '2020-01-01 00:00:00.000999+00');

-- both calling forms, and NULL in gives NULL out (STRICT)
SELECT (snowflake_parse(175928847299117063, '2015-01-01+00')).*;
SELECT p.* FROM (VALUES (0::bigint), (4095), (NULL)) v(id),
	snowflake_parse(v.id) p ORDER BY p.sequence;
SELECT snowflake_parse(NULL) IS NULL AS null_in_null_out;
SELECT snowflake_parse(NULL, now()) IS NULL AS null_in_null_out;
SELECT snowflake_parse(1, NULL) IS NULL AS null_in_null_out;

-- any layout decodes with explicit widths: Twitter's, given explicitly,
-- decodes as the two-argument form does
SELECT * FROM snowflake_parse(175928847299117063, '2015-01-01+00', 41, 5, 5, 12);
-- a 53-bit JavaScript-safe layout (41/0/6/6): the largest ID it can make
SELECT * FROM snowflake_parse((1::bigint << 53) - 1, '2010-11-04 01:42:54.657+00', 41, 0, 6, 6);
-- no datacenter part and a 10-bit worker
SELECT * FROM snowflake_parse((123::bigint << 22) | (700 << 12) | 9, '2010-11-04 01:42:54.657+00', 41, 0, 10, 12);
-- Sonyflake: 39 bits of 10 ms units, then an 8-bit sequence, then a 16-bit
-- machine id; its sequence sits where the datacenter does here
SELECT ts, datacenter_id AS sonyflake_sequence, worker_id AS machine_id
FROM snowflake_parse((100::bigint << 24) | (3 << 16) | 4660, '2014-09-01 00:00:00+00', 39, 8, 16, 0, 10);
-- an ID with bits above its layout, and layouts that are not valid
SELECT * FROM snowflake_parse(1::bigint << 53, '2010-11-04 01:42:54.657+00', 41, 0, 6, 6);
SELECT * FROM snowflake_parse(1, '2010-11-04 01:42:54.657+00', 41, 5, 5, 13);
SELECT * FROM snowflake_parse(1, '2010-11-04 01:42:54.657+00', 0, 5, 5, 12);
SELECT * FROM snowflake_parse(1, '2010-11-04 01:42:54.657+00', 41, 31, 0, 12);
SELECT * FROM snowflake_parse(1, '2010-11-04 01:42:54.657+00', 41, 5, 5, 12, 0);
SELECT snowflake_parse(NULL, now(), 41, 5, 5, 12) IS NULL AS null_in_null_out;
SELECT snowflake_parse(1, now(), 41, 5, 5, NULL) IS NULL AS null_in_null_out;

-- the volatility, strictness and parallel labels are part of the interface
SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict, p.proparallel
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
ORDER BY p.oid::regprocedure::text;

-- decoding is usable in an expression index when the epoch is explicit
CREATE TABLE layout_idx (id bigint);
CREATE INDEX ON layout_idx (((snowflake_parse(id, '2010-11-04 01:42:54.657+00')).ts));
DROP TABLE layout_idx;

DROP EXTENSION snowflake;
