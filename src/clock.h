/*-------------------------------------------------------------------------
 *
 * clock.h
 *		Reading the clocks (clock.c).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_CLOCK_H
#define SNOWFLAKE_CLOCK_H

extern int64 snowflake_clock_ms(int *us_into_ms);
extern int64 snowflake_monotonic_ms(void);

#endif							/* SNOWFLAKE_CLOCK_H */
