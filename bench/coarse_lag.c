/*-------------------------------------------------------------------------
 *
 * coarse_lag.c
 *		How far CLOCK_REALTIME_COARSE lags the clock on this machine, against
 *		the margin the generator allows for it (src/clock.c).
 *
 * Reads the coarse clock and then the clock, as fast as it can, for 10
 * seconds, and prints the coarse clock's resolution, the mean and the worst
 * lag seen, and the margin snowflake counts: five resolutions and 1 ms.  An
 * ID issued on the coarse clock could carry a time before the clock at the
 * start of its call only if the lag ever reached the margin.  Usage:
 * cc -O2 -o coarse_lag bench/coarse_lag.c && ./coarse_lag (Linux only).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <time.h>

static double
ms_between(const struct timespec *earlier, const struct timespec *later)
{
	return (later->tv_sec - earlier->tv_sec) * 1e3 +
		(later->tv_nsec - earlier->tv_nsec) / 1e6;
}

int
main(void)
{
	struct timespec resolution;
	struct timespec start;
	struct timespec now;
	double		worst = 0;
	double		sum = 0;
	long		samples = 0;
	long		resolution_ms;

	clock_getres(CLOCK_REALTIME_COARSE, &resolution);
	resolution_ms = (resolution.tv_nsec + 999999) / 1000000;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do
	{
		for (int i = 0; i < 1024; i++)
		{
			struct timespec coarse;
			struct timespec exact;
			double		lag;

			clock_gettime(CLOCK_REALTIME_COARSE, &coarse);
			clock_gettime(CLOCK_REALTIME, &exact);
			lag = ms_between(&coarse, &exact);
			if (lag > worst)
				worst = lag;
			sum += lag;
			samples++;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (ms_between(&start, &now) < 10000);

	printf("resolution %.3f ms; %ld readings in 10 s: mean lag %.2f ms, worst %.2f ms; margin %ld ms\n",
		   resolution.tv_nsec / 1e6, samples, sum / samples, worst,
		   5 * resolution_ms + 1);
	return 0;
}
