/*-------------------------------------------------------------------------
 *
 * registry_worker.c
 *		The registry worker: the background worker that claims this server's
 *		worker id from the registry over libpq, checks in, and marks the
 *		claim idle at a clean shutdown.
 *
 * Only this worker talks to the network, and only it writes the claim state
 * in shared memory (registry.h) that backends read in the gate
 * (registry.c).  registry.c's header comment states the rule a claim
 * follows.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "access/xlog.h"
#include "libpq-fe.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "port/pg_crc32c.h"
#include "portability/instr_time.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "postmaster/postmaster.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "mark.h"
#include "registry.h"
#include "registry_libpq.h"


/*---- function declarations ----*/

static bool registry_mark_idle(PGconn *conn, int worker_id,
							   int64 newest_unix_ms,
							   RegistryPatience patience, char *reason);

/* the registry's last failure was logged; reset by a success */
static bool registry_failure_logged = false;

/*
 * The lease, as this worker knows the registry holds it.  It is what the
 * last successful claim or check-in sent, except that a shorter takeover
 * delay, or require_check_in turned on, applies here from the moment it is
 * sent: the registry may hold it already even if its answer is lost.
 */
static uint64 lease_confirmed_us = 0;	/* when the last success was sent */
static int	lease_delay_ms = 0;
static bool lease_required = false;
static int64 lease_ceiling_unix_ms = 0; /* the latest ID time promised */

/*
 * The claim this worker watches while it is refused or waits: the version
 * the registry last showed, and since when (monotonic, at the answer's
 * arrival) it has seen it unchanged, with every round in between answered.
 */
static bool watch_valid = false;
static int	watch_worker_id;
static int64 watch_version;
static uint64 watch_since_us;
static int64 watch_wait_ms;

/* the claim was lost, and the registry not yet told that this server stopped */
static bool lost_unconfirmed = false;

/* the floor in the claim file, or -1 */
static int64 cached_floor_unix_ms = -1;

/*
 * A claim was just taken over above a floor that may lie past the time the
 * claim promised: check in at once, to promise a time past the floor.
 */
static bool check_in_now = false;

/*
 * Publish the lease's limits for the gate: with require_check_in in force, a
 * claim from the registry is usable until its last successful check-in plus
 * the takeover delay, for IDs up to the time promised then; the cached
 * claim not at all.  Without, nothing limits either.
 */
static void
registry_publish_limits(SnowflakeClaimStatus status)
{
	uint64		deadline_us = REGISTRY_UNLIMITED;
	uint64		ceiling_ms = REGISTRY_UNLIMITED;
	uint64		lease_end_us;
	uint64		lease_ceiling_ms;

	/* kept in shared memory for a registry worker that restarts */
	SpinLockAcquire(&registry_state->mutex);
	registry_state->lease_confirmed_us = lease_confirmed_us;
	registry_state->lease_delay_ms = lease_delay_ms;
	registry_state->lease_required = lease_required;
	registry_state->lease_ceiling_unix_ms = lease_ceiling_unix_ms;
	SpinLockRelease(&registry_state->mutex);

	lease_end_us = status == CLAIM_HELD ?
		lease_confirmed_us + (uint64) lease_delay_ms * 1000 : 0;
	lease_ceiling_ms = (uint64) Max(snowflake_unix_to_id_ms(lease_ceiling_unix_ms), 0);
	if (lease_required)
	{
		deadline_us = lease_end_us;
		ceiling_ms = lease_ceiling_ms;
	}
	pg_atomic_write_u64(&registry_state->fast_lease_end_us, lease_end_us);
	pg_atomic_write_u64(&registry_state->fast_lease_ceiling_ms,
						lease_ceiling_ms);
	pg_atomic_write_u64(&registry_state->fast_deadline_us, deadline_us);
	pg_atomic_write_u64(&registry_state->fast_ceiling_ms, ceiling_ms);
}

/*
 * Apply the lease settings as they are now, where they only make the lease
 * stricter: a shorter takeover delay, or require_check_in turned on, count
 * from now on, before the registry has confirmed them.  Longer or looser
 * ones count once a check-in carried them.
 */
static void
registry_tighten_lease(SnowflakeClaimStatus status)
{
	if (lease_delay_ms == 0 || registry_takeover_delay < lease_delay_ms)
		lease_delay_ms = registry_takeover_delay;
	lease_required = lease_required || registry_require_check_in;
	registry_publish_limits(status);
}

/*
 * Say in the log what the new status means for this server: that it claimed
 * a worker id, or why it generates no IDs, and what the registry answered.
 */
static void
registry_log_status(SnowflakeClaimStatus status, int worker_id,
					const RegistryAnswer *answer, const char *reason)
{
	switch (status)
	{
		case CLAIM_HELD:
			ereport(LOG,
					(errmsg("claimed snowflake worker id %d of datacenter %d from the registry",
							worker_id, registry_datacenter_id)));
			break;
		case CLAIM_CACHED:
			ereport(LOG,
					(errmsg("the snowflake registry cannot be used; generating with the cached claim on worker id %d of datacenter %d",
							worker_id, registry_datacenter_id),
					 errdetail_internal("%s", reason)));
			break;
		case CLAIM_REFUSED:
			ereport(LOG,
					(errmsg("the snowflake registry refused this server's claim; no IDs are generated until it passes to this server"),
					 errdetail("Worker id %d of datacenter %d is held by %s since %s, and last checked in at %s, %lld ms ago.",
							   answer->worker_id, registry_datacenter_id,
							   answer->holder, answer->holder_since,
							   answer->holder_checked_in,
							   (long long) answer->checked_in_ago_ms),
					 errhint("The claim passes to this server once its holder marks it idle, or once the registry has shown it unchanged to this server for %lld ms. This is expected after a failover or a crash restart; a holder that keeps checking in is a running server, of which this server is a copy.",
							 (long long) answer->wait_ms)));
			break;
		case CLAIM_WAITING:
			ereport(LOG,
					(errmsg("snowflake worker id %d of datacenter %d is being freed for this server; no IDs are generated until it passes to this server",
							answer->worker_id, registry_datacenter_id),
					 errdetail("It was held by %s, which last checked in at %s.",
							   answer->holder, answer->holder_checked_in)));
			break;
		case CLAIM_FULL:
			ereport(LOG,
					(errmsg("all %d snowflake worker ids of datacenter %d are claimed; no IDs are generated",
							registry_max_worker_id + 1, registry_datacenter_id),
					 errhint("Release the claims of servers that are gone with snowflake_registry_release() on the registry, or set another \"snowflake.datacenter_id\".")));
			break;
		case CLAIM_UNREACHABLE:
			ereport(LOG,
					(errmsg("the snowflake registry cannot be used, and this server has no cached claim; no IDs are generated"),
					 errdetail_internal("%s", reason)));
			break;
		case CLAIM_LOST:
			ereport(LOG,
					(errmsg("this server's claim on snowflake worker id %d of datacenter %d has moved; no more IDs are generated",
							worker_id, registry_datacenter_id),
					 answer == NULL || answer->holder[0] == '\0' ?
					 errdetail("The registry no longer records this server's claim.") :
					 answer->holder_since[0] == '\0' ?
					 errdetail("It was reassigned on the registry to %s, which has not claimed it yet.",
							   answer->holder) :
					 errdetail("It is held by %s since %s.",
							   answer->holder, answer->holder_since)));
			break;
		case CLAIM_PENDING:
		case CLAIM_RELEASED:
			break;
	}
}

/*
 * Publish a new state for the backends, and say in the log what changed.
 * The gate's value changes generation whenever the claim stops or starts
 * being usable, so that a call that straddled it fails its recheck.
 */
static void
registry_publish(SnowflakeClaimStatus status, int worker_id,
				 const RegistryAnswer *answer, const char *reason)
{
	SnowflakeRegistryState *state = registry_state;
	SnowflakeClaimStatus old_status;
	bool		was_usable;
	bool		is_usable;
	uint64		gate;

	is_usable = status == CLAIM_HELD || status == CLAIM_CACHED;
	SpinLockAcquire(&state->mutex);
	old_status = state->status;
	was_usable = old_status == CLAIM_HELD || old_status == CLAIM_CACHED;
	if (was_usable != is_usable)
		state->generation++;
	state->status = status;
	if (worker_id >= 0)
		state->worker_id = worker_id;
	state->agreed_delay_ms = lease_delay_ms;
	state->holder_worker_id = answer ? answer->worker_id : -1;
	strlcpy(state->holder, answer ? answer->holder : "", sizeof(state->holder));
	strlcpy(state->holder_since, answer ? answer->holder_since : "",
			sizeof(state->holder_since));
	strlcpy(state->holder_checked_in, answer ? answer->holder_checked_in : "",
			sizeof(state->holder_checked_in));
	state->holder_checked_in_ago_ms = answer ? answer->checked_in_ago_ms : -1;
	state->answered_us = registry_monotonic_us();
	state->watch_since_us = watch_valid ? watch_since_us : 0;
	state->watch_wait_ms = watch_wait_ms;
	strlcpy(state->reason, reason ? reason : "", sizeof(state->reason));
	worker_id = state->worker_id;
	gate = (state->generation << 8) | (uint64) status;
	SpinLockRelease(&state->mutex);
	registry_publish_limits(status);
	pg_write_barrier();
	pg_atomic_write_u64(&state->fast_gate, gate);

	/* what follows may read the newest ID: after every call that saw "gate" */
	pg_memory_barrier();

	if (status != old_status)
		registry_log_status(status, worker_id, answer, reason);
}

/*
 * The registry failed us: say so once, and fall back as the state allows.
 * Watching a claim starts over: the registry must answer every round of it.
 */
static void
registry_failed(SnowflakeClaimStatus status, int cached_worker_id,
				const char *reason)
{
	watch_valid = false;
	SpinLockAcquire(&registry_state->mutex);
	registry_state->watch_since_us = 0;
	SpinLockRelease(&registry_state->mutex);
	if (status == CLAIM_PENDING || status == CLAIM_UNREACHABLE)
	{
		/* never answered: the cached claim, if any, stands in */
		if (cached_worker_id >= 0)
			registry_publish(CLAIM_CACHED, cached_worker_id, NULL, reason);
		else
			registry_publish(CLAIM_UNREACHABLE, -1, NULL, reason);
	}
	else if (!registry_failure_logged)
		ereport(LOG,
				(errmsg("could not reach the snowflake registry; this server keeps its claim state and retries"),
				 errdetail_internal("%s", reason)));
	registry_failure_logged = true;
}

/*
 * Note a claim the registry refused or holds back, answered at received_us:
 * the watch goes on while it shows the same version of the same claim, and
 * starts over otherwise.
 */
static void
registry_watch(const RegistryAnswer *answer, uint64 received_us)
{
	if (!watch_valid || watch_worker_id != answer->worker_id ||
		watch_version != answer->version)
	{
		watch_valid = true;
		watch_worker_id = answer->worker_id;
		watch_version = answer->version;
		watch_since_us = received_us;
	}
	watch_wait_ms = answer->wait_ms;
}

/*
 * Has this server watched the claim unchanged for as long as the registry
 * asked?  The wait is timed on the monotonic clock, which no clock step
 * moves, from the first answer that showed this version (the holder's last
 * check-in was sent before it), with a margin of 0.1% for the two machines'
 * clocks running at slightly different rates.
 */
static bool
registry_watched_long_enough(void)
{
	uint64		wait_us = (uint64) watch_wait_ms * 1001;

	return watch_valid && registry_monotonic_us() - watch_since_us >= wait_us;
}

/* a millisecond time (since the Unix epoch) as a parameter */
#define REGISTRY_TIME_PARAM(n) "pg_catalog.to_timestamp($" #n "::float8 / 1000)"

/*
 * The parameters of a call of snowflake_registry_claim(), with the room their
 * text takes.
 */
typedef struct RegistryClaimCall
{
	char		datacenter[12];
	char		system_identifier[24];
	char		timeline[12];
	char		host[256];
	char		port[12];
	char		takeover[12];
	char		lease[12];
	char		max_worker[12];
	char		preferred[12];
	char		expected_worker[12];
	char		expected_version[24];
	char		ceiling[24];
	const char *params[15];
} RegistryClaimCall;

/*
 * Fill in the parameters of a claim: who this server is, the lease terms it
 * asks for (takeover delay delay_ms, require_check_in required, no ID past
 * ceiling_unix_ms before its next check-in), the worker id it prefers, and,
 * once it has watched a claim long enough, the version of it that it takes
 * over.
 */
static void
registry_claim_call(RegistryClaimCall *call, int cached_worker_id,
					int delay_ms, bool required, int64 ceiling_unix_ms)
{
	bool		watched = registry_watched_long_enough();

	snprintf(call->datacenter, sizeof(call->datacenter), "%d",
			 registry_datacenter_id);
	snprintf(call->system_identifier, sizeof(call->system_identifier),
			 INT64_FORMAT, (int64) GetSystemIdentifier());
	snprintf(call->timeline, sizeof(call->timeline), "%u",
			 GetWALInsertionTimeLine());
	if (gethostname(call->host, sizeof(call->host)) != 0)
		strlcpy(call->host, "unknown", sizeof(call->host));
	call->host[sizeof(call->host) - 1] = '\0';
	snprintf(call->port, sizeof(call->port), "%d", PostPortNumber);
	snprintf(call->takeover, sizeof(call->takeover), "%d", delay_ms);
	snprintf(call->lease, sizeof(call->lease), "%d", registry_reclaim_lease);
	snprintf(call->max_worker, sizeof(call->max_worker), "%d",
			 registry_max_worker_id);
	snprintf(call->preferred, sizeof(call->preferred), "%d",
			 cached_worker_id);
	snprintf(call->expected_worker, sizeof(call->expected_worker), "%d",
			 watch_worker_id);
	snprintf(call->expected_version, sizeof(call->expected_version),
			 INT64_FORMAT, watch_version);
	snprintf(call->ceiling, sizeof(call->ceiling), INT64_FORMAT,
			 ceiling_unix_ms);
	call->params[0] = call->datacenter;
	call->params[1] = call->system_identifier;
	call->params[2] = call->timeline;
	call->params[3] = registry_state->token;
	call->params[4] = call->host;
	call->params[5] = call->port;
	call->params[6] = DataDir;
	call->params[7] = call->takeover;
	call->params[8] = call->lease;
	call->params[9] = call->max_worker;
	call->params[10] = cached_worker_id >= 0 ? call->preferred : NULL;
	call->params[11] = watched ? call->expected_worker : NULL;
	call->params[12] = watched ? call->expected_version : NULL;
	call->params[13] = call->ceiling;
	call->params[14] = required ? "true" : "false";
}

/*
 * The registry granted the claim in answer, sent at sent_us under the lease
 * terms asked for.  Use it, unless this server must keep known_worker_id and
 * was granted another: then give that one back.  Returns false, with
 * reason, where the registry could not be used.
 */
static bool
registry_claim_granted(PGconn *conn, const RegistryAnswer *answer,
					   int known_worker_id, int cached_worker_id,
					   uint64 sent_us, int delay_ms, bool required,
					   int64 ceiling_unix_ms, char *reason)
{
	/* never use an id that the layout cannot hold */
	if (answer->worker_id < 0 || answer->worker_id > registry_max_worker_id)
	{
		snprintf(reason, SNOWFLAKE_REGISTRY_TEXT_LEN,
				 "The registry granted worker id %d, which is outside 0 to %d, the worker ids of this server's layout.",
				 answer->worker_id, registry_max_worker_id);
		return false;
	}
	watch_valid = false;
	if (known_worker_id >= 0 && answer->worker_id != known_worker_id)
	{
		/* give back the id just granted: it is of no use here */
		registry_publish(CLAIM_LOST, -1, NULL, NULL);
		return registry_mark_idle(conn, answer->worker_id, -1,
								  registry_patience_in_rounds(), reason);
	}
	if (answer->floor_unix_ms >= 0)
	{
		snowflake_raise_id_floor(answer->floor_unix_ms);
		check_in_now = true;
	}
	lease_confirmed_us = sent_us;
	lease_delay_ms = delay_ms;
	lease_required = required;
	lease_ceiling_unix_ms = ceiling_unix_ms;
	if (answer->worker_id != cached_worker_id ||
		answer->floor_unix_ms != cached_floor_unix_ms)
	{
		registry_write_cache(answer->worker_id, answer->floor_unix_ms);
		cached_floor_unix_ms = answer->floor_unix_ms;
	}
	registry_publish(CLAIM_HELD, answer->worker_id, NULL, NULL);
	return true;
}

/*
 * Claim a worker id.  This server already generates with the cached claim,
 * or held one before it was refused: then only that same worker id will
 * do, and anything else means that it moved.  A claim taken over from
 * another start or server makes every later ID lie above the previous
 * holder's promise.
 */
static bool
registry_claim(PGconn *conn, SnowflakeClaimStatus status,
			   int cached_worker_id, char *reason)
{
	RegistryClaimCall call;
	RegistryAnswer answer;
	uint64		sent_us;
	uint64		received_us;
	int			known_worker_id = snowflake_registry_worker_id();
	int			delay_ms = registry_takeover_delay;
	bool		required = registry_require_check_in;
	int64		ceiling_unix_ms = snowflake_id_time_bound(delay_ms);

	registry_claim_call(&call, cached_worker_id, delay_ms, required,
						ceiling_unix_ms);
	if (!registry_ask(conn,
					  "snowflake_registry_claim($1, $2, $3, $4, $5, $6, $7, "
					  "$8 * interval '1 ms', $9 * interval '1 s', $10, $11, "
					  "$12, $13, " REGISTRY_TIME_PARAM(14) ", $15)",
					  lengthof(call.params), call.params,
					  &answer, &sent_us, &received_us, reason))
		return false;

	if (strcmp(answer.status, "claimed") == 0)
		return registry_claim_granted(conn, &answer, known_worker_id,
									  cached_worker_id, sent_us, delay_ms,
									  required, ceiling_unix_ms, reason);
	if (strcmp(answer.status, "refused") == 0 ||
		strcmp(answer.status, "waiting") == 0)
	{
		registry_watch(&answer, received_us);
		registry_publish(answer.status[0] == 'r' ? CLAIM_REFUSED : CLAIM_WAITING,
						 -1, &answer, NULL);
	}
	else if (status == CLAIM_CACHED || known_worker_id >= 0)
		registry_publish(CLAIM_LOST, -1, NULL, NULL);
	else
		registry_publish(CLAIM_FULL, -1, NULL, NULL);
	return true;
}

/*
 * The parameters that name this server's claim in a call: $1 datacenter,
 * $2 worker id, $3 this start's token.
 */
typedef struct RegistryClaimKey
{
	char		datacenter[12];
	char		worker[12];
	const char *params[3];
} RegistryClaimKey;

static void
registry_claim_key(RegistryClaimKey *key, int worker_id)
{
	snprintf(key->datacenter, sizeof(key->datacenter), "%d",
			 registry_datacenter_id);
	snprintf(key->worker, sizeof(key->worker), "%d", worker_id);
	key->params[0] = key->datacenter;
	key->params[1] = key->worker;
	key->params[2] = registry_state->token;
}

/*
 * Mark this server's claim on worker_id idle, with newest_unix_ms, the time
 * of its newest ID (-1 for a claim it never generated with: the registry
 * keeps what it has): at a clean shutdown, or once it stopped generating
 * after learning that its claim was released or moved, so that whoever
 * gets the id next may take it at once, above that time.  The caller has
 * published a state that refuses IDs before it read newest_unix_ms, so no
 * ID is issued after it.
 */
static bool
registry_mark_idle(PGconn *conn, int worker_id, int64 newest_unix_ms,
				   RegistryPatience patience, char *reason)
{
	RegistryClaimKey key;
	char		newest[24];
	const char *params[4];
	char		query[1024];
	PGresult   *result;

	registry_claim_key(&key, worker_id);
	snprintf(newest, sizeof(newest), INT64_FORMAT, newest_unix_ms);
	params[0] = key.params[0];
	params[1] = key.params[1];
	params[2] = key.params[2];
	params[3] = newest_unix_ms >= 0 ? newest : NULL;
	snprintf(query, sizeof(query),
			 "SELECT %s.snowflake_registry_idle($1, $2, $3, "
			 REGISTRY_TIME_PARAM(4) ")", registry_schema);
	result = registry_exec(conn, query, 4, params, patience, reason);
	if (result == NULL)
		return false;
	PQclear(result);
	return true;
}

/*
 * Confirm the claim held, with the lease's terms until the next check-in:
 * the takeover delay, require_check_in, and the latest time an ID issued
 * before then may carry.  Learn that the claim moved, if it did: then stop,
 * and tell the registry so.
 */
static bool
registry_check_in(PGconn *conn, char *reason)
{
	RegistryClaimKey key;
	RegistryAnswer answer;
	uint64		sent_us;
	uint64		received_us;
	int			delay_ms = registry_takeover_delay;
	bool		required = registry_require_check_in;
	int64		ceiling_unix_ms = snowflake_id_time_bound(delay_ms);
	char		takeover[12];
	char		ceiling[24];
	char		lease[12];
	const char *params[7];

	registry_tighten_lease(CLAIM_HELD);
	registry_claim_key(&key, snowflake_registry_worker_id());
	snprintf(takeover, sizeof(takeover), "%d", delay_ms);
	snprintf(ceiling, sizeof(ceiling), INT64_FORMAT, ceiling_unix_ms);
	snprintf(lease, sizeof(lease), "%d", registry_reclaim_lease);
	params[0] = key.params[0];
	params[1] = key.params[1];
	params[2] = key.params[2];
	params[3] = takeover;
	params[4] = ceiling;
	params[5] = required ? "true" : "false";
	params[6] = lease;
	if (!registry_ask(conn,
					  "snowflake_registry_check_in($1, $2, $3, "
					  "$4 * interval '1 ms', " REGISTRY_TIME_PARAM(5) ", $6, "
					  "$7 * interval '1 s')",
					  7, params, &answer, &sent_us, &received_us, reason))
		return false;

	if (strcmp(answer.status, "held") == 0)
	{
		lease_confirmed_us = sent_us;
		lease_delay_ms = delay_ms;
		lease_required = required;
		lease_ceiling_unix_ms = ceiling_unix_ms;
		registry_publish(CLAIM_HELD, -1, NULL, NULL);
		return true;
	}

	registry_publish(CLAIM_LOST, -1,
					 strcmp(answer.status, "moved") == 0 ? &answer : NULL,
					 NULL);
	lost_unconfirmed = !registry_mark_idle(conn, snowflake_registry_worker_id(),
										   snowflake_newest_id_unix_ms(),
										   registry_patience_in_rounds(),
										   reason);
	return !lost_unconfirmed;
}

/*
 * At a clean shutdown, mark the claim idle so that the next start of this
 * server takes it back at once.  Backends are refused from here on.  Waits
 * at most a second: a registry that cannot be reached costs the next start
 * the takeover delay, nothing more.
 */
static void
registry_release(PGconn *conn)
{
	SnowflakeClaimStatus status;
	char		reason[SNOWFLAKE_REGISTRY_TEXT_LEN];

	SpinLockAcquire(&registry_state->mutex);
	status = registry_state->status;
	SpinLockRelease(&registry_state->mutex);
	if (status == CLAIM_HELD || status == CLAIM_CACHED)
		registry_publish(CLAIM_RELEASED, -1, NULL, NULL);
	if (status != CLAIM_HELD)
		return;

	if (conn == NULL)
		conn = registry_open(registry_patience_at_shutdown(), reason);
	if (conn == NULL)
		return;
	if (!registry_mark_idle(conn, snowflake_registry_worker_id(),
							snowflake_newest_id_unix_ms(),
							registry_patience_at_shutdown(), reason))
		ereport(LOG,
				(errmsg("could not mark the snowflake claim idle in the registry"),
				 errdetail_internal("%s", reason)));
	PQfinish(conn);
}

/*---- the registry worker ----*/

/*
 * One round of talk with the registry, as status asks: confirm that a claim
 * moved, check in with the claim held, or claim one.  *conn is opened where
 * needed, and closed when the registry failed us.
 */
static void
registry_round(PGconn **conn, SnowflakeClaimStatus status,
			   int cached_worker_id)
{
	char		reason[SNOWFLAKE_REGISTRY_TEXT_LEN];
	bool		done;

	if (*conn == NULL)
		*conn = registry_open(registry_patience_in_rounds(), reason);
	if (*conn == NULL)
		done = false;
	else if (status == CLAIM_LOST)
	{
		lost_unconfirmed =
			!registry_mark_idle(*conn, snowflake_registry_worker_id(),
								snowflake_newest_id_unix_ms(),
								registry_patience_in_rounds(), reason);
		done = !lost_unconfirmed;
	}
	else if (status == CLAIM_HELD)
		done = registry_check_in(*conn, reason);
	else
		done = registry_claim(*conn, status, cached_worker_id, reason);

	if (!done)
	{
		if (*conn != NULL)
			PQfinish(*conn);
		*conn = NULL;
		if (!ShutdownRequestPending)
			registry_failed(status, cached_worker_id, reason);
	}
	else if (registry_failure_logged)
	{
		ereport(LOG,
				(errmsg("reached the snowflake registry again")));
		registry_failure_logged = false;
	}
}

/*
 * The registry worker: claim a worker id, then check in every
 * snowflake.registry_check_in_interval until shutdown, when the claim is
 * marked idle.  A connection that fails is dropped and made again at the
 * next round.  After a claim moved the worker tells the registry that it
 * stopped, retrying until it could, then only waits for shutdown.  If the
 * worker dies it is restarted a second later and goes on with the state in
 * shared memory (a crash of the whole server starts a new incarnation).
 */
void
snowflake_registry_main(Datum main_arg)
{
	PGconn	   *conn = NULL;
	int			cached_worker_id;
	SnowflakeClaimStatus status;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	if (registry_read_cache(&cached_worker_id, &cached_floor_unix_ms))
		snowflake_raise_id_floor(cached_floor_unix_ms);
	else
		cached_worker_id = -1;

	/*
	 * A restarted worker goes on with the state and the lease the last one
	 * published: the registry may hold terms that the settings no longer say,
	 * such as require_check_in turned off since the last check-in.
	 */
	SpinLockAcquire(&registry_state->mutex);
	status = registry_state->status;
	lease_confirmed_us = registry_state->lease_confirmed_us;
	lease_delay_ms = registry_state->lease_delay_ms;
	lease_required = registry_state->lease_required;
	lease_ceiling_unix_ms = registry_state->lease_ceiling_unix_ms;
	SpinLockRelease(&registry_state->mutex);
	lost_unconfirmed = status == CLAIM_LOST;
	registry_tighten_lease(status);

	for (;;)
	{
		bool		idle_wait;

		SpinLockAcquire(&registry_state->mutex);
		status = registry_state->status;
		if (status == CLAIM_HELD || status == CLAIM_CACHED)
			cached_worker_id = registry_state->worker_id;
		SpinLockRelease(&registry_state->mutex);

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			registry_tighten_lease(status);
		}
		if (ShutdownRequestPending)
		{
			registry_release(conn);
			proc_exit(0);
		}

		if (status != CLAIM_LOST || lost_unconfirmed)
			registry_round(&conn, status, cached_worker_id);

		idle_wait = status == CLAIM_LOST && !lost_unconfirmed;
		if (check_in_now)
			check_in_now = false;
		else if (!ShutdownRequestPending)
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_EXIT_ON_PM_DEATH |
							 (idle_wait ? 0 : WL_TIMEOUT),
							 registry_check_in_interval, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
