/*-------------------------------------------------------------------------
 *
 * registry.c
 *		Worker ids claimed from a PostgreSQL registry instead of set by hand.
 *
 * With snowflake.registry set to a libpq connection string, a server does
 * not name its worker id: the registry worker, a background worker, claims
 * one at start from the registry database (where CREATE EXTENSION snowflake
 * created the claims table and its functions), checks in every
 * snowflake.registry_check_in_interval, and marks the claim idle at a clean
 * shutdown.  Only this worker talks to the network.  Backends read the claim
 * from shared memory in snowflake_registry_gate(), which snowflake.c calls
 * before generating, and wait there (at most snowflake.max_clock_wait) only
 * while this server has no usable claim yet.
 *
 * The registry decides every claim in one statement, under a lock per
 * datacenter, so two servers starting at once never get the same id.  A
 * claim belongs to a system identifier (a server and its copies) and, while
 * it runs, to one incarnation of it: a random token made at each start.  It
 * passes to a new incarnation (a restart, a promoted standby, a clone) only
 * when the holder marked it idle or has not checked in for
 * snowflake.registry_takeover_delay; to another system only when it has not
 * checked in for snowflake.registry_reclaim_lease.  A server that learns at
 * a check-in that its claim moved stops generating for good.
 *
 * The claim is cached in the data directory (snowflake.claim, next to the
 * mark), so that a server that held a claim can restart while the registry
 * cannot be reached.  A server without one refuses to generate instead: it
 * never falls back to a default worker id.
 *
 * Shared state: one struct under a spinlock, written by the registry worker
 * alone and read by backends; nothing is reported while the lock is held.
 * The gate's usual case reads two atomic copies of the status instead.  The
 * worker id never changes once this server has generated with it.
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

#include "snowflake.h"

/*---- the claim cache file ----*/

#define SNOWFLAKE_CLAIM_FILE		"snowflake.claim"
#define SNOWFLAKE_CLAIM_TEMP_FILE	SNOWFLAKE_CLAIM_FILE ".tmp"
#define SNOWFLAKE_CLAIM_MAGIC		0x534E434C	/* "SNCL" */
#define SNOWFLAKE_CLAIM_VERSION		1

typedef struct SnowflakeClaimFile
{
	uint32		magic;
	uint32		version;
	uint64		system_identifier;	/* of the server that claimed */
	int32		datacenter_id;
	int32		worker_id;
	pg_crc32c	crc;			/* of everything above */
} SnowflakeClaimFile;

/*---- shared state ----*/

/* where this server stands with its claim */
typedef enum SnowflakeClaimStatus
{
	CLAIM_PENDING,				/* no answer yet */
	CLAIM_HELD,					/* claimed from the registry */
	CLAIM_CACHED,				/* registry unreachable: the cached claim */
	CLAIM_REFUSED,				/* another incarnation holds it; retrying */
	CLAIM_FULL,					/* no worker id free; retrying */
	CLAIM_UNREACHABLE,			/* registry unreachable, no cache; retrying */
	CLAIM_LOST,					/* the claim moved away: final */
	CLAIM_RELEASED				/* marked idle at shutdown: final */
} SnowflakeClaimStatus;

#define SNOWFLAKE_REGISTRY_TEXT_LEN 256

/*
 * Everything but the first two fields under mutex.  worker_id is set once,
 * when status first becomes CLAIM_HELD or CLAIM_CACHED, and never changes
 * afterwards.  The holder fields describe who holds the claim this server
 * was refused or lost; reason is the registry's or libpq's own words when
 * it cannot be used.  fast_status and fast_confirmed_us repeat status and
 * confirmed_us for the gate, which reads them on every ID without the lock;
 * they are written after the fields under mutex.
 */
typedef struct SnowflakeRegistryState
{
	pg_atomic_uint32 fast_status;
	pg_atomic_uint64 fast_confirmed_us;
	slock_t		mutex;
	SnowflakeClaimStatus status;
	int			worker_id;		/* -1 until claimed */
	uint64		confirmed_us;	/* monotonic time of the last successful
								 * claim or check-in (when it was sent) */
	char		token[37];		/* this incarnation's token, a UUID */
	int			holder_worker_id;	/* the claim refused, or -1 */
	char		holder[SNOWFLAKE_REGISTRY_TEXT_LEN];
	char		holder_since[64];
	char		holder_checked_in[64];
	char		reason[SNOWFLAKE_REGISTRY_TEXT_LEN];
} SnowflakeRegistryState;

/*---- local variables ----*/

static SnowflakeRegistryState *registry_state = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/*---- GUC variables ----*/

static char *registry_conninfo = NULL;
static int	registry_check_in_interval = 2000;
static int	registry_takeover_delay = 10000;
static int	registry_reclaim_lease = 86400;
static bool registry_require_check_in = false;

/* the server's datacenter id and largest worker id, set at start */
static int	registry_datacenter_id = 0;
static int	registry_max_worker_id = 0;

/*---- function declarations ----*/

PGDLLEXPORT void snowflake_registry_main(Datum main_arg);

static void registry_shmem_request(void);
static void registry_shmem_startup(void);
static void registry_register_worker(void);
static uint64 registry_monotonic_us(void);
static void registry_error(SnowflakeRegistryState *copy);


/*---- settings and start ----*/

/* Define the registry settings (see snowflake.h). */
void
snowflake_registry_define_settings(GucContext start_context)
{
	DefineCustomStringVariable("snowflake.registry",
							   "Connection string of the registry this server claims its worker id from.",
							   "A libpq connection string. Empty (the default) "
							   "means the worker id is set by hand with "
							   "snowflake.worker_id.",
							   &registry_conninfo,
							   "",
							   start_context,
							   GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);

	DefineCustomIntVariable("snowflake.registry_check_in_interval",
							"Time between two check-ins with the registry.",
							"The registry worker confirms this server's claim "
							"this often.",
							&registry_check_in_interval,
							2000, SNOWFLAKE_REGISTRY_MIN_CHECK_IN_MS,
							SNOWFLAKE_REGISTRY_MAX_CHECK_IN_MS,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("snowflake.registry_takeover_delay",
							"How long a claim must go without check-in before a new start of the same server takes it over.",
							"A restart after a crash, a promoted standby or a "
							"copy of the server takes the claim over only once "
							"its holder has not checked in for this long. Keep "
							"it a few check-in intervals.",
							&registry_takeover_delay,
							10000, SNOWFLAKE_REGISTRY_MIN_TAKEOVER_MS,
							SNOWFLAKE_REGISTRY_MAX_TAKEOVER_MS,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("snowflake.registry_reclaim_lease",
							"How long a claim must go without check-in before another server may take its worker id.",
							"Must be longer than any clock step plus "
							"snowflake.max_lead, so that the new holder's IDs "
							"lie past every ID the old one issued.",
							&registry_reclaim_lease,
							86400, SNOWFLAKE_REGISTRY_MIN_LEASE_S, INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("snowflake.registry_require_check_in",
							 "Stops generating when no check-in with the registry succeeded for the takeover delay.",
							 "Off (the default) keeps generating with the claim "
							 "held while the registry cannot be reached. On "
							 "prefers safety: the claim may have passed to "
							 "another start of this server meanwhile.",
							 &registry_require_check_in,
							 false,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);
}

/* Is value a connection string libpq can parse (see snowflake.h)? */
bool
snowflake_registry_check_conninfo(const char *value, const char **detail)
{
	PQconninfoOption *options;
	char	   *message = NULL;

	if (value[0] == '\0')
		return true;
	options = PQconninfoParse(value, &message);
	if (options != NULL)
	{
		PQconninfoFree(options);
		return true;
	}
	if (message != NULL)
	{
		size_t		len = strlen(message);

		while (len > 0 && message[len - 1] == '\n')
			message[--len] = '\0';
		*detail = MemoryContextStrdup(TopMemoryContext, message);
		PQfreemem(message);
	}
	return false;
}

/*
 * Start registry mode, if snowflake.registry is set (see snowflake.h).
 * Runs in _PG_init while preloading.
 */
void
snowflake_registry_start(bool worker_id_set, int datacenter_id,
						 int max_worker_id)
{
	if (!snowflake_registry_enabled())
		return;

	if (worker_id_set)
		ereport(FATAL,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"snowflake.worker_id\" cannot be set when \"snowflake.registry\" is set"),
				 errdetail("With a registry, this server claims its worker id from the registry."),
				 errhint("Remove \"snowflake.worker_id\" from the configuration, or empty \"snowflake.registry\" to set the worker id by hand.")));

	registry_datacenter_id = datacenter_id;
	registry_max_worker_id = max_worker_id;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = registry_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = registry_shmem_startup;

	registry_register_worker();
}

/* Does this server claim its worker id from a registry? */
bool
snowflake_registry_enabled(void)
{
	return registry_conninfo != NULL && registry_conninfo[0] != '\0';
}

/*
 * The registry worker runs where IDs are generated: on a primary, and on a
 * standby from its promotion on, so that a standby never holds a claim.
 */
static void
registry_register_worker(void)
{
	snowflake_register_worker("snowflake_registry_main",
							  "snowflake registry worker");
}

/*---- shared memory ----*/

static void
registry_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(SnowflakeRegistryState)));
}

/*
 * Create the claim state at postmaster start and after a crash of a backend:
 * a new incarnation, with a new token, that has claimed nothing yet.
 */
static void
registry_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	registry_state = ShmemInitStruct("snowflake registry",
									 sizeof(SnowflakeRegistryState), &found);
	if (!found)
	{
		uint8		bytes[16];

		memset(registry_state, 0, sizeof(*registry_state));
		pg_atomic_init_u32(&registry_state->fast_status, CLAIM_PENDING);
		pg_atomic_init_u64(&registry_state->fast_confirmed_us, 0);
		SpinLockInit(&registry_state->mutex);
		registry_state->status = CLAIM_PENDING;
		registry_state->worker_id = -1;

		if (!pg_strong_random(bytes, sizeof(bytes)))
			ereport(FATAL,
					(errmsg("could not generate a random token for the snowflake registry")));
		bytes[6] = (bytes[6] & 0x0f) | 0x40;	/* a version 4 UUID */
		bytes[8] = (bytes[8] & 0x3f) | 0x80;
		snprintf(registry_state->token, sizeof(registry_state->token),
				 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
				 bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5],
				 bytes[6], bytes[7], bytes[8], bytes[9], bytes[10], bytes[11],
				 bytes[12], bytes[13], bytes[14], bytes[15]);
	}
	LWLockRelease(AddinShmemInitLock);
}

/* CLOCK_MONOTONIC in microseconds, comparable between processes */
static uint64
registry_monotonic_us(void)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	return INSTR_TIME_GET_MICROSEC(now);
}

/*---- the gate backends pass before generating ----*/

/*
 * May this server generate with a claim in this state?  With
 * snowflake.registry_require_check_in, only while the last successful
 * check-in is younger than the takeover delay.
 */
static bool
registry_claim_usable(uint32 status, uint64 confirmed_us)
{
	if (status != CLAIM_HELD && status != CLAIM_CACHED)
		return false;
	if (!registry_require_check_in)
		return true;
	return status == CLAIM_HELD &&
		registry_monotonic_us() - confirmed_us <=
		(uint64) registry_takeover_delay * 1000;
}

/*
 * Return once this server may generate with its claim (see snowflake.h).
 * The usual case costs two atomic reads.  While the claim is not usable,
 * wait for the registry worker, polling the shared state, for at most
 * max_wait_ms; then raise the error that says why.  A claim that moved or
 * was released for shutdown fails at once.
 */
void
snowflake_registry_gate(int max_wait_ms)
{
	SnowflakeRegistryState copy;
	uint64		started_us = 0;

	if (!snowflake_registry_enabled())
		return;

	for (;;)
	{
		uint64		now_us;

		if (registry_claim_usable(pg_atomic_read_u32(&registry_state->fast_status),
								  pg_atomic_read_u64(&registry_state->fast_confirmed_us)))
		{
			/* the worker id was written before the status */
			pg_read_barrier();
			return;
		}

		SpinLockAcquire(&registry_state->mutex);
		memcpy(&copy, registry_state, sizeof(copy));
		SpinLockRelease(&registry_state->mutex);
		if (registry_claim_usable(copy.status, copy.confirmed_us))
			return;

		now_us = registry_monotonic_us();
		if (started_us == 0)
			started_us = now_us;
		if (copy.status != CLAIM_HELD && copy.status != CLAIM_CACHED &&
			copy.status != CLAIM_LOST && copy.status != CLAIM_RELEASED &&
			now_us - started_us < (uint64) max_wait_ms * 1000)
		{
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 10L, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		registry_error(&copy);
	}
}

/*
 * The claimed worker id, or -1 before the first claim (see snowflake.h).  It
 * is set before the status that lets the gate pass, and never changes
 * afterwards, so no lock is needed.
 */
int
snowflake_registry_worker_id(void)
{
	int			worker_id;

	if (registry_state == NULL)
		return -1;
	worker_id = registry_state->worker_id;
	Assert(worker_id >= -1 && worker_id <= registry_max_worker_id);
	return worker_id;
}

/* Refuse an ID for the reason in copy, a snapshot of the shared state. */
static void
registry_error(SnowflakeRegistryState *copy)
{
	switch (copy->status)
	{
		case CLAIM_PENDING:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not generate a snowflake ID: no worker id has been claimed yet"),
					 errdetail("The registry did not answer this server's claim within \"snowflake.max_clock_wait\"."),
					 errhint("The server log says why the claim has not completed.")));
			break;
		case CLAIM_REFUSED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not generate a snowflake ID: the registry refused this server's claim"),
					 errdetail("Worker id %d of datacenter %d is held by %s since %s; it last checked in at %s.",
							   copy->holder_worker_id, registry_datacenter_id,
							   copy->holder, copy->holder_since,
							   copy->holder_checked_in),
					 errhint("This server may be a copy of a running server. The claim passes to this server only once its holder marks it idle or stops checking in for \"snowflake.registry_takeover_delay\".")));
			break;
		case CLAIM_FULL:
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("could not generate a snowflake ID: all %d worker ids of datacenter %d are claimed",
							registry_max_worker_id + 1, registry_datacenter_id),
					 errhint("Release the claims of servers that are gone with snowflake_registry_release() on the registry, or set another \"snowflake.datacenter_id\".")));
			break;
		case CLAIM_UNREACHABLE:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not generate a snowflake ID: the registry cannot be used and this server has no cached claim"),
					 errdetail_internal("%s", copy->reason),
					 errhint("Make the registry named by \"snowflake.registry\" reachable. Without a claim this server never falls back to a default worker id.")));
			break;
		case CLAIM_LOST:
			if (copy->holder[0] == '\0')
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("could not generate a snowflake ID: this server's claim on worker id %d of datacenter %d was released on the registry",
								copy->worker_id, registry_datacenter_id),
						 errhint("Restart the server to claim a worker id again.")));
			else
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("could not generate a snowflake ID: this server's claim on worker id %d of datacenter %d has moved to another server",
								copy->worker_id, registry_datacenter_id),
						 errdetail("It is held by %s since %s.",
								   copy->holder, copy->holder_since),
						 errhint("Another start of this server (a copy or a promoted standby) took the claim over while this one did not check in. Restart the server to claim a worker id again.")));
			break;
		case CLAIM_RELEASED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not generate a snowflake ID: the server is shutting down and has released its claim")));
			break;
		case CLAIM_HELD:
		case CLAIM_CACHED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not generate a snowflake ID: no check-in with the registry succeeded for \"snowflake.registry_takeover_delay\""),
					 errdetail("\"snowflake.registry_require_check_in\" is on, and the claim may pass to another start of this server once it has not checked in for %d ms.",
							   registry_takeover_delay),
					 errhint("Make the registry named by \"snowflake.registry\" reachable.")));
			break;
	}
}

/*---- the claim cache file ----*/

/*
 * Read the cached claim into *worker_id.  No file is normal (a server that
 * never claimed); a file that cannot be trusted, or that another server or
 * datacenter wrote, is reported and ignored, which can only make this server
 * refuse to generate while the registry cannot be reached.
 */
static bool
registry_read_cache(int *worker_id)
{
	SnowflakeClaimFile contents;
	pg_crc32c	crc;
	int			fd;
	int			nread;
	const char *reason = NULL;

	fd = OpenTransientFile(SNOWFLAKE_CLAIM_FILE, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not open file \"%s\": %m", SNOWFLAKE_CLAIM_FILE)));
		return false;
	}
	nread = read(fd, &contents, sizeof(contents));
	CloseTransientFile(fd);

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &contents, offsetof(SnowflakeClaimFile, crc));
	FIN_CRC32C(crc);
	if (nread != sizeof(contents))
		reason = "It does not have the size of a claim file.";
	else if (contents.magic != SNOWFLAKE_CLAIM_MAGIC ||
			 contents.version != SNOWFLAKE_CLAIM_VERSION)
		reason = "It does not begin with the claim file's magic number and version.";
	else if (!EQ_CRC32C(crc, contents.crc))
		reason = "Its checksum does not match its contents.";
	else if (contents.system_identifier != GetSystemIdentifier())
		reason = "It was written by a server with another system identifier.";
	else if (contents.datacenter_id != registry_datacenter_id)
		reason = "It holds a claim in another datacenter.";
	else if (contents.worker_id < 0 ||
			 contents.worker_id > registry_max_worker_id)
		reason = "Its worker id is out of range.";

	if (reason != NULL)
	{
		ereport(LOG,
				(errmsg("ignoring snowflake claim file \"%s\"", SNOWFLAKE_CLAIM_FILE),
				 errdetail_internal("%s", reason)));
		return false;
	}
	*worker_id = contents.worker_id;
	return true;
}

/* Cache a claim durably; a failure is only logged (see registry_read_cache). */
static void
registry_write_cache(int worker_id)
{
	SnowflakeClaimFile contents;

	memset(&contents, 0, sizeof(contents));
	contents.magic = SNOWFLAKE_CLAIM_MAGIC;
	contents.version = SNOWFLAKE_CLAIM_VERSION;
	contents.system_identifier = GetSystemIdentifier();
	contents.datacenter_id = registry_datacenter_id;
	contents.worker_id = worker_id;
	INIT_CRC32C(contents.crc);
	COMP_CRC32C(contents.crc, &contents, offsetof(SnowflakeClaimFile, crc));
	FIN_CRC32C(contents.crc);

	if (!snowflake_write_file_durably(SNOWFLAKE_CLAIM_FILE,
									  SNOWFLAKE_CLAIM_TEMP_FILE,
									  &contents, sizeof(contents), LOG))
		(void) unlink(SNOWFLAKE_CLAIM_TEMP_FILE);
}

/*---- talking to the registry ----*/

/*
 * How long one connection attempt or one statement may take.  Nothing waits
 * for longer than a check-in interval (or a second): a registry that slow
 * counts as unreachable, and the next round tries again.
 */
static long
registry_timeout_ms(void)
{
	return Max(registry_check_in_interval, 1000);
}

/*
 * Wait for the registry's socket (or the latch, or the deadline).  Returns
 * false at the deadline, and on a shutdown request when interruptible.
 */
static bool
registry_wait_socket(PGconn *conn, int io_flag, uint64 deadline_us,
					 bool interruptible)
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
			if (interruptible && ShutdownRequestPending)
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
registry_connect(bool interruptible, long timeout_ms, char *reason)
{
	const char *keywords[] = {"dbname", "fallback_application_name", NULL};
	const char *values[] = {registry_conninfo, "snowflake registry worker", NULL};
	uint64		deadline_us = registry_monotonic_us() + timeout_ms * 1000;
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
								  deadline_us, interruptible))
		{
			snprintf(reason, SNOWFLAKE_REGISTRY_TEXT_LEN,
					 "Connecting to the registry did not complete within %ld ms.",
					 timeout_ms);
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
 * timeout, a shutdown request when interruptible, or not exactly one row)
 * return NULL with *reason set; the caller then drops the connection.
 */
static PGresult *
registry_exec(PGconn *conn, const char *query, int nparams,
			  const char *const *params, bool interruptible, long timeout_ms,
			  char *reason)
{
	uint64		deadline_us = registry_monotonic_us() + timeout_ms * 1000;
	PGresult   *result = NULL;
	PGresult   *next;

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
									  interruptible))
			{
				snprintf(reason, SNOWFLAKE_REGISTRY_TEXT_LEN,
						 "The registry did not answer within %ld ms.",
						 timeout_ms);
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
	return result;
}

/* what the registry said about a claim (see snowflake_registry_answer) */
typedef struct RegistryAnswer
{
	char		status[16];		/* claimed, refused, full; held, moved,
								 * released */
	int			worker_id;
	char		holder[SNOWFLAKE_REGISTRY_TEXT_LEN];	/* who holds it */
	char		holder_since[64];
	char		holder_checked_in[64];
} RegistryAnswer;

/*
 * The columns the worker reads from a snowflake_registry_answer "a", as a
 * piece of a snprintf() format.
 */
#define REGISTRY_ANSWER_COLUMNS \
	"a.status, a.worker_id, " \
	"format('the server at %%s:%%s (data directory %%s, system identifier %%s)', " \
	"       a.host, a.port, a.data_directory, a.system_identifier), " \
	"to_char(a.claimed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS \"UTC\"'), " \
	"to_char(a.checked_in_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS \"UTC\"')"

/* the registry extension's schema, quoted, once connected */
static char registry_schema[2 * NAMEDATALEN + 3];

/* the registry's last failure was logged; reset by a success */
static bool registry_failure_logged = false;

/*
 * Call one of the registry's functions that return a
 * snowflake_registry_answer (call is the call, with $n for the parameters)
 * and read the answer.  *sent_us is when the call was sent.  On failure
 * return false with *reason set.
 */
static bool
registry_ask(PGconn *conn, const char *call, int nparams,
			 const char *const *params, RegistryAnswer *answer,
			 uint64 *sent_us, char *reason)
{
	char		query[1024];
	PGresult   *result;

	snprintf(query, sizeof(query),
			 "SELECT " REGISTRY_ANSWER_COLUMNS " FROM %s.%s a",
			 registry_schema, call);
	*sent_us = registry_monotonic_us();
	result = registry_exec(conn, query, nparams, params, true,
						   registry_timeout_ms(), reason);
	if (result == NULL)
		return false;

	strlcpy(answer->status, PQgetvalue(result, 0, 0), sizeof(answer->status));
	answer->worker_id = PQgetisnull(result, 0, 1) ? -1 :
		atoi(PQgetvalue(result, 0, 1));
	strlcpy(answer->holder, PQgetvalue(result, 0, 2), sizeof(answer->holder));
	strlcpy(answer->holder_since, PQgetvalue(result, 0, 3),
			sizeof(answer->holder_since));
	strlcpy(answer->holder_checked_in, PQgetvalue(result, 0, 4),
			sizeof(answer->holder_checked_in));
	PQclear(result);
	return true;
}

/*
 * Connect and find the snowflake extension in the registry database.  On
 * failure return NULL with *reason set.
 */
static PGconn *
registry_open(bool interruptible, long timeout_ms, char *reason)
{
	PGconn	   *conn;
	PGresult   *result;
	char		timeout[16];
	const char *params[1];

	conn = registry_connect(interruptible, timeout_ms, reason);
	if (conn == NULL)
		return NULL;

	/*
	 * The registry's statement_timeout ends a statement this worker stopped
	 * waiting for: a backend blocked on a claim lock does not notice that
	 * its client went away, and the connections of the retries would pile
	 * up on the registry.
	 */
	snprintf(timeout, sizeof(timeout), "%ld", timeout_ms);
	params[0] = timeout;
	result = registry_exec(conn,
						   "SELECT pg_catalog.quote_ident(n.nspname), e.extversion, "
						   "pg_catalog.set_config('statement_timeout', $1, false) "
						   "FROM pg_catalog.pg_extension e "
						   "JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace "
						   "WHERE e.extname = 'snowflake'",
						   1, params, interruptible, timeout_ms, reason);
	if (result == NULL)
	{
		if (strcmp(reason, "The registry returned no row.") == 0)
			strlcpy(reason, "The registry database has no snowflake extension: run CREATE EXTENSION snowflake there.",
					SNOWFLAKE_REGISTRY_TEXT_LEN);
		PQfinish(conn);
		return NULL;
	}
	if (strcmp(PQgetvalue(result, 0, 1), "1.0") == 0)
	{
		strlcpy(reason, "The registry database has snowflake 1.0, which has no claims table: run ALTER EXTENSION snowflake UPDATE there.",
				SNOWFLAKE_REGISTRY_TEXT_LEN);
		PQclear(result);
		PQfinish(conn);
		return NULL;
	}
	strlcpy(registry_schema, PQgetvalue(result, 0, 0), sizeof(registry_schema));
	PQclear(result);
	return conn;
}

/*
 * Publish a new state for the backends, and say in the log what changed.
 * A claim or check-in that succeeded passes confirmed_us, the time it was
 * sent; anything else passes 0.
 */
static void
registry_publish(SnowflakeClaimStatus status, int worker_id,
				 const RegistryAnswer *answer, const char *reason,
				 uint64 confirmed_us)
{
	SnowflakeRegistryState *state = registry_state;
	SnowflakeClaimStatus old_status;

	SpinLockAcquire(&state->mutex);
	old_status = state->status;
	state->status = status;
	if (worker_id >= 0)
		state->worker_id = worker_id;
	if (confirmed_us != 0)
		state->confirmed_us = confirmed_us;
	state->holder_worker_id = answer ? answer->worker_id : -1;
	strlcpy(state->holder, answer ? answer->holder : "", sizeof(state->holder));
	strlcpy(state->holder_since, answer ? answer->holder_since : "",
			sizeof(state->holder_since));
	strlcpy(state->holder_checked_in, answer ? answer->holder_checked_in : "",
			sizeof(state->holder_checked_in));
	strlcpy(state->reason, reason ? reason : "", sizeof(state->reason));
	worker_id = state->worker_id;
	SpinLockRelease(&state->mutex);
	if (confirmed_us != 0)
		pg_atomic_write_u64(&state->fast_confirmed_us, confirmed_us);
	pg_atomic_write_u32(&state->fast_status, status);

	if (status == old_status)
		return;
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
					 errdetail("Worker id %d of datacenter %d is held by %s since %s; it last checked in at %s.",
							   answer->worker_id, registry_datacenter_id,
							   answer->holder, answer->holder_since,
							   answer->holder_checked_in)));
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
					 answer && answer->holder[0] != '\0' ?
					 errdetail("It is held by %s since %s.",
							   answer->holder, answer->holder_since) :
					 errdetail("The registry no longer records this server's claim.")));
			break;
		case CLAIM_PENDING:
		case CLAIM_RELEASED:
			break;
	}
}

/* The registry failed us: say so once, and fall back as the state allows. */
static void
registry_failed(SnowflakeClaimStatus status, int cached_worker_id,
				const char *reason)
{
	if (status == CLAIM_PENDING || status == CLAIM_UNREACHABLE)
	{
		/* never answered: the cached claim, if any, stands in */
		if (cached_worker_id >= 0)
			registry_publish(CLAIM_CACHED, cached_worker_id, NULL, reason, 0);
		else
			registry_publish(CLAIM_UNREACHABLE, -1, NULL, reason, 0);
	}
	else if (!registry_failure_logged)
		ereport(LOG,
				(errmsg("could not reach the snowflake registry; this server keeps its claim state and retries"),
				 errdetail_internal("%s", reason)));
	registry_failure_logged = true;
}

/*
 * Claim a worker id.  While the cached claim is in use (this server already
 * generates with it), anything but that same claim back means it moved.
 */
static bool
registry_claim(PGconn *conn, SnowflakeClaimStatus status,
			   int cached_worker_id, char *reason)
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
	const char *params[11];
	RegistryAnswer answer;
	uint64		sent_us;

	snprintf(datacenter, sizeof(datacenter), "%d", registry_datacenter_id);
	snprintf(system_identifier, sizeof(system_identifier), INT64_FORMAT,
			 (int64) GetSystemIdentifier());
	snprintf(timeline, sizeof(timeline), "%u", GetWALInsertionTimeLine());
	if (gethostname(host, sizeof(host)) != 0)
		strlcpy(host, "unknown", sizeof(host));
	host[sizeof(host) - 1] = '\0';
	snprintf(port, sizeof(port), "%d", PostPortNumber);
	snprintf(takeover, sizeof(takeover), "%d", registry_takeover_delay);
	snprintf(lease, sizeof(lease), "%d", registry_reclaim_lease);
	snprintf(max_worker, sizeof(max_worker), "%d", registry_max_worker_id);
	snprintf(preferred, sizeof(preferred), "%d", cached_worker_id);
	params[0] = datacenter;
	params[1] = system_identifier;
	params[2] = timeline;
	params[3] = registry_state->token;
	params[4] = host;
	params[5] = port;
	params[6] = DataDir;
	params[7] = takeover;
	params[8] = lease;
	params[9] = max_worker;
	params[10] = cached_worker_id >= 0 ? preferred : NULL;
	if (!registry_ask(conn,
					  "snowflake_registry_claim($1, $2, $3, $4, $5, $6, $7, "
					  "$8 * interval '1 ms', $9 * interval '1 s', $10, $11)",
					  11, params, &answer, &sent_us, reason))
		return false;

	if (strcmp(answer.status, "claimed") == 0 &&
		(status != CLAIM_CACHED || answer.worker_id == cached_worker_id))
	{
		if (answer.worker_id != cached_worker_id)
			registry_write_cache(answer.worker_id);
		registry_publish(CLAIM_HELD, answer.worker_id, NULL, NULL, sent_us);
	}
	else if (status == CLAIM_CACHED)
		registry_publish(CLAIM_LOST, -1,
						 strcmp(answer.status, "refused") == 0 ? &answer : NULL,
						 NULL, 0);
	else if (strcmp(answer.status, "refused") == 0)
		registry_publish(CLAIM_REFUSED, -1, &answer, NULL, 0);
	else
		registry_publish(CLAIM_FULL, -1, NULL, NULL, 0);
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
registry_claim_key(RegistryClaimKey *key)
{
	snprintf(key->datacenter, sizeof(key->datacenter), "%d",
			 registry_datacenter_id);
	snprintf(key->worker, sizeof(key->worker), "%d",
			 snowflake_registry_worker_id());
	key->params[0] = key->datacenter;
	key->params[1] = key->worker;
	key->params[2] = registry_state->token;
}

/* Confirm the claim held; learn that it moved, if it did. */
static bool
registry_check_in(PGconn *conn, char *reason)
{
	RegistryClaimKey key;
	RegistryAnswer answer;
	uint64		sent_us;

	registry_claim_key(&key);
	if (!registry_ask(conn, "snowflake_registry_check_in($1, $2, $3)",
					  3, key.params, &answer, &sent_us, reason))
		return false;

	if (strcmp(answer.status, "held") == 0)
		registry_publish(CLAIM_HELD, -1, NULL, NULL, sent_us);
	else
		registry_publish(CLAIM_LOST, -1,
						 strcmp(answer.status, "moved") == 0 ? &answer : NULL,
						 NULL, 0);
	return true;
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
	RegistryClaimKey key;
	char		query[1024];
	PGresult   *result;

	SpinLockAcquire(&registry_state->mutex);
	status = registry_state->status;
	if (status == CLAIM_HELD || status == CLAIM_CACHED)
		registry_state->status = CLAIM_RELEASED;
	SpinLockRelease(&registry_state->mutex);
	if (status == CLAIM_HELD || status == CLAIM_CACHED)
		pg_atomic_write_u32(&registry_state->fast_status, CLAIM_RELEASED);
	if (status != CLAIM_HELD)
		return;

	if (conn == NULL)
		conn = registry_open(false, 1000, reason);
	if (conn == NULL)
		return;
	registry_claim_key(&key);
	snprintf(query, sizeof(query),
			 "SELECT %s.snowflake_registry_idle($1, $2, $3)", registry_schema);
	result = registry_exec(conn, query, 3, key.params, false, 1000, reason);
	if (result == NULL)
		ereport(LOG,
				(errmsg("could not mark the snowflake claim idle in the registry"),
				 errdetail_internal("%s", reason)));
	PQclear(result);
	PQfinish(conn);
}

/*---- the registry worker ----*/

/*
 * The registry worker: claim a worker id, then check in every
 * snowflake.registry_check_in_interval until shutdown, when the claim is
 * marked idle.  A connection that fails is dropped and made again at the
 * next round.  After a claim moved the worker only waits for shutdown.  If
 * the worker dies it is restarted a second later and goes on with the state
 * in shared memory (a crash of the whole server starts a new incarnation).
 */
void
snowflake_registry_main(Datum main_arg)
{
	PGconn	   *conn = NULL;
	int			cached_worker_id;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	if (!registry_read_cache(&cached_worker_id))
		cached_worker_id = -1;

	for (;;)
	{
		SnowflakeClaimStatus status;
		char		reason[SNOWFLAKE_REGISTRY_TEXT_LEN];
		bool		done;

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (ShutdownRequestPending)
		{
			registry_release(conn);
			proc_exit(0);
		}

		SpinLockAcquire(&registry_state->mutex);
		status = registry_state->status;
		if (status == CLAIM_HELD || status == CLAIM_CACHED)
			cached_worker_id = registry_state->worker_id;
		SpinLockRelease(&registry_state->mutex);

		if (status != CLAIM_LOST)
		{
			if (conn == NULL)
				conn = registry_open(true, registry_timeout_ms(), reason);
			if (conn == NULL)
				done = false;
			else if (status == CLAIM_HELD)
				done = registry_check_in(conn, reason);
			else
				done = registry_claim(conn, status, cached_worker_id, reason);

			if (!done)
			{
				if (conn != NULL)
					PQfinish(conn);
				conn = NULL;
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

		if (!ShutdownRequestPending)
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_EXIT_ON_PM_DEATH |
							 (status != CLAIM_LOST ? WL_TIMEOUT : 0),
							 registry_check_in_interval, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
