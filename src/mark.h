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

extern bool snowflake_am_mark_writer;
extern void snowflake_writer_check_shutdown(void);
extern void snowflake_report_invalid_mark(void);
extern void snowflake_advance_mark(int64 needed_ms, int64 margin_ms);
extern void snowflake_try_advance_mark(int64 needed_ms, int64 margin_ms);
extern void snowflake_relog_mark(void);

#endif							/* SNOWFLAKE_MARK_H */
