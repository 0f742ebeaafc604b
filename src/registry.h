/*-------------------------------------------------------------------------
 *
 * registry.h
 *		Worker ids claimed from a registry: what the generator and the
 *		settings ask of the registry (registry.c), and what the registry's
 *		gate (registry.c) and its background worker (registry_worker.c)
 *		share: the claim state in shared memory, the registry settings, the
 *		monotonic clock and the claim cache file.
 *
 * In manual mode the worker id is the snowflake.worker_id setting.  In
 * registry mode (snowflake.registry set) the registry worker claims it from
 * a registry server, and the generator asks registry.c, through the gate
 * below, whether this server may generate and with which worker id.
 *
 * The registry worker alone writes the shared state; backends only read it
 * (see SnowflakeRegistryState).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef REGISTRY_H
#define REGISTRY_H

#include "port/atomics.h"
#include "storage/spin.h"
#include "utils/guc.h"

/*---- what the rest of the module asks of the registry ----*/

/* the bounds of the registry's settings, which settings.c checks too */
#define SNOWFLAKE_REGISTRY_MIN_CHECK_IN_MS	100
#define SNOWFLAKE_REGISTRY_MAX_CHECK_IN_MS	(3600 * 1000)
#define SNOWFLAKE_REGISTRY_MIN_TAKEOVER_MS	100
#define SNOWFLAKE_REGISTRY_MAX_TAKEOVER_MS	(24 * 3600 * 1000)
#define SNOWFLAKE_REGISTRY_MIN_LEASE_S		60

/*
 * Is value a valid snowflake.registry?  If not, *detail says why.  Never
 * throws.
 */
extern bool snowflake_registry_check_conninfo(const char *value,
											  const char **detail);

/*
 * Called from _PG_init while preloading, once the settings are checked:
 * refuse to start when snowflake.worker_id is set in registry mode (which
 * worker_id_set says).  The caller registers the registry worker
 * (snowflake_registry_main) in registry mode.  Claims are made in
 * datacenter_id, for a worker id from 0 to max_worker_id (the server's
 * layout).
 */
extern void snowflake_registry_start(bool worker_id_set, int datacenter_id,
									 int max_worker_id);

/*
 * Registry mode's shared memory, which the module's shared-memory hooks ask
 * for and create in registry mode.
 */
extern Size snowflake_registry_shmem_size(void);
extern void snowflake_registry_shmem_init(void);

/*
 * In registry mode, return once this server holds a claim it may generate
 * with, waiting at most max_wait_ms for the first claim, and set *worker_id
 * to the claim's worker id; otherwise raise an error that says why.  Returns
 * at once in manual mode, leaving *worker_id alone.  The value returned
 * names the claim's state for snowflake_registry_recheck().
 */
extern uint64 snowflake_registry_gate(int max_wait_ms, int *worker_id);

/*
 * After ticks up to end_ms (an ID's time) were claimed: raise an error
 * unless the claim is still in the state the gate returned, still usable,
 * and end_ms within the time this server promised the registry.  Returns at
 * once in manual mode.
 */
extern void snowflake_registry_recheck(uint64 gate, int64 end_ms);

/*
 * The worker id claimed from the registry: -1 until the first claim, and
 * set for good once the gate passed.
 */
extern int	snowflake_registry_worker_id(void);

/* the registry worker's entry point (registry_worker.c) */
extern PGDLLEXPORT void snowflake_registry_main(Datum main_arg);

/*---- what registry.c and registry_worker.c share ----*/

/* where this server stands with its claim */
typedef enum SnowflakeClaimStatus
{
	CLAIM_PENDING,				/* no answer yet */
	CLAIM_HELD,					/* claimed from the registry */
	CLAIM_CACHED,				/* registry unreachable: the cached claim */
	CLAIM_REFUSED,				/* another start of this server holds it;
								 * watching it, retrying */
	CLAIM_WAITING,				/* a worker id is being freed for this server;
								 * watching it, retrying */
	CLAIM_FULL,					/* no worker id free; retrying */
	CLAIM_UNREACHABLE,			/* registry unreachable, no cache; retrying */
	CLAIM_LOST,					/* the claim moved away: final */
	CLAIM_RELEASED				/* marked idle at shutdown: final */
} SnowflakeClaimStatus;

#define SNOWFLAKE_REGISTRY_TEXT_LEN 256

/* fast_deadline_us and fast_ceiling_ms when nothing limits the claim */
#define REGISTRY_UNLIMITED	PG_UINT64_MAX

/*
 * Everything but the first three fields under mutex.  worker_id is set once,
 * when status first becomes CLAIM_HELD or CLAIM_CACHED, and never changes
 * afterwards.  The holder fields describe who holds the claim this server
 * was refused or lost, and how long before the registry's answer arrived
 * (answered_us) the holder last checked in; the watch fields since when this
 * server has seen that claim unchanged, every round answered (0: it is not
 * watching it), and for how long it must, as the registry said, before the
 * claim passes; reason is the registry's or libpq's own words when it cannot
 * be used.
 *
 * The gate reads the first three on every ID without the lock.  fast_gate
 * is the status in its low byte and, above, a generation that grows each
 * time the claim stops being usable or becomes usable again, so that a call
 * that straddles such a moment sees another generation after its
 * compare-and-swap than before (a cached claim confirmed by the registry
 * stays in its generation).  With snowflake.registry_require_check_in,
 * fast_deadline_us is the monotonic time at which the claim stops being
 * usable (the last successful check-in, as sent, plus the takeover delay
 * agreed with the registry) and fast_ceiling_ms the latest ID time this
 * server promised the registry; both are REGISTRY_UNLIMITED otherwise.
 * fast_lease_end_us and fast_lease_ceiling_ms are the same limits whether
 * or not the worker's lease requires check-ins: a backend whose own
 * snowflake.registry_require_check_in is on applies them, so that turning
 * the setting on stops generation without check-ins even before the
 * registry worker has acted on the reload (or if it is stuck).  The
 * registry worker writes these after the fields under mutex, and fast_gate
 * last.
 */
typedef struct SnowflakeRegistryState
{
	pg_atomic_uint64 fast_gate;
	pg_atomic_uint64 fast_deadline_us;
	pg_atomic_uint64 fast_ceiling_ms;
	pg_atomic_uint64 fast_lease_end_us;
	pg_atomic_uint64 fast_lease_ceiling_ms;
	slock_t		mutex;
	SnowflakeClaimStatus status;
	uint64		generation;
	int			worker_id;		/* -1 until claimed */
	int			agreed_delay_ms;	/* the takeover delay in force */
	/* the lease as the registry worker knows it; see lease_* below */
	uint64		lease_confirmed_us;
	int			lease_delay_ms;
	bool		lease_required;
	int64		lease_ceiling_unix_ms;
	char		token[37];		/* this incarnation's token, a UUID */
	int			holder_worker_id;	/* the claim refused, or -1 */
	char		holder[SNOWFLAKE_REGISTRY_TEXT_LEN];
	char		holder_since[64];
	char		holder_checked_in[64];
	int64		holder_checked_in_ago_ms;	/* or -1 */
	uint64		answered_us;
	uint64		watch_since_us;
	int64		watch_wait_ms;
	char		reason[SNOWFLAKE_REGISTRY_TEXT_LEN];
} SnowflakeRegistryState;

/* the shared state, set up at postmaster start (registry.c) */
extern SnowflakeRegistryState *registry_state;

/* the registry settings (registry.c) */
extern char *registry_conninfo;
extern int	registry_check_in_interval;
extern int	registry_takeover_delay;
extern int	registry_reclaim_lease;
extern bool registry_require_check_in;

/*
 * Does this server claim its worker id from a registry?  Inline: every
 * generating call asks.
 */
static inline bool
snowflake_registry_enabled(void)
{
	return registry_conninfo != NULL && registry_conninfo[0] != '\0';
}

/* the server's datacenter id and largest worker id, set at start */
extern int	registry_datacenter_id;
extern int	registry_max_worker_id;

/* CLOCK_MONOTONIC in microseconds, comparable between processes */
extern uint64 registry_monotonic_us(void);

/* the claim cache file (registry.c) */
extern bool registry_read_cache(int *worker_id, int64 *floor_unix_ms);
extern void registry_write_cache(int worker_id, int64 floor_unix_ms);

#endif							/* REGISTRY_H */
