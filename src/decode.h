/*-------------------------------------------------------------------------
 *
 * decode.h
 *		The layout and time of a call's arguments (decode.c), for the
 *		functions that take IDs apart and for the time ranges (ranges.c).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_DECODE_H
#define SNOWFLAKE_DECODE_H

#include "fmgr.h"
#include "utils/timestamp.h"

#include "layout.h"

extern const SnowflakeLayout *snowflake_call_layout(FunctionCallInfo fcinfo,
													int argno,
													SnowflakeLayout *twitter,
													TimestampTz *epoch);
extern int64 snowflake_time_ms(const SnowflakeLayout *layout, TimestampTz ts,
							   TimestampTz epoch);

#endif							/* SNOWFLAKE_DECODE_H */
