/*-------------------------------------------------------------------------
 *
 * registry_worker.c
 *		The registry worker: the background worker that claims this server's
 *		worker id from the registry over libpq, extends the claim's promise,
 *		and marks the claim idle at a clean shutdown.
 *
 * Only this worker talks to the network, and only it writes the claim state
 * in shared memory (registry.h) that backends read in the gate
 * (registry.c).  registry.c's header comment states the rule a claim
 * follows.
 *
 * What this worker keeps of a claim (SnowflakeHeldClaim) is what the
 * registry acknowledged: the claim's version, the nonce of the last
 * extension, and the promise.  A call whose answer never came leaves all
 * three as they were, and is sent again, with the same nonce, until it is
 * answered: the registry recognises a call it has already carried out, so a
 * lost answer is never taken for a copy of this server.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xlog.h"
#include "libpq-fe.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "postmaster/postmaster.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/spin.h"
#include "utils/guc.h"
#include "utils/wait_event.h"

#include "clock.h"
#include "mark.h"
#include "registry.h"
#include "registry_libpq.h"
#include "settings.h"


/*---- local variables ----*/

/*
 * The first lines of the reasons the log gave for the registry's failures
 * since it last answered, at most REGISTRY_REASONS_SAID of them: each is
 * said once, so that reasons that alternate, or name another host of the
 * registry each time, fill no log.
 */
#define REGISTRY_REASONS_SAID 8
static char reasons_said[REGISTRY_REASONS_SAID][SNOWFLAKE_REGISTRY_TEXT_LEN];
static int	n_reasons_said = 0;

/* the claim as the registry acknowledged it (see the header comment) */
static SnowflakeHeldClaim held;

/* the claim was lost and its release not confirmed to the registry yet */
static bool lost_unconfirmed = false;

/* a claim was just granted: extend it at once, without waiting a round */
static bool extend_now = false;

/*---- publishing the claim state ----*/

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
		case CLAIM_REFUSED:
			ereport(LOG,
					(errmsg("the snowflake registry refused this server's claim; no IDs are generated until it passes to this server"),
					 errdetail("Worker id %d of datacenter %d is held by another start of this server's login: %s. It passes in about %lld ms unless that start extends it again.",
							   answer->worker_id, registry_datacenter_id,
							   answer->holder,
							   (long long) Max(answer->retry_in_ms, 0))));
			break;
		case CLAIM_WAITING:
			ereport(LOG,
					(errmsg("snowflake worker id %d of datacenter %d is being freed for this server; no IDs are generated until it passes to this server",
							answer->worker_id, registry_datacenter_id)));
			break;
		case CLAIM_FULL:
			ereport(LOG,
					(errmsg("all %d snowflake worker ids of datacenter %d are claimed; no IDs are generated",
							registry_max_worker_id + 1, registry_datacenter_id),
					 errhint("Release the claims of servers that are gone with snowflake_registry.release() on the registry, or set another \"snowflake.datacenter_id\".")));
			break;
		case CLAIM_LIMIT:
			ereport(LOG,
					(errmsg("this server's login holds as many snowflake claims as it may; no IDs are generated"),
					 errhint("Give each server a login of its own, or allow more with snowflake_registry.allow() on the registry.")));
			break;
		case CLAIM_LAYOUT:
			ereport(LOG,
					(errmsg("this server's snowflake layout is not its fleet's; no IDs are generated"),
					 registry_errdetail_layout(answer->holder),
					 errhint(REGISTRY_LAYOUT_HINT)));
			break;
		case CLAIM_UNREACHABLE:
			ereport(LOG,
					(errmsg("the snowflake registry cannot be used; no IDs are generated until it answers"),
					 errdetail_internal("%s", reason)));
			break;
		case CLAIM_LOST:
			ereport(LOG,
					(errmsg("this server's claim on snowflake worker id %d of datacenter %d %s; no IDs are generated until it claims again",
							worker_id, registry_datacenter_id, reason),
					 answer != NULL && answer->holder[0] != '\0' ?
					 errdetail("It is held by %s.", answer->holder) : 0));
			break;
		case CLAIM_PENDING:
		case CLAIM_RELEASED:
			break;
	}
}

/*
 * Publish a new state for the backends, and say in the log what changed.
 * With a claim held, the ceiling is its promise.  The gate's value changes
 * generation whenever the claim stops or starts being usable, or moves
 * above a new floor, so that a call that straddled it fails its recheck.
 */
static void
registry_publish(SnowflakeClaimStatus status, int worker_id,
				 bool new_generation, const RegistryAnswer *answer,
				 const char *reason)
{
	SnowflakeRegistryState *state = registry_state;
	SnowflakeClaimStatus old_status;
	uint64		gate;
	int64		ceiling_ms = 0;

	if (status == CLAIM_HELD)
		ceiling_ms = Max(snowflake_unix_to_id_ms(held.waiting_floor_unix_ms >= 0 ?
												 held.old_promise_unix_ms :
												 held.promise_unix_ms), 0);

	SpinLockAcquire(&state->mutex);
	old_status = state->status;
	new_generation = new_generation ||
		(old_status == CLAIM_HELD) != (status == CLAIM_HELD);
	if (new_generation)
		state->generation++;
	state->status = status;
	if (worker_id >= 0)
		state->worker_id = worker_id;
	state->claim = held;
	state->holder_worker_id = answer ? answer->worker_id : -1;
	strlcpy(state->holder, answer ? answer->holder : "", sizeof(state->holder));
	state->retry_in_ms = answer ? answer->retry_in_ms : -1;
	state->answered_us = registry_monotonic_us();
	strlcpy(state->reason, reason ? reason : "", sizeof(state->reason));
	worker_id = state->worker_id;
	gate = (state->generation << 8) | (uint64) status;
	SpinLockRelease(&state->mutex);

	/*
	 * A new generation first refuses every call at the gate, then sets the
	 * ceiling, then lets calls through: a call of the old generation that
	 * reads the new ceiling reads the new gate after it (see
	 * snowflake_registry_recheck), and a call of the new one reads the gate
	 * before the ceiling.  Within a generation the ceiling only grows.
	 */
	if (new_generation)
	{
		pg_atomic_write_u64(&state->fast_gate,
							(gate & ~(uint64) 0xFF) | CLAIM_PENDING);
		pg_write_barrier();
	}
	if (status == CLAIM_HELD)
	{
		pg_atomic_write_u64(&state->fast_ceiling_ms, (uint64) ceiling_ms);
		pg_write_barrier();
	}
	pg_atomic_write_u64(&state->fast_gate, gate);

	/* what follows may read the newest ID: after every call that saw "gate" */
	pg_memory_barrier();

	if (status != old_status)
		registry_log_status(status, worker_id, answer, reason);
}

/* the claim's status, as the worker last published it */
static SnowflakeClaimStatus
registry_status(void)
{
	SnowflakeClaimStatus status;

	SpinLockAcquire(&registry_state->mutex);
	status = registry_state->status;
	SpinLockRelease(&registry_state->mutex);
	return status;
}

/*
 * Keep in shared memory why the last check-in failed while a claim was held,
 * or, with NULL, that one succeeded since: a call refused at the promise says
 * why the promise was not extended (the log says each reason once).
 */
static void
registry_note_failure(const char *reason)
{
	SpinLockAcquire(&registry_state->mutex);
	strlcpy(registry_state->failure, reason ? reason : "",
			sizeof(registry_state->failure));
	SpinLockRelease(&registry_state->mutex);
}

/*
 * Is reason's first line one the log has not given since the registry last
 * answered (and is there room to remember it)?  Then it is remembered.  The
 * lines after the first may name processes or transactions, which differ
 * at each call.
 */
static bool
registry_reason_is_new(const char *reason)
{
	char		first[SNOWFLAKE_REGISTRY_TEXT_LEN];

	strlcpy(first, reason, sizeof(first));
	first[strcspn(first, "\n")] = '\0';
	if (n_reasons_said >= REGISTRY_REASONS_SAID)
		return false;
	for (int i = 0; i < n_reasons_said; i++)
	{
		if (strcmp(reasons_said[i], first) == 0)
			return false;
	}
	strlcpy(reasons_said[n_reasons_said++], first, sizeof(reasons_said[0]));
	return true;
}

/*
 * The registry failed us (unreachable, or a call that raised an error), with
 * the claim in status after the round: say so, once for each reason until
 * it answers again (a registry unreachable, then one that cannot write, get
 * a line each).  Before the first answer, backends are told why they wait;
 * a claim held stays usable up to its promise.  Backends refused meanwhile
 * get the newest reason in their errors.
 */
static void
registry_failed(SnowflakeClaimStatus status, const char *reason)
{
	bool		say = registry_reason_is_new(reason);

	if (status == CLAIM_HELD)
		registry_note_failure(reason);
	if (status == CLAIM_PENDING || status == CLAIM_UNREACHABLE)
	{
		/* registry_publish logs only a change of status */
		registry_publish(CLAIM_UNREACHABLE, -1, false, NULL, reason);
		if (say && status == CLAIM_UNREACHABLE)
			registry_log_status(CLAIM_UNREACHABLE, -1, NULL, reason);
	}
	else if (say)
		ereport(LOG,
				(status == CLAIM_HELD ?
				 errmsg("the snowflake registry did not extend this server's claim; IDs are generated up to its promise while this server retries") :
				 errmsg("the snowflake registry did not answer this server; it retries"),
				 errdetail_internal("%s", reason)));
}

/*---- the calls ----*/

/* a millisecond time (since the Unix epoch) as a parameter */
#define REGISTRY_TIME_PARAM(n) \
	"pg_catalog.to_timestamp($" #n "::pg_catalog.float8 OPERATOR(pg_catalog./) 1000)"

/*
 * A nonce for the next call, unless one was sent and not answered: that
 * call is sent again as it was.  It is kept in shared memory before it is
 * sent.
 */
static bool
registry_pending_nonce(char *reason)
{
	if (held.pending[0] != '\0')
		return true;
	if (!registry_random_uuid(held.pending))
	{
		strlcpy(reason, "Could not generate a random nonce.",
				SNOWFLAKE_REGISTRY_TEXT_LEN);
		return false;
	}
	/* a worker restarted after sending it sends it again */
	SpinLockAcquire(&registry_state->mutex);
	strlcpy(registry_state->claim.pending, held.pending,
			sizeof(registry_state->claim.pending));
	SpinLockRelease(&registry_state->mutex);
	return true;
}

/*
 * The registry granted the claim in answer.  Every later ID lies above the
 * floor it names, and above every ID this server issued with another worker
 * id (so that IDs keep growing when the worker id changes).  A regrant of
 * the claim this server generates with, in a new epoch of the registry,
 * leaves the IDs up to the last version's promise to this server: it moves
 * above the new floor only when it gets there (registry_apply_floor), so a
 * restart of the registry costs it only the time between that promise and
 * the new floor.  Returns false, with reason, where the answer cannot be
 * used.
 */
static bool
registry_granted(const RegistryAnswer *answer, bool regrant, char *reason)
{
	int			old_worker_id = snowflake_registry_worker_id();

	/* never use an id that the layout cannot hold */
	if (answer->worker_id < 0 || answer->worker_id > registry_max_worker_id ||
		answer->version < 0 || answer->promise_unix_ms < 0)
	{
		snprintf(reason, SNOWFLAKE_REGISTRY_TEXT_LEN,
				 "The registry granted worker id %d, which is outside 0 to %d, the worker ids of this server's layout, or no promise.",
				 answer->worker_id, registry_max_worker_id);
		return false;
	}
	if (regrant)
	{
		if (held.waiting_floor_unix_ms < 0)
			held.old_promise_unix_ms = held.promise_unix_ms;
		held.waiting_floor_unix_ms = Max(held.waiting_floor_unix_ms,
										 Max(answer->floor_unix_ms, 0));
	}
	else
	{
		if (old_worker_id >= 0 && old_worker_id != answer->worker_id)
			snowflake_raise_id_floor(snowflake_newest_id_unix_ms());
		if (answer->floor_unix_ms >= 0)
			snowflake_raise_id_floor(answer->floor_unix_ms);
		held.waiting_floor_unix_ms = -1;
	}
	held.version = answer->version;
	strlcpy(held.nonce, held.pending, sizeof(held.nonce));
	held.pending[0] = '\0';
	held.promise_unix_ms = answer->promise_unix_ms;
	if (old_worker_id != answer->worker_id)
		registry_write_cache(answer->worker_id);
	registry_publish(CLAIM_HELD, answer->worker_id, false, NULL, NULL);
	extend_now = !regrant;
	return true;
}

/*
 * After a regrant: once this server's IDs are about to pass the promise of
 * the claim's version before (within two rounds, by the newest ID or by the
 * clock and snowflake.max_lead), move them above the new version's floor.
 * The new generation fails every call that claimed its ticks before.
 */
static void
registry_apply_floor(void)
{
	int			us_into_ms;
	int64		soon_ms = 2 * (int64) registry_check_in_interval;
	int64		newest_ms = snowflake_unix_to_id_ms(snowflake_newest_id_unix_ms());
	int64		reach_ms = snowflake_clock_ms(&us_into_ms) + snowflake_max_lead_ms;
	SnowflakeClaimStatus status;

	status = registry_status();
	if (status != CLAIM_HELD || held.waiting_floor_unix_ms < 0 ||
		Max(newest_ms, reach_ms) + soon_ms <
		snowflake_unix_to_id_ms(held.old_promise_unix_ms))
		return;
	snowflake_raise_id_floor(held.waiting_floor_unix_ms);
	held.waiting_floor_unix_ms = -1;
	registry_publish(CLAIM_HELD, -1, true, NULL, NULL);
	ereport(LOG,
			(errmsg("snowflake IDs move above the floor of the registry's new epoch"),
			 errdetail("The registry may have gone back in time (a restart, a restore or a failover), so this server's IDs start above every promise it may have forgotten.")));
}

/*
 * Claim a worker id: the one this server held last, if it can have it.  A
 * call whose answer was lost is sent again with the same nonce, and the
 * registry answers it again.
 */
static bool
registry_claim(PGconn *conn, char *reason)
{
	RegistryAnswer answer;
	char		datacenter[12];
	char		max_worker[12];
	char		layout[96];
	char		system_identifier[24];
	char		host[256];
	char		port[12];
	char		preferred[12];
	const char *params[10];
	int			preferred_worker_id = snowflake_registry_worker_id();

	if (!registry_pending_nonce(reason))
		return false;
	if (preferred_worker_id < 0)
		preferred_worker_id = registry_read_cache();
	snprintf(datacenter, sizeof(datacenter), "%d", registry_datacenter_id);
	snprintf(max_worker, sizeof(max_worker), "%d", registry_max_worker_id);
	registry_layout(layout, sizeof(layout));
	snprintf(system_identifier, sizeof(system_identifier), INT64_FORMAT,
			 (int64) GetSystemIdentifier());
	if (gethostname(host, sizeof(host)) != 0)
		strlcpy(host, "unknown", sizeof(host));
	host[sizeof(host) - 1] = '\0';
	snprintf(port, sizeof(port), "%d", PostPortNumber);
	snprintf(preferred, sizeof(preferred), "%d", preferred_worker_id);
	params[0] = datacenter;
	params[1] = max_worker;
	params[2] = layout;
	params[3] = registry_state->token;
	params[4] = held.pending;
	params[5] = system_identifier;
	params[6] = host;
	params[7] = port;
	params[8] = DataDir;
	params[9] = preferred_worker_id >= 0 ? preferred : NULL;
	if (!registry_ask(conn,
					  "snowflake_registry.claim($1::pg_catalog.int4, "
					  "$2::pg_catalog.int4, $3::pg_catalog.text, "
					  "$4::pg_catalog.uuid, $5::pg_catalog.uuid, "
					  "$6::pg_catalog.int8, $7::pg_catalog.text, "
					  "$8::pg_catalog.int4, $9::pg_catalog.text, "
					  "$10::pg_catalog.int4)",
					  lengthof(params), params, &answer, reason))
		return false;

	if (strcmp(answer.status, "claimed") == 0)
		return registry_granted(&answer, false, reason);
	if (strcmp(answer.status, "refused") == 0)
		registry_publish(CLAIM_REFUSED, -1, false, &answer, NULL);
	else if (strcmp(answer.status, "waiting") == 0)
		registry_publish(CLAIM_WAITING, -1, false, &answer, NULL);
	else if (strcmp(answer.status, "limit") == 0)
		registry_publish(CLAIM_LIMIT, -1, false, &answer, NULL);
	else if (strcmp(answer.status, "layout") == 0)
		registry_publish(CLAIM_LAYOUT, -1, false, &answer, NULL);
	else
		registry_publish(CLAIM_FULL, -1, false, &answer, NULL);
	return true;
}

/*
 * The parameters that name this server's claim in a call: $1 datacenter,
 * $2 worker id, $3 this start's token, $4 the claim's version, $5 the
 * nonce of its last extension.
 */
typedef struct RegistryClaimKey
{
	char		datacenter[12];
	char		worker[12];
	char		version[24];
	const char *params[5];
} RegistryClaimKey;

static void
registry_claim_key(RegistryClaimKey *key)
{
	snprintf(key->datacenter, sizeof(key->datacenter), "%d",
			 registry_datacenter_id);
	snprintf(key->worker, sizeof(key->worker), "%d",
			 snowflake_registry_worker_id());
	snprintf(key->version, sizeof(key->version), INT64_FORMAT, held.version);
	key->params[0] = key->datacenter;
	key->params[1] = key->worker;
	key->params[2] = registry_state->token;
	key->params[3] = key->version;
	key->params[4] = held.nonce;
}

#define REGISTRY_CLAIM_KEY_ARGS \
	"$1::pg_catalog.int4, $2::pg_catalog.int4, $3::pg_catalog.uuid, " \
	"$4::pg_catalog.int8, $5::pg_catalog.uuid"

/*
 * Mark this server's claim idle, with the time of its newest ID: at a clean
 * shutdown, or once it stopped generating after learning that its claim was
 * released, so that whoever gets the id next starts there rather than at
 * the promise.  The caller has published a state that refuses IDs before
 * this reads the newest ID, so no ID is issued after it.
 */
static bool
registry_mark_idle(PGconn *conn, RegistryPatience patience, char *reason)
{
	RegistryClaimKey key;
	char		newest[24];
	const char *params[7];
	PGresult   *result;

	registry_claim_key(&key);
	snprintf(newest, sizeof(newest), INT64_FORMAT,
			 snowflake_newest_id_unix_ms());
	memcpy(params, key.params, sizeof(key.params));
	params[5] = held.pending[0] != '\0' ? held.pending : NULL;
	params[6] = newest;
	result = registry_exec(conn,
						   "SELECT snowflake_registry.idle("
						   REGISTRY_CLAIM_KEY_ARGS ", $6::pg_catalog.uuid, "
						   REGISTRY_TIME_PARAM(7) ")",
						   lengthof(params), params, patience, reason);
	if (result == NULL)
		return false;
	if (strcmp(PQgetvalue(result, 0, 0), "t") != 0)
		ereport(LOG,
				(errmsg("the snowflake registry no longer records this server's claim on worker id %d of datacenter %d as its own",
						snowflake_registry_worker_id(), registry_datacenter_id),
				 errdetail("Its promise stands: whoever takes the worker id next starts above it.")));
	PQclear(result);
	/* no call on this claim awaits its answer any more */
	held.pending[0] = '\0';
	return true;
}

/*
 * Extend the claim's promise, chaining a new nonce to the last one.  Learn
 * that the claim moved, was released, or was extended by a copy of this
 * server: then stop, confirm a release, and claim again.
 */
static bool
registry_extend(PGconn *conn, char *reason)
{
	RegistryClaimKey key;
	RegistryAnswer answer;
	const char *params[6];

	if (!registry_pending_nonce(reason))
		return false;
	registry_claim_key(&key);
	memcpy(params, key.params, sizeof(key.params));
	params[5] = held.pending;
	if (!registry_ask(conn,
					  "snowflake_registry.extend(" REGISTRY_CLAIM_KEY_ARGS
					  ", $6::pg_catalog.uuid)",
					  lengthof(params), params, &answer, reason))
		return false;

	if (strcmp(answer.status, "extended") == 0)
	{
		strlcpy(held.nonce, held.pending, sizeof(held.nonce));
		held.pending[0] = '\0';
		held.promise_unix_ms = Max(held.promise_unix_ms, answer.promise_unix_ms);
		registry_publish(CLAIM_HELD, -1, false, NULL, NULL);
		return true;
	}
	if (strcmp(answer.status, "regranted") == 0)
		return registry_granted(&answer, true, reason);

	held.waiting_floor_unix_ms = -1;
	if (strcmp(answer.status, "released") == 0)
	{
		/*
		 * idle() names the pending nonce as well: the registry may have
		 * recorded this extension before the release, its answer lost.
		 */
		registry_publish(CLAIM_LOST, -1, false, NULL,
						 "was released on the registry");
		lost_unconfirmed = !registry_mark_idle(conn,
											   registry_patience_in_rounds(),
											   reason);
		return !lost_unconfirmed;
	}
	held.pending[0] = '\0';
	if (strcmp(answer.status, "layout") == 0)
		registry_publish(CLAIM_LOST, -1, false, NULL,
						 "is not of the fleet's layout, which an operator changed");
	else
		registry_publish(CLAIM_LOST, -1, false, &answer,
						 strcmp(answer.status, "forked") == 0 ?
						 "was extended by a copy of this server" :
						 "has moved to another start or login");
	return true;
}

/*
 * At a clean shutdown, mark the claim idle so that the next start of this
 * server takes it back at once, above its newest ID.  Backends are refused
 * from here on.  Waits at most a second: a registry that cannot be reached
 * costs the next start the wait for this start's promise, nothing more.
 */
static void
registry_release(PGconn *conn)
{
	SnowflakeClaimStatus status;
	char		reason[SNOWFLAKE_REGISTRY_TEXT_LEN];

	status = registry_status();
	registry_publish(CLAIM_RELEASED, -1, false, NULL, NULL);
	if (status != CLAIM_HELD && !(status == CLAIM_LOST && lost_unconfirmed))
		return;

	if (conn == NULL)
		conn = registry_open(registry_patience_at_shutdown(), reason);
	if (conn == NULL)
		return;
	if (!registry_mark_idle(conn, registry_patience_at_shutdown(), reason))
		ereport(LOG,
				(errmsg("could not mark the snowflake claim idle in the registry"),
				 errdetail_internal("%s", reason)));
	PQfinish(conn);
}

/*---- the registry worker ----*/

/*
 * One round of talk with the registry, as status asks: confirm a release,
 * extend the claim held, or claim one.  *conn is opened where needed, and
 * closed when the registry failed us.
 */
static void
registry_round(PGconn **conn, SnowflakeClaimStatus status)
{
	char		reason[SNOWFLAKE_REGISTRY_TEXT_LEN];
	bool		done;

	if (*conn == NULL)
		*conn = registry_open(registry_patience_in_rounds(), reason);
	if (*conn == NULL)
		done = false;
	else if (status == CLAIM_LOST && lost_unconfirmed)
	{
		lost_unconfirmed = !registry_mark_idle(*conn,
											   registry_patience_in_rounds(),
											   reason);
		done = !lost_unconfirmed;
	}
	else if (status == CLAIM_HELD)
		done = registry_extend(*conn, reason);
	else
		done = registry_claim(*conn, reason);

	if (!done)
	{
		if (*conn != NULL)
			PQfinish(*conn);
		*conn = NULL;
		if (!ShutdownRequestPending)
		{
			/* the round may have lost the claim, then failed to confirm it */
			registry_failed(registry_status(), reason);
		}
	}
	else
	{
		registry_note_failure(NULL);
		if (n_reasons_said > 0)
			ereport(LOG,
					(errmsg("the snowflake registry answers this server again")));
		n_reasons_said = 0;
	}
}

/*
 * The registry worker: claim a worker id, then extend its promise every
 * snowflake.registry_check_in_interval until shutdown, when the claim is
 * marked idle.  A connection that fails is dropped and made again at the
 * next round.  A claim lost is confirmed where it was released, then
 * claimed again.  If the worker dies it is restarted a second later and
 * goes on with the claim in shared memory (a crash of the whole server
 * starts a new incarnation, with a new token).  A SIGTERM marks the claim
 * idle and exits with 1, not 0: the postmaster restarts a worker that
 * exits so unless the server is shutting down, and a worker terminated
 * alone (by an administrator's kill) then claims again, where it stopped
 * every ID for good.
 */
void
snowflake_registry_main(Datum main_arg)
{
	PGconn	   *conn = NULL;
	SnowflakeClaimStatus status;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	SpinLockAcquire(&registry_state->mutex);
	held = registry_state->claim;
	lost_unconfirmed = registry_state->status == CLAIM_LOST &&
		strcmp(registry_state->reason, "was released on the registry") == 0;
	SpinLockRelease(&registry_state->mutex);

	for (;;)
	{
		status = registry_status();

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (ShutdownRequestPending)
		{
			registry_release(conn);
			proc_exit(1);
		}

		registry_round(&conn, status);
		registry_apply_floor();

		if (extend_now)
			extend_now = false;
		else if (!ShutdownRequestPending)
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_EXIT_ON_PM_DEATH | WL_TIMEOUT,
							 registry_check_in_interval, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
