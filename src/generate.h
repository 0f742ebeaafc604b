/*-------------------------------------------------------------------------
 *
 * generate.h
 *		Generating: claiming ticks (generate.c).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_GENERATE_H
#define SNOWFLAKE_GENERATE_H

#include "utils/elog.h"

#include "layout.h"

extern void snowflake_report_clock_jump(int64 jump_ms);

#endif							/* SNOWFLAKE_GENERATE_H */
