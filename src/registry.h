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

/* the bounds of the check-in interval, which settings.c checks too */
#define SNOWFLAKE_REGISTRY_MIN_CHECK_IN_MS	100
#define SNOWFLAKE_REGISTRY_MAX_CHECK_IN_MS	(3600 * 1000)

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
 * and end_ms within the promise the registry recorded for it.  Returns at
 * once in manual mode.
 */
extern void snowflake_registry_recheck(uint64 gate, int64 end_ms);

/*
 * The worker id claimed from the registry: -1 until the first claim.  It
 * changes only with the gate's generation (see SnowflakeRegistryState).
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
	CLAIM_REFUSED,				/* another start of this login holds it;
								 * retrying */
	CLAIM_WAITING,				/* a worker id is being freed for this server;
								 * retrying */
	CLAIM_FULL,					/* no worker id free; retrying */
	CLAIM_LIMIT,				/* this login holds all the claims it may;
								 * retrying */
	CLAIM_LAYOUT,				/* the id was used with another layout;
								 * retrying */
	CLAIM_UNREACHABLE,			/* no answer from the registry; retrying */
	CLAIM_LOST,					/* moved, released or forked: confirming,
								 * then claiming again */
	CLAIM_RELEASED				/* marked idle at shutdown: final */
} SnowflakeClaimStatus;

#define SNOWFLAKE_REGISTRY_TEXT_LEN 256

/* a UUID as text, with its terminating zero */
#define SNOWFLAKE_UUID_LEN 37

/*
 * The claim as this server holds it: the registry's version of it, the
 * nonce of the last extension it acknowledged, the nonce of an extension
 * (or claim) sent but not answered yet (empty: none), and the promise, in
 * milliseconds since the Unix epoch.  After a regrant in a new epoch, the
 * server goes on up to the promise of the version before (old_promise)
 * and moves above the new version's floor only when it gets there
 * (waiting_floor, -1 once applied).  A restarted registry worker goes on
 * with all of it.
 */
typedef struct SnowflakeHeldClaim
{
	int64		version;
	char		nonce[SNOWFLAKE_UUID_LEN];
	char		pending[SNOWFLAKE_UUID_LEN];
	int64		promise_unix_ms;
	int64		old_promise_unix_ms;
	int64		waiting_floor_unix_ms;
} SnowflakeHeldClaim;

/*
 * Everything but the first two fields under mutex.  The holder fields
 * describe who holds the claim this server was refused or lost (for a claim
 * of its own login only), and when, by the registry's clock at its answer,
 * it may pass (retry_in_ms, -1 if unknown); after a refusal for the
 * layout, holder is the fleet's layout.  reason is the registry's or
 * libpq's own words when it cannot be used; failure, those of the last
 * check-in that failed while the claim was held (empty once one succeeds),
 * which a call refused at the promise repeats.
 *
 * The gate reads the first two and worker_id on every ID without the lock.
 * fast_gate is the status in its low byte and, above, a generation that
 * grows each time the claim stops being usable, becomes usable again, or
 * changes holder version, so that a call that straddles such a moment sees
 * another generation after its compare-and-swap than before; worker_id
 * changes only with the generation.  fast_ceiling_ms is the promise, as an
 * ID's milliseconds: no ID past it is issued.  The registry worker writes
 * worker_id and the ceiling before fast_gate (and lowers nothing a call of
 * the same generation relies on).
 */
typedef struct SnowflakeRegistryState
{
	pg_atomic_uint64 fast_gate;
	pg_atomic_uint64 fast_ceiling_ms;
	slock_t		mutex;
	SnowflakeClaimStatus status;
	uint64		generation;
	int			worker_id;		/* -1 until claimed */
	SnowflakeHeldClaim claim;
	char		token[SNOWFLAKE_UUID_LEN];	/* this incarnation's token */
	int			holder_worker_id;	/* the claim refused, or -1 */
	char		holder[SNOWFLAKE_REGISTRY_TEXT_LEN];
	int64		retry_in_ms;
	uint64		answered_us;
	char		reason[SNOWFLAKE_REGISTRY_TEXT_LEN];
	char		failure[SNOWFLAKE_REGISTRY_TEXT_LEN];
} SnowflakeRegistryState;

/* the shared state, set up at postmaster start (registry.c) */
extern SnowflakeRegistryState *registry_state;

/* the registry settings (registry.c) */
extern char *registry_conninfo;
extern int	registry_check_in_interval;

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

/* this server's layout as the registry records it */
extern void registry_layout(char *out, size_t size);

/* for ereport: why this server's layout was refused, beside the fleet's */
extern int	registry_errdetail_layout(const char *fleet_layout);

/* what to do when the registry refuses this server's layout */
#define REGISTRY_LAYOUT_HINT \
	"Set \"snowflake.epoch\" and \"snowflake.time_bits\", \"snowflake.datacenter_bits\", \"snowflake.worker_bits\" and \"snowflake.sequence_bits\" to the fleet's layout; if the registry's is wrong, an operator sets it with snowflake_registry.configure(layout => ...)."

/* a random UUID as text, in SNOWFLAKE_UUID_LEN bytes */
extern bool registry_random_uuid(char *out);

/* the claim cache file (registry.c): the worker id to ask for first */
extern int	registry_read_cache(void);
extern void registry_write_cache(int worker_id);

#endif							/* REGISTRY_H */
