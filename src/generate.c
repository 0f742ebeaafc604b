/*-------------------------------------------------------------------------
 *
 * generate.c
 *		Generating: claiming ticks with one atomic addition, or one
 *		compare-and-swap up to the clock, and the waits for the clock (the
 *		refusals are in refusals.c).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
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
#include "refusals.h"
#include "registry.h"
#include "settings.h"
#include "state.h"
#include "uninstall.h"
#include "waits.h"

/*---- generation ----*/

/* Has this backend seen that recovery is over? */
static bool recovery_seen_over = false;

/*
 * Everything that must hold before this backend may generate an ID, in
 * function (named in the read-only refusal).  Every generating call runs
 * it, so the common case costs a few loads.
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

	if (unlikely(snowflake_state == NULL))
		snowflake_require_shared_state("generate IDs");

	/* once out of recovery, a backend never goes back into it */
	if (unlikely(!recovery_seen_over) && RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot generate snowflake IDs during recovery"),
				 errdetail("A standby carries its primary's datacenter and worker ids, so IDs generated here could collide with the primary's."),
				 errhint("Generate IDs on the primary.")));
	recovery_seen_over = true;

	/*
	 * As nextval() does: a server fenced by making its transactions read-only
	 * must not hand out IDs either.
	 */
	if (XactReadOnly)
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
 * May a claim add to the word, and burn the tick it gets when another claim
 * got in first and it no longer fits?  Each backend burns at most one before
 * it reads the word again, so the word passes the lead by at most
 * MaxBackends ticks: only where a millisecond holds more than that, as
 * snowflake_wait_for_clock allows for.  Elsewhere every claim takes a
 * compare-and-swap.
 */
static inline bool
snowflake_claims_may_add(const SnowflakeLayout *layout)
{
	return (uint64) MaxBackends < ((uint64) 1 << layout->sequence_bits);
}

/*
 * Is tick, the newest, no further above floor than the ticks that racing
 * additions may have burnt?  Then, but for as many IDs issued right at the
 * floor, nothing was issued since floor was set.
 */
static bool
snowflake_at_floor(uint64 tick, uint64 floor)
{
	uint64		burnt = snowflake_claims_may_add(&snowflake_layout) ?
		(uint64) MaxBackends : 0;

	return tick >= floor && tick - floor <= burnt;
}

/*
 * Record how far the clock, now_ms, stepped back: below the clock as an
 * earlier claim read it, since the start.  Those readings were never ahead
 * of the clock, so the step is never overstated.  A call that waits because
 * max_lead was lowered below the generator's lead finds no step.
 */
static void
snowflake_record_step_back(int64 now_ms)
{
	SnowflakeSharedState *state = snowflake_state;
	uint64		read_ms = 0;

	for (int slot = 0; slot < MaxBackends; slot++)
		read_ms = Max(read_ms,
					  pg_atomic_read_u64(&state->backend_counts[slot].n.clock_ms));
	if ((int64) read_ms > now_ms)
		snowflake_raise_counter(&state->max_step_back_ms,
								read_ms - (uint64) now_ms);
}

/*
 * A call's waits for the clock: when it first waited, how long its waits may
 * take in all, and whether a counter of waits counted it yet.
 */
typedef struct SnowflakeCallWaits
{
	instr_time	start;			/* zero until the call first waits */
	int64		allowed_ms;		/* set at the first wait */
	bool		counted;
} SnowflakeCallWaits;

/*
 * How long the call has waited, in milliseconds; at its first wait, start
 * the count, and allow the call snowflake.max_clock_wait in all, or, if
 * longer, need_ms, what its claim needs at that first wait.
 */
static int64
snowflake_waited_ms(SnowflakeCallWaits *waits, int64 need_ms)
{
	instr_time	waited;

	if (INSTR_TIME_IS_ZERO(waits->start))
	{
		INSTR_TIME_SET_CURRENT(waits->start);
		waits->allowed_ms = Max((int64) snowflake_max_clock_wait, need_ms);
		return 0;
	}
	INSTR_TIME_SET_CURRENT(waited);
	INSTR_TIME_SUBTRACT(waited, waits->start);
	return (int64) INSTR_TIME_GET_MILLISEC(waited);
}

/*
 * The claim from first to end lies beyond max_lead of the clock.  Below
 * first stands the newest tick, last, or the clock at the start of the call.
 * Wait a little for the clock, or error out once the call's waits have used
 * up snowflake.max_clock_wait, or what its claim needed at its first wait if
 * that is longer (a single ID at the edge of the lead always waits for the
 * next millisecond, as with Twitter's generator): for the clock to reach the
 * claim's last millisecond less max_lead when what stands below the claim is
 * within the lead (this millisecond's sequence is used up, or a block
 * reaches into a later one; calls that got in first may take the room the
 * clock makes, again and again), for a clock that is behind the newest ID
 * (or went back during the call), or, after a restart, for the clock to
 * reach the durable mark.
 */
static void
snowflake_wait_for_clock(uint64 last, uint64 first, uint64 end,
						 int64 now_ms, int us_into_ms,
						 SnowflakeCallWaits *waits)
{
	SnowflakeSharedState *state = snowflake_state;
	int64		below_ms = (int64) ((first - 1) >> snowflake_layout.sequence_bits);
	int64		end_ms = (int64) (end >> snowflake_layout.sequence_bits);
	int64		waited_ms;
	int64		sleep_ms;
	bool		resuming;
	bool		above_registry_floor;

	/*
	 * Within the lead, or past it by the ticks that racing additions burnt:
	 * one each, fewer than a millisecond holds (see
	 * snowflake_claims_may_add).
	 */
	if (below_ms <= now_ms + snowflake_max_lead_ms + 1)
	{
		int64		ahead_ms = end_ms - snowflake_max_lead_ms - now_ms;

		waited_ms = snowflake_waited_ms(waits, ahead_ms);
		if (waited_ms >= waits->allowed_ms)
			snowflake_report_no_room((int64) (end - first + 1), waited_ms);
		if (!waits->counted)
			pg_atomic_fetch_add_u64(&state->sequence_waits, 1);
		waits->counted = true;
		/* to the microsecond for the next millisecond, else near it */
		if (ahead_ms <= 1)
			pg_usleep(1000 - us_into_ms);
		else
		{
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 (long) Max(Min(ahead_ms - 1,
											waits->allowed_ms - waited_ms), 1),
							 snowflake_wait_event(SNOWFLAKE_WAIT_CLOCK));
			ResetLatch(MyLatch);
		}
		return;
	}

	/* after a restart the clock has to reach the mark: no step back */
	resuming = snowflake_at_floor(last, pg_atomic_read_u64(&state->floor_tick)) &&
		now_ms >= (int64) pg_atomic_read_u64(&state->floor_clock_ms);
	/* ... nor after a registry claim taken over above its previous holder */
	above_registry_floor =
		snowflake_at_floor(last,
						   pg_atomic_read_u64(&state->registry_floor_tick));
	snowflake_record_step_back(now_ms);

	waited_ms = snowflake_waited_ms(waits, 0);
	if (waited_ms >= waits->allowed_ms)
	{
		if (above_registry_floor)
			snowflake_report_registry_floor(below_ms + 1 - now_ms);
		if (resuming)
			snowflake_report_resuming(below_ms + 1 - now_ms, end_ms - now_ms);
		snowflake_report_clock_behind(below_ms - now_ms, end_ms - now_ms);
	}
	if (!waits->counted)
		pg_atomic_fetch_add_u64(&state->clock_behind_waits, 1);
	waits->counted = true;
	sleep_ms = Min(below_ms - now_ms - snowflake_max_lead_ms,
				   waits->allowed_ms - waited_ms);
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
 * writer, or, while it is not running, try to write it here.  A backend
 * wakes the writer once for each mark: the latch stays set until the writer
 * wakes, and the writer then writes the next mark, so setting it again on
 * every call would only cost a memory barrier each time.
 */
static void
snowflake_refresh_mark_early(int64 next_ms)
{
	static uint64 woke_writer_for_mark = 0;
	SnowflakeSharedState *state = snowflake_state;
	uint64		mark = pg_atomic_read_u64(&state->durable_mark);
	Latch	   *writer_latch;

	if ((uint64) (next_ms + SNOWFLAKE_MARK_STRIDE_MS / 2) < mark)
		return;
	writer_latch = state->mark_writer_latch;
	if (writer_latch != NULL)
	{
		if (mark != woke_writer_for_mark)
		{
			woke_writer_for_mark = mark;
			SetLatch(writer_latch);
		}
	}
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
 * This backend's slot of counts, or NULL in a process that has none; found
 * once, as every ID counts in it and a process keeps its PGPROC.
 */
static SnowflakeBackendCounts *snowflake_my_slot = NULL;

static inline SnowflakeBackendCounts *
snowflake_my_counts(void)
{
	if (likely(snowflake_my_slot != NULL))
		return snowflake_my_slot;
	if (MyProc == NULL || snowflake_proc_number(MyProc) >= MaxBackends)
		return NULL;
	snowflake_my_slot =
		&snowflake_state->backend_counts[snowflake_proc_number(MyProc)];
	return snowflake_my_slot;
}

/*
 * Count the ticks first to last, just issued, and those of them ahead of the
 * clock, and keep now_ms, the clock the claim read, in this backend's slot
 * (plain stores: no other process writes it).
 */
static void
snowflake_count_ids(const SnowflakeLayout *layout, uint64 first,
					uint64 last, int64 now_ms)
{
	SnowflakeBackendCounts *slot = snowflake_my_counts();
	uint64		first_ahead;

	if (slot == NULL)
		return;
	pg_atomic_write_u64(&slot->n.ids,
						pg_atomic_read_u64(&slot->n.ids) + (last - first + 1));
	pg_atomic_write_u64(&slot->n.clock_ms, (uint64) now_ms);
	/* no tick lies ahead of a clock in the last millisecond of the layout */
	if (now_ms >= layout->max_ms)
		return;
	first_ahead = (uint64) (now_ms + 1) << layout->sequence_bits;
	if (last >= first_ahead)
		pg_atomic_write_u64(&slot->n.leads,
							pg_atomic_read_u64(&slot->n.leads) +
							(last - Max(first, first_ahead) + 1));
}

/*
 * Count n ticks that a claim took and did not issue, in this backend's slot:
 * snowflake_status shows them as ticks_burnt.
 */
static void
snowflake_count_burnt(uint64 n)
{
	SnowflakeBackendCounts *slot = snowflake_my_counts();

	if (slot != NULL)
		pg_atomic_write_u64(&slot->n.burnt,
							pg_atomic_read_u64(&slot->n.burnt) + n);
}

/*
 * Count n IDs claimed on the coarse clock that the exact clock did not
 * check, in this backend's slot: snowflake_status shows them as
 * coarse_unchecked_ids.
 */
static inline void
snowflake_count_unchecked(uint64 n)
{
	SnowflakeBackendCounts *slot = snowflake_my_counts();

	if (slot != NULL)
		pg_atomic_write_u64(&slot->n.unchecked,
							pg_atomic_read_u64(&slot->n.unchecked) + n);
}

/*
 * Did this backend's last claim find the generator far enough ahead of the
 * clock for the coarse clock to do, and far enough inside max_lead?  Then
 * the next claim tries it first.  The coarse clock lags the clock by up to
 * its margin (snowflake_coarse_margin), so near the edge of the lead an
 * addition checked against it finds the lead used up where the clock does
 * not, and burns its tick.  So only a claim at least the margin inside the
 * lead turns this on (see snowflake_claim_done), and a burnt tick turns it
 * off: a generator kept at the edge by a long load claims on the exact clock
 * there, burning nothing, and the coarse clock takes over again only once
 * the generator has fallen back that far inside the lead.
 */
static bool snowflake_claim_in_lead = false;

/*
 * How far the coarse clock is trusted to lag the clock, in milliseconds: the
 * kernel's timer ticks allow snowflake_coarse_lag_ms, and every backend
 * widens the margin when the exact clock finds the coarse clock lagging
 * more (see snowflake_coarse_check_exact).  Where there is no coarse clock
 * it is never read.
 */
static inline int64
snowflake_coarse_margin(void)
{
	return (int64) pg_atomic_read_u64(&snowflake_state->coarse_margin_ms);
}

/*
 * Is a claim of first_ms to end_ms, made on the exact clock now_ms, far
 * enough from both ends of the lead for the next claim to try the coarse
 * clock (see snowflake_claim_in_lead)?
 */
static inline bool
snowflake_clear_of_edges(int64 first_ms, int64 end_ms, int64 now_ms)
{
	int64		margin_ms;

	if (snowflake_coarse_lag_ms < 0)
		return false;
	margin_ms = snowflake_coarse_margin();
	return first_ms >= now_ms + margin_ms &&
		end_ms <= now_ms + snowflake_max_lead_ms - margin_ms;
}

/*
 * The millisecond of this backend's last claim on the coarse clock that the
 * exact clock checked (see snowflake_coarse_claim_holds).
 */
static int64 snowflake_checked_ms = -1;

/*
 * The exact clock's check of the first claim this backend makes on the
 * coarse clock in a millisecond (see snowflake_coarse_claim_holds): the
 * claim of first to end, which the coarse clock let through, holds if its
 * first tick is not before the exact clock, read now, after the claim.
 * Otherwise the claim could carry a time before the clock at the start of
 * its call: count the miss, and refuse the claim, whose ticks are burnt; the
 * call claims again on the exact clock.  The coarse clock read again beside
 * the exact one gives its lag: every backend's margin widens to twice that.
 * Not to the time since the claim's own coarse reading, which holds any
 * stall of this backend between the two (preemption, a paused virtual
 * machine), and would widen the margin for the server's life though the
 * coarse clock never lagged.  Out of line, as it runs at most once a
 * millisecond.
 */
static pg_noinline bool
snowflake_coarse_check_exact(int64 first_ms, uint64 n)
{
	SnowflakeSharedState *state = snowflake_state;
	int64		exact_ms;
	int64		coarse_ms;
	int			us_into_ms;

	snowflake_checked_ms = first_ms;
	exact_ms = snowflake_clock_ms(&us_into_ms);
	if (first_ms >= exact_ms)
		return true;
	pg_atomic_fetch_add_u64(&state->coarse_misses, 1);
	if (snowflake_coarse_clock_ms(&coarse_ms) && coarse_ms < exact_ms)
		snowflake_raise_counter(&state->coarse_margin_ms,
								(uint64) (2 * (exact_ms - coarse_ms)));
	snowflake_count_burnt(n);
	snowflake_claim_in_lead = false;
	return false;
}

/*
 * May a claim of the ticks first to end, which the coarse clock, read
 * before the claim, let through, be issued?  Its first tick lies the margin
 * ahead of the coarse clock; that is ahead of the clock at the start of the
 * call only while the coarse clock lags by less than the margin, which the
 * kernel's timer ticks do not bound.  So the exact clock checks the first
 * claim this backend makes in each millisecond (see
 * snowflake_coarse_check_exact): at most one read a millisecond of IDs.
 * The claims between two checks are not checked (an exact read costs four
 * and a half coarse ones, on every ID of a burst): their IDs are counted,
 * as those whose time rests on the coarse clock's lag alone.
 */
static inline bool
snowflake_coarse_claim_holds(const SnowflakeLayout *layout, uint64 first,
							 uint64 end)
{
	int64		first_ms = (int64) (first >> layout->sequence_bits);

	if (likely(first_ms == snowflake_checked_ms))
	{
		snowflake_count_unchecked(end - first + 1);
		return true;
	}
	return snowflake_coarse_check_exact(first_ms, end - first + 1);
}

/*
 * May a claim that ends in end_ms be issued: within max_lead of now_ms,
 * below the durable mark as read before the claim, and within the time
 * bits?  For a claim that added to the word, which could have been pushed
 * past any of them by claims that got in first.
 */
static inline bool
snowflake_claim_fits(const SnowflakeLayout *layout, int64 end_ms,
					 int64 now_ms, uint64 mark)
{
	return end_ms <= now_ms + snowflake_max_lead_ms &&
		(uint64) end_ms < mark && end_ms <= layout->max_ms;
}

/*
 * Claim the tick above the newest with one atomic addition, on the coarse
 * clock, and return it in *tick, when the generator is far enough ahead of
 * the coarse clock that the clock cannot have reached the tick (the margin:
 * see snowflake_coarse_claim_holds), and not so far that the tick lies
 * beyond max_lead of it (the coarse clock is never ahead of the clock) or at
 * the durable mark.  Otherwise the tick, if one was added, is burnt, never
 * issued, and this returns false, for a claim that reads the newest tick
 * and the clock first.  The coarse clock and the mark are read before the
 * addition: the clock then was no later than the clock at the addition, and
 * the mark only grows.
 */
static bool
snowflake_claim_one_ahead(const SnowflakeLayout *layout, uint64 *tick,
						  int64 *now_ms)
{
	uint64		mark = pg_atomic_read_u64(&snowflake_state->durable_mark);
	int64		margin_ms = snowflake_coarse_margin();
	int64		coarse_ms;
	int64		tick_ms;

	if (!snowflake_coarse_clock_ms(&coarse_ms) || coarse_ms < 0)
		return false;
	*tick = pg_atomic_fetch_add_u64(&snowflake_state->last_tick, 1) + 1;
	tick_ms = (int64) (*tick >> layout->sequence_bits);
	if (tick_ms >= coarse_ms + margin_ms &&
		snowflake_claim_fits(layout, tick_ms, coarse_ms, mark))
	{
		*now_ms = coarse_ms;
		return snowflake_coarse_claim_holds(layout, *tick, *tick);
	}
	snowflake_count_burnt(1);
	snowflake_claim_in_lead = false;
	return false;
}

/*
 * The clock for a claim of the n ticks above last, in *now_ms: the coarse
 * clock, when the claim is the margin ahead of it, so that the clock cannot
 * have passed the claim's first millisecond (the ticks above last are the
 * claim's, as the exact clock would make them; snowflake_coarse_claim_holds
 * checks it), and the claim lies within max_lead of it (the coarse clock is
 * never ahead, so neither is the claim of the exact one).  Otherwise the
 * exact clock, with *us_into_ms.  Returns whether the reading is exact.
 */
static bool
snowflake_claim_clock(const SnowflakeLayout *layout, uint64 last, int64 n,
					  int64 *now_ms, int *us_into_ms)
{
	int64		coarse_ms;

	if (snowflake_claim_in_lead &&
		snowflake_coarse_clock_ms(&coarse_ms) && coarse_ms >= 0 &&
		(int64) ((last + 1) >> layout->sequence_bits) >=
		coarse_ms + snowflake_coarse_margin() &&
		(int64) ((last + (uint64) n) >> layout->sequence_bits) <=
		coarse_ms + snowflake_max_lead_ms)
	{
		*now_ms = coarse_ms;
		return false;
	}
	snowflake_claim_in_lead = false;
	*now_ms = snowflake_clock_for_ids(us_into_ms);
	return true;
}

/*
 * Ask the registry's gate, where there is a registry, for the worker id to
 * issue under; returns what snowflake_registry_recheck compares against at
 * the end of the claim.
 */
static inline uint64
snowflake_claim_gate(int *worker_id)
{
	*worker_id = snowflake_worker_id;
	if (!snowflake_registry_enabled())
		return 0;
	return snowflake_registry_gate(snowflake_max_clock_wait, worker_id);
}

/*
 * Generation reached the durable mark, most likely after a pause: write the
 * mark here, and wake the mark writer, so that from now on it keeps the mark
 * ahead of the clock.  Off the hot path: the writer normally keeps the mark
 * far ahead.
 */
static pg_noinline void
snowflake_mark_reached(int64 end_ms)
{
	Latch	   *writer_latch = snowflake_state->mark_writer_latch;

	snowflake_advance_mark_here(end_ms);
	if (writer_latch != NULL)
		SetLatch(writer_latch);
}

/*
 * Claim one ID at least a millisecond inside the lead by an addition.
 * Claims that got in first push it up: the tick is this call's, in *tick, if
 * it still fits below the lead and the mark; otherwise it is burnt, never
 * issued, and the caller tries again.
 */
static inline bool
snowflake_claim_added(SnowflakeSharedState *state,
					  const SnowflakeLayout *layout, int64 now_ms,
					  uint64 mark, uint64 *tick)
{
	*tick = pg_atomic_fetch_add_u64(&state->last_tick, 1) + 1;
	if (snowflake_claim_fits(layout, (int64) (*tick >> layout->sequence_bits),
							 now_ms, mark))
		return true;
	snowflake_count_burnt(1);
	return false;
}

/*
 * The end of a successful claim of first to end: the registry's last word,
 * the header's invariants, and the bookkeeping.  A registry claim lost
 * between the gate and the claim, or a block past the time promised to the
 * registry, fails the call: the ticks just claimed are burnt, never issued.
 * An exact clock read decides whether the next claim may trust the coarse
 * clock.
 */
static inline void
snowflake_claim_done(const SnowflakeLayout *layout, uint64 gate,
					 uint64 first, uint64 end, int64 now_ms, bool exact)
{
	int64		end_ms = (int64) (end >> layout->sequence_bits);

	if (snowflake_registry_enabled())
		snowflake_registry_recheck(gate, end_ms);

	Assert(end_ms <= now_ms + snowflake_max_lead_ms);
	Assert((uint64) end_ms < pg_atomic_read_u64(&snowflake_state->durable_mark));

	if (exact)
		snowflake_claim_in_lead =
			snowflake_clear_of_edges((int64) (first >> layout->sequence_bits),
									 end_ms, now_ms);
	snowflake_count_ids(layout, first, end, now_ms);
	snowflake_end_refusal_episode();
	snowflake_refresh_mark_early(end_ms);
}

/*
 * Claim n consecutive ticks and return the first: the heart of the generator
 * (see the file header).
 *
 * Returns with every tick of the block strictly above every tick issued
 * before, the whole block within max_lead of the clock and below the durable
 * mark, and its first tick not before the clock at the start of the call: by
 * construction on the exact clock, and on the coarse clock while it lags by
 * less than its margin (see snowflake_coarse_claim_holds).
 * One ID well inside the lead takes one atomic addition where claims may
 * add (see snowflake_claims_may_add), which a claim that got in first only
 * moves up; a block, a generator that moves up to
 * the clock, and an ID at the edge of the lead take one compare-and-swap,
 * which a claim that got in first makes fail and retry.  A block that does
 * not fit yet waits as a single tick does: for the clock to
 * reach its last millisecond, or for a clock that is behind, within
 * max_clock_wait in all (see snowflake_wait_for_clock), however often
 * claims that got in first take the room the clock makes.  The caller
 * makes sure that n ticks can fit within max_lead at all.
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
	uint64		mark;
	int64		now_ms;
	int64		end_ms;
	int64		call_ms = -1;
	bool		call_ms_exact = false;
	int			us_into_ms = 0;
	bool		exact;
	SnowflakeCallWaits waits;
	uint64		gate;

	Assert(n >= 1);
	INSTR_TIME_SET_ZERO(waits.start);
	waits.allowed_ms = 0;
	waits.counted = false;
	for (;;)
	{
		/* again after every wait: the claim may have been lost meanwhile */
		gate = snowflake_claim_gate(worker_id);

		/* one ID well ahead of the clock: one addition, nothing read first */
		if (n == 1 && snowflake_claim_in_lead &&
			snowflake_claims_may_add(layout) &&
			snowflake_claim_one_ahead(layout, &first, &now_ms))
		{
			end = first;
			end_ms = (int64) (end >> layout->sequence_bits);
			exact = false;
			break;
		}

		last = pg_atomic_read_u64(&state->last_tick);
		exact = snowflake_claim_clock(layout, last, n, &now_ms, &us_into_ms);

		/*
		 * No ID can carry a clock past the time bits; and the check keeps
		 * the clock in ticks below from wrapping past 64 bits.
		 */
		snowflake_require_time_left(layout, now_ms);

		/*
		 * The clock at the start of the call, as the floor of its ticks; a
		 * coarse reading only stands in for it until the first exact one,
		 * since snowflake_coarse_claim_holds checks no claim on the exact
		 * clock.
		 */
		if (call_ms < 0 || (exact && !call_ms_exact))
		{
			call_ms = Max(call_ms, now_ms);
			call_ms_exact = exact;
		}

		/*
		 * Not before the clock at the start of the call: a block that waited
		 * for its last millisecond keeps the ticks below it.
		 */
		first = Max(last + 1, (uint64) call_ms << layout->sequence_bits);
		end = first + (uint64) (n - 1);
		end_ms = (int64) (end >> layout->sequence_bits);
		snowflake_require_time_left(layout, end_ms);

		if (end_ms > now_ms + snowflake_max_lead_ms)
		{
			/*
			 * The coarse clock let the claim through above, unless the clock
			 * went back since the call began: wait on the exact one.
			 */
			if (!exact)
			{
				snowflake_claim_in_lead = false;
				continue;
			}
			snowflake_wait_for_clock(last, first, end, now_ms, us_into_ms,
									 &waits);
			CHECK_FOR_INTERRUPTS();
			continue;
		}

		mark = pg_atomic_read_u64(&state->durable_mark);
		if ((uint64) end_ms >= mark)
		{
			snowflake_mark_reached(end_ms);
			continue;
		}

		/* one ID at least a millisecond inside the lead: add */
		if (n == 1 && first == last + 1 &&
			end_ms < now_ms + snowflake_max_lead_ms &&
			snowflake_claims_may_add(layout))
		{
			if (!snowflake_claim_added(state, layout, now_ms, mark,
									   &first))
				continue;
			end = first;
			end_ms = (int64) (end >> layout->sequence_bits);
		}
		else if (!pg_atomic_compare_exchange_u64(&state->last_tick, &last,
												 end))
		{
			/*
			 * Otherwise install the end: a block, a generator moved up to
			 * the clock, or an ID at the edge of the lead, which an addition
			 * could push past it.
			 */
			continue;
		}

		/* a claim on the coarse clock: the exact clock checks some */
		if (exact || snowflake_coarse_claim_holds(layout, first, end))
			break;
	}

	snowflake_claim_done(layout, gate, first, end, now_ms, exact);
	return (int64) first;
}
