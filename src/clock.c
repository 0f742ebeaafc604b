/*-------------------------------------------------------------------------
 *
 * clock.c
 *		Reading the clock, a cheaper coarse reading of it where a bound will
 *		do, and a monotonic clock to measure how far it moved.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include "utils/timestamp.h"

#include "clock.h"
#include "layout.h"
#include "settings.h"

/*---- the clock ----*/

/*
 * The clock in milliseconds since the epoch, and the microseconds already
 * gone in that millisecond.
 */
int64
snowflake_clock_ms(int *us_into_ms)
{
	int64		unix_us;

	unix_us = GetCurrentTimestamp() + SNOWFLAKE_UNIX_TO_PG_MS * 1000;
	*us_into_ms = (int) (unix_us % 1000);
	return unix_us / 1000 - snowflake_epoch_unix_ms;
}

/*
 * How far the clock may be past the coarse clock, in whole milliseconds, as
 * the kernel's timer ticks let us expect, or -1 where there is no coarse
 * clock (see snowflake_coarse_clock_ms).  The generator starts its margin
 * here and widens it where the exact clock finds the coarse clock lagging
 * more (see snowflake_coarse_check_exact in generate.c).
 */
int64		snowflake_coarse_lag_ms = -1;

/*
 * Find the coarse clock's lag, once, at module load, on Linux only.  The
 * resolution clock_getres() reports for CLOCK_REALTIME_COARSE there is the
 * time between timer ticks, at which the kernel stores the clock it reads;
 * it does so too when a processor leaves idle and when the clock is set.
 * A tick can come late, above all in a virtual machine whose host holds up
 * the processor that keeps time: allow five ticks, and a millisecond more.
 */
void
snowflake_clock_init(void)
{
#if defined(__linux__) && defined(CLOCK_REALTIME_COARSE)
	struct timespec ts;

	if (clock_getres(CLOCK_REALTIME_COARSE, &ts) == 0 && ts.tv_sec == 0)
		snowflake_coarse_lag_ms = 5 * ((ts.tv_nsec + 999999) / 1000000) + 1;
#endif
}

/*
 * A clock that nobody sets, in milliseconds from an arbitrary start, to
 * measure how far the wall clock may have moved.  CLOCK_BOOTTIME, where
 * there is one, also counts time the machine was suspended, so that a
 * machine woken from sleep does not look like a clock jump.
 */
int64
snowflake_monotonic_ms(void)
{
	struct timespec ts;

#ifdef CLOCK_BOOTTIME
	clock_gettime(CLOCK_BOOTTIME, &ts);
#else
	clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
