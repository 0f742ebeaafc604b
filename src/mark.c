/*-------------------------------------------------------------------------
 *
 * mark.c
 *		Moving the durable high-water mark: to the file, then to WAL, then
 *		confirmed by the synchronous standbys; and what the registry asks of
 *		the generator.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "replication/syncrep.h"
#include "replication/walsender_private.h"
#include "storage/condition_variable.h"
#include "utils/wait_event.h"

#include "clock.h"
#include "layout.h"
#include "mark.h"
#include "markfile.h"
#include "settings.h"
#include "state.h"
#include "uninstall.h"
#include "wal.h"
#include "waits.h"

/*---- moving the mark ----*/

SnowflakeMarkWaitHook snowflake_mark_lock_wait_hook = NULL;
SnowflakeMarkWaitHook snowflake_mark_standby_wait_hook = NULL;

static bool snowflake_standbys_have(XLogRecPtr lsn);
static XLogRecPtr snowflake_log_mark(int64 mark_ms, uint8 flags);
static bool snowflake_publish_mark(int64 mark_ms);

/*
 * For the registry (see mark.h): no ID of this server carries a time at
 * or before unix_ms, the latest time a previous holder of its worker id
 * could have issued.  The next ID then needs a mark past it, written first.
 */
void
snowflake_raise_id_floor(int64 unix_ms)
{
	int64		floor_ms = unix_ms - snowflake_epoch_unix_ms;
	uint64		floor_tick;

	if (snowflake_state == NULL || floor_ms < 0)
		return;

	/* past the time bits: no ID can lie above it, and none is issued */
	floor_ms = Min(floor_ms, snowflake_layout.max_ms);
	floor_tick = ((uint64) (floor_ms + 1) << snowflake_layout.sequence_bits) - 1;
	snowflake_raise_counter(&snowflake_state->last_tick, floor_tick);
	pg_atomic_write_u64(&snowflake_state->registry_floor_tick, floor_tick);
}

/*
 * For the registry (see mark.h): the time of the newest ID, in
 * milliseconds since the Unix epoch.
 */
int64
snowflake_newest_id_unix_ms(void)
{
	return (int64) (pg_atomic_read_u64(&snowflake_state->last_tick) >>
					snowflake_layout.sequence_bits) + snowflake_epoch_unix_ms;
}

/* For the registry: milliseconds since the Unix epoch as an ID's time. */
int64
snowflake_unix_to_id_ms(int64 unix_ms)
{
	return unix_ms - snowflake_epoch_unix_ms;
}

typedef enum SnowflakeMarkResult
{
	SNOWFLAKE_MARK_READY,		/* a mark high enough is in file and WAL */
	SNOWFLAKE_MARK_FAILED,		/* it could not be written, or the file went
								 * backwards */
	SNOWFLAKE_MARK_CLOCK_JUMPED,	/* the clock jumped: no mark was written */
	SNOWFLAKE_MARK_DISABLED		/* snowflake.enabled is off: no mark was
								 * written */
} SnowflakeMarkResult;

/*
 * Under mark_lock: make sure that a mark more than margin_ms above
 * needed_ms is in the file and in WAL, and set *target and *lsn to it and
 * its record.  Another process may have written one already and still be
 * waiting for standbys to confirm it; otherwise write one a stride ahead of
 * the clock: to the file first (so a crash never forgets it), then to WAL,
 * flushed (so a standby learns it before any commit that could hold an ID
 * under it).
 *
 * Refuses to write a mark that follows a clock which jumped forward by more
 * than snowflake.max_clock_jump, compared with the monotonic clock, since
 * the last mark: such a mark would let IDs, and every restart after a
 * crash, resume at the jumped time for good.  *jump_ms is then set.  Writes
 * nothing once snowflake.enabled is off, asked here under the lock, so that
 * no record follows what snowflake.uninstall_lsn shows.
 */
static SnowflakeMarkResult
snowflake_write_new_mark(int64 needed_ms, int64 margin_ms, int elevel,
						 int64 *target, XLogRecPtr *lsn, int64 *jump_ms)
{
	SnowflakeSharedState *state = snowflake_state;
	int64		now_ms;
	int64		monotonic_ms;
	int64		expected_ms;
	int64		stride_ms;
	int			us_into_ms;

	if (!snowflake_is_enabled())
		return SNOWFLAKE_MARK_DISABLED;
	if (state->written_mark > needed_ms + margin_ms)
	{
		*target = state->written_mark;
		*lsn = state->written_lsn;
		return SNOWFLAKE_MARK_READY;
	}

	now_ms = snowflake_clock_ms(&us_into_ms);
	monotonic_ms = snowflake_monotonic_ms();
	expected_ms = state->clock_ref_ms + (monotonic_ms - state->monotonic_ref_ms);
	if (snowflake_max_clock_jump_s > 0 &&
		now_ms - expected_ms > (int64) snowflake_max_clock_jump_s * 1000)
	{
		*jump_ms = now_ms - expected_ms;
		return SNOWFLAKE_MARK_CLOCK_JUMPED;
	}

	if (snowflake_mark_file_went_back())
		return SNOWFLAKE_MARK_FAILED;

	stride_ms = Min(Max(SNOWFLAKE_MARK_STRIDE_MS,
						2 * (int64) pg_atomic_read_u64(&state->write_duration_us) / 1000),
					SNOWFLAKE_MAX_STRIDE_MS);
	*target = Max(needed_ms, now_ms) + stride_ms;
	*target = Min(Max(*target, state->written_mark),
				  snowflake_layout.max_ms + 1);

	if (!snowflake_write_mark_file(*target, now_ms, elevel))
		return SNOWFLAKE_MARK_FAILED;
	state->file_mark = *target;

	*lsn = snowflake_log_mark(*target, 0);
	state->written_mark = *target;
	state->written_lsn = *lsn;

	/*
	 * A clock that stepped back is not taken as the new reference, so that
	 * setting it right again does not look like a jump.
	 */
	state->clock_ref_ms = Max(now_ms, expected_ms);
	state->monotonic_ref_ms = monotonic_ms;
	return SNOWFLAKE_MARK_READY;
}

/*
 * Publish a durable mark, and record how long it took since started.  Did
 * it raise the published mark?
 */
static bool
snowflake_finish_mark(int64 target, instr_time started)
{
	instr_time	duration;
	bool		raised;

	raised = snowflake_publish_mark(target);
	ConditionVariableBroadcast(&snowflake_state->mark_cv);
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, started);
	pg_atomic_write_u64(&snowflake_state->write_duration_us,
						INSTR_TIME_GET_MICROSEC(duration));
	snowflake_raise_counter(&snowflake_state->max_write_duration_us,
							INSTR_TIME_GET_MICROSEC(duration));
	return raised;
}

/* Refuse generation: the mark file cannot be trusted. */
void
snowflake_report_invalid_mark(void)
{
	pg_read_barrier();
	if (snowflake_state->layout_changed)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake epoch or layout changed since the high-water mark was written"),
				 errdetail_internal("%s", snowflake_state->mark_invalid_reason),
				 errhint("%s", snowflake_state->layout_hint)));
	if (snowflake_state->upgrade_pending)
		snowflake_report_upgrade_refusal();
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("snowflake high-water mark file \"%s\" is invalid",
					SNOWFLAKE_MARK_FILE),
			 errdetail_internal("%s", snowflake_state->mark_invalid_reason),
			 snowflake_state->mark_restored ?
			 errhint("The true mark was written back. Find out what replaced the file, then restart the server.") :
			 errhint("Without a valid mark this server could repeat IDs it issued before. "
					 "Once the clock is past every ID this server issued (decode the largest with snowflake_parse), "
					 "remove the file and restart the server.")));
}

/*
 * Move the durable mark so that it lies more than margin_ms above
 * needed_ms, waiting for whatever that takes: another process that is
 * writing one (on mark_cv, so that a cancel or statement_timeout ends the
 * wait), a new write, and the synchronous standbys, if any, outside the
 * lock, so that even IDs that no transaction commits are known to them.
 *
 * Errors out if the mark cannot be written or the wait is cancelled; the
 * old mark then stays in force.  A clock that jumped is returned, with
 * *jump_ms, and so is snowflake.enabled off: errors for a backend, while
 * the mark writer leaves them to the backends to report.
 */
SnowflakeAdvanceResult
snowflake_advance_mark(int64 needed_ms, int64 margin_ms, int64 *jump_ms)
{
	SnowflakeSharedState *state = snowflake_state;
	SnowflakeMarkResult result;
	int64		target = 0;
	XLogRecPtr	lsn = InvalidXLogRecPtr;
	instr_time	started;

	INSTR_TIME_SET_ZERO(started);
	for (;;)
	{
		if ((int64) pg_atomic_read_u64(&state->durable_mark) > needed_ms + margin_ms)
		{
			ConditionVariableCancelSleep();
			return SNOWFLAKE_ADVANCE_NONE;
		}
		if (LWLockConditionalAcquire(state->mark_lock, LW_EXCLUSIVE))
			break;
		if (snowflake_mark_lock_wait_hook)
			snowflake_mark_lock_wait_hook();
		(void) ConditionVariableTimedSleep(&state->mark_cv, 100,
										   snowflake_wait_event(SNOWFLAKE_WAIT_MARK));
	}
	ConditionVariableCancelSleep();

	/* another process may have moved it before we got the lock */
	if ((int64) pg_atomic_read_u64(&state->durable_mark) > needed_ms + margin_ms)
		result = SNOWFLAKE_MARK_FAILED;
	else
	{
		INSTR_TIME_SET_CURRENT(started);
		result = snowflake_write_new_mark(needed_ms, margin_ms, ERROR,
										  &target, &lsn, jump_ms);
	}
	LWLockRelease(state->mark_lock);
	ConditionVariableBroadcast(&state->mark_cv);

	if (state->mark_invalid)
		snowflake_report_invalid_mark();
	if (result == SNOWFLAKE_MARK_CLOCK_JUMPED)
		return SNOWFLAKE_ADVANCE_CLOCK_JUMPED;
	if (result == SNOWFLAKE_MARK_DISABLED)
		return SNOWFLAKE_ADVANCE_DISABLED;
	if (result != SNOWFLAKE_MARK_READY)
		return SNOWFLAKE_ADVANCE_NONE;

	while (!snowflake_standbys_have(lsn))
	{
		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10L, WAIT_EVENT_SYNC_REP);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (snowflake_mark_standby_wait_hook)
			snowflake_mark_standby_wait_hook();
	}
	return snowflake_finish_mark(target, started) ?
		SNOWFLAKE_ADVANCE_RAISED : SNOWFLAKE_ADVANCE_NONE;
}

/*
 * A backend's early refresh of the mark while the mark writer is away: like
 * snowflake_advance_mark, but never waits.  It gives up if another process
 * holds the lock, only warns if the file cannot be written, and publishes
 * only if no standby has to confirm the mark: its caller's ID lies below the
 * old mark anyway.
 */
SnowflakeAdvanceResult
snowflake_try_advance_mark(int64 needed_ms, int64 margin_ms)
{
	SnowflakeSharedState *state = snowflake_state;
	SnowflakeMarkResult result = SNOWFLAKE_MARK_FAILED;
	int64		target = 0;
	int64		jump_ms = 0;
	XLogRecPtr	lsn = InvalidXLogRecPtr;
	instr_time	started;

	if ((int64) pg_atomic_read_u64(&state->durable_mark) > needed_ms + margin_ms ||
		!LWLockConditionalAcquire(state->mark_lock, LW_EXCLUSIVE))
		return SNOWFLAKE_ADVANCE_NONE;
	INSTR_TIME_SET_CURRENT(started);
	if ((int64) pg_atomic_read_u64(&state->durable_mark) <= needed_ms + margin_ms)
		result = snowflake_write_new_mark(needed_ms, margin_ms, WARNING,
										  &target, &lsn, &jump_ms);
	LWLockRelease(state->mark_lock);
	ConditionVariableBroadcast(&state->mark_cv);

	if (result == SNOWFLAKE_MARK_READY && snowflake_standbys_have(lsn) &&
		snowflake_finish_mark(target, started))
		return SNOWFLAKE_ADVANCE_RAISED;
	return SNOWFLAKE_ADVANCE_NONE;
}

/*
 * Log the mark again once a checkpoint has begun after its last WAL record,
 * so that the WAL a crash recovery replays always holds the mark, and a
 * mark file found below it is known to have gone backwards (see
 * snowflake_redo).  The record is marked unimportant, so that a server with
 * nothing else to log still skips its checkpoints.  Not once
 * snowflake.enabled is off: the mark stays on disk, and standbys must be
 * able to leave the library behind.  Called by the mark writer.
 */
void
snowflake_relog_mark(void)
{
	SnowflakeSharedState *state = snowflake_state;

	/* off, not even the lock: snowflake.uninstall_lsn must not find it held */
	if (!snowflake_is_enabled() ||
		!LWLockConditionalAcquire(state->mark_lock, LW_EXCLUSIVE))
		return;
	if (state->written_mark > 0 && GetRedoRecPtr() > state->written_lsn &&
		snowflake_is_enabled())
		state->written_lsn = snowflake_log_mark(state->written_mark,
												XLOG_MARK_UNIMPORTANT);
	LWLockRelease(state->mark_lock);
	ConditionVariableBroadcast(&state->mark_cv);
}

/*
 * WAL-log mark_ms, with the record flags given (XLogSetRecordFlags), and
 * flush it.  Returns the record's end, which snowflake.uninstall_lsn counts
 * from.  Under mark_lock.
 */
static XLogRecPtr
snowflake_log_mark(int64 mark_ms, uint8 flags)
{
	xl_snowflake_mark xlrec;
	XLogRecPtr	lsn;

	snowflake_fill_mark_record(&xlrec, mark_ms);
	XLogBeginInsert();
	XLogSetRecordFlags(flags);
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	lsn = XLogInsert(SNOWFLAKE_RMGR_ID, XLOG_SNOWFLAKE_MARK);
	(void) snowflake_raise_counter(&snowflake_state->last_record_end, lsn);
	XLogFlush(lsn);
	return lsn;
}

/*
 * Have the synchronous standbys, if any are configured, flushed WAL up to
 * lsn?  Asked of the WAL senders' shared state directly, rather than through
 * SyncRepWaitForLSN(), whose wait depends on the caller's
 * synchronous_commit and ends without confirmation on a cancel.
 */
static bool
snowflake_standbys_have(XLogRecPtr lsn)
{
	bool		have;

	LWLockAcquire(SyncRepLock, LW_SHARED);
#ifdef SYNC_STANDBY_DEFINED
	have = (WalSndCtl->sync_standbys_status & SYNC_STANDBY_DEFINED) == 0 ||
		WalSndCtl->lsn[SYNC_REP_WAIT_FLUSH] >= lsn;
#else
	have = !WalSndCtl->sync_standbys_defined ||
		WalSndCtl->lsn[SYNC_REP_WAIT_FLUSH] >= lsn;
#endif
	LWLockRelease(SyncRepLock);
	return have;
}

/*
 * Raise the published mark to mark_ms, never lowering it.  Did this call
 * raise it?  Its caller counts the mark as the writer's or a backend's.
 */
static bool
snowflake_publish_mark(int64 mark_ms)
{
	return snowflake_raise_counter(&snowflake_state->durable_mark,
								   (uint64) mark_ms);
}
