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

/*
 * The widths of the node fields (the rest of the layout is in snowflake.c),
 * which also bound the worker ids a registry hands out.
 */
#define SNOWFLAKE_WORKER_BITS		5
#define SNOWFLAKE_DATACENTER_BITS	5
#define SNOWFLAKE_MAX_WORKER_ID		((1 << SNOWFLAKE_WORKER_BITS) - 1)
#define SNOWFLAKE_MAX_DATACENTER_ID ((1 << SNOWFLAKE_DATACENTER_BITS) - 1)

/* the node settings, defined in snowflake.c */
extern int	snowflake_datacenter_id;

/* Write a small state file of the data directory durably (snowflake.c). */
extern bool snowflake_write_file_durably(const char *path,
										 const char *temp_path,
										 const void *data, size_t size,
										 int elevel);

/*
 * Called from _PG_init while preloading: define the registry settings,
 * refuse to start when snowflake.worker_id is set in registry mode, and in
 * registry mode ask for shared memory and register the registry worker.
 * worker_id_set says whether snowflake.worker_id was given in any
 * configuration source.
 */
extern void snowflake_registry_init(bool worker_id_set);

/* Does this server claim its worker id from a registry? */
extern bool snowflake_registry_enabled(void);

/*
 * In registry mode, return once this server holds a claim it may generate
 * with, waiting at most max_wait_ms for the first claim; otherwise raise an
 * error that says why.  Returns at once in manual mode.
 */
extern void snowflake_registry_gate(int max_wait_ms);

/* The worker id claimed from the registry; valid once the gate passed. */
extern int	snowflake_registry_worker_id(void);

#endif							/* SNOWFLAKE_H */
