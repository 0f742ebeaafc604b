-- pg_temp.sqlstate_of(query): the SQLSTATE query raises, or 'no error'.
-- sql/*.sql include it from the source directory pg_regress names.
CREATE FUNCTION pg_temp.sqlstate_of(query text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE query;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE;
END
$$;
