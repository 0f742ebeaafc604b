/*-------------------------------------------------------------------------
 *
 * upgrade.c
 *		pg_upgrade: the file that the restore of the extension leaves in the
 *		new cluster, so that it refuses to generate until the old cluster's
 *		mark is copied.
 *
 * pg_upgrade copies no file of ours, so the new cluster starts without the
 * old cluster's snowflake.mark, and would resume from its clock: behind,
 * or below IDs issued up to snowflake.max_lead ahead, it would repeat IDs
 * the old cluster issued.  While pg_upgrade restores the schema into the new
 * cluster, in binary upgrade mode, each member of the extension is added to
 * it with ALTER EXTENSION snowflake ADD, which the ProcessUtility hook sees
 * whether or not the library is preloaded (validating a C function loads it,
 * whatever check_function_bodies says).  That leaves snowflake.upgraded in
 * the data directory.  At a start (snowflake_load_mark_file), that file
 * without a mark file refuses generation, as an invalid mark does; a mark
 * file beside it is the one an operator copied from the old cluster after
 * the upgrade, and is accepted, and the file removed.  pg_upgrade runs no
 * DDL in the old cluster, and pg_upgrade --check restores nothing, so
 * neither leaves the file.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/timestamp.h"

#include "markfile.h"
#include "statefile.h"
#include "upgrade.h"

/*---- pg_upgrade ----*/

/*
 * What snowflake.upgraded says to whoever finds it; %s is the time of the
 * restore.
 */
static const char snowflake_upgrade_text[] =
"This data directory was made by pg_upgrade, on %s, from a cluster that\n"
"had the snowflake extension.\n"
"\n"
"pg_upgrade does not copy " SNOWFLAKE_MARK_FILE ", snowflake's high-water mark, which\n"
"keeps new IDs above every ID issued before.  As long as this file is here and\n"
SNOWFLAKE_MARK_FILE " is not, snowflake refuses to generate IDs in this cluster.\n"
"\n"
"Stop this server if it runs, copy " SNOWFLAKE_MARK_FILE " from the old cluster's data\n"
"directory into this one, and start the server: it resumes above every ID the\n"
"old cluster issued, and removes this file.  If the old cluster's mark is lost,\n"
"wait until the clock is past every ID the old cluster issued, then remove this\n"
"file and restart.  See \"Upgrading PostgreSQL with pg_upgrade\" in snowflake's\n"
"docs/operations.md.\n";

/* this backend has left the file (or found it) */
static bool snowflake_upgrade_noted = false;

/*
 * pg_upgrade is restoring the extension into this cluster: leave
 * snowflake.upgraded, so that the new cluster refuses to generate until the
 * old cluster's mark is copied.  Called by the ProcessUtility hook for each
 * ALTER EXTENSION snowflake ADD in binary upgrade mode, in every database
 * that has the extension.  Backends restoring databases in parallel may
 * race: each writes its own temporary file, and either may rename its copy
 * into place.
 *
 * A mark file that is already here was not copied from the old cluster
 * after the upgrade: the new cluster's own, from IDs generated before it was
 * upgraded into, or a copy made before the upgrade, which cannot be told
 * apart.  It is set aside, never trusted.  An error fails the restore, and
 * with it pg_upgrade, rather than let the mark be lost unnoticed.
 */
void
snowflake_note_upgrade_restore(void)
{
	char	   *contents;
	char	   *temp_path;

	if (snowflake_upgrade_noted)
		return;
	if (snowflake_upgrade_file_exists())
	{
		snowflake_upgrade_noted = true;
		return;
	}

	if (rename(SNOWFLAKE_MARK_FILE, SNOWFLAKE_MARK_SET_ASIDE_FILE) == 0)
	{
		fsync_fname(SNOWFLAKE_MARK_SET_ASIDE_FILE, false);
		ereport(LOG,
				(errmsg("snowflake set the high-water mark file \"%s\" of the new cluster aside as \"%s\"",
						SNOWFLAKE_MARK_FILE, SNOWFLAKE_MARK_SET_ASIDE_FILE),
				 errdetail("pg_upgrade is restoring snowflake into this cluster, and only the old cluster's mark, copied after the upgrade, keeps new IDs above the old cluster's.")));
	}
	else if (errno != ENOENT)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rename file \"%s\" to \"%s\": %m",
						SNOWFLAKE_MARK_FILE, SNOWFLAKE_MARK_SET_ASIDE_FILE)));

	/* written durably, and the directory fsynced, also after the rename */
	contents = psprintf(snowflake_upgrade_text,
						timestamptz_to_str(GetCurrentTimestamp()));
	temp_path = psprintf("%s.%d.tmp", SNOWFLAKE_UPGRADE_FILE, MyProcPid);
	if (!snowflake_write_file_durably(SNOWFLAKE_UPGRADE_FILE, temp_path,
									  contents, strlen(contents), LOG))
	{
		(void) unlink(temp_path);
		ereport(ERROR,
				(errcode(ERRCODE_IO_ERROR),
				 errmsg("could not record in \"%s\" that pg_upgrade made this cluster",
						SNOWFLAKE_UPGRADE_FILE),
				 errdetail("Without it, this cluster would generate IDs from its clock, which could repeat IDs the old cluster issued."),
				 errhint("See the server log for why the file could not be written.")));
	}
	ereport(LOG,
			(errmsg("snowflake recorded in \"%s\" that pg_upgrade made this cluster",
					SNOWFLAKE_UPGRADE_FILE),
			 errdetail("IDs are refused here until \"%s\" is copied from the old cluster's data directory.",
					   SNOWFLAKE_MARK_FILE)));
	snowflake_upgrade_noted = true;
}
