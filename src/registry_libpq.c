/*-------------------------------------------------------------------------
 *
 * registry_libpq.c
 *		Talking to the registry over libpq: connecting, running one
 *		statement, and calling the registry's functions, all without
 *		blocking the registry worker past a timeout.
 *
 * Only the registry worker (registry_worker.c) calls these.  Every failure
 * comes back as a false or NULL result with a reason for the log; none
 * raises an error.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "libpq-fe.h"
#include "miscadmin.h"
#include "postmaster/interrupt.h"
#include "storage/latch.h"
#include "utils/wait_event.h"

#include "registry.h"
#include "registry_libpq.h"


/*
 * The columns the worker reads from a snowflake_registry.answer "a": times
 * as milliseconds since the Unix epoch, the floor rounded up and the promise
 * down.  Every function and operator is named with its schema.
 */
#define REGISTRY_MS(expr) \
	"(EXTRACT(epoch FROM " expr ") OPERATOR(pg_catalog.*) 1000)"
#define REGISTRY_ANSWER_COLUMNS \
	"a.status, a.worker_id, a.version, " \
	"pg_catalog.ceil(" REGISTRY_MS("a.floor") ")::pg_catalog.int8, " \
	"pg_catalog.floor(" REGISTRY_MS("a.promise") ")::pg_catalog.int8, " \
	"pg_catalog.ceil(" REGISTRY_MS("a.retry_at OPERATOR(pg_catalog.-) " \
	"pg_catalog.clock_timestamp()") ")::pg_catalog.int8, " \
	"a.holder"

/*
 * A warning that came with the last statement's answer, such as a cancelled
 * wait for synchronous replication: then the statement's commit may not be
 * durable, and its answer is not taken.
 */
static char registry_warning[SNOWFLAKE_REGISTRY_TEXT_LEN];

static void
registry_notice_receiver(void *arg, const PGresult *notice)
{
	const char *severity = PQresultErrorField(notice,
											  PG_DIAG_SEVERITY_NONLOCALIZED);
	const char *message = PQresultErrorField(notice, PG_DIAG_MESSAGE_PRIMARY);

	if (severity != NULL && strcmp(severity, "WARNING") == 0 &&
		registry_warning[0] == '\0')
		snprintf(registry_warning, sizeof(registry_warning),
				 "The registry's answer came with a warning, so its commit may not be durable: %s",
				 message ? message : "");
}

/*
 * During the worker's rounds, how long one connection attempt or one
 * statement may take, stopped early by a shutdown request.  Nothing waits
 * for longer than a check-in interval (or a second): a registry that slow
 * counts as unreachable, and the next round tries again.
 */
RegistryPatience
registry_patience_in_rounds(void)
{
	RegistryPatience patience;

	patience.timeout_ms = Max(registry_check_in_interval, 1000);
	patience.stop_at_shutdown = true;
	return patience;
}

/*
 * At a clean shutdown: a second at most, and the shutdown request does not
 * end it.
 */
RegistryPatience
registry_patience_at_shutdown(void)
{
	RegistryPatience patience;

	patience.timeout_ms = 1000;
	patience.stop_at_shutdown = false;
	return patience;
}

/*
 * Wait for the registry's socket (or the latch, or the deadline).  Returns
 * false at the deadline, and on a shutdown request if patience says so.
 */
static bool
registry_wait_socket(PGconn *conn, int io_flag, uint64 deadline_us,
					 RegistryPatience patience)
{
	for (;;)
	{
		uint64		now_us = registry_monotonic_us();
		int			rc;

		if (now_us >= deadline_us || PQsocket(conn) < 0)
			return false;
		rc = WaitLatchOrSocket(MyLatch,
							   WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH | io_flag,
							   PQsocket(conn),
							   (long) ((deadline_us - now_us + 999) / 1000),
							   PG_WAIT_EXTENSION);
		if (rc & WL_LATCH_SET)
		{
			ResetLatch(MyLatch);
			if (patience.stop_at_shutdown && ShutdownRequestPending)
				return false;
		}
		if (rc & io_flag)
			return true;
	}
}

/*
 * Set *reason to prefix followed by libpq's last message for conn, without
 * its trailing newline.
 */
static void
registry_set_reason(char *reason, const char *prefix, PGconn *conn)
{
	size_t		len;

	snprintf(reason, SNOWFLAKE_REGISTRY_TEXT_LEN, "%s%s", prefix,
			 PQerrorMessage(conn));
	len = strlen(reason);
	while (len > 0 && reason[len - 1] == '\n')
		reason[--len] = '\0';
}

/*
 * Connect to the registry without blocking the worker past the timeout.  On
 * failure return NULL with *reason set.
 */
static PGconn *
registry_connect(RegistryPatience patience, char *reason)
{
	const char *keywords[] = {"dbname", "fallback_application_name", NULL};
	const char *values[] = {registry_conninfo, "snowflake registry worker", NULL};
	uint64		deadline_us = registry_monotonic_us() +
		patience.timeout_ms * 1000;
	PostgresPollingStatusType status = PGRES_POLLING_WRITING;
	PGconn	   *conn;

	conn = PQconnectStartParams(keywords, values, true);
	if (conn == NULL)
	{
		strlcpy(reason, "out of memory", SNOWFLAKE_REGISTRY_TEXT_LEN);
		return NULL;
	}
	while (PQstatus(conn) != CONNECTION_BAD &&
		   status != PGRES_POLLING_OK && status != PGRES_POLLING_FAILED)
	{
		if (!registry_wait_socket(conn,
								  status == PGRES_POLLING_READING ?
								  WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE,
								  deadline_us, patience))
		{
			snprintf(reason, SNOWFLAKE_REGISTRY_TEXT_LEN,
					 "Connecting to the registry did not complete within %ld ms.",
					 patience.timeout_ms);
			PQfinish(conn);
			return NULL;
		}
		status = PQconnectPoll(conn);
	}
	if (PQstatus(conn) != CONNECTION_OK)
	{
		registry_set_reason(reason, "Could not connect to the registry: ", conn);
		PQfinish(conn);
		return NULL;
	}
	return conn;
}

/*
 * Run one statement that returns one row.  On any failure (an error, a
 * timeout, a shutdown request if patience says so, or not exactly one row)
 * return NULL with *reason set; the caller then drops the connection.
 */
PGresult *
registry_exec(PGconn *conn, const char *query, int nparams,
			  const char *const *params, RegistryPatience patience,
			  char *reason)
{
	uint64		deadline_us = registry_monotonic_us() +
		patience.timeout_ms * 1000;
	PGresult   *result = NULL;
	PGresult   *next;

	registry_warning[0] = '\0';
	if (!PQsendQueryParams(conn, query, nparams, NULL, params, NULL, NULL, 0))
	{
		registry_set_reason(reason, "Could not send a query to the registry: ",
							conn);
		return NULL;
	}
	for (;;)
	{
		while (PQisBusy(conn))
		{
			if (!registry_wait_socket(conn, WL_SOCKET_READABLE, deadline_us,
									  patience))
			{
				snprintf(reason, SNOWFLAKE_REGISTRY_TEXT_LEN,
						 "The registry did not answer within %ld ms.",
						 patience.timeout_ms);
				PQclear(result);
				return NULL;
			}
			if (!PQconsumeInput(conn))
				break;
		}
		next = PQgetResult(conn);
		if (next == NULL)
			break;
		PQclear(result);
		result = next;
	}
	if (result == NULL || PQresultStatus(result) != PGRES_TUPLES_OK)
	{
		registry_set_reason(reason, "The registry could not run the query: ",
							conn);
		PQclear(result);
		return NULL;
	}
	if (PQntuples(result) != 1)
	{
		strlcpy(reason, "The registry returned no row.",
				SNOWFLAKE_REGISTRY_TEXT_LEN);
		PQclear(result);
		return NULL;
	}
	if (registry_warning[0] != '\0')
	{
		strlcpy(reason, registry_warning, SNOWFLAKE_REGISTRY_TEXT_LEN);
		PQclear(result);
		return NULL;
	}
	return result;
}

/*
 * Call one of the registry's functions that return a
 * snowflake_registry.answer (call is the call, with $n for the parameters)
 * and read the answer.  On failure return false with *reason set.
 */
bool
registry_ask(PGconn *conn, const char *call, int nparams,
			 const char *const *params, RegistryAnswer *answer, char *reason)
{
	char		query[1536];
	PGresult   *result;

	snprintf(query, sizeof(query),
			 "SELECT " REGISTRY_ANSWER_COLUMNS " FROM %s a", call);
	result = registry_exec(conn, query, nparams, params,
						   registry_patience_in_rounds(), reason);
	if (result == NULL)
		return false;

	strlcpy(answer->status, PQgetvalue(result, 0, 0), sizeof(answer->status));
	answer->worker_id = PQgetisnull(result, 0, 1) ? -1 :
		atoi(PQgetvalue(result, 0, 1));
	answer->version = PQgetisnull(result, 0, 2) ? -1 :
		strtoi64(PQgetvalue(result, 0, 2), NULL, 10);
	answer->floor_unix_ms = PQgetisnull(result, 0, 3) ? -1 :
		strtoi64(PQgetvalue(result, 0, 3), NULL, 10);
	answer->promise_unix_ms = PQgetisnull(result, 0, 4) ? -1 :
		strtoi64(PQgetvalue(result, 0, 4), NULL, 10);
	answer->retry_in_ms = PQgetisnull(result, 0, 5) ? -1 :
		Max(strtoi64(PQgetvalue(result, 0, 5), NULL, 10), 0);
	strlcpy(answer->holder, PQgetvalue(result, 0, 6), sizeof(answer->holder));
	PQclear(result);
	return true;
}

/*
 * Connect and find the snowflake_registry extension in the registry
 * database.  The session's search_path becomes pg_catalog alone, and its
 * statement_timeout the worker's patience.  On failure return NULL with
 * *reason set.
 */
PGconn *
registry_open(RegistryPatience patience, char *reason)
{
	PGconn	   *conn;
	PGresult   *result;
	char		timeout[16];
	const char *params[1];

	conn = registry_connect(patience, reason);
	if (conn == NULL)
		return NULL;
	PQsetNoticeReceiver(conn, registry_notice_receiver, NULL);

	/*
	 * The registry's statement_timeout ends a statement this worker stopped
	 * waiting for: a backend blocked on a claim lock does not notice that its
	 * client went away, and the connections of the retries would pile up on
	 * the registry.  It does not end a commit that waits for a synchronous
	 * standby (PostgreSQL turns it off before the commit): that backend
	 * waits on, with its rows locked, until a standby confirms; this worker
	 * has given up on it and takes no answer from it.  Warnings reach this
	 * worker whatever the login set (ALTER ROLE ... SET client_min_messages
	 * = error would hide the one of a cancelled wait for a synchronous
	 * standby, which makes the answer not durable).  Claims run at READ
	 * COMMITTED, whatever the login or the database set (the registry
	 * refuses a claim in an older snapshot).
	 */
	snprintf(timeout, sizeof(timeout), "%ld", patience.timeout_ms);
	params[0] = timeout;
	result = registry_exec(conn,
						   "SELECT e.extversion, "
						   "pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', false), "
						   "pg_catalog.set_config('statement_timeout', $1::pg_catalog.text, false), "
						   "pg_catalog.set_config('client_min_messages', 'warning', false), "
						   "pg_catalog.set_config('default_transaction_isolation', 'read committed', false) "
						   "FROM pg_catalog.pg_extension e "
						   "WHERE e.extname OPERATOR(pg_catalog.=) 'snowflake_registry'",
						   1, params, patience, reason);
	if (result == NULL)
	{
		if (strcmp(reason, "The registry returned no row.") == 0)
			strlcpy(reason, "The registry database has no snowflake_registry extension: run CREATE EXTENSION snowflake_registry there.",
					SNOWFLAKE_REGISTRY_TEXT_LEN);
		PQfinish(conn);
		return NULL;
	}
	PQclear(result);
	return conn;
}
