/*-------------------------------------------------------------------------
 *
 * uninstall.c
 *		Taking snowflake out of a replication group: snowflake.enabled, which
 *		stops generation and with it the mark's WAL records, and
 *		snowflake.uninstall_lsn, which says when the standbys may restart
 *		without the library.
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
 * A standby restarts from its last restartpoint, that is from the redo
 * location of the last checkpoint record it replayed, and replays everything
 * after it again; having replayed past the last mark record is not enough.
 * So snowflake.uninstall_lsn names a checkpoint of the primary whose redo
 * location lies past the last mark record: a standby that has replayed that
 * checkpoint record, and stops cleanly (or has made a restartpoint since),
 * never meets a mark record again.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/pg_lsn.h"

#include "control.h"
#include "state.h"
#include "uninstall.h"

/*---- snowflake.enabled and snowflake.uninstall_lsn ----*/

bool		snowflake_enabled = true;
char	   *snowflake_uninstall_lsn = NULL;

/*
 * GUC assign hook for snowflake.enabled.  The server follows the value the
 * postmaster read: a backend that has not processed the reload yet (it is
 * in the middle of a long statement) must stop too.  The postmaster reads
 * the configuration files before it signals any other process, one reload
 * after the other, so it publishes the value to shared memory, where every
 * process reads it; the store is all it does there.  The other processes
 * keep their own copy only for SHOW.
 */
void
snowflake_assign_enabled(bool newval, void *extra)
{
	if (IsUnderPostmaster || snowflake_state == NULL)
		return;
	pg_atomic_write_u32(&snowflake_state->enabled, newval ? 1 : 0);
	pg_memory_barrier();
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

/*
 * SHOW snowflake.uninstall_lsn: the location of the last completed
 * checkpoint, once snowflake.enabled is off, no mark write begun before is
 * still under way, and that checkpoint's redo location lies past the end of
 * every mark record this server wrote or replayed since it started (records
 * from before its start lie before the checkpoint it started from).  A
 * standby that has replayed that checkpoint record replays no mark record
 * again once it has made a restartpoint there, which a clean shutdown does.
 * Empty otherwise, and on a standby, which writes no mark and cannot know
 * its primary's.  Never waits for a lock that a write may hold.
 */
const char *
snowflake_show_uninstall_lsn(void)
{
	static char lsn_text[32];	/* an LSN takes at most 17 characters */
	SnowflakeSharedState *state = snowflake_state;
	XLogRecPtr	last_end;
	bool		enabled;
	ControlFileData control;
	bool		read;
	char	   *shown;

	if (state == NULL || MyProc == NULL || RecoveryInProgress() ||
		snowflake_is_enabled())
		return "";

	/* every mark record is written under mark_lock */
	if (!LWLockConditionalAcquire(state->mark_lock, LW_SHARED))
		return "";
	enabled = snowflake_is_enabled();
	last_end = (XLogRecPtr) pg_atomic_read_u64(&state->last_record_end);
	LWLockRelease(state->mark_lock);
	if (enabled)
		return "";

	LWLockAcquire(ControlFileLock, LW_SHARED);
	read = snowflake_read_control_file(&control);
	LWLockRelease(ControlFileLock);
	if (!read || control.checkPointCopy.redo < last_end)
		return "";

	shown = DatumGetCString(DirectFunctionCall1(pg_lsn_out,
												LSNGetDatum(control.checkPoint)));
	strlcpy(lsn_text, shown, sizeof(lsn_text));
	pfree(shown);
	return lsn_text;
}
