/*-------------------------------------------------------------------------
 *
 * refusals.c
 *		The errors of a generating call refused for the clock, the mark, a
 *		registry floor or a lead used up, and the server log's account of
 *		them: one message when an episode of refusals begins and one when
 *		IDs are issued again, not one per call.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/elog.h"

#include "compat.h"
#include "refusals.h"
#include "settings.h"
#include "state.h"

/*
 * Refusals that every generating call gets while a condition lasts: the
 * client gets each, the server log only their episode (see
 * snowflake_emit_log).
 */
#define SNOWFLAKE_CLOCK_BEHIND_MESSAGE \
	"could not generate a snowflake ID: the clock is behind"
#define SNOWFLAKE_RESUMING_MESSAGE \
	"could not generate a snowflake ID: resuming above the high-water mark"
#define SNOWFLAKE_REGISTRY_FLOOR_MESSAGE \
	"could not generate a snowflake ID: resuming above the floor of this server's registry claim"
#define SNOWFLAKE_CLOCK_JUMP_MESSAGE \
	"could not generate a snowflake ID: the clock jumped forward"

emit_log_hook_type prev_emit_log_hook = NULL;

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

/*
 * Refuse an ID because the clock is behind the newest ID, by behind_ms; the
 * claim would lie lead_ms ahead of it, the max_lead it needs.
 */
void
snowflake_report_clock_behind(int64 behind_ms, int64 lead_ms)
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
			 errdetail("The clock is %lld ms behind the newest ID, and the next ID would lie %lld ms ahead of it, more than snowflake.max_lead (%d ms) allows; it did not catch up within snowflake.max_clock_wait (%d ms).",
					   (long long) behind_ms, (long long) lead_ms,
					   snowflake_max_lead_ms, snowflake_max_clock_wait),
			 lead_ms <= INT_MAX ?
			 errhint("Check the system clock, or raise snowflake.max_lead to at least %lld ms.",
					 (long long) lead_ms) :
			 errhint("No snowflake.max_lead reaches that far; see \"A clock far in the future\" in the README.")));
}

/*
 * Refuse an ID because generation resumed at the durable mark, after a
 * restart, and the clock has not reached it yet.  That is not a fault of
 * the clock: the mark lies up to a stride ahead of the last real ID.  The
 * claim would lie lead_ms ahead of the clock, the max_lead it needs.
 */
void
snowflake_report_resuming(int64 ahead_ms, int64 lead_ms)
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
			 lead_ms <= INT_MAX ?
			 errhint("Wait %lld ms, or raise snowflake.max_lead to at least %lld ms to issue IDs ahead of the clock at once.",
					 (long long) ahead_ms, (long long) lead_ms) :
			 errhint("No snowflake.max_lead reaches that far; see \"A clock far in the future\" in the README.")));
}

/*
 * Refuse an ID because the registry granted this server's claim above a
 * floor the clock has not reached yet: the time a previous holder of the
 * worker id promised, or the start of a new epoch of the registry (a new
 * install, a restart, a restore), which no holder caused.
 */
void
snowflake_report_registry_floor(int64 ahead_ms)
{
	if (snowflake_count_refusal())
		ereport(LOG,
				(errmsg("snowflake IDs resume above the floor of this server's registry claim, %lld ms ahead of the clock; refusing IDs until the clock reaches it",
						(long long) ahead_ms)));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg(SNOWFLAKE_REGISTRY_FLOOR_MESSAGE),
			 errdetail("The registry granted this server's worker id above a floor %lld ms ahead of this clock: the time up to which a previous holder of the worker id may have issued IDs, or the start of a new epoch of the registry (after it was installed, restarted or restored); snowflake.max_clock_wait (%d ms) did not cover the wait.",
					   (long long) ahead_ms, snowflake_max_clock_wait),
			 errhint("Wait for the clock to reach the floor (snowflake_registry.status on the registry shows it). A floor far ahead means that the clocks of this server and of the registry or a previous holder differ.")));
}

/*
 * Refuse an ID because the clock jumped forward further than
 * snowflake.max_clock_jump allows.
 */
void
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

/*
 * Log the end of an episode of refusals, once, when an ID is issued again
 * (see snowflake_end_refusal_episode).
 */
void
snowflake_log_refusals_end(void)
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
 * Refuse a claim of n ticks that waited waited_ms within the lead: each time
 * the clock made room for it, calls that got in first took that room.
 */
void
snowflake_report_no_room(int64 n, int64 waited_ms)
{
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("could not generate a snowflake ID: other calls took every ID within snowflake.max_lead"),
			 errdetail("The call waited %lld ms for room for %lld IDs within snowflake.max_lead (%d ms) of the clock, and calls that got in first took the IDs of each new millisecond; snowflake.max_clock_wait is %d ms.",
					   (long long) waited_ms, (long long) n,
					   snowflake_max_lead_ms, snowflake_max_clock_wait),
			 errhint("Ask for fewer IDs at once, or raise snowflake.max_lead so that the call may run further ahead of the clock.")));
}
