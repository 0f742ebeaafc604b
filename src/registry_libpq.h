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

/* what the registry said about a claim (see snowflake_registry.answer) */
typedef struct RegistryAnswer
{
	char		status[16];		/* claimed, refused, waiting, full, limit,
								 * layout; extended, regranted, moved,
								 * released, forked */
	int			worker_id;		/* -1 if none */
	int64		version;		/* -1 if none */
	int64		floor_unix_ms;	/* IDs must lie after this, or -1 */
	int64		promise_unix_ms;	/* and never pass this, or -1 */
	int64		retry_in_ms;	/* when a refused claim may pass, by the
								 * registry's clock, or -1 */
	char		holder[SNOWFLAKE_REGISTRY_TEXT_LEN];	/* who holds it, for a
														 * claim of this login;
														 * with layout, the
														 * fleet's layout */
} RegistryAnswer;

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
						 char *reason);
extern PGconn *registry_open(RegistryPatience patience, char *reason);

#endif							/* SNOWFLAKE_REGISTRY_LIBPQ_H */
