/*-------------------------------------------------------------------------
 *
 * snowflake.h
 *		What the generator (snowflake.c) and the worker id registry client
 *		(registry.c) share.
 *
 * In manual mode the worker id is the snowflake.worker_id setting.  In
 * registry mode (snowflake.registry set) a background worker claims it from
 * a registry server, and the generator asks registry.c, through the gate
 * below, whether this server may generate and with which worker id.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_H
#define SNOWFLAKE_H

#include "utils/guc.h"

/* the bounds of the registry's settings, which snowflake.c checks too */
#define SNOWFLAKE_REGISTRY_MIN_CHECK_IN_MS	100
#define SNOWFLAKE_REGISTRY_MAX_CHECK_IN_MS	(3600 * 1000)
#define SNOWFLAKE_REGISTRY_MIN_TAKEOVER_MS	100
#define SNOWFLAKE_REGISTRY_MAX_TAKEOVER_MS	(24 * 3600 * 1000)
#define SNOWFLAKE_REGISTRY_MIN_LEASE_S		60

/* Write a small state file of the data directory durably (snowflake.c). */
extern bool snowflake_write_file_durably(const char *path,
										 const char *temp_path,
										 const void *data, size_t size,
										 int elevel);

/*
 * What the registry worker needs of the generator (snowflake.c), in
 * milliseconds since the Unix epoch: make every later ID carry a time after
 * unix_ms; the latest time an ID issued within the next within_ms can carry;
 * the newest ID's time; and a time as an ID's time (since snowflake.epoch).
 */
extern void snowflake_raise_id_floor(int64 unix_ms);
extern int64 snowflake_id_time_bound(int64 within_ms);
extern int64 snowflake_newest_id_unix_ms(void);
extern int64 snowflake_unix_to_id_ms(int64 unix_ms);

/*
 * Register a background worker of this library (function_name is its entry
 * point, name its title) that starts where IDs are generated: on a primary,
 * and on a standby at its promotion; restarted a second after an error.
 */
extern void snowflake_register_worker(const char *function_name,
									  const char *name);

/*
 * Define the registry settings, from snowflake.c's definition of all
 * settings; start_context is the context of the server-start ones.
 */
extern void snowflake_registry_define_settings(GucContext start_context);

/*
 * Is value a valid snowflake.registry?  If not, *detail says why.  Never
 * throws.
 */
extern bool snowflake_registry_check_conninfo(const char *value,
											  const char **detail);

/*
 * Called from _PG_init while preloading, once the settings are checked:
 * refuse to start when snowflake.worker_id is set in registry mode (which
 * worker_id_set says), and in registry mode ask for shared memory and
 * register the registry worker.  Claims are made in datacenter_id, for a
 * worker id from 0 to max_worker_id (the server's layout).
 */
extern void snowflake_registry_start(bool worker_id_set, int datacenter_id,
									 int max_worker_id);

/* Does this server claim its worker id from a registry? */
extern bool snowflake_registry_enabled(void);

/*
 * In registry mode, return once this server holds a claim it may generate
 * with, waiting at most max_wait_ms for the first claim; otherwise raise an
 * error that says why.  Returns at once in manual mode.  The value returned
 * names the claim's state for snowflake_registry_recheck().
 */
extern uint64 snowflake_registry_gate(int max_wait_ms);

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

#endif							/* SNOWFLAKE_H */
