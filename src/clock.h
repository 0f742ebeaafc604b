/*-------------------------------------------------------------------------
 *
 * clock.h
 *		Reading the clocks (clock.c); the coarse clock inline, as it is read
 *		on every call that generates ahead of the clock.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_CLOCK_H
#define SNOWFLAKE_CLOCK_H

#include <time.h>

#include "layout.h"

extern int64 snowflake_coarse_lag_ms;

extern void snowflake_clock_init(void);
extern int64 snowflake_clock_ms(int *us_into_ms);
extern int64 snowflake_monotonic_ms(void);

/*
 * A cheaper reading of the clock, where generation needs only a bound on it
 * (see snowflake_claim_ticks): in milliseconds since the epoch, never ahead
 * of snowflake_clock_ms(), and behind it by what the kernel's timer ticks
 * leave, which no kernel bounds: generation trusts it within a margin that
 * starts at snowflake_coarse_lag_ms and that the exact clock checks.
 * Returns false where there is no such clock.
 */
static inline bool
snowflake_coarse_clock_ms(int64 *now_ms)
{
#if defined(__linux__) && defined(CLOCK_REALTIME_COARSE)
	struct timespec ts;

	if (snowflake_coarse_lag_ms < 0 ||
		clock_gettime(CLOCK_REALTIME_COARSE, &ts) != 0)
		return false;
	*now_ms = (int64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000 -
		snowflake_epoch_unix_ms;
	return true;
#else
	return false;
#endif
}

#endif							/* SNOWFLAKE_CLOCK_H */
