/*-------------------------------------------------------------------------
 *
 * waits.h
 *		The wait events a backend shows in pg_stat_activity while it waits
 *		inside snowflake_next_id() and its kin.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_WAITS_H
#define SNOWFLAKE_WAITS_H

typedef enum SnowflakeWait
{
	SNOWFLAKE_WAIT_CLOCK,		/* for the clock to reach the next ID */
	SNOWFLAKE_WAIT_MARK,		/* for another process's write of the mark */
	SNOWFLAKE_WAIT_REGISTRY_CLAIM,	/* for the first registry claim */
	SNOWFLAKE_NUM_WAITS
} SnowflakeWait;

extern uint32 snowflake_wait_event(SnowflakeWait wait);

#endif							/* SNOWFLAKE_WAITS_H */
