--
-- Every function, view and type of both extensions, snowflake and
-- snowflake_registry, has a one-line comment, so that \df+, \dv+ and \dT+
-- explain the API (the generator's words are held to docs/functions.md by
-- t/026_docs_examples.pl).
--
CREATE EXTENSION snowflake;
CREATE EXTENSION snowflake_registry;

-- the extension's functions, views and types, as psql's \df, \dv and \dT
-- name them; not the row types of its views and tables, nor array types
CREATE TEMP VIEW members AS
SELECT pg_describe_object(d.classid, d.objid, 0) AS object,
	obj_description(d.objid, d.classid::regclass::name) AS description
FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	AND e.extname IN ('snowflake', 'snowflake_registry')
	AND (d.classid = 'pg_proc'::regclass
		OR (d.classid = 'pg_class'::regclass
			AND (SELECT relkind FROM pg_class WHERE oid = d.objid) = 'v')
		OR (d.classid = 'pg_type'::regclass AND NOT EXISTS (
			SELECT FROM pg_type t LEFT JOIN pg_class c ON c.oid = t.typrelid
			WHERE t.oid = d.objid AND (t.typcategory = 'A' OR c.relkind <> 'c'))));

-- how many there are, and that none lacks a description, or has one of
-- more than one line
SELECT count(*) AS described FROM members WHERE description IS NOT NULL;
SELECT object AS without_description FROM members
WHERE description IS NULL ORDER BY 1;
SELECT object AS with_more_than_one_line FROM members
WHERE description ~ E'\n' ORDER BY 1;

-- as \df+ shows them
SELECT p.oid::regprocedure AS function, obj_description(p.oid, 'pg_proc') AS description
FROM pg_proc p
WHERE p.proname IN ('snowflake_next_id', 'snowflake_next_ids')
ORDER BY 1;

DROP EXTENSION snowflake_registry;
DROP EXTENSION snowflake;
