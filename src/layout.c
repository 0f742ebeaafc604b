/*-------------------------------------------------------------------------
 *
 * layout.c
 *		The server's layout and epoch, filling in a layout from its widths,
 *		and the stamp (epoch plus widths) a mark counts in.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "layout.h"

/* the server's layout */
SnowflakeLayout snowflake_layout;

/* the epoch parsed from snowflake.epoch, in milliseconds since 1970 */
int64		snowflake_epoch_unix_ms;

/* Fill in layout from its four widths, which the caller has checked. */
void
snowflake_layout_init(SnowflakeLayout *layout, int time_bits,
					  int datacenter_bits, int worker_bits, int sequence_bits)
{
	layout->time_bits = time_bits;
	layout->datacenter_bits = datacenter_bits;
	layout->worker_bits = worker_bits;
	layout->sequence_bits = sequence_bits;
	layout->worker_shift = sequence_bits;
	layout->datacenter_shift = layout->worker_shift + worker_bits;
	layout->time_shift = layout->datacenter_shift + datacenter_bits;
	layout->max_sequence = (INT64CONST(1) << sequence_bits) - 1;
	layout->max_worker_id = (1 << worker_bits) - 1;
	layout->max_datacenter_id = (1 << datacenter_bits) - 1;
	layout->max_ms = (int64) ((UINT64CONST(1) << time_bits) - 1);
}

/* Fill in Twitter's layout, the default. */
void
snowflake_layout_init_twitter(SnowflakeLayout *layout)
{
	snowflake_layout_init(layout, SNOWFLAKE_DEFAULT_TIME_BITS,
						  SNOWFLAKE_DEFAULT_DATACENTER_BITS,
						  SNOWFLAKE_DEFAULT_WORKER_BITS,
						  SNOWFLAKE_DEFAULT_SEQUENCE_BITS);
}

/* A stamp from an epoch and four widths, as a mark file or record holds them. */
void
snowflake_stamp_make(SnowflakeStamp *stamp, int64 epoch_unix_ms,
					 int time_bits, int datacenter_bits, int worker_bits,
					 int sequence_bits)
{
	stamp->epoch_unix_ms = epoch_unix_ms;
	stamp->time_bits = time_bits;
	stamp->datacenter_bits = datacenter_bits;
	stamp->worker_bits = worker_bits;
	stamp->sequence_bits = sequence_bits;
}

/* The server's stamp: its epoch and layout. */
void
snowflake_stamp_current(SnowflakeStamp *stamp)
{
	snowflake_stamp_make(stamp, snowflake_epoch_unix_ms,
						 snowflake_layout.time_bits,
						 snowflake_layout.datacenter_bits,
						 snowflake_layout.worker_bits,
						 snowflake_layout.sequence_bits);
}

/* The stamp of snowflake 1.0's marks: Twitter's layout in that epoch. */
void
snowflake_stamp_twitter(SnowflakeStamp *stamp, int64 epoch_unix_ms)
{
	snowflake_stamp_make(stamp, epoch_unix_ms, SNOWFLAKE_DEFAULT_TIME_BITS,
						 SNOWFLAKE_DEFAULT_DATACENTER_BITS,
						 SNOWFLAKE_DEFAULT_WORKER_BITS,
						 SNOWFLAKE_DEFAULT_SEQUENCE_BITS);
}

bool
snowflake_stamp_equal(const SnowflakeStamp *a, const SnowflakeStamp *b)
{
	return a->epoch_unix_ms == b->epoch_unix_ms &&
		a->time_bits == b->time_bits &&
		a->datacenter_bits == b->datacenter_bits &&
		a->worker_bits == b->worker_bits &&
		a->sequence_bits == b->sequence_bits;
}

/* Append to buf what changed of one setting. */
static void
snowflake_describe_change(StringInfo buf, const char *name, int64 was,
						  int64 now)
{
	if (was == now)
		return;
	if (buf->len > 0)
		appendStringInfoString(buf, "; ");
	appendStringInfo(buf, _("%s was %lld and is now %lld"), name,
					 (long long) was, (long long) now);
}

/* Append to buf what changed from stamp was to stamp now, setting by setting. */
void
snowflake_stamp_describe_change(StringInfo buf, const SnowflakeStamp *was,
								const SnowflakeStamp *now)
{
	snowflake_describe_change(buf, "snowflake.epoch (ms since 1970)",
							  was->epoch_unix_ms, now->epoch_unix_ms);
	snowflake_describe_change(buf, "snowflake.time_bits",
							  was->time_bits, now->time_bits);
	snowflake_describe_change(buf, "snowflake.datacenter_bits",
							  was->datacenter_bits, now->datacenter_bits);
	snowflake_describe_change(buf, "snowflake.worker_bits",
							  was->worker_bits, now->worker_bits);
	snowflake_describe_change(buf, "snowflake.sequence_bits",
							  was->sequence_bits, now->sequence_bits);
}

/* Fill in layout from a stamp's widths. */
void
snowflake_stamp_layout(const SnowflakeStamp *stamp, SnowflakeLayout *layout)
{
	snowflake_layout_init(layout, stamp->time_bits, stamp->datacenter_bits,
						  stamp->worker_bits, stamp->sequence_bits);
}
