/*-------------------------------------------------------------------------
 *
 * decode.c
 *		The SQL functions that take IDs apart and make them: snowflake_parse,
 *		snowflake_timestamp, snowflake_compose, snowflake_format,
 *		snowflake_json and snowflake_serial; and the layout and time of a
 *		call's arguments, for them and for the time ranges (ranges.c).
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
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "decode.h"
#include "layout.h"
#include "settings.h"

/*---- SQL toolbox ----*/

/*
 * Functions that work with IDs in SQL (extension version 1.1): an ID's
 * parts and time, composing and printing IDs.  Every one composes and takes
 * IDs apart through a layout; the decoders take the epoch as an argument,
 * or the configured one when it is left out, so one C function serves both
 * SQL forms.
 */

PG_FUNCTION_INFO_V1(snowflake_parse);
PG_FUNCTION_INFO_V1(snowflake_parse_with_epoch);
PG_FUNCTION_INFO_V1(snowflake_parse_with_layout);
PG_FUNCTION_INFO_V1(snowflake_timestamp);
PG_FUNCTION_INFO_V1(snowflake_compose);
PG_FUNCTION_INFO_V1(snowflake_format);
PG_FUNCTION_INFO_V1(snowflake_json);
PG_FUNCTION_INFO_V1(snowflake_serial);

static TimestampTz snowflake_id_time(const SnowflakeLayout *layout, int64 id,
									 TimestampTz epoch, int64 unit_ms);

/*
 * Decode id into (ts, datacenter_id, worker_id, sequence) under layout,
 * counting time in units of unit_ms from epoch (a PostgreSQL timestamp).
 */
static Datum
snowflake_decode(FunctionCallInfo fcinfo, const SnowflakeLayout *layout,
				 int64 id, TimestampTz epoch, int64 unit_ms)
{
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	TimestampTz ts;

	ts = snowflake_id_time(layout, id, epoch, unit_ms);

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	values[0] = TimestampTzGetDatum(ts);
	values[1] = Int32GetDatum(snowflake_id_datacenter(layout, id));
	values[2] = Int32GetDatum(snowflake_id_worker(layout, id));
	values[3] = Int32GetDatum((int32) snowflake_id_sequence(layout, id));

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* snowflake_parse(id bigint): decode with the configured epoch and layout */
Datum
snowflake_parse(PG_FUNCTION_ARGS)
{
	return snowflake_decode(fcinfo, snowflake_configured_layout(),
							PG_GETARG_INT64(0),
							snowflake_configured_epoch(), 1);
}

/*
 * snowflake_parse(id bigint, epoch timestamptz): decode an ID of Twitter's
 * layout with another epoch.  Twitter's layout, not the server's, so that
 * the function depends on its arguments alone.
 */
Datum
snowflake_parse_with_epoch(PG_FUNCTION_ARGS)
{
	SnowflakeLayout twitter;

	snowflake_layout_init_twitter(&twitter);
	return snowflake_decode(fcinfo, &twitter, PG_GETARG_INT64(0),
							PG_GETARG_TIMESTAMPTZ(1), 1);
}

/*
 * snowflake_parse(id, epoch, time_bits, datacenter_bits, worker_bits,
 * sequence_bits, time_unit_ms): decode an ID of any layout, such as a
 * 53-bit one or another system's.  Widths of 0 are allowed for every part
 * but time; time counts units of time_unit_ms (10 for Sonyflake).
 */
Datum
snowflake_parse_with_layout(PG_FUNCTION_ARGS)
{
	SnowflakeLayout layout;
	int			widths[4];
	static const char *const names[4] = {
		"time_bits", "datacenter_bits", "worker_bits", "sequence_bits"
	};
	int			total = 0;
	int32		unit_ms = PG_GETARG_INT32(6);

	for (int i = 0; i < 4; i++)
	{
		int			max_width = i == 0 ? SNOWFLAKE_MAX_TIME_BITS :
			i == 3 ? SNOWFLAKE_MAX_SEQUENCE_BITS : SNOWFLAKE_MAX_NODE_BITS;

		widths[i] = PG_GETARG_INT32(i + 2);
		if (widths[i] < (i == 0 ? 1 : 0) || widths[i] > max_width)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid snowflake layout: %s is %d",
							names[i], widths[i]),
					 errdetail("%s must be from %d to %d.", names[i],
							   i == 0 ? 1 : 0, max_width)));
		total += widths[i];
	}
	if (total > SNOWFLAKE_MAX_ID_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowflake layout: %d bits do not fit in a positive bigint",
						total),
				 errdetail("The four widths must add up to at most 63.")));
	if (unit_ms < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowflake time unit: %d ms", unit_ms),
				 errdetail("The time unit must be at least 1 ms.")));
	snowflake_layout_init(&layout, widths[0], widths[1], widths[2], widths[3]);
	return snowflake_decode(fcinfo, &layout, PG_GETARG_INT64(0),
							PG_GETARG_TIMESTAMPTZ(1), unit_ms);
}

/*
 * The layout and epoch of a call that may have an epoch argument at argno.
 * Without one, the configured layout and epoch.  With one, Twitter's layout,
 * as snowflake_parse(id, epoch) uses, so that the forms with an epoch
 * depend on their arguments alone and can be IMMUTABLE; twitter is where
 * it is kept.
 */
const SnowflakeLayout *
snowflake_call_layout(FunctionCallInfo fcinfo, int argno,
					  SnowflakeLayout *twitter, TimestampTz *epoch)
{
	if (PG_NARGS() <= argno)
	{
		*epoch = snowflake_configured_epoch();
		return snowflake_configured_layout();
	}
	*epoch = PG_GETARG_TIMESTAMPTZ(argno);
	if (TIMESTAMP_NOT_FINITE(*epoch))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowflake epoch must be finite")));
	snowflake_layout_init_twitter(twitter);
	return twitter;
}

/*
 * The time id carries under layout, counting in units of unit_ms from epoch,
 * as a PostgreSQL timestamp.  Errors out for a negative id, an id with bits
 * above the layout's, an infinite epoch, and a time past PostgreSQL's range.
 */
static TimestampTz
snowflake_id_time(const SnowflakeLayout *layout, int64 id, TimestampTz epoch,
				  int64 unit_ms)
{
	int			used_bits = layout->time_shift + layout->time_bits;
	int64		ms;
	TimestampTz ts;

	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowflake ID: %lld", (long long) id),
				 errdetail("Snowflake IDs are never negative: bit 63 is always 0.")));
	if (used_bits < 63 && (id >> used_bits) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowflake ID: %lld", (long long) id),
				 errdetail("The layout uses the low %d bits of an ID, and this one has higher bits set.",
						   used_bits)));
	if (TIMESTAMP_NOT_FINITE(epoch))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowflake epoch must be finite")));

	ms = snowflake_id_ms(layout, id);
	if (pg_mul_s64_overflow(ms, unit_ms * 1000, &ts) ||
		pg_add_s64_overflow(epoch, ts, &ts) || !IS_VALID_TIMESTAMP(ts))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range"),
				 unit_ms == 1 ?
				 errdetail("Snowflake ID %lld lies %lld ms after the epoch, past the largest timestamp.",
						   (long long) id, (long long) ms) :
				 errdetail("Snowflake ID %lld lies %lld units of %lld ms after the epoch, past the largest timestamp.",
						   (long long) id, (long long) ms, (long long) unit_ms)));
	return ts;
}

/*
 * The millisecond since epoch that ts lies in, fractions of a millisecond
 * dropped.  Errors out unless an ID of the layout can carry it.
 */
int64
snowflake_time_ms(const SnowflakeLayout *layout, TimestampTz ts,
				  TimestampTz epoch)
{
	int64		since_epoch_us;

	if (TIMESTAMP_NOT_FINITE(ts) ||
		pg_sub_s64_overflow(ts, epoch, &since_epoch_us) ||
		since_epoch_us < 0 || since_epoch_us / 1000 > layout->max_ms)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for a snowflake ID"),
				 errdetail("A snowflake ID carries a time from its epoch to %lld ms after it, the most its %d bits of time hold.",
						   (long long) layout->max_ms, layout->time_bits)));
	return since_epoch_us / 1000;
}

/* Refuse a part of an ID that its field cannot hold. */
static void
snowflake_require_part_fits(const char *name, int64 value, int64 max_value)
{
	if (value < 0 || value > max_value)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("snowflake %s %lld is out of range", name,
						(long long) value),
				 errdetail("A snowflake %s is an integer from 0 to %lld.",
						   name, (long long) max_value)));
}

/* The formats of snowflake_append_utc */
#define SNOWFLAKE_UTC_ISO		"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ"	/* 2017-09-15T09:35:04.848Z */
#define SNOWFLAKE_UTC_COMPACT	"%04d%02d%02d%02d%02d%02d%03d"	/* 20170915093504848 */

/*
 * Append the UTC time ts to buf in format (one of the two above), to the
 * millisecond: the same text whatever TimeZone and DateStyle are.  Years 1
 * to 9999 only, so that the text has a fixed width.
 */
static void
snowflake_append_utc(StringInfo buf, TimestampTz ts, const char *format)
{
	struct pg_tm tm;
	fsec_t		fsec;

	if (timestamp2tm(ts, NULL, &tm, &fsec, NULL, NULL) != 0 ||
		tm.tm_year < 1 || tm.tm_year > 9999)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range"),
				 errdetail("Snowflake IDs are printed for the years 1 to 9999 only.")));
	appendStringInfo(buf, format, tm.tm_year, tm.tm_mon, tm.tm_mday,
					 tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (fsec / 1000));
}

/* How many decimal digits value has */
static int
snowflake_digits(int64 value)
{
	int			digits = 1;

	while (value >= 10)
	{
		value /= 10;
		digits++;
	}
	return digits;
}

/* snowflake_timestamp(id bigint[, epoch timestamptz]) returns timestamptz */
Datum
snowflake_timestamp(PG_FUNCTION_ARGS)
{
	SnowflakeLayout twitter;
	TimestampTz epoch;
	const SnowflakeLayout *layout = snowflake_call_layout(fcinfo, 1, &twitter,
														  &epoch);

	PG_RETURN_TIMESTAMPTZ(snowflake_id_time(layout, PG_GETARG_INT64(0),
											epoch, 1));
}

/*
 * snowflake_compose(ts timestamptz, datacenter_id integer, worker_id
 * integer, sequence integer[, epoch timestamptz]) returns bigint: the ID of
 * these parts, the inverse of snowflake_parse.  Fractions of a millisecond
 * in ts are dropped.
 */
Datum
snowflake_compose(PG_FUNCTION_ARGS)
{
	SnowflakeLayout twitter;
	TimestampTz epoch;
	const SnowflakeLayout *layout = snowflake_call_layout(fcinfo, 4, &twitter,
														  &epoch);
	int64		ms;
	int32		datacenter_id = PG_GETARG_INT32(1);
	int32		worker_id = PG_GETARG_INT32(2);
	int32		sequence = PG_GETARG_INT32(3);

	ms = snowflake_time_ms(layout, PG_GETARG_TIMESTAMPTZ(0), epoch);
	snowflake_require_part_fits("datacenter_id", datacenter_id,
								layout->max_datacenter_id);
	snowflake_require_part_fits("worker_id", worker_id, layout->max_worker_id);
	snowflake_require_part_fits("sequence", sequence, layout->max_sequence);
	PG_RETURN_INT64(snowflake_compose_id(layout, ms, datacenter_id,
										 worker_id, sequence));
}

/* An ID's parts, as snowflake_format and snowflake_json print them */
typedef struct SnowflakeIdParts
{
	int64		id;
	TimestampTz time;
	int			datacenter_id;
	int			worker_id;
	int64		sequence;
} SnowflakeIdParts;

/*
 * The parts of the ID that is the first argument of a function called as
 * (id bigint[, epoch timestamptz]).
 */
static void
snowflake_call_id_parts(FunctionCallInfo fcinfo, SnowflakeIdParts *parts)
{
	SnowflakeLayout twitter;
	TimestampTz epoch;
	const SnowflakeLayout *layout = snowflake_call_layout(fcinfo, 1, &twitter,
														  &epoch);

	parts->id = PG_GETARG_INT64(0);
	parts->time = snowflake_id_time(layout, parts->id, epoch, 1);
	parts->datacenter_id = snowflake_id_datacenter(layout, parts->id);
	parts->worker_id = snowflake_id_worker(layout, parts->id);
	parts->sequence = snowflake_id_sequence(layout, parts->id);
}

/*
 * snowflake_format(id bigint[, epoch timestamptz]) returns text:
 * "2017-09-15T09:35:04.848Z dc=2 worker=5 seq=0".
 */
Datum
snowflake_format(PG_FUNCTION_ARGS)
{
	SnowflakeIdParts parts;
	StringInfoData buf;

	snowflake_call_id_parts(fcinfo, &parts);
	initStringInfo(&buf);
	snowflake_append_utc(&buf, parts.time, SNOWFLAKE_UTC_ISO);
	appendStringInfo(&buf, " dc=%d worker=%d seq=%lld",
					 parts.datacenter_id, parts.worker_id,
					 (long long) parts.sequence);
	PG_RETURN_TEXT_P(cstring_to_text(buf.data));
}

/*
 * snowflake_json(id bigint[, epoch timestamptz]) returns jsonb: the ID as a
 * string, which JavaScript reads without losing precision, and its parts,
 * {"id": "...", "ts": "2017-09-15T09:35:04.848Z", "datacenter_id": 2,
 * "worker_id": 5, "sequence": 0}.
 */
Datum
snowflake_json(PG_FUNCTION_ARGS)
{
	SnowflakeIdParts parts;
	StringInfoData buf;

	snowflake_call_id_parts(fcinfo, &parts);
	initStringInfo(&buf);
	appendStringInfo(&buf, "{\"id\": \"%lld\", \"ts\": \"",
					 (long long) parts.id);
	snowflake_append_utc(&buf, parts.time, SNOWFLAKE_UTC_ISO);
	appendStringInfo(&buf,
					 "\", \"datacenter_id\": %d, \"worker_id\": %d, \"sequence\": %lld}",
					 parts.datacenter_id, parts.worker_id,
					 (long long) parts.sequence);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}

/*
 * snowflake_serial(id bigint, prefix text[, epoch timestamptz]) returns
 * text: a business serial number, the prefix, the UTC time as
 * yyyyMMddHHmmssSSS, then datacenter, worker and sequence, each zero-padded
 * to the width of its largest value.  Every part has a fixed width, so
 * serials with one prefix are unique and sort as text in the order of their
 * IDs.
 */
Datum
snowflake_serial(PG_FUNCTION_ARGS)
{
	SnowflakeLayout twitter;
	TimestampTz epoch;
	const SnowflakeLayout *layout = snowflake_call_layout(fcinfo, 2, &twitter,
														  &epoch);
	int64		id = PG_GETARG_INT64(0);
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, text_to_cstring(PG_GETARG_TEXT_PP(1)));
	snowflake_append_utc(&buf, snowflake_id_time(layout, id, epoch, 1),
						 SNOWFLAKE_UTC_COMPACT);
	appendStringInfo(&buf, "%0*d%0*d%0*lld",
					 snowflake_digits(layout->max_datacenter_id),
					 snowflake_id_datacenter(layout, id),
					 snowflake_digits(layout->max_worker_id),
					 snowflake_id_worker(layout, id),
					 snowflake_digits(layout->max_sequence),
					 (long long) snowflake_id_sequence(layout, id));
	PG_RETURN_TEXT_P(cstring_to_text(buf.data));
}
