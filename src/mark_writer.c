/*-------------------------------------------------------------------------
 *
 * mark_writer.c
 *		The mark writer, a background worker that keeps the mark ahead of
 *		generation.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/condition_variable.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "clock.h"
#include "compat.h"
#include "layout.h"
#include "mark.h"
#include "settings.h"
#include "state.h"
#include "uninstall.h"

/*---- the mark writer ----*/

pg_noreturn PGDLLEXPORT void snowflake_mark_writer_main(Datum main_arg);

static void snowflake_mark_writer_detach(int code, Datum arg);
static void snowflake_writer_check_shutdown(void);
static void snowflake_writer_wait_for_standbys(void);
static void snowflake_writer_recover(MemoryContext writer_context);
static bool snowflake_writer_advance(uint64 start_tick, bool *active);

/*
 * The mark writer: a background worker that moves the durable mark ahead,
 * so that the fsync is not paid by a backend that is generating.  A backend
 * wakes it when generation comes within half a stride of the mark.  As long
 * as IDs were issued within SNOWFLAKE_WRITER_ACTIVE_MS, it also keeps the
 * mark half a stride ahead of the clock, so that the first ID after a pause
 * does not find the mark behind the clock and write it itself; a server that
 * issues no IDs writes no mark.  It logs the mark again after each
 * checkpoint (snowflake_relog_mark), and warns after a reload about
 * snowflake settings that the next start will refuse.  While
 * snowflake.enabled is off it writes nothing, and leaves mark_lock alone.
 *
 * An error (a mark that cannot be written, a full disk) is logged, and the
 * writer tries again a second later, as PostgreSQL's own background
 * processes do, rather than exit and be restarted; meanwhile backends write
 * the mark themselves.  On SIGTERM (a shutdown) it exits cleanly and for
 * good.
 */
void
snowflake_mark_writer_main(Datum main_arg)
{
	SnowflakeSharedState *state = snowflake_state;
	uint64		start_tick;
	sigjmp_buf	local_sigjmp_buf;
	MemoryContext writer_context;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	if (state->mark_invalid)
		proc_exit(0);

	snowflake_mark_lock_wait_hook = snowflake_writer_check_shutdown;
	snowflake_mark_standby_wait_hook = snowflake_writer_wait_for_standbys;
	on_shmem_exit(snowflake_mark_writer_detach, (Datum) 0);
	state->mark_writer_latch = MyLatch;
	start_tick = pg_atomic_read_u64(&state->last_tick);
	writer_context = AllocSetContextCreate(TopMemoryContext,
										   "snowflake mark writer",
										   ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(writer_context);

	if (sigsetjmp(local_sigjmp_buf, 1) != 0)
	{
		snowflake_writer_recover(writer_context);
		(void) WaitLatch(MyLatch, WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1000L,
						 PG_WAIT_EXTENSION);
	}
	PG_exception_stack = &local_sigjmp_buf;

	for (;;)
	{
		bool		active;
		bool		raised;

		MemoryContextReset(writer_context);
		snowflake_writer_check_shutdown();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			snowflake_warn_bad_config_files();
		}
		if (state->mark_invalid)
			proc_exit(0);

		raised = snowflake_writer_advance(start_tick, &active);
		snowflake_relog_mark();

		/*
		 * After raising the mark, look again at once: generation may be near
		 * the new mark already, and a wait for standbys during the write may
		 * have reset the latch that a backend set meanwhile.
		 */
		if (raised)
			continue;

		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 active ? SNOWFLAKE_MARK_STRIDE_MS / 4 :
						 SNOWFLAKE_RELOG_CHECK_MS,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

/*
 * Clean up after an error, as PostgreSQL's own background processes do, so
 * that the writer can go on.
 */
static void
snowflake_writer_recover(MemoryContext writer_context)
{
	HOLD_INTERRUPTS();
	EmitErrorReport();
	LWLockReleaseAll();
	ConditionVariableCancelSleep();
	pgstat_report_wait_end();
	AtEOXact_Files(false);
	MemoryContextSwitchTo(writer_context);
	FlushErrorState();
	MemoryContextReset(writer_context);
	RESUME_INTERRUPTS();
}

/*
 * Move the mark ahead of generation where it came within half a stride of
 * it; nothing to write until IDs are issued (last_tick moved from
 * start_tick).  Sets *active when IDs were issued within
 * SNOWFLAKE_WRITER_ACTIVE_MS, and returns true when it raised the mark.
 */
static bool
snowflake_writer_advance(uint64 start_tick, bool *active)
{
	uint64		last_tick = pg_atomic_read_u64(&snowflake_state->last_tick);
	int64		last_ms;
	int64		now_ms;
	int			us_into_ms;
	int64		jump_ms;

	*active = false;
	if (last_tick == start_tick || !snowflake_is_enabled())
		return false;
	last_ms = (int64) (last_tick >> snowflake_layout.sequence_bits);
	now_ms = snowflake_clock_ms(&us_into_ms);
	*active = last_ms + SNOWFLAKE_WRITER_ACTIVE_MS >= now_ms;

	/*
	 * While IDs are issued, keep the mark ahead of the clock plus the
	 * server's max_lead, up to a stride of it, so that a burst into that lead
	 * does not reach the mark before this writer wakes, and backends do not
	 * write one.  After a crash, calls with that lead wait at most a stride:
	 * they may issue that far ahead of the clock.
	 */
	if (*active)
		last_ms = Max(last_ms, now_ms +
					  Min(snowflake_max_lead_ms, SNOWFLAKE_MARK_STRIDE_MS));
	/* a clock that jumped is for the backends to report */
	if (snowflake_advance_mark(last_ms, SNOWFLAKE_MARK_STRIDE_MS / 2,
							   &jump_ms) != SNOWFLAKE_ADVANCE_RAISED)
		return false;
	pg_atomic_fetch_add_u64(&snowflake_state->writer_marks, 1);
	return true;
}

/* Backends write the mark themselves once the mark writer has gone. */
static void
snowflake_mark_writer_detach(int code, Datum arg)
{
	snowflake_state->mark_writer_latch = NULL;
}

/* The mark writer leaves as soon as the postmaster asks it to. */
static void
snowflake_writer_check_shutdown(void)
{
	if (ShutdownRequestPending)
		proc_exit(0);
}

/*
 * While it waits for the synchronous standbys to confirm a mark, the mark
 * writer still leaves at a shutdown and takes a reload.
 */
static void
snowflake_writer_wait_for_standbys(void)
{
	snowflake_writer_check_shutdown();
	if (ConfigReloadPending)
	{
		ConfigReloadPending = false;
		ProcessConfigFile(PGC_SIGHUP);
	}
}
