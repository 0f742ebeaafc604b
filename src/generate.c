/*-------------------------------------------------------------------------
 *
 * generate.c
 *		Generating: claiming ticks with one compare-and-swap, the waits for
 *		the clock, and the refusals, logged once an episode.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "tcop/utility.h"
#include "utils/wait_event.h"

#include "clock.h"
#include "compat.h"
#include "generate.h"
#include "layout.h"
#include "mark.h"
#include "registry.h"
#include "settings.h"
#include "state.h"
#include "uninstall.h"
#include "waits.h"

/*---- generation ----*/

pg_noreturn static void snowflake_report_clock_behind(int64 behind_ms);
pg_noreturn static void snowflake_report_resuming(int64 ahead_ms);
pg_noreturn static void snowflake_report_registry_floor(int64 ahead_ms);
pg_noreturn static void snowflake_report_clock_jump(int64 jump_ms);

/*
 * Refusals that every generating call gets while a condition lasts.  The
 * server log gets one message when such an episode begins and one when it
 * ends, not one per call (see snowflake_emit_log).
 */
#define SNOWFLAKE_CLOCK_BEHIND_MESSAGE \
	"could not generate a snowflake ID: the clock is behind"
#define SNOWFLAKE_RESUMING_MESSAGE \
	"could not generate a snowflake ID: resuming above the high-water mark"
#define SNOWFLAKE_REGISTRY_FLOOR_MESSAGE \
	"could not generate a snowflake ID: resuming above the previous holder of this worker id"
#define SNOWFLAKE_CLOCK_JUMP_MESSAGE \
	"could not generate a snowflake ID: the clock jumped forward"

emit_log_hook_type prev_emit_log_hook = NULL;

/*
 * Everything that must hold before this backend may generate an ID, in
 * function (named in the read-only refusal).
 */
void
snowflake_require_can_generate(const char *function)
{
	/* pg_upgrade's servers: a new cluster has no mark until it is copied */
	if (IsBinaryUpgrade)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot generate snowflake IDs in binary upgrade mode"),
				 errdetail("pg_upgrade runs the server in this mode to restore its schema; IDs are generated once the upgraded server runs normally.")));

	snowflake_require_shared_state("generate IDs");

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot generate snowflake IDs during recovery"),
				 errdetail("A standby carries its primary's datacenter and worker ids, so IDs generated here could collide with the primary's."),
				 errhint("Generate IDs on the primary.")));

	/*
	 * As nextval() does: a server fenced by making its transactions read-only
	 * must not hand out IDs either.
	 */
	PreventCommandIfReadOnly(function);

	if (!snowflake_is_enabled())
		snowflake_report_disabled();
	if (snowflake_state->mark_invalid)
		snowflake_report_invalid_mark();
}

/*
 * The worker id in IDs: claimed from the registry (-1 until claimed), or set
 * by hand.
 */
int
snowflake_node_worker_id(void)
{
	return snowflake_registry_enabled() ? snowflake_registry_worker_id() :
		snowflake_worker_id;
}

/*
 * Count a call refused because of the clock, and say whether it begins an
 * episode of refusals, which the caller then logs once with its figures.
 */
static bool
snowflake_count_refusal(void)
{
	SnowflakeSharedState *state = snowflake_state;
	uint64		errors_before;

	errors_before = pg_atomic_fetch_add_u64(&state->clock_errors, 1);
	if (pg_atomic_exchange_u32(&state->refusal_logged, 1) != 0)
		return false;
	pg_atomic_write_u64(&state->episode_first_error, errors_before);
	return true;
}

/* Refuse an ID because the clock is behind the newest ID. */
static void
snowflake_report_clock_behind(int64 behind_ms)
{
	if (snowflake_count_refusal())
		ereport(LOG,
				(errmsg("the clock is %lld ms behind the snowflake generator; refusing IDs until it catches up",
						(long long) behind_ms),
				 errdetail("snowflake.max_lead is %d ms and snowflake.max_clock_wait is %d ms.",
						   snowflake_max_lead_ms, snowflake_max_clock_wait)));
	ereport(ERROR,
			(errcode(ERRCODE_SYSTEM_ERROR),
			 errmsg(SNOWFLAKE_CLOCK_BEHIND_MESSAGE),
			 errdetail("The clock is %lld ms behind the newest ID, %lld ms more than snowflake.max_lead allows, and did not catch up within snowflake.max_clock_wait (%d ms).",
					   (long long) behind_ms,
					   (long long) (behind_ms - snowflake_max_lead_ms),
					   snowflake_max_clock_wait),
			 behind_ms <= INT_MAX ?
			 errhint("Check the system clock, or raise snowflake.max_lead to at least %lld ms.",
					 (long long) behind_ms) :
			 errhint("No snowflake.max_lead reaches that far; see \"A clock far in the future\" in the README.")));
}

/*
 * Refuse an ID because generation resumed at the durable mark, after a
 * restart, and the clock has not reached it yet.  That is not a fault of
 * the clock: the mark lies up to a stride ahead of the last real ID.
 */
static void
snowflake_report_resuming(int64 ahead_ms)
{
	if (snowflake_count_refusal())
		ereport(LOG,
				(errmsg("snowflake IDs resume at the high-water mark, %lld ms ahead of the clock; refusing IDs until the clock reaches it",
						(long long) ahead_ms)));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg(SNOWFLAKE_RESUMING_MESSAGE),
			 errdetail("After a restart, IDs resume at the durable high-water mark, which lies %lld ms ahead of the clock; snowflake.max_clock_wait (%d ms) did not cover the wait.",
					   (long long) ahead_ms, snowflake_max_clock_wait),
			 ahead_ms <= INT_MAX ?
			 errhint("Wait %lld ms, or raise snowflake.max_lead to at least %lld ms to issue IDs ahead of the clock at once.",
					 (long long) ahead_ms, (long long) ahead_ms) :
			 errhint("No snowflake.max_lead reaches that far; see \"A clock far in the future\" in the README.")));
}

/*
 * Refuse an ID because this server took its registry claim over from another
 * start or server, above the time that one promised, and the clock has not
 * reached it yet.
 */
static void
snowflake_report_registry_floor(int64 ahead_ms)
{
	if (snowflake_count_refusal())
		ereport(LOG,
				(errmsg("snowflake IDs resume above the previous holder of this worker id, %lld ms ahead of the clock; refusing IDs until the clock reaches it",
						(long long) ahead_ms)));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg(SNOWFLAKE_REGISTRY_FLOOR_MESSAGE),
			 errdetail("This server took its worker id over from another start or server, whose IDs may reach %lld ms ahead of this clock; snowflake.max_clock_wait (%d ms) did not cover the wait.",
					   (long long) ahead_ms, snowflake_max_clock_wait),
			 errhint("Wait, or check the clocks of the servers that held this worker id.")));
}

/*
 * Refuse an ID because the clock jumped forward further than
 * snowflake.max_clock_jump allows.
 */
static void
snowflake_report_clock_jump(int64 jump_ms)
{
	if (snowflake_count_refusal())
		ereport(LOG,
				(errmsg("the clock jumped %lld ms forward; refusing snowflake IDs until it is corrected",
						(long long) jump_ms),
				 errdetail("snowflake.max_clock_jump is %d s.",
						   snowflake_max_clock_jump_s)));
	ereport(ERROR,
			(errcode(ERRCODE_SYSTEM_ERROR),
			 errmsg(SNOWFLAKE_CLOCK_JUMP_MESSAGE),
			 errdetail("Since the last high-water mark the clock moved %lld ms further than the monotonic clock, more than snowflake.max_clock_jump (%d s) allows.",
					   (long long) jump_ms, snowflake_max_clock_jump_s),
			 errhint("If the clock is wrong, correct it. If it is right, raise snowflake.max_clock_jump above the jump and reload the configuration.")));
}

/*
 * Keep the per-call refusals for the clock out of the server log; the log
 * has each episode's own messages.  The client still gets every error.
 */
void
snowflake_emit_log(ErrorData *edata)
{
	if (edata->elevel == ERROR && edata->message_id != NULL &&
		(strcmp(edata->message_id, SNOWFLAKE_CLOCK_BEHIND_MESSAGE) == 0 ||
		 strcmp(edata->message_id, SNOWFLAKE_RESUMING_MESSAGE) == 0 ||
		 strcmp(edata->message_id, SNOWFLAKE_REGISTRY_FLOOR_MESSAGE) == 0 ||
		 strcmp(edata->message_id, SNOWFLAKE_CLOCK_JUMP_MESSAGE) == 0))
		edata->output_to_server = false;
	if (prev_emit_log_hook)
		prev_emit_log_hook(edata);
}

/* Log the end of an episode of refusals, once, when an ID is issued again. */
static void
snowflake_end_refusal_episode(void)
{
	SnowflakeSharedState *state = snowflake_state;
	uint64		refused;

	if (pg_atomic_read_u32(&state->refusal_logged) == 0 ||
		pg_atomic_exchange_u32(&state->refusal_logged, 0) == 0)
		return;
	refused = pg_atomic_read_u64(&state->clock_errors) -
		pg_atomic_read_u64(&state->episode_first_error);
	ereport(LOG,
			(errmsg("snowflake IDs are issued again"),
			 errdetail_plural("%llu call was refused before.",
							  "%llu calls were refused before.",
							  refused,
							  (unsigned long long) refused)));
}

/*
 * The next ID lies beyond max_lead of the clock, and last is what stands in
 * the way.  Wait a little for the clock, or error out once
 * snowflake.max_clock_wait is used up: for the next millisecond when this
 * one's sequence is used up, for a clock that is behind the newest ID, or,
 * after a restart, for the clock to reach the durable mark.
 */
static void
snowflake_wait_for_clock(uint64 last, int64 now_ms, int us_into_ms,
						 instr_time *wait_start, bool *counted)
{
	SnowflakeSharedState *state = snowflake_state;
	int64		last_ms = (int64) (last >> snowflake_layout.sequence_bits);
	instr_time	waited;
	int64		waited_ms;
	int64		sleep_ms;
	bool		resuming;
	bool		above_registry_floor;

	if (last_ms <= now_ms + snowflake_max_lead_ms)
	{
		/* this millisecond's sequence is used up: wait for the next */
		if (!*counted)
			pg_atomic_fetch_add_u64(&state->sequence_waits, 1);
		*counted = true;
		pg_usleep(1000 - us_into_ms);
		return;
	}

	/* after a restart the clock has to reach the mark: no step back */
	resuming = last == pg_atomic_read_u64(&state->floor_tick) &&
		now_ms >= (int64) pg_atomic_read_u64(&state->floor_clock_ms);
	/* ... nor after a registry claim taken over above its previous holder */
	above_registry_floor =
		last == pg_atomic_read_u64(&state->registry_floor_tick);
	if (!resuming && !above_registry_floor)
		snowflake_raise_counter(&state->max_step_back_ms,
								(uint64) (last_ms - now_ms));

	if (INSTR_TIME_IS_ZERO(*wait_start))
		INSTR_TIME_SET_CURRENT(*wait_start);
	INSTR_TIME_SET_CURRENT(waited);
	INSTR_TIME_SUBTRACT(waited, *wait_start);
	waited_ms = INSTR_TIME_GET_MILLISEC(waited);
	if (waited_ms >= snowflake_max_clock_wait)
	{
		if (above_registry_floor)
			snowflake_report_registry_floor(last_ms + 1 - now_ms);
		if (resuming)
			snowflake_report_resuming(last_ms + 1 - now_ms);
		snowflake_report_clock_behind(last_ms - now_ms);
	}
	if (!*counted)
		pg_atomic_fetch_add_u64(&state->clock_behind_waits, 1);
	*counted = true;
	sleep_ms = Min(last_ms - now_ms - snowflake_max_lead_ms,
				   snowflake_max_clock_wait - waited_ms);
	sleep_ms = Max(Min(sleep_ms, 100), 1);
	(void) WaitLatch(MyLatch,
					 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 (long) sleep_ms, snowflake_wait_event(SNOWFLAKE_WAIT_CLOCK));
	ResetLatch(MyLatch);
}

/*
 * Move the mark above needed_ms from this backend, waiting for it: count
 * the mark it published, and refuse the ID if the clock jumped or
 * snowflake.enabled went off meanwhile.
 */
static void
snowflake_advance_mark_here(int64 needed_ms)
{
	int64		jump_ms = 0;

	switch (snowflake_advance_mark(needed_ms, 0, &jump_ms))
	{
		case SNOWFLAKE_ADVANCE_RAISED:
			pg_atomic_fetch_add_u64(&snowflake_state->backend_marks, 1);
			break;
		case SNOWFLAKE_ADVANCE_CLOCK_JUMPED:
			snowflake_report_clock_jump(jump_ms);
			break;
		case SNOWFLAKE_ADVANCE_DISABLED:
			snowflake_report_disabled();
			break;
		case SNOWFLAKE_ADVANCE_NONE:
			break;
	}
}

/*
 * Refresh the mark early, so that nobody has to wait for it: wake the mark
 * writer, or, while it is not running, try to write it here.
 */
static void
snowflake_refresh_mark_early(int64 next_ms)
{
	SnowflakeSharedState *state = snowflake_state;
	Latch	   *writer_latch;

	if ((uint64) (next_ms + SNOWFLAKE_MARK_STRIDE_MS / 2) <
		pg_atomic_read_u64(&state->durable_mark))
		return;
	writer_latch = state->mark_writer_latch;
	if (writer_latch != NULL)
		SetLatch(writer_latch);
	else if (snowflake_try_advance_mark(next_ms, SNOWFLAKE_MARK_STRIDE_MS / 2) ==
			 SNOWFLAKE_ADVANCE_RAISED)
		pg_atomic_fetch_add_u64(&state->backend_marks, 1);
}

/*
 * The clock in milliseconds since the epoch, which IDs cannot carry before
 * it, and the microseconds already gone in that millisecond.
 */
static int64
snowflake_clock_for_ids(int *us_into_ms)
{
	int64		now_ms = snowflake_clock_ms(us_into_ms);

	if (now_ms < 0)
		ereport(ERROR,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("could not generate a snowflake ID: the clock is before the epoch"),
				 errdetail("The clock reads %lld ms before snowflake.epoch.",
						   (long long) -now_ms),
				 errhint("Check the system clock.")));
	return now_ms;
}

/* Refuse ticks whose millisecond the layout's time bits cannot hold. */
static void
snowflake_require_time_left(const SnowflakeLayout *layout, int64 tick_ms)
{
	if (tick_ms > layout->max_ms)
		ereport(ERROR,
				(errcode(ERRCODE_SEQUENCE_GENERATOR_LIMIT_EXCEEDED),
				 errmsg("snowflake IDs are exhausted: the %d bits of time since the epoch are used up",
						layout->time_bits),
				 errdetail("The largest time a snowflake ID can carry is %lld ms after snowflake.epoch.",
						   (long long) layout->max_ms),
				 errhint("Choose a later snowflake.epoch for a new ID space.")));
}

/*
 * Count the ticks first to last, just issued, in this backend's slot of
 * ids_issued (a plain store: no other process writes it), and those ahead
 * of the clock in leads_taken.
 */
static void
snowflake_count_ids(const SnowflakeLayout *layout, uint64 first,
					uint64 last, int64 now_ms)
{
	SnowflakeSharedState *state = snowflake_state;
	uint64		first_ahead = (uint64) (now_ms + 1) << layout->sequence_bits;

	if (MyProc != NULL && snowflake_proc_number(MyProc) < MaxBackends)
	{
		pg_atomic_uint64 *slot =
			&state->ids_issued[snowflake_proc_number(MyProc)].count;

		pg_atomic_write_u64(slot, pg_atomic_read_u64(slot) + (last - first + 1));
	}
	if (last >= first_ahead)
		pg_atomic_fetch_add_u64(&state->leads_taken,
								last - Max(first, first_ahead) + 1);
}

/*
 * Claim n consecutive ticks with one compare-and-swap and return the first:
 * the heart of the generator (see the file header).
 *
 * Returns with the block's last tick installed in shared memory, so that
 * every tick of the block is strictly above every tick issued before, and
 * the whole block lies within max_lead of the clock and below the durable
 * mark.  A block that does not fit yet waits as a single tick does: for the
 * next millisecond, or for a clock that is behind, within max_clock_wait.
 * The caller makes sure that n ticks can fit within max_lead at all.
 *
 * *worker_id is set to the worker id the ticks are issued under: the
 * registry's claim that the gate let through, or snowflake.worker_id.
 */
int64
snowflake_claim_ticks(const SnowflakeLayout *layout, int64 n, int *worker_id)
{
	SnowflakeSharedState *state = snowflake_state;
	uint64		last;
	uint64		first;
	uint64		end;
	int64		now_ms;
	int64		end_ms;
	int			us_into_ms;
	bool		counted_wait = false;
	instr_time	wait_start;
	uint64		gate;

	Assert(n >= 1);
	INSTR_TIME_SET_ZERO(wait_start);
	last = pg_atomic_read_u64(&state->last_tick);
	for (;;)
	{
		/* again after every wait: the claim may have been lost meanwhile */
		*worker_id = snowflake_worker_id;
		gate = snowflake_registry_gate(snowflake_max_clock_wait, worker_id);
		now_ms = snowflake_clock_for_ids(&us_into_ms);
		first = Max(last + 1, (uint64) now_ms << layout->sequence_bits);
		end = first + (uint64) (n - 1);
		end_ms = (int64) (end >> layout->sequence_bits);
		snowflake_require_time_left(layout, end_ms);

		if (end_ms > now_ms + snowflake_max_lead_ms)
		{
			snowflake_wait_for_clock(last, now_ms, us_into_ms, &wait_start,
									 &counted_wait);
			CHECK_FOR_INTERRUPTS();
			last = pg_atomic_read_u64(&state->last_tick);
			continue;
		}

		if ((uint64) end_ms >= pg_atomic_read_u64(&state->durable_mark))
		{
			Latch	   *writer_latch = state->mark_writer_latch;

			/*
			 * Generation reached the mark, most likely after a pause: write
			 * it here, and wake the mark writer, so that from now on it keeps
			 * the mark ahead of the clock.
			 */
			snowflake_advance_mark_here(end_ms);
			if (writer_latch != NULL)
				SetLatch(writer_latch);
			last = pg_atomic_read_u64(&state->last_tick);
			continue;
		}

		if (pg_atomic_compare_exchange_u64(&state->last_tick, &last, end))
			break;
	}

	/*
	 * A registry claim lost between the gate and the compare-and-swap, or a
	 * block past the time promised to the registry, fails the call: the ticks
	 * just claimed are burnt, never issued.
	 */
	snowflake_registry_recheck(gate, end_ms);

	/* the header's invariants: the tick only grows, the mark only grows */
	Assert(first > last);
	Assert(end_ms <= now_ms + snowflake_max_lead_ms);
	Assert((uint64) end_ms < pg_atomic_read_u64(&state->durable_mark));

	snowflake_count_ids(layout, first, end, now_ms);
	snowflake_end_refusal_episode();
	snowflake_refresh_mark_early(end_ms);
	return (int64) first;
}
