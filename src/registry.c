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
 * datacenter, so two servers starting at once never get the same id, and
 * never one outside the caller's layout.  A claim belongs to a system
 * identifier (a server and its copies) and, while it runs, to one
 * incarnation of it: a random token made at each start.  No wall clock
 * decides a takeover.  A claim passes to a new incarnation (a restart, a
 * promoted standby, a clone) when the holder marked it idle, or once this
 * worker has watched its version (which every check-in bumps) unchanged for
 * the takeover delay the registry holds, on the monotonic clock, with every
 * round answered; to another system once it was released and the holder
 * confirmed, or the holder cannot be generating any more.  Whoever takes a
 * claim over starts above the time its holder promised at its last check-in
 * (issued_until) or reported when it went idle.  docs/fleet.md, "The lease as a
 * rule", has the whole rule and why it holds.
 *
 * With snowflake.registry_require_check_in the holder keeps its side of the
 * rule itself: no ID once the takeover delay has passed since its last
 * successful check-in was sent, and none later than the time that check-in
 * promised.  The gate checks both again after the atomic operation that
 * claims the ticks (snowflake_registry_recheck), so a call that waited
 * while the claim was lost fails.  A server that learns at a check-in that
 * its claim moved or was released stops generating for good, and tells the
 * registry so.
 *
 * The claim is cached in the data directory (snowflake.claim, next to the
 * mark), with the floor it was taken above, so that a server that held a
 * claim can restart while the registry cannot be reached.  A server without
 * one refuses to generate instead: it never falls back to a default worker
 * id.
 *
 * Shared state: one struct under a spinlock, written by the registry worker
 * alone and read by backends; nothing is reported while the lock is held.
 * The gate's usual case reads three atomics instead (see
 * SnowflakeRegistryState).  The worker id never changes once this server has
 * generated with it.
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

#include "compat.h"
#include "registry.h"
#include "statefile.h"
#include "waits.h"

/*---- the claim cache file ----*/

#define SNOWFLAKE_CLAIM_FILE		"snowflake.claim"
#define SNOWFLAKE_CLAIM_TEMP_FILE	SNOWFLAKE_CLAIM_FILE ".tmp"
#define SNOWFLAKE_CLAIM_MAGIC		0x534E434C	/* "SNCL" */
#define SNOWFLAKE_CLAIM_VERSION		2

/*
 * Version 2 adds the floor: a claim taken over from another start or server
 * is cached with the time its IDs must lie above, so that a restart that
 * falls back on the cached claim stays above it too.  Version 1 files (1.1)
 * are read as having none.
 */
typedef struct SnowflakeClaimFile
{
	uint32		magic;
	uint32		version;
	uint64		system_identifier;	/* of the server that claimed */
	int32		datacenter_id;
	int32		worker_id;
	int64		floor_unix_ms;	/* IDs lie above this time, or -1 */
	pg_crc32c	crc;			/* of everything above */
} SnowflakeClaimFile;

typedef struct SnowflakeClaimFileV1
{
	uint32		magic;
	uint32		version;
	uint64		system_identifier;
	int32		datacenter_id;
	int32		worker_id;
	pg_crc32c	crc;
} SnowflakeClaimFileV1;

/*---- local variables ----*/

SnowflakeRegistryState *registry_state = NULL;


/*---- GUC variables ----*/

char	   *registry_conninfo = NULL;
int			registry_check_in_interval = 2000;
int			registry_takeover_delay = 10000;
int			registry_reclaim_lease = 86400;
bool		registry_require_check_in = false;

/* the server's datacenter id and largest worker id, set at start */
int			registry_datacenter_id = 0;
int			registry_max_worker_id = 0;

/*---- function declarations ----*/

pg_noreturn static void registry_error(SnowflakeRegistryState *copy);
pg_noreturn static void registry_refused_error(SnowflakeRegistryState *copy);


/*---- settings and start ----*/

/* Is value a connection string libpq can parse (see registry.h)? */
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
 * Start registry mode, if snowflake.registry is set (see registry.h).
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
}

/*---- shared memory ----*/

/* The shared memory registry mode takes (see registry.h). */
Size
snowflake_registry_shmem_size(void)
{
	return MAXALIGN(sizeof(SnowflakeRegistryState));
}

/*
 * Create the claim state at postmaster start and after a crash of a backend:
 * a new incarnation, with a new token, that has claimed nothing yet.  Called
 * by the module's shared-memory startup hook, with AddinShmemInitLock held.
 */
void
snowflake_registry_shmem_init(void)
{
	bool		found;

	registry_state = ShmemInitStruct("snowflake registry",
									 sizeof(SnowflakeRegistryState), &found);
	if (!found)
	{
		uint8		bytes[16];

		memset(registry_state, 0, sizeof(*registry_state));
		pg_atomic_init_u64(&registry_state->fast_gate, CLAIM_PENDING);
		pg_atomic_init_u64(&registry_state->fast_deadline_us, 0);
		pg_atomic_init_u64(&registry_state->fast_ceiling_ms, 0);
		pg_atomic_init_u64(&registry_state->fast_lease_end_us, 0);
		pg_atomic_init_u64(&registry_state->fast_lease_ceiling_ms, 0);
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
}

/* CLOCK_MONOTONIC in microseconds, comparable between processes */
uint64
registry_monotonic_us(void)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	return INSTR_TIME_GET_MICROSEC(now);
}

/*---- the gate backends pass before generating ----*/

/* the status in a fast_gate value */
#define GATE_STATUS(gate) ((SnowflakeClaimStatus) ((gate) & 0xFF))

/*
 * May this server generate with a claim in this state?  A claim from the
 * registry only until its deadline, if it has one; the cached claim only
 * where no check-in is required (its deadline is then unlimited).
 */
static bool
registry_claim_usable(SnowflakeClaimStatus status, uint64 deadline_us)
{
	if (status != CLAIM_HELD && status != CLAIM_CACHED)
		return false;
	if (deadline_us == REGISTRY_UNLIMITED)
		return true;
	return status == CLAIM_HELD && registry_monotonic_us() <= deadline_us;
}

/*
 * The deadline and the ceiling this backend applies: those of the registry
 * worker's lease, and the lease's own limits wherever this backend's
 * snowflake.registry_require_check_in is on (see SnowflakeRegistryState).
 */
static inline uint64
registry_deadline_us(void)
{
	return pg_atomic_read_u64(registry_require_check_in ?
							  &registry_state->fast_lease_end_us :
							  &registry_state->fast_deadline_us);
}

static inline uint64
registry_ceiling_ms(void)
{
	return pg_atomic_read_u64(registry_require_check_in ?
							  &registry_state->fast_lease_ceiling_ms :
							  &registry_state->fast_ceiling_ms);
}

/*
 * Return once this server may generate with its claim (see registry.h).
 * The usual case costs three atomic reads, and a read of the monotonic clock
 * with snowflake.registry_require_check_in.  While the claim is not usable,
 * wait for the registry worker, polling the shared state, for at most
 * max_wait_ms; then raise the error that says why.  A claim that moved or
 * was released for shutdown fails at once.
 */
uint64
snowflake_registry_gate(int max_wait_ms, int *worker_id)
{
	SnowflakeRegistryState copy;
	uint64		started_us = 0;

	if (!snowflake_registry_enabled())
		return 0;

	for (;;)
	{
		uint64		gate = pg_atomic_read_u64(&registry_state->fast_gate);
		uint64		now_us;

		/* the worker id and the deadline were written before the gate */
		pg_read_barrier();
		if (registry_claim_usable(GATE_STATUS(gate), registry_deadline_us()))
		{
			*worker_id = registry_state->worker_id;
			Assert(*worker_id >= 0 && *worker_id <= registry_max_worker_id);
			return gate;
		}

		SpinLockAcquire(&registry_state->mutex);
		memcpy(&copy, registry_state, sizeof(copy));
		SpinLockRelease(&registry_state->mutex);

		now_us = registry_monotonic_us();
		if (started_us == 0)
			started_us = now_us;
		if (copy.status != CLAIM_HELD && copy.status != CLAIM_CACHED &&
			copy.status != CLAIM_LOST && copy.status != CLAIM_RELEASED &&
			now_us - started_us < (uint64) max_wait_ms * 1000)
		{
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 10L,
							 snowflake_wait_event(SNOWFLAKE_WAIT_REGISTRY_CLAIM));
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		registry_error(&copy);
	}
}

/*
 * Fail a call whose ticks, up to end_ms, were claimed after the claim
 * changed or stopped being usable since the gate, or lie past the time this
 * server promised the registry (see registry.h).  Those ticks are never
 * issued.  The atomic operation that claimed them (an addition or a
 * compare-and-swap) is a full barrier, so what is read here is at least as
 * new as the claim's state at that moment.
 */
void
snowflake_registry_recheck(uint64 gate, int64 end_ms)
{
	SnowflakeRegistryState copy;
	uint64		now_gate;
	uint64		ceiling_ms;

	if (!snowflake_registry_enabled())
		return;

	now_gate = pg_atomic_read_u64(&registry_state->fast_gate);
	pg_read_barrier();
	ceiling_ms = registry_ceiling_ms();
	if ((now_gate >> 8) == (gate >> 8) &&
		registry_claim_usable(GATE_STATUS(now_gate), registry_deadline_us()) &&
		(ceiling_ms == REGISTRY_UNLIMITED || end_ms <= (int64) ceiling_ms))
		return;

	SpinLockAcquire(&registry_state->mutex);
	memcpy(&copy, registry_state, sizeof(copy));
	SpinLockRelease(&registry_state->mutex);
	if (copy.generation != (gate >> 8))
	{
		if (copy.status == CLAIM_HELD || copy.status == CLAIM_CACHED)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not generate a snowflake ID: this server's registry claim changed during the call"),
					 errdetail("The claim stopped being usable while the call waited, and was granted again since."),
					 errhint("Retry the call.")));
		registry_error(&copy);
	}
	if (ceiling_ms != REGISTRY_UNLIMITED && end_ms > (int64) ceiling_ms)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("could not generate a snowflake ID: the ID would pass the time this server promised the registry"),
				 errdetail("\"snowflake.registry_require_check_in\" is on, and at its last check-in this server promised to issue no ID later than %lld ms after snowflake.epoch before its next check-in; the next ID is %lld ms later.",
						   (long long) ceiling_ms,
						   (long long) (end_ms - (int64) ceiling_ms)),
				 errhint("Make the registry named by \"snowflake.registry\" reachable, and check the system clock.")));
	registry_error(&copy);
}

/*
 * The claimed worker id, or -1 before the first claim (see registry.h).  It
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

/*
 * Refuse an ID because another start of this server holds the claim: say
 * when the holder last checked in, and when the claim passes to this server
 * unless it checks in again, by this server's watch of it.  After a failover
 * or a crash restart that holder is the previous start, which will not check
 * in again: this is the takeover delay at work, not a fault.
 */
static void
registry_refused_error(SnowflakeRegistryState *copy)
{
	uint64		now_us = registry_monotonic_us();
	int64		ago_ms = copy->holder_checked_in_ago_ms;
	int64		left_ms = 0;

	if (ago_ms >= 0 && now_us > copy->answered_us)
		ago_ms += (int64) ((now_us - copy->answered_us) / 1000);
	if (copy->watch_since_us != 0)
	{
		/* as registry_watched_long_enough() times it */
		uint64		until_us = copy->watch_since_us +
			(uint64) copy->watch_wait_ms * 1001;

		if (until_us > now_us)
			left_ms = (int64) ((until_us - now_us + 999) / 1000);
	}

	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("could not generate a snowflake ID: the registry refused this server's claim"),
			 copy->watch_since_us == 0 ?
			 errdetail("Worker id %d of datacenter %d is held by %s since %s, and last checked in at %s, %lld ms ago. The registry cannot be reached now; the claim passes to this server once the registry has shown it unchanged for %lld ms, every round answered.",
					   copy->holder_worker_id, registry_datacenter_id,
					   copy->holder, copy->holder_since,
					   copy->holder_checked_in, (long long) ago_ms,
					   (long long) copy->watch_wait_ms) :
			 left_ms > 0 ?
			 errdetail("Worker id %d of datacenter %d is held by %s since %s, and last checked in at %s, %lld ms ago. Unless it checks in again, the claim passes to this server in about %lld ms.",
					   copy->holder_worker_id, registry_datacenter_id,
					   copy->holder, copy->holder_since,
					   copy->holder_checked_in, (long long) ago_ms,
					   (long long) left_ms) :
			 errdetail("Worker id %d of datacenter %d is held by %s since %s, and last checked in at %s, %lld ms ago. This server has seen the claim unchanged for as long as it must, and takes it over at its next round.",
					   copy->holder_worker_id, registry_datacenter_id,
					   copy->holder, copy->holder_since,
					   copy->holder_checked_in, (long long) ago_ms),
			 errhint("This is expected after a failover or a crash restart: the claim of the previous start of this server passes once that start has not checked in for its takeover delay (%lld ms), and generation resumes then. A holder that keeps checking in is a running server, of which this server is a copy.",
					 (long long) copy->watch_wait_ms)));
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
		case CLAIM_WAITING:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not generate a snowflake ID: worker id %d of datacenter %d is being freed for this server",
							copy->holder_worker_id, registry_datacenter_id),
					 errdetail("It was released or reassigned, or its holder, %s, has not checked in since %s; it passes to this server once its holder has confirmed or cannot be generating any more.",
							   copy->holder, copy->holder_checked_in),
					 errhint("snowflake_registry_status on the registry shows the claim's state.")));
			break;
		case CLAIM_REFUSED:
			registry_refused_error(copy);
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
						 copy->holder_since[0] == '\0' ?
						 errdetail("It was reassigned on the registry to %s, which has not claimed it yet.",
								   copy->holder) :
						 errdetail("It is held by %s since %s.",
								   copy->holder, copy->holder_since),
						 copy->holder_since[0] == '\0' ?
						 errhint("Restart the server to claim a worker id again.") :
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
							   copy->agreed_delay_ms),
					 errhint("Make the registry named by \"snowflake.registry\" reachable.")));
			break;
	}
	pg_unreachable();			/* every status raises its error above */
}

/*---- the claim cache file ----*/

/*
 * Read the cached claim into *worker_id and *floor_unix_ms.  No file is
 * normal (a server that never claimed); a file that cannot be trusted, or
 * that another server or datacenter wrote, is reported and ignored, which
 * can only make this server refuse to generate while the registry cannot be
 * reached.
 */
bool
registry_read_cache(int *worker_id, int64 *floor_unix_ms)
{
	SnowflakeClaimFile contents;
	SnowflakeClaimFileV1 v1;
	pg_crc32c	crc;
	int			fd;
	int			nread;
	size_t		crc_offset = offsetof(SnowflakeClaimFile, crc);
	pg_crc32c	file_crc = 0;
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
	memset(&contents, 0, sizeof(contents));
	nread = read(fd, &contents, sizeof(contents));
	CloseTransientFile(fd);

	if (nread == sizeof(v1) && contents.version == 1)
	{
		/* a 1.1 file: the same fields, without the floor */
		memcpy(&v1, &contents, sizeof(v1));
		crc_offset = offsetof(SnowflakeClaimFileV1, crc);
		file_crc = v1.crc;
		contents.floor_unix_ms = -1;
	}
	else if (nread == sizeof(contents))
		file_crc = contents.crc;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &contents, crc_offset);
	FIN_CRC32C(crc);
	if (nread != sizeof(contents) && nread != sizeof(v1))
		reason = "It does not have the size of a claim file.";
	else if (contents.magic != SNOWFLAKE_CLAIM_MAGIC ||
			 (contents.version != SNOWFLAKE_CLAIM_VERSION &&
			  contents.version != 1) ||
			 (contents.version == 1) != (nread == sizeof(v1)))
		reason = "It does not begin with the claim file's magic number and version.";
	else if (!EQ_CRC32C(crc, file_crc))
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
	*floor_unix_ms = contents.floor_unix_ms;
	return true;
}

/* Cache a claim durably; a failure is only logged (see registry_read_cache). */
void
registry_write_cache(int worker_id, int64 floor_unix_ms)
{
	SnowflakeClaimFile contents;

	memset(&contents, 0, sizeof(contents));
	contents.magic = SNOWFLAKE_CLAIM_MAGIC;
	contents.version = SNOWFLAKE_CLAIM_VERSION;
	contents.system_identifier = GetSystemIdentifier();
	contents.datacenter_id = registry_datacenter_id;
	contents.worker_id = worker_id;
	contents.floor_unix_ms = floor_unix_ms;
	INIT_CRC32C(contents.crc);
	COMP_CRC32C(contents.crc, &contents, offsetof(SnowflakeClaimFile, crc));
	FIN_CRC32C(contents.crc);

	if (!snowflake_write_file_durably(SNOWFLAKE_CLAIM_FILE,
									  SNOWFLAKE_CLAIM_TEMP_FILE,
									  &contents, sizeof(contents), LOG))
		(void) unlink(SNOWFLAKE_CLAIM_TEMP_FILE);
}
