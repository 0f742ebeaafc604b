/*-------------------------------------------------------------------------
 *
 * state.c
 *		The shared state: its size, and raising its floors and maxima.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/shmem.h"

#include "layout.h"
#include "state.h"

/*---- shared state ----*/

SnowflakeSharedState *snowflake_state = NULL;

/* The shared state with one slot of counts for each backend. */
Size
snowflake_shmem_size(void)
{
	return add_size(offsetof(SnowflakeSharedState, backend_counts),
					mul_size(MaxBackends, sizeof(SnowflakeBackendCounts)));
}

/*
 * Raise a shared maximum to value, never lowering it.  Did this call raise
 * it?  (A failed compare-and-swap reloads old_value; a successful one leaves
 * it below value.)
 */
bool
snowflake_raise_counter(pg_atomic_uint64 *counter, uint64 value)
{
	uint64		old_value = pg_atomic_read_u64(counter);

	while (old_value < value &&
		   !pg_atomic_compare_exchange_u64(counter, &old_value, value))
		;
	return old_value < value;
}

/*
 * Make sure generation resumes at or past mark_ms, which is in the file:
 * raise the durable mark, the written mark and the last tick to it, never
 * lowering any.  Runs at startup and in redo, never beside generation.
 */
void
snowflake_raise_floor(SnowflakeSharedState *state, int64 mark_ms)
{
	if (mark_ms <= 0)
		return;

	state->written_mark = Max(state->written_mark, mark_ms);
	(void) snowflake_raise_counter(&state->durable_mark, (uint64) mark_ms);
	snowflake_raise_tick_floor(state, mark_ms);
}

/*
 * Make sure that no ID below mark_ms is issued, without claiming that the
 * mark is durable: the next ID then needs a new mark written first.
 */
void
snowflake_raise_tick_floor(SnowflakeSharedState *state, int64 mark_ms)
{
	uint64		floor_tick;

	floor_tick = ((uint64) mark_ms << snowflake_layout.sequence_bits) - 1;
	(void) snowflake_raise_counter(&state->last_tick, floor_tick);
	pg_atomic_write_u64(&state->floor_tick,
						pg_atomic_read_u64(&state->last_tick));
}

/*
 * Without the shared state (the library was not preloaded), refuse what
 * needs it; purpose ends the message ("generate IDs").
 */
void
snowflake_require_shared_state(const char *purpose)
{
	if (snowflake_state == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake must be loaded via \"shared_preload_libraries\" to %s",
						purpose),
				 errhint("Add snowflake to \"shared_preload_libraries\" in postgresql.conf and restart the server.")));
}
