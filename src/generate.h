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

extern emit_log_hook_type prev_emit_log_hook;
extern void snowflake_require_can_generate(const char *function);
extern int	snowflake_node_worker_id(void);
extern void snowflake_emit_log(ErrorData *edata);
extern int64 snowflake_claim_ticks(const SnowflakeLayout *layout, int64 n,
								   int *worker_id);

#endif							/* SNOWFLAKE_GENERATE_H */
