/*-------------------------------------------------------------------------
 *
 * refusals.h
 *		The errors of a generating call that the clock, the mark, a registry
 *		floor or a used-up lead refuses, logged once an episode.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_REFUSALS_H
#define SNOWFLAKE_REFUSALS_H

#include "utils/elog.h"

#include "state.h"

extern emit_log_hook_type prev_emit_log_hook;
extern void snowflake_emit_log(ErrorData *edata);

pg_noreturn extern void snowflake_report_clock_behind(int64 behind_ms,
													  int64 lead_ms);
pg_noreturn extern void snowflake_report_resuming(int64 ahead_ms,
												  int64 lead_ms);
pg_noreturn extern void snowflake_report_registry_floor(int64 ahead_ms);
pg_noreturn extern void snowflake_report_clock_jump(int64 jump_ms);
pg_noreturn extern void snowflake_report_no_room(int64 n, int64 waited_ms);
extern void snowflake_log_refusals_end(void);

/*
 * An ID was issued: if an episode of refusals was logged, log its end.
 * Inline: every generating call asks, and the answer is almost always no.
 */
static inline void
snowflake_end_refusal_episode(void)
{
	if (unlikely(pg_atomic_read_u32(&snowflake_state->refusal_logged) != 0))
		snowflake_log_refusals_end();
}

#endif							/* SNOWFLAKE_REFUSALS_H */
