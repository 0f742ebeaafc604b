/*-------------------------------------------------------------------------
 *
 * clock.c
 *		Reading the clock, and a monotonic clock to measure how far it moved.
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
