/*-------------------------------------------------------------------------
 *
 * uninstall.c
 *		Taking snowflake out of a replication group: snowflake.enabled, which
 *		stops generation and with it the mark's WAL records.
 *
 * A server replays a WAL record of the mark only with the library loaded
 * (its resource manager is registered at preload), so the library cannot
 * simply be removed from shared_preload_libraries while the primary still
 * writes such records: a standby restarted without it stops with "resource
 * manager with ID 146 not registered".  Switching snowflake.enabled off
 * stops every record: no new mark, and none logged again after a
 * checkpoint.  Since IDs must never outrun a mark that is on disk and in
 * WAL, generation stops too, with an error.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/guc.h"

#include "state.h"
#include "uninstall.h"

/*---- snowflake.enabled ----*/

bool		snowflake_enabled = true;

static void snowflake_assign_enabled(bool newval, void *extra);

/* Define snowflake.enabled. */
void
snowflake_uninstall_define_settings(void)
{
	DefineCustomBoolVariable("snowflake.enabled",
							 "Whether this server generates snowflake IDs and writes their high-water mark to WAL.",
							 "Off refuses every ID and writes no WAL record, "
							 "so that the library can then be removed from "
							 "shared_preload_libraries.",
							 &snowflake_enabled,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, snowflake_assign_enabled, NULL);
}

/*
 * GUC assign hook for snowflake.enabled.  The server follows the value the
 * postmaster read: a backend that has not processed the reload yet (it is
 * in the middle of a long statement) must stop too.  The postmaster reads
 * the configuration files before it signals any other process, one reload
 * after the other, so it publishes the value to shared memory, where every
 * process reads it; the store is all it does there.  The other processes
 * keep their own copy only for SHOW.
 */
static void
snowflake_assign_enabled(bool newval, void *extra)
{
	if (IsUnderPostmaster || snowflake_state == NULL)
		return;
	pg_atomic_write_u32(&snowflake_state->enabled, newval ? 1 : 0);
	pg_memory_barrier();
}

/*
 * Does this server generate IDs and write marks to WAL?  Whoever writes a
 * mark record asks under mark_lock, right before it writes the mark.
 */
bool
snowflake_is_enabled(void)
{
	return pg_atomic_read_u32(&snowflake_state->enabled) != 0;
}

/* Refuse an ID: snowflake.enabled is off. */
void
snowflake_report_disabled(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("snowflake ID generation is disabled"),
			 errdetail("snowflake.enabled is off, so this server writes no new high-water mark, and without one an ID could be issued again after a crash or a failover."),
			 errhint("Set snowflake.enabled to on and reload the configuration, once every server of the replication group preloads snowflake.")));
}

