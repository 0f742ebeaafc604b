/*-------------------------------------------------------------------------
 *
 * ranges.c
 *		Time ranges through the primary key: snowflake_min_id,
 *		snowflake_max_id, snowflake_partition_bounds, and snowflake_between
 *		with its support function and the two bounds it is planned as.
 *
 * Every range is closed and whole: the first ID of a millisecond
 * (sequence, datacenter and worker all 0) to the last (all at their
 * largest), so that any ID whose time lies in the range lies between the
 * bounds, whichever server issued it.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/stratnum.h"
#include "catalog/pg_opfamily_d.h"
#include "catalog/pg_type_d.h"
#include "common/int.h"
#include "fmgr.h"
#include "funcapi.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "parser/parse_func.h"
#include "rewrite/rewriteManip.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "decode.h"
#include "layout.h"
#include "settings.h"

PG_FUNCTION_INFO_V1(snowflake_min_id);
PG_FUNCTION_INFO_V1(snowflake_max_id);
PG_FUNCTION_INFO_V1(snowflake_partition_bounds);
PG_FUNCTION_INFO_V1(snowflake_between);
PG_FUNCTION_INFO_V1(snowflake_between_support);
PG_FUNCTION_INFO_V1(snowflake_between_min_id);
PG_FUNCTION_INFO_V1(snowflake_between_max_id);

/*
 * The layout of a call (ts timestamptz[, epoch timestamptz]), and the
 * millisecond of ts under it.
 */
static const SnowflakeLayout *
snowflake_ts_arg_ms(FunctionCallInfo fcinfo, SnowflakeLayout *twitter,
					int64 *ms)
{
	TimestampTz epoch;
	const SnowflakeLayout *layout = snowflake_call_layout(fcinfo, 1, twitter,
														  &epoch);

	*ms = snowflake_time_ms(layout, PG_GETARG_TIMESTAMPTZ(0), epoch);
	return layout;
}

/* The smallest ID of millisecond ms, on any node */
static int64
snowflake_ms_first_id(const SnowflakeLayout *layout, int64 ms)
{
	return snowflake_compose_id(layout, ms, 0, 0, 0);
}

/* The largest ID of millisecond ms, on any node */
static int64
snowflake_ms_last_id(const SnowflakeLayout *layout, int64 ms)
{
	return snowflake_compose_id(layout, ms, layout->max_datacenter_id,
								layout->max_worker_id, layout->max_sequence);
}

/*
 * snowflake_min_id(ts timestamptz[, epoch timestamptz]) returns bigint: the
 * smallest ID of ts's millisecond, on any node.
 */
Datum
snowflake_min_id(PG_FUNCTION_ARGS)
{
	SnowflakeLayout twitter;
	int64		ms;
	const SnowflakeLayout *layout = snowflake_ts_arg_ms(fcinfo, &twitter, &ms);

	PG_RETURN_INT64(snowflake_ms_first_id(layout, ms));
}

/* snowflake_max_id(...): the largest ID of ts's millisecond, on any node */
Datum
snowflake_max_id(PG_FUNCTION_ARGS)
{
	SnowflakeLayout twitter;
	int64		ms;
	const SnowflakeLayout *layout = snowflake_ts_arg_ms(fcinfo, &twitter, &ms);

	PG_RETURN_INT64(snowflake_ms_last_id(layout, ms));
}

/*
 * The most partitions snowflake_partition_bounds makes: ten thousand are
 * more than 27 years of days or a year of hours; more is likelier a
 * mistaken step than a table anyone wants.
 */
#define SNOWFLAKE_MAX_PARTITIONS 10000

/* What snowflake_partition_bounds returns, one row a call */
typedef struct SnowflakePartitionBounds
{
	int			count;			/* the partitions */
	int			allocated;		/* room in each array */
	TimestampTz *times;			/* the bounds, one more than the partitions */
	int64	   *ids;			/* the smallest ID of each bound */
}			SnowflakePartitionBounds;

/*
 * from + k * step, computed as from plus k times each field of step (months,
 * days, time), not by adding step k times: one month after January 31 is
 * February 28 (or 29), and two months after it March 31, not March 28.
 */
static TimestampTz
snowflake_steps_after(TimestampTz from, const Interval *step, int k)
{
	Interval	span;

	if (pg_mul_s32_overflow(step->month, k, &span.month) ||
		pg_mul_s32_overflow(step->day, k, &span.day) ||
		pg_mul_s64_overflow(step->time, k, &span.time))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range")));
	return DatumGetTimestampTz(DirectFunctionCall2(timestamptz_pl_interval,
												   TimestampTzGetDatum(from),
												   IntervalPGetDatum(&span)));
}

/* ts as timestamptz_out writes it, in a string of its own */
static char *
snowflake_timestamptz_text(TimestampTz ts)
{
	return DatumGetCString(DirectFunctionCall1(timestamptz_out,
											   TimestampTzGetDatum(ts)));
}

/* Refuse a partition step that does not move forward by a millisecond */
static void
snowflake_require_step(const Interval *step)
{
	if (INTERVAL_NOT_FINITE(step))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowflake partition step must be finite")));
	if (step->month < 0 || step->day < 0 || step->time < 0 ||
		(step->month == 0 && step->day == 0 && step->time == 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowflake partition step must be positive"),
				 errdetail("No part of the step (months, days, time) may be negative, and one must be more than zero.")));
	if (step->month == 0 && step->day == 0 && step->time < USECS_PER_SEC / 1000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowflake partition step must be at least 1 millisecond"),
				 errdetail("Snowflake IDs count milliseconds: a shorter step would make partitions that no ID falls in.")));
}

/*
 * The bounds of snowflake_partition_bounds(from, to, step), all of them,
 * checked: the start of each partition and its smallest ID, and the end of
 * the last.  Allocated in the current memory context.
 */
static SnowflakePartitionBounds *
snowflake_compute_partition_bounds(TimestampTz from, TimestampTz to,
								   const Interval *step)
{
	const SnowflakeLayout *layout = snowflake_configured_layout();
	TimestampTz epoch = snowflake_configured_epoch();
	SnowflakePartitionBounds *bounds;
	int			k = 0;

	snowflake_require_step(step);
	if (from >= to)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowflake partition range is empty"),
				 errdetail("\"from\" (%s) must be earlier than \"to\" (%s).",
						   snowflake_timestamptz_text(from),
						   snowflake_timestamptz_text(to))));
	/* both ends of the range must be times an ID can carry */
	(void) snowflake_time_ms(layout, to, epoch);

	bounds = palloc(sizeof(SnowflakePartitionBounds));
	bounds->allocated = 64;
	bounds->times = palloc(bounds->allocated * sizeof(TimestampTz));
	bounds->ids = palloc(bounds->allocated * sizeof(int64));
	bounds->times[0] = from;
	bounds->ids[0] = snowflake_ms_first_id(layout,
										   snowflake_time_ms(layout, from,
															 epoch));
	while (bounds->times[k] < to)
	{
		if (k == SNOWFLAKE_MAX_PARTITIONS)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("too many snowflake partitions"),
					 errdetail("Steps of %s from %s reach %s only after more than %d partitions.",
							   DatumGetCString(DirectFunctionCall1(interval_out,
																   IntervalPGetDatum(step))),
							   snowflake_timestamptz_text(from),
							   snowflake_timestamptz_text(to),
							   SNOWFLAKE_MAX_PARTITIONS),
					 errhint("Use a longer step or a shorter range.")));
		k++;
		if (k == bounds->allocated)
		{
			bounds->allocated *= 2;
			bounds->times = repalloc(bounds->times,
									 bounds->allocated * sizeof(TimestampTz));
			bounds->ids = repalloc(bounds->ids,
								   bounds->allocated * sizeof(int64));
		}
		bounds->times[k] = snowflake_steps_after(from, step, k);
		bounds->ids[k] =
			snowflake_ms_first_id(layout,
								  snowflake_time_ms(layout,
													bounds->times[k],
													epoch));
	}
	bounds->count = k;
	return bounds;
}

/*
 * snowflake_partition_bounds(from timestamptz, to timestamptz, step
 * interval) returns table (starts timestamptz, ends timestamptz, from_id
 * bigint, to_id bigint): the partitions of whole steps from "from" that
 * cover the time up to "to", one row each, with the smallest ID of their
 * start and of their end under the configured epoch and layout, for
 * FOR VALUES FROM (from_id) TO (to_id).  The k-th starts at from + k * step
 * and ends where the next starts, so that the partitions meet; the last one
 * ends at or after "to".  A step in days or months follows TimeZone, as
 * timestamptz + interval does.  All bounds are computed, and checked, at
 * the first call, so that a bad range fails before any row is returned.
 */
Datum
snowflake_partition_bounds(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;
	SnowflakePartitionBounds *bounds;

	if (SRF_IS_FIRSTCALL())
	{
		TimestampTz from = PG_GETARG_TIMESTAMPTZ(0);
		TimestampTz to = PG_GETARG_TIMESTAMPTZ(1);
		Interval   *step = PG_GETARG_INTERVAL_P(2);
		MemoryContext oldcontext;
		TupleDesc	tupdesc;

		funcctx = SRF_FIRSTCALL_INIT();
		oldcontext = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
			elog(ERROR, "return type must be a row type");
		funcctx->tuple_desc = BlessTupleDesc(tupdesc);

		bounds = snowflake_compute_partition_bounds(from, to, step);
		funcctx->max_calls = bounds->count;
		funcctx->user_fctx = bounds;
		MemoryContextSwitchTo(oldcontext);
	}

	funcctx = SRF_PERCALL_SETUP();
	bounds = (SnowflakePartitionBounds *) funcctx->user_fctx;
	if (funcctx->call_cntr < funcctx->max_calls)
	{
		int			i = (int) funcctx->call_cntr;
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		values[0] = TimestampTzGetDatum(bounds->times[i]);
		values[1] = TimestampTzGetDatum(bounds->times[i + 1]);
		values[2] = Int64GetDatum(bounds->ids[i]);
		values[3] = Int64GetDatum(bounds->ids[i + 1]);
		SRF_RETURN_NEXT(funcctx,
						HeapTupleGetDatum(heap_form_tuple(funcctx->tuple_desc,
														  values, nulls)));
	}
	SRF_RETURN_DONE(funcctx);
}

/*
 * The smallest and the largest ID of the range of snowflake_between(id,
 * from, to), from its from and to arguments at argno and argno + 1, under
 * the configured epoch and layout.  Errors out unless an ID can carry both.
 */
static void
snowflake_between_ids(FunctionCallInfo fcinfo, int argno, int64 *first_id,
					  int64 *last_id)
{
	const SnowflakeLayout *layout = snowflake_configured_layout();
	TimestampTz epoch = snowflake_configured_epoch();
	int64		from_ms;
	int64		to_ms;

	from_ms = snowflake_time_ms(layout, PG_GETARG_TIMESTAMPTZ(argno), epoch);
	to_ms = snowflake_time_ms(layout, PG_GETARG_TIMESTAMPTZ(argno + 1), epoch);
	*first_id = snowflake_ms_first_id(layout, from_ms);
	*last_id = snowflake_ms_last_id(layout, to_ms);
}

/*
 * snowflake_between(id bigint, from timestamptz, to timestamptz) returns
 * boolean: is id from the millisecond of from through the millisecond of
 * to?  That is id BETWEEN snowflake_min_id(from) AND snowflake_max_id(to),
 * except for NULLs and errors: a NULL bound makes the call NULL, and a bound
 * that no ID can carry is an error whatever id is.  The planner puts
 * id >= snowflake_between_min_id(from, to) AND
 * id <= snowflake_between_max_id(from, to) in its place, which answers the
 * same (see snowflake_between_support).
 */
Datum
snowflake_between(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	int64		first_id;
	int64		last_id;

	snowflake_between_ids(fcinfo, 1, &first_id, &last_id);
	PG_RETURN_BOOL(id >= first_id && id <= last_id);
}

/*
 * snowflake_between_min_id(from timestamptz, to timestamptz) and
 * snowflake_between_max_id(from, to) return bigint: snowflake_min_id(from)
 * and snowflake_max_id(to), the smallest and the largest ID that
 * snowflake_between(id, from, to) is true for; but each checks both bounds,
 * as snowflake_between does: NULL if either is NULL (STRICT), an error if
 * either is a time no ID can carry.
 */
Datum
snowflake_between_min_id(PG_FUNCTION_ARGS)
{
	int64		first_id;
	int64		last_id;

	snowflake_between_ids(fcinfo, 0, &first_id, &last_id);
	PG_RETURN_INT64(first_id);
}

Datum
snowflake_between_max_id(PG_FUNCTION_ARGS)
{
	int64		first_id;
	int64		last_id;

	snowflake_between_ids(fcinfo, 0, &first_id, &last_id);
	PG_RETURN_INT64(last_id);
}

/*
 * The function named fn_name in schema nspname that takes nargs
 * timestamptz arguments; InvalidOid if there is none and missing_ok.
 */
static Oid
snowflake_bound_function(char *nspname, char *fn_name, int nargs,
						 bool missing_ok)
{
	Oid			argtypes[2] = {TIMESTAMPTZOID, TIMESTAMPTZOID};

	Assert(nargs >= 1 && nargs <= 2);
	return LookupFuncName(list_make2(makeString(nspname), makeString(fn_name)),
						  nargs, argtypes, missing_ok);
}

/*
 * arg op fn(bounds), where fn returns bigint and op is the bigint operator
 * of the btree strategy.
 */
static Expr *
snowflake_bound_clause(Node *arg, int16 strategy, Oid fn, List *bounds)
{
	Oid			opno;
	Expr	   *call;
	OpExpr	   *clause;

	call = (Expr *) makeFuncExpr(fn, INT8OID, bounds, InvalidOid,
								 InvalidOid, COERCE_EXPLICIT_CALL);
	opno = get_opfamily_member(INTEGER_BTREE_FAM_OID, INT8OID, INT8OID,
							   strategy);
	clause = (OpExpr *) make_opclause(opno, BOOLOID, false, (Expr *) arg,
									  call, InvalidOid, InvalidOid);
	set_opfuncid(clause);
	return (Expr *) clause;
}

/*
 * id >= snowflake_min_id(from) and id <= snowflake_max_id(to), for the
 * arguments (id, from, to) of a call of snowflake_between, funcid: what an
 * index on id can answer of the call.
 */
static List *
snowflake_between_bounds(Oid funcid, List *args)
{
	char	   *nspname = get_namespace_name(get_func_namespace(funcid));
	Oid			min_fn = snowflake_bound_function(nspname, "snowflake_min_id",
												  1, false);
	Oid			max_fn = snowflake_bound_function(nspname, "snowflake_max_id",
												  1, false);

	return list_make2(snowflake_bound_clause(linitial(args),
											 BTGreaterEqualStrategyNumber,
											 min_fn, list_make1(lsecond(args))),
					  snowflake_bound_clause(linitial(args),
											 BTLessEqualStrategyNumber,
											 max_fn, list_make1(lthird(args))));
}

/*
 * id >= snowflake_between_min_id(from, to) AND
 * id <= snowflake_between_max_id(from, to), the call of snowflake_between,
 * funcid, with arguments (id, from, to), in a form that partition pruning,
 * indexes and the planner's range estimates understand; NULL if the
 * extension's SQL objects are older than 1.3, which has these functions.
 *
 * It answers what the call answers, because each half checks both bounds:
 * for a NULL bound both halves are NULL, as the call is, and so is NOT of
 * them; for a bound that no ID can carry each half is the call's error, so
 * the AND never stops at a false half before the error.  With valid bounds
 * it is the call's own comparison.  Only a NULL id is different: the call
 * is NULL whatever the bounds, while the halves still check them (as the
 * index conditions of 1.2 did, when the scan started).
 */
static Node *
snowflake_between_rewrite(Oid funcid, List *args)
{
	char	   *nspname = get_namespace_name(get_func_namespace(funcid));
	Oid			min_fn = snowflake_bound_function(nspname,
												  "snowflake_between_min_id",
												  2, true);
	Oid			max_fn = snowflake_bound_function(nspname,
												  "snowflake_between_max_id",
												  2, true);
	List	   *bounds = list_make2(lsecond(args), lthird(args));

	if (!OidIsValid(min_fn) || !OidIsValid(max_fn))
		return NULL;
	return (Node *)
		make_andclause(list_make2(snowflake_bound_clause(linitial(args),
														 BTGreaterEqualStrategyNumber,
														 min_fn, bounds),
								  snowflake_bound_clause(copyObject(linitial(args)),
														 BTLessEqualStrategyNumber,
														 max_fn,
														 copyObject(bounds))));
}

/*
 * The planner support function of snowflake_between.
 *
 * It puts id >= snowflake_between_min_id(from, to) AND
 * id <= snowflake_between_max_id(from, to) in the call's place (see
 * snowflake_between_rewrite for why that answers the same): partition
 * pruning knows no support functions, only such comparisons, so this is
 * what lets a table partitioned by range of id skip the partitions outside
 * the range, at plan time or when the executor starts; an index on id
 * answers the comparisons, and the planner estimates them as a range of
 * id.  Not when an argument has a volatile function, which the two halves
 * would evaluate twice (snowflake_between(snowflake_next_id(), ...) would
 * draw two IDs), nor a subquery, which they would run twice.
 *
 * Where the call stays (such arguments, or a database whose extension is
 * still at 1.2), it derives, for a btree index on its id argument, the
 * index conditions id >= snowflake_min_id(from) and
 * id <= snowflake_max_id(to); and it estimates the call's selectivity as
 * that of those two conditions, from id's statistics.  These conditions are
 * lossy: the call stays as a filter on the rows the index returns, since
 * they are not the same as the call (with a NULL bound the call is NULL,
 * and so is NOT of it, while the conditions can be false, so NOT of them
 * true; and AND stops at a false half, so an infinite bound in the other
 * half would be no error).  They are evaluated when the scan starts, so a
 * bound that no ID can carry is the call's error even where no row reaches
 * the call.  Only bounds that are constant for the scan make index
 * conditions: no volatile function, and no column of the index's own
 * table.
 */
Datum
snowflake_between_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);

	if (IsA(rawreq, SupportRequestSimplify))
	{
		SupportRequestSimplify *req = (SupportRequestSimplify *) rawreq;
		FuncExpr   *call = req->fcall;

		if (list_length(call->args) != 3 ||
			contain_volatile_functions((Node *) call->args) ||
			checkExprHasSubLink((Node *) call->args))
			PG_RETURN_POINTER(NULL);
		PG_RETURN_POINTER(snowflake_between_rewrite(call->funcid, call->args));
	}

	if (IsA(rawreq, SupportRequestIndexCondition))
	{
		SupportRequestIndexCondition *req;
		FuncExpr   *call;

		req = (SupportRequestIndexCondition *) rawreq;
		/* the planner has matched the index column to an argument: id? */
		if (req->indexarg != 0 || req->opfamily != INTEGER_BTREE_FAM_OID ||
			!is_funcclause(req->node))
			PG_RETURN_POINTER(NULL);
		call = (FuncExpr *) req->node;
		if (list_length(call->args) != 3 ||
			!is_pseudo_constant_for_index(req->root, lsecond(call->args),
										  req->index) ||
			!is_pseudo_constant_for_index(req->root, lthird(call->args),
										  req->index))
			PG_RETURN_POINTER(NULL);

		req->lossy = true;
		PG_RETURN_POINTER(snowflake_between_bounds(call->funcid, call->args));
	}

	if (IsA(rawreq, SupportRequestSelectivity))
	{
		SupportRequestSelectivity *req = (SupportRequestSelectivity *) rawreq;

		if (list_length(req->args) != 3)
			PG_RETURN_POINTER(NULL);
		req->selectivity =
			clauselist_selectivity(req->root,
								   snowflake_between_bounds(req->funcid,
															req->args),
								   req->varRelid, req->jointype,
								   req->sjinfo);
		PG_RETURN_POINTER(req);
	}

	PG_RETURN_POINTER(NULL);
}
