/*-------------------------------------------------------------------------
 *
 * clock_cost.c
 *		What one read of the clock costs on this machine, exact
 *		(CLOCK_REALTIME) against coarse (CLOCK_REALTIME_COARSE): the price of
 *		checking every ID claimed on the coarse clock against the exact one
 *		(see "The hot path" in docs/performance.md).
 *
 * Times a million reads of each clock, twenty times, and prints the best of
 * the twenty in nanoseconds a read: the best, since other work on the
 * machine only ever adds to a run.  Usage:
 * cc -O2 -o clock_cost bench/clock_cost.c && ./clock_cost (Linux only).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <time.h>

#define READS	1000000
#define RUNS	20

/* The best time of RUNS runs of READS reads of clock, in ns a read. */
static double
ns_a_read(clockid_t clock)
{
	double		best = -1;

	for (int run = 0; run < RUNS; run++)
	{
		struct timespec start;
		struct timespec end;
		struct timespec read;
		long		sum = 0;
		double		ns;

		clock_gettime(CLOCK_MONOTONIC, &start);
		for (int i = 0; i < READS; i++)
		{
			clock_gettime(clock, &read);
			sum += read.tv_nsec;
		}
		clock_gettime(CLOCK_MONOTONIC, &end);
		ns = ((end.tv_sec - start.tv_sec) * 1e9 +
			  (end.tv_nsec - start.tv_nsec)) / READS;
		/* keep the reads: the compiler may not drop what is printed */
		if (sum == 42)
			printf("%ld\n", sum);
		if (best < 0 || ns < best)
			best = ns;
	}
	return best;
}

int
main(void)
{
	printf("CLOCK_REALTIME:        %.1f ns a read\n", ns_a_read(CLOCK_REALTIME));
	printf("CLOCK_REALTIME_COARSE: %.1f ns a read\n",
		   ns_a_read(CLOCK_REALTIME_COARSE));
	return 0;
}
