/*-------------------------------------------------------------------------
 *
 * mark.h
 *		Moving the durable high-water mark (mark.c).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_MARK_H
#define SNOWFLAKE_MARK_H

#include "compat.h"

/*---- the durable high-water mark ----*/

/*
 * How far ahead of the generator a newly written mark lies, and so how far
 * past the last real ID a server may resume after a crash.  A new mark is
 * written once generation is within half of this of the old one: at full
 * speed that is one small fsync every 500 ms of ID time.  It is no larger
 * than the default snowflake.max_clock_wait, so that after a crash the first
 * call waits out the rest of the stride instead of failing.
 */
#define SNOWFLAKE_MARK_STRIDE_MS	1000

/*
 * A mark must still lie ahead of the clock once it is durable, so when
 * writing one takes longer than half a stride (a slow disk, a synchronous
 * standby far away), the stride grows to twice the time the last write took,
 * up to this.
 */
#define SNOWFLAKE_MAX_STRIDE_MS		60000

/*
 * How long after the last ID the mark writer keeps the mark ahead of the
 * clock: one write every half stride, on a server that has gone quiet.
 */
#define SNOWFLAKE_WRITER_ACTIVE_MS	60000

/*
 * How often an idle mark writer looks whether a checkpoint has passed the
 * mark's last WAL record, so that it logs the mark again.
 */
#define SNOWFLAKE_RELOG_CHECK_MS	1000

/*
 * What the registry worker needs of the mark (mark.c), in
 * milliseconds since the Unix epoch: make every later ID carry a time after
 * unix_ms; the newest ID's time; and a time as an ID's time (since
 * snowflake.epoch).
 */
extern void snowflake_raise_id_floor(int64 unix_ms);
extern int64 snowflake_newest_id_unix_ms(void);
extern int64 snowflake_unix_to_id_ms(int64 unix_ms);

/* how a call to move the mark ended */
typedef enum SnowflakeAdvanceResult
{
	SNOWFLAKE_ADVANCE_NONE,		/* this call published no new mark */
	SNOWFLAKE_ADVANCE_RAISED,	/* this call raised the published mark */
	SNOWFLAKE_ADVANCE_CLOCK_JUMPED, /* the clock jumped further than
									 * snowflake.max_clock_jump allows: no
									 * mark was written */
	SNOWFLAKE_ADVANCE_DISABLED	/* snowflake.enabled is off: no mark was
								 * written */
} SnowflakeAdvanceResult;

/*
 * Called while snowflake_advance_mark() waits for another process's mark
 * (lock_wait) and for the synchronous standbys (standby_wait).  The mark
 * writer sets them, so that it leaves at a shutdown and takes a reload
 * while it waits; they are NULL in backends.
 */
typedef void (*SnowflakeMarkWaitHook) (void);
extern SnowflakeMarkWaitHook snowflake_mark_lock_wait_hook;
extern SnowflakeMarkWaitHook snowflake_mark_standby_wait_hook;

pg_noreturn extern void snowflake_report_invalid_mark(void);

/*
 * Move the durable mark more than margin_ms above needed_ms, waiting for
 * whatever that takes.  On SNOWFLAKE_ADVANCE_CLOCK_JUMPED, *jump_ms says how
 * far the clock jumped; the caller decides whether that and
 * SNOWFLAKE_ADVANCE_DISABLED are errors.
 */
extern SnowflakeAdvanceResult snowflake_advance_mark(int64 needed_ms,
													 int64 margin_ms,
													 int64 *jump_ms);

/* The same, but never waits, and only warns if the mark cannot be written. */
extern SnowflakeAdvanceResult snowflake_try_advance_mark(int64 needed_ms,
														 int64 margin_ms);
extern void snowflake_relog_mark(void);

#endif							/* SNOWFLAKE_MARK_H */
