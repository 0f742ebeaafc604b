/*-------------------------------------------------------------------------
 *
 * state.h
 *		The shared state of the generator (state.c).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_STATE_H
#define SNOWFLAKE_STATE_H

#include "access/xlogdefs.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/lwlock.h"

/*
 * The IDs a backend issued, how many of them ahead of the clock, how many
 * on the coarse clock unchecked, the ticks its additions burnt, and the
 * clock its last claim read, in a slot that
 * only the backend with that PGPROC number writes, each on its own cache
 * line: counting costs a plain load and store on a line no other process
 * writes, rather than an atomic increment of a line that every generating
 * backend fights over.  A backend that takes over a slot goes on counting
 * from its values.
 */
typedef union SnowflakeBackendCounts
{
	struct
	{
		pg_atomic_uint64 ids;	/* IDs issued */
		pg_atomic_uint64 leads; /* ... of them ahead of the clock */
		pg_atomic_uint64 burnt; /* ticks claimed, then not issued */
		pg_atomic_uint64 unchecked; /* IDs claimed on the coarse clock that
									 * the exact clock did not check */
		pg_atomic_uint64 clock_ms;	/* the clock (or the coarse clock) as
									 * the last claim read it, in ms since
									 * the epoch */
	}			n;
	char		pad[PG_CACHE_LINE_SIZE];
} SnowflakeBackendCounts;

/*
 * Everything all backends share.  last_tick and durable_mark are read and
 * advanced with atomics only; mark_lock is held only by the one process (the
 * mark writer, or a backend) that writes a new mark, and never while waiting
 * for a standby or while an ID is being chosen.  A backend that needs a new
 * mark while another process holds the lock sleeps on mark_cv, which is
 * broadcast whenever the lock is released or a mark published, so that the
 * wait can be cancelled.  mark_writer_latch is set and cleared by the mark
 * writer alone and read without a lock, as PostgreSQL does with the WAL
 * writer's latch: at worst a backend sets a latch that no longer matters.
 * mark_invalid is set at startup, in redo, or under mark_lock when the file
 * is found to have gone backwards, always after its reason, and never
 * cleared, but for one case: on a standby refusing after pg_upgrade
 * (upgrade_pending), the first mark replayed from its primary clears both,
 * in redo, before any backend can generate there.  enabled is written by
 * the postmaster alone (see uninstall.c); a mark record is written only
 * under mark_lock, after enabled was read there, and last_record_end raised
 * to its end.
 */
typedef struct SnowflakeSharedState
{
	/*
	 * Every ID writes last_tick: it has a cache line of its own, so that
	 * writing it does not take from the other backends the lines that they
	 * only read on each call, below.
	 */
	pg_atomic_uint64 last_tick; /* largest tick issued or burnt (see
								 * snowflake_claims_may_add), or the floor */

	/*
	 * Read on each call and written rarely.  durable_mark: no ID reaches this
	 * ms until a larger mark is durable.
	 */
	pg_atomic_uint64 durable_mark pg_attribute_aligned(PG_CACHE_LINE_SIZE);
	pg_atomic_uint64 coarse_margin_ms;	/* how far the coarse clock is
										 * trusted to lag the clock (see
										 * snowflake_coarse_check_exact) */
	Latch	   *mark_writer_latch;	/* the mark writer's latch while it runs */
	pg_atomic_uint32 enabled;	/* snowflake.enabled, as the postmaster last
								 * read it */
	pg_atomic_uint32 refusal_logged;	/* current refusal episode logged */
	bool		mark_invalid;	/* generation is refused for good ... */
	bool		mark_restored;	/* ... the true mark was written back */
	bool		layout_changed; /* ... the epoch or layout changed */
	bool		upgrade_pending;	/* ... pg_upgrade made this cluster, and
									 * the old mark is not here yet */
	char		layout_hint[256];	/* what to do about these */
	char		mark_invalid_reason[512];

	/*
	 * The rest, written by marks and waits.  floor_tick: last_tick as the
	 * mark set it at start or in redo.
	 */
	pg_atomic_uint64 floor_tick pg_attribute_aligned(PG_CACHE_LINE_SIZE);
	pg_atomic_uint64 registry_floor_tick;	/* last_tick as a registry claim
											 * taken over set it, or 0 */
	pg_atomic_uint64 floor_clock_ms;	/* the clock when that mark was
										 * written, or PG_INT64_MAX if not
										 * known */
	LWLock	   *mark_lock;		/* serialises writers of the mark */
	ConditionVariable mark_cv;	/* mark_lock released or mark published */
	int64		written_mark;	/* largest mark in the file and WAL, which
								 * synchronous standbys may not have yet;
								 * under mark_lock */
	XLogRecPtr	written_lsn;	/* its last WAL record; under mark_lock */
	int64		file_mark;		/* the mark the file holds, as last read or
								 * written; under mark_lock */
	int64		clock_ref_ms;	/* the clock at the last mark write ... */
	int64		monotonic_ref_ms;	/* ... and the monotonic clock then; both
									 * under mark_lock */
	pg_atomic_uint64 write_duration_us; /* how long the last mark took */
	pg_atomic_uint64 max_write_duration_us; /* ... and the slowest */

	/* counters, shown by snowflake_status() */
	pg_atomic_uint64 sequence_waits;	/* calls that waited, within the lead,
										 * for the clock to reach their last
										 * ms */
	pg_atomic_uint64 clock_behind_waits;	/* calls that waited for the clock */
	pg_atomic_uint64 clock_errors;	/* calls refused: clock behind, resuming
									 * above the mark, or clock jumped */
	pg_atomic_uint64 coarse_misses; /* claims on the coarse clock that the
									 * exact clock found lagging beyond the
									 * margin */
	pg_atomic_uint64 max_step_back_ms;	/* the furthest a waiting call found
										 * the clock behind the clock that an
										 * earlier claim read */
	pg_atomic_uint64 writer_marks;	/* marks made durable by the writer */
	pg_atomic_uint64 backend_marks; /* ... and by backends */
	pg_atomic_uint64 episode_first_error;	/* clock_errors when the current
											 * episode began */
	pg_atomic_uint32 redo_write_failed; /* a replayed mark is not on disk */
	pg_atomic_uint64 last_record_end;	/* the end of the last mark record
										 * written or replayed since the start */

	/* IDs issued, one slot per backend (see snowflake_count_ids) */
	SnowflakeBackendCounts backend_counts[FLEXIBLE_ARRAY_MEMBER] pg_attribute_aligned(PG_CACHE_LINE_SIZE);
} SnowflakeSharedState;

extern SnowflakeSharedState *snowflake_state;
extern Size snowflake_shmem_size(void);
extern void snowflake_require_shared_state(const char *purpose);
extern bool snowflake_raise_counter(pg_atomic_uint64 *counter, uint64 value);
extern void snowflake_raise_floor(SnowflakeSharedState *state, int64 mark_ms);
extern void snowflake_raise_tick_floor(SnowflakeSharedState *state,
									   int64 mark_ms);

#endif							/* SNOWFLAKE_STATE_H */
