/*-------------------------------------------------------------------------
 *
 * layout.h
 *		The bit layout of an ID: the widths, the parts of an ID, and the
 *		epoch's constants.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_LAYOUT_H
#define SNOWFLAKE_LAYOUT_H

#include "datatype/timestamp.h"
#include "lib/stringinfo.h"

/*---- ID layout: the one place that knows the widths ----*/

/*
 * An ID is the low time + datacenter + worker + sequence bits of a positive
 * bigint, from high to low: milliseconds since the epoch, datacenter id,
 * worker id, sequence within the millisecond.  The bits above stay 0.  A
 * layout holds the four widths and what follows from them; every function
 * that composes or takes apart an ID goes through one.  The server's own is
 * snowflake_layout; foreign IDs decode with one made for them.
 */
typedef struct SnowflakeLayout
{
	int			time_bits;
	int			datacenter_bits;
	int			worker_bits;
	int			sequence_bits;
	int			worker_shift;	/* = sequence_bits */
	int			datacenter_shift;	/* = worker_shift + worker_bits */
	int			time_shift;		/* = datacenter_shift + datacenter_bits */
	int64		max_sequence;
	int			max_worker_id;
	int			max_datacenter_id;
	int64		max_ms;			/* the last millisecond an ID can carry */
} SnowflakeLayout;

/* Twitter's layout, the default */
#define SNOWFLAKE_DEFAULT_TIME_BITS			41
#define SNOWFLAKE_DEFAULT_DATACENTER_BITS	5
#define SNOWFLAKE_DEFAULT_WORKER_BITS		5
#define SNOWFLAKE_DEFAULT_SEQUENCE_BITS		12

/*
 * The widths a server's layout may have, the bounds of its settings, which
 * a mark file's layout keeps to as well.  The four add up to at most
 * SNOWFLAKE_MAX_ID_BITS, the bits of a positive bigint.  A foreign layout
 * (snowflake_parse_with_layout) has the same maxima.
 */
#define SNOWFLAKE_MIN_TIME_BITS				32
#define SNOWFLAKE_MAX_TIME_BITS				63
#define SNOWFLAKE_MAX_NODE_BITS				30
#define SNOWFLAKE_MIN_SEQUENCE_BITS			1
#define SNOWFLAKE_MAX_SEQUENCE_BITS			31
#define SNOWFLAKE_MAX_ID_BITS				63

StaticAssertDecl(SNOWFLAKE_DEFAULT_TIME_BITS + SNOWFLAKE_DEFAULT_DATACENTER_BITS +
				 SNOWFLAKE_DEFAULT_WORKER_BITS + SNOWFLAKE_DEFAULT_SEQUENCE_BITS ==
				 SNOWFLAKE_MAX_ID_BITS,
				 "Twitter's layout uses bits 0-62 exactly");

/* The parts of an ID, which the caller has checked is not negative. */
static inline int64
snowflake_id_ms(const SnowflakeLayout *layout, int64 id)
{
	return (id >> layout->time_shift) & layout->max_ms;
}

static inline int
snowflake_id_datacenter(const SnowflakeLayout *layout, int64 id)
{
	return (int) ((id >> layout->datacenter_shift) & layout->max_datacenter_id);
}

static inline int
snowflake_id_worker(const SnowflakeLayout *layout, int64 id)
{
	return (int) ((id >> layout->worker_shift) & layout->max_worker_id);
}

static inline int64
snowflake_id_sequence(const SnowflakeLayout *layout, int64 id)
{
	return id & layout->max_sequence;
}

/* An ID from its parts, each of which the caller has checked fits. */
static inline int64
snowflake_compose_id(const SnowflakeLayout *layout, int64 ms,
					 int datacenter_id, int worker_id, int64 sequence)
{
	return (int64) (((uint64) ms << layout->time_shift) |
					((uint64) datacenter_id << layout->datacenter_shift) |
					((uint64) worker_id << layout->worker_shift) |
					(uint64) sequence);
}

/* Twitter's epoch, 2010-11-04 01:42:54.657 UTC */
#define SNOWFLAKE_DEFAULT_EPOCH		"2010-11-04 01:42:54.657+00"

/* Milliseconds from the Unix epoch to PostgreSQL's (2000-01-01) */
#define SNOWFLAKE_UNIX_TO_PG_MS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000)

extern SnowflakeLayout snowflake_layout;
extern int64 snowflake_epoch_unix_ms;
extern void snowflake_layout_init(SnowflakeLayout *layout, int time_bits,
								  int datacenter_bits, int worker_bits,
								  int sequence_bits);
extern void snowflake_layout_init_twitter(SnowflakeLayout *layout);

/*---- the stamp: what a mark counts in ----*/

/*
 * An epoch and the four widths: what a mark's milliseconds count in.  The
 * mark file and the WAL record each carry one, so that a mark is never read
 * under settings that would give it another meaning.
 */
typedef struct SnowflakeStamp
{
	int64		epoch_unix_ms;
	int			time_bits;
	int			datacenter_bits;
	int			worker_bits;
	int			sequence_bits;
} SnowflakeStamp;

/*
 * The mark file and the WAL record each keep a stamp as fields named
 * epoch_unix_ms, time_bits, datacenter_bits, worker_bits and
 * sequence_bits, the widths in a uint8 each: read one from, or write one
 * to, such a struct.
 */
#define SNOWFLAKE_STAMP_LOAD(stamp, stored) \
	snowflake_stamp_make((stamp), (stored)->epoch_unix_ms, \
						 (stored)->time_bits, (stored)->datacenter_bits, \
						 (stored)->worker_bits, (stored)->sequence_bits)
#define SNOWFLAKE_STAMP_STORE(stored, stamp) \
	do { \
		(stored)->epoch_unix_ms = (stamp)->epoch_unix_ms; \
		(stored)->time_bits = (uint8) (stamp)->time_bits; \
		(stored)->datacenter_bits = (uint8) (stamp)->datacenter_bits; \
		(stored)->worker_bits = (uint8) (stamp)->worker_bits; \
		(stored)->sequence_bits = (uint8) (stamp)->sequence_bits; \
	} while (0)

extern void snowflake_stamp_make(SnowflakeStamp *stamp, int64 epoch_unix_ms,
								 int time_bits, int datacenter_bits,
								 int worker_bits, int sequence_bits);
extern void snowflake_stamp_current(SnowflakeStamp *stamp);
extern void snowflake_stamp_twitter(SnowflakeStamp *stamp,
									int64 epoch_unix_ms);
extern bool snowflake_stamp_equal(const SnowflakeStamp *a,
								  const SnowflakeStamp *b);
extern void snowflake_stamp_describe_change(StringInfo buf,
											const SnowflakeStamp *was,
											const SnowflakeStamp *now);
extern void snowflake_stamp_layout(const SnowflakeStamp *stamp,
								   SnowflakeLayout *layout);

#endif							/* SNOWFLAKE_LAYOUT_H */
