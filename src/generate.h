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

#include "layout.h"

extern void snowflake_require_can_generate(const char *function);
extern int	snowflake_node_worker_id(void);
extern int64 snowflake_claim_ticks(const SnowflakeLayout *layout, int64 n,
								   int *worker_id);

#endif							/* SNOWFLAKE_GENERATE_H */
