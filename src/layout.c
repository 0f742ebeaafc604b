/*-------------------------------------------------------------------------
 *
 * layout.c
 *		The server's layout, and filling in a layout from its widths.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "layout.h"

/* the server's layout */
SnowflakeLayout snowflake_layout;

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
