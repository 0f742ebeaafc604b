/*-------------------------------------------------------------------------
 *
 * registry_libpq.h
 *		The registry worker's libpq helpers (registry_libpq.c).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_REGISTRY_LIBPQ_H
#define SNOWFLAKE_REGISTRY_LIBPQ_H

#include "libpq-fe.h"

#include "registry.h"

/* what the registry said about a claim (see snowflake_registry_answer) */
typedef struct RegistryAnswer
{
	char		status[16];		/* claimed, refused, waiting, full; held,
								 * moved, released */
	int			worker_id;		/* -1 if none */
	char		holder[SNOWFLAKE_REGISTRY_TEXT_LEN];	/* who holds it */
	char		holder_since[64];
	char		holder_checked_in[64];
	int64		version;		/* of the claim refused or waited for */
	int64		wait_ms;		/* how long to see that version unchanged */
	int64		floor_unix_ms;	/* claimed: IDs must lie after this, or -1 */
	int64		checked_in_ago_ms;	/* the holder's last check-in, by the
									 * registry's clock when it answered, or
									 * -1 */
} RegistryAnswer;

/* the registry extension's schema, quoted, once connected */
extern char registry_schema[2 * NAMEDATALEN + 3];

/*
 * How long one connection attempt or one statement may take, and whether a
 * shutdown request ends the wait early (it does during the worker's
 * rounds, not while it marks the claim idle at shutdown).
 */
typedef struct RegistryPatience
{
	long		timeout_ms;
	bool		stop_at_shutdown;
} RegistryPatience;

extern RegistryPatience registry_patience_in_rounds(void);
extern RegistryPatience registry_patience_at_shutdown(void);
extern PGresult *registry_exec(PGconn *conn, const char *query, int nparams,
							   const char *const *params,
							   RegistryPatience patience, char *reason);
extern bool registry_ask(PGconn *conn, const char *call, int nparams,
						 const char *const *params, RegistryAnswer *answer,
						 uint64 *sent_us, uint64 *received_us, char *reason);
extern PGconn *registry_open(RegistryPatience patience, char *reason);

#endif							/* SNOWFLAKE_REGISTRY_LIBPQ_H */
