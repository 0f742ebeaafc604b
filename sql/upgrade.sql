--
-- ALTER EXTENSION snowflake UPDATE from 1.0, step by step to 1.1, 1.2 and
-- then to 1.3 and to the default version (1.4), gives the same objects as a fresh CREATE
-- EXTENSION of the default version: every function with its definition
-- (arguments, result, volatility, STRICT, PARALLEL, support function,
-- SECURITY DEFINER, search_path) and privileges, and every view with its
-- query and privileges (and any table's columns and composite type's
-- attributes), compared in the catalogs of two databases.
--
\set regress_db :DBNAME

-- one line per object of the extension, with what defines it; not the row
-- types of its tables and views, nor array types, which follow from those
-- and which PostgreSQL 18 lists as members where 15 does not
SELECT $describe$
SELECT string_agg(line, E'\n' ORDER BY line) AS objects
FROM (SELECT pg_describe_object(d.classid, d.objid, 0) || ': ' ||
		CASE d.classid
			WHEN 'pg_proc'::regclass THEN
				pg_get_functiondef(d.objid) || ' acl=' ||
				coalesce((SELECT proacl::text FROM pg_proc WHERE oid = d.objid), 'default')
			WHEN 'pg_class'::regclass THEN
				coalesce(pg_get_viewdef(d.objid), '') || ' acl=' ||
				coalesce((SELECT relacl::text FROM pg_class WHERE oid = d.objid), 'default') ||
				' columns=' || (SELECT string_agg(a.attname || ' ' ||
						format_type(a.atttypid, a.atttypmod) ||
						CASE WHEN a.attnotnull THEN ' not null' ELSE '' END ||
						coalesce(' default ' || pg_get_expr(ad.adbin, ad.adrelid), ''),
						', ' ORDER BY a.attname)
					FROM pg_attribute a
					LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
					WHERE a.attrelid = d.objid AND a.attnum > 0 AND NOT a.attisdropped)
			WHEN 'pg_type'::regclass THEN
				'attributes=' || coalesce((SELECT string_agg(a.attname || ' ' ||
						format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attname)
					FROM pg_type t JOIN pg_attribute a ON a.attrelid = t.typrelid
					WHERE t.oid = d.objid AND a.attnum > 0 AND NOT a.attisdropped), '')
			ELSE ''
		END AS line
	  FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
	  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
		AND e.extname = 'snowflake'
		AND NOT (d.classid = 'pg_type'::regclass AND EXISTS (
			SELECT FROM pg_type t LEFT JOIN pg_class c ON c.oid = t.typrelid
			WHERE t.oid = d.objid AND (t.typcategory = 'A' OR c.relkind <> 'c')))) o
$describe$ AS describe_sql \gset

-- 1.0, then the update
CREATE EXTENSION snowflake VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
ALTER EXTENSION snowflake UPDATE TO '1.1';
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
ALTER EXTENSION snowflake UPDATE TO '1.2';
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
-- a database still at 1.2 plans snowflake_between as 1.2 did (the call
-- stays, with the index conditions it derives), since it has not the two
-- functions of 1.3 that the library plans it as; after the update it does
CREATE TABLE between_plan (id bigint PRIMARY KEY);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF)
SELECT * FROM between_plan WHERE snowflake_between(id, now() - interval '1 hour', now());
ALTER EXTENSION snowflake UPDATE TO '1.3';
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
EXPLAIN (COSTS OFF)
SELECT * FROM between_plan WHERE snowflake_between(id, now() - interval '1 hour', now());
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE between_plan;
ALTER EXTENSION snowflake UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
:describe_sql \gset upgraded_
-- the objects the update leaves
SELECT pg_describe_object(d.classid, d.objid, 0) AS object
FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	AND e.extname = 'snowflake'
	AND NOT (d.classid = 'pg_type'::regclass AND EXISTS (
		SELECT FROM pg_type t LEFT JOIN pg_class c ON c.oid = t.typrelid
		WHERE t.oid = d.objid AND (t.typcategory = 'A' OR c.relkind <> 'c')))
ORDER BY 1;
-- and they work
SELECT count(*) AS ids FROM snowflake_next_ids(3);
SELECT last_id = snowflake_last_id() AS status_works FROM snowflake_status;

-- a fresh install of the default version in another database
CREATE DATABASE snowflake_fresh;
\c snowflake_fresh
CREATE EXTENSION snowflake;
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
:describe_sql \gset fresh_
\c :regress_db
DROP DATABASE snowflake_fresh;

-- the same objects, defined the same way: no line of either is missing
-- from the other
SELECT length(:'upgraded_objects') > 5000 AS described,
	:'upgraded_objects' = :'fresh_objects' AS same_objects;
SELECT 'only after the update' AS side, line
FROM (SELECT unnest(string_to_array(:'upgraded_objects', E'\n'))
	  EXCEPT SELECT unnest(string_to_array(:'fresh_objects', E'\n'))) u(line)
UNION ALL
SELECT 'only in a fresh install', line
FROM (SELECT unnest(string_to_array(:'fresh_objects', E'\n'))
	  EXCEPT SELECT unnest(string_to_array(:'upgraded_objects', E'\n'))) f(line);

DROP EXTENSION snowflake;
