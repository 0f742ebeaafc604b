/*-------------------------------------------------------------------------
 *
 * contention.c
 *		The most that two sessions can make together on this machine when
 *		every ID takes one atomic addition to one shared word.
 *
 * Two threads each add 1 to one word with an atomic instruction, as a
 * generating backend does ahead of the clock, between spells of other work
 * that last NS nanoseconds (bench/run.sh passes the cost of one ID in one
 * session); one thread alone does the same.  No design that hands out
 * strictly increasing IDs from one word can let two sessions beat the ratio
 * of the two, since each ID has to move the word's cache line between the
 * processors.  Prints "ONE TWO", each in additions per second, the median
 * of five rounds: one thread alone, and both threads together.  Usage:
 * contention NS.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* alone on its cache line, as last_tick is */
static volatile uint64_t shared_word __attribute__((aligned(128)));

#define Min(a, b) ((a) < (b) ? (a) : (b))
#define ROUNDS 5

static long spins_per_spell;
static long additions = 2000000;

static double
seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Work that touches no shared memory, for the length of one spell. */
static void
spell(void)
{
	volatile long sink = 0;

	for (long i = 0; i < spins_per_spell; i++)
		sink += i;
}

static int
compare_doubles(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

static void *
generate(void *arg)
{
	(void) arg;
	for (long i = 0; i < additions; i++)
	{
		__atomic_fetch_add(&shared_word, 1, __ATOMIC_SEQ_CST);
		spell();
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	double		ns = argc > 1 ? atof(argv[1]) : 0;
	double		start;
	double		fastest = 1e9;
	double		one[ROUNDS];
	double		two[ROUNDS];
	pthread_t	threads[2];

	/*
	 * Size the spell from the fastest of five long ones: the others were
	 * slowed by something else on the machine.
	 */
	spins_per_spell = 2000000;
	for (int round = 0; round < 5; round++)
	{
		start = seconds();
		spell();
		fastest = Min(fastest, seconds() - start);
	}
	spins_per_spell = (long) (ns / (fastest * 1e9 / 2000000));

	/* the median of five rounds of each, one after the other */
	for (int round = 0; round < ROUNDS; round++)
	{
		start = seconds();
		generate(NULL);
		one[round] = additions / (seconds() - start);

		start = seconds();
		for (int i = 0; i < 2; i++)
			pthread_create(&threads[i], NULL, generate, NULL);
		for (int i = 0; i < 2; i++)
			pthread_join(threads[i], NULL);
		two[round] = 2 * additions / (seconds() - start);
	}
	qsort(one, ROUNDS, sizeof(double), compare_doubles);
	qsort(two, ROUNDS, sizeof(double), compare_doubles);

	printf("%.0f %.0f\n", one[ROUNDS / 2], two[ROUNDS / 2]);
	return 0;
}
