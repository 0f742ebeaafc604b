/*-------------------------------------------------------------------------
 *
 * functions.c
 *		The SQL functions that generate IDs, and the generator's status:
 *		snowflake_next_id, snowflake_next_ids, snowflake_last_id and
 *		snowflake_status.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "common/int.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/timestamp.h"

#include "clock.h"
#include "functions.h"
#include "generate.h"
#include "layout.h"
#include "settings.h"
#include "state.h"

/*---- SQL-callable functions ----*/

/* the last ID this backend returned, for snowflake_last_id() */
static int64 snowflake_session_last_id;
bool		snowflake_session_has_last_id = false;

PG_FUNCTION_INFO_V1(snowflake_next_id);
PG_FUNCTION_INFO_V1(snowflake_last_id);
PG_FUNCTION_INFO_V1(snowflake_next_ids);
PG_FUNCTION_INFO_V1(snowflake_status);

/* The most IDs one call of snowflake_next_ids() hands out */
#define SNOWFLAKE_MAX_BLOCK		1000000

/* The ID of one of this server's ticks, issued under worker_id. */
static int64
snowflake_tick_id(const SnowflakeLayout *layout, uint64 tick, int worker_id)
{
	return snowflake_compose_id(layout,
								(int64) (tick >> layout->sequence_bits),
								snowflake_datacenter_id,
								worker_id,
								(int64) (tick & layout->max_sequence));
}

/* A block of snowflake_next_ids(): its first tick and its worker id. */
typedef struct SnowflakeBlock
{
	uint64		first_tick;
	int			worker_id;
} SnowflakeBlock;

/*
 * snowflake_next_id() returns bigint: a new ID, greater than every ID this
 * server issued before.
 */
Datum
snowflake_next_id(PG_FUNCTION_ARGS)
{
	uint64		tick;
	int			worker_id;
	int64		id;

	snowflake_require_can_generate("snowflake_next_id()");
	tick = (uint64) snowflake_claim_ticks(&snowflake_layout, 1, &worker_id);
	id = snowflake_tick_id(&snowflake_layout, tick, worker_id);

	snowflake_session_last_id = id;
	snowflake_session_has_last_id = true;
	PG_RETURN_INT64(id);
}

/*
 * snowflake_last_id() returns bigint: the ID this session's last
 * snowflake_next_id() returned, as lastval() does for sequences, and like it
 * forgotten by DISCARD ALL and DISCARD SEQUENCES.
 */
Datum
snowflake_last_id(PG_FUNCTION_ARGS)
{
	if (!snowflake_session_has_last_id)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake_last_id is not yet defined in this session"),
				 errhint("Call snowflake_next_id() first.")));
	PG_RETURN_INT64(snowflake_session_last_id);
}

/*
 * snowflake_next_ids(n integer) returns setof bigint: n new IDs in
 * increasing order, claimed with one atomic operation when the first row is
 * asked for.  The session's last ID is then the block's last.  A block of 0
 * is empty, for a caller whose count was computed: it claims nothing and
 * leaves the session's last ID as it was, but a server or transaction that
 * cannot generate refuses it as it refuses any other block, as an INSERT of
 * no rows is refused in a read-only transaction.
 */
Datum
snowflake_next_ids(PG_FUNCTION_ARGS)
{
	const SnowflakeLayout *layout = &snowflake_layout;
	FuncCallContext *funcctx;

	if (SRF_IS_FIRSTCALL())
	{
		int32		n = PG_GETARG_INT32(0);
		int64		most_in_lead;
		SnowflakeBlock *block;

		if (n < 0 || n > SNOWFLAKE_MAX_BLOCK)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("snowflake_next_ids() cannot issue %d IDs", n),
					 errdetail("A block holds from 0 to %d IDs.",
							   SNOWFLAKE_MAX_BLOCK)));
		snowflake_require_can_generate("snowflake_next_ids()");

		/* a block starting at the clock must end within max_lead of it */
		most_in_lead = ((int64) snowflake_max_lead_ms + 1) << layout->sequence_bits;
		if (n > most_in_lead)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("snowflake_next_ids() cannot issue %d IDs within snowflake.max_lead", n),
					 errdetail("snowflake.max_lead is %d ms, and a millisecond holds %lld IDs, so a block holds at most %lld IDs.",
							   snowflake_max_lead_ms,
							   (long long) (layout->max_sequence + 1),
							   (long long) most_in_lead),
					 errhint("Ask for fewer IDs at a time, or raise snowflake.max_lead.")));

		funcctx = SRF_FIRSTCALL_INIT();
		funcctx->max_calls = n;
		if (n > 0)
		{
			block = MemoryContextAlloc(funcctx->multi_call_memory_ctx,
									   sizeof(SnowflakeBlock));
			block->first_tick = (uint64) snowflake_claim_ticks(layout, n,
															   &block->worker_id);
			funcctx->user_fctx = block;

			snowflake_session_last_id =
				snowflake_tick_id(layout, block->first_tick + (uint64) (n - 1),
								  block->worker_id);
			snowflake_session_has_last_id = true;
		}
	}

	funcctx = SRF_PERCALL_SETUP();
	if (funcctx->call_cntr < funcctx->max_calls)
	{
		/* SRF_RETURN_NEXT counts the call before it evaluates its result */
		SnowflakeBlock *block = (SnowflakeBlock *) funcctx->user_fctx;
		uint64		tick = block->first_tick + funcctx->call_cntr;

		SRF_RETURN_NEXT(funcctx,
						Int64GetDatum(snowflake_tick_id(layout, tick,
														block->worker_id)));
	}
	SRF_RETURN_DONE(funcctx);
}

/*
 * The time ms milliseconds after epoch, for the status: infinity where that
 * lies past the largest timestamptz, as the end of a layout of 54 bits of
 * time or more does.
 */
static Datum
snowflake_status_time(TimestampTz epoch, int64 ms)
{
	TimestampTz ts;

	if (pg_mul_s64_overflow(ms, 1000, &ts) ||
		pg_add_s64_overflow(epoch, ts, &ts) || !IS_VALID_TIMESTAMP(ts))
		TIMESTAMP_NOEND(ts);
	return TimestampTzGetDatum(ts);
}

/*
 * snowflake_status() returns record: the generator's state, every counter
 * in shared memory and the flags of the refusal episode and of replay, read
 * without a lock; each value is current, but they are not a snapshot of one
 * instant.  Behind the snowflake_status view.  The columns added by a
 * later version come last, so that a database whose extension is not
 * updated yet gets the columns it declares.
 */
Datum
snowflake_status(PG_FUNCTION_ARGS)
{
	const SnowflakeLayout *layout = &snowflake_layout;
	SnowflakeSharedState *state = snowflake_state;
	TupleDesc	tupdesc;
	Datum		values[26];
	bool		nulls[26];
	TimestampTz epoch;
	uint64		last_tick;
	int64		last_ms;
	int64		mark_ms;
	int64		now_ms;
	int			us_into_ms;
	uint64		ids_issued = 0;
	uint64		leads_taken = 0;
	uint64		ticks_burnt = 0;
	uint64		unchecked = 0;
	int			i = 0;

	snowflake_require_shared_state("show its status");
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	epoch = snowflake_configured_epoch();
	/* a tick past the time bits was burnt, never issued */
	last_tick = Min(pg_atomic_read_u64(&state->last_tick),
					(((uint64) layout->max_ms + 1) << layout->sequence_bits) - 1);
	last_ms = (int64) (last_tick >> layout->sequence_bits);
	mark_ms = (int64) pg_atomic_read_u64(&state->durable_mark);
	now_ms = snowflake_clock_ms(&us_into_ms);
	for (int slot = 0; slot < MaxBackends; slot++)
	{
		ids_issued += pg_atomic_read_u64(&state->backend_counts[slot].n.ids);
		leads_taken += pg_atomic_read_u64(&state->backend_counts[slot].n.leads);
		ticks_burnt += pg_atomic_read_u64(&state->backend_counts[slot].n.burnt);
		unchecked += pg_atomic_read_u64(&state->backend_counts[slot].n.unchecked);
	}
	memset(nulls, false, sizeof(nulls));

	values[i++] = Int32GetDatum(snowflake_datacenter_id);
	/* a worker id claimed from a registry is unknown until claimed */
	nulls[i] = snowflake_node_worker_id() < 0;
	values[i++] = Int32GetDatum(snowflake_node_worker_id());
	values[i++] = TimestampTzGetDatum(epoch);
	/* the last ID, unless none was issued since the start */
	nulls[i] = nulls[i + 1] = ids_issued == 0 ||
		snowflake_node_worker_id() < 0;
	values[i++] = Int64GetDatum(snowflake_tick_id(layout, last_tick,
												  snowflake_node_worker_id()));
	values[i++] = snowflake_status_time(epoch, last_ms);
	values[i++] = Int64GetDatum(Max(last_ms - now_ms, 0));
	values[i++] = Int64GetDatum((int64) ids_issued);
	values[i++] = Int64GetDatum((int64) leads_taken);
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&state->sequence_waits));
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&state->clock_behind_waits));
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&state->clock_errors));
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&state->max_step_back_ms));
	values[i++] = BoolGetDatum(pg_atomic_read_u32(&state->refusal_logged) != 0);
	/* no mark before the first ID after initdb */
	nulls[i] = mark_ms == 0;
	values[i++] = snowflake_status_time(epoch, mark_ms);
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&state->writer_marks));
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&state->backend_marks));
	values[i++] = Float8GetDatum(pg_atomic_read_u64(&state->write_duration_us) / 1000.0);
	values[i++] = Float8GetDatum(pg_atomic_read_u64(&state->max_write_duration_us) / 1000.0);
	values[i++] = BoolGetDatum(state->mark_writer_latch != NULL);
	values[i++] = BoolGetDatum(state->mark_invalid);
	values[i++] = BoolGetDatum(pg_atomic_read_u32(&state->redo_write_failed) != 0);
	values[i++] = snowflake_status_time(epoch, layout->max_ms + 1);
	/* 1.4 */
	values[i++] = Int64GetDatum((int64) ticks_burnt);
	/* no margin where there is no coarse clock */
	nulls[i] = snowflake_coarse_lag_ms < 0;
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&state->coarse_margin_ms));
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&state->coarse_misses));
	values[i++] = Int64GetDatum((int64) unchecked);
	Assert(i == lengthof(values));
	Assert(tupdesc->natts <= (int) lengthof(values));

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
