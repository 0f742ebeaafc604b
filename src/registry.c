/*-------------------------------------------------------------------------
 *
 * registry.c
 *		Worker ids claimed from a PostgreSQL registry instead of set by hand.
 *
 * With snowflake.registry set to a libpq connection string, a server does
 * not name its worker id: the registry worker, a background worker, claims
 * one at start from the registry database (where CREATE EXTENSION
 * snowflake_registry created the claims table and its functions), extends
 * the claim's promise every snowflake.registry_check_in_interval, and marks
 * the claim idle at a clean shutdown.  Only this worker talks to the
 * network.  Backends read the claim from shared memory in
 * snowflake_registry_gate(), which the generator calls before generating,
 * and wait there (at most snowflake.max_clock_wait) only while this server
 * has no usable claim.
 *
 * Safety rests on what the registry records, never on a clock or a delay.
 * The registry records, for the claim's current holder (its version and
 * start token), a promise: the latest time an ID of the holder may carry.
 * This server issues no ID past the promise the registry acknowledged,
 * durably: the gate checks it again after the atomic operation that claims
 * the ticks (snowflake_registry_recheck), so a call that waited while the
 * promise ran out fails.  Every new holder of a pair starts above every
 * promise the pair ever had, so two holders' IDs lie in disjoint ranges of
 * time.  When a claim passes (its holder marked it idle, its promise is
 * behind the registry's clock, an operator released it) decides only who
 * waits.  docs/fleet.md, "The rule", has the whole argument.
 *
 * No cached claim is ever used to generate: a server that cannot reach the
 * registry at start waits for it.  The last worker id is kept in the data
 * directory (snowflake.claim) only to ask for the same one again.
 *
 * Shared state: one struct under a spinlock, written by the registry worker
 * alone and read by backends; nothing is reported while the lock is held.
 * The gate's usual case reads two atomics and the worker id instead (see
 * SnowflakeRegistryState).
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
#include "layout.h"
#include "registry.h"
#include "statefile.h"
#include "waits.h"

/*---- the claim cache file ----*/

#define SNOWFLAKE_CLAIM_FILE		"snowflake.claim"
#define SNOWFLAKE_CLAIM_TEMP_FILE	SNOWFLAKE_CLAIM_FILE ".tmp"
#define SNOWFLAKE_CLAIM_MAGIC		0x534E434C	/* "SNCL" */
#define SNOWFLAKE_CLAIM_VERSION		3

/*
 * The worker id this server last claimed, to ask for the same one again.
 * Version 3 (1.4) has the fields of version 1 (1.1); version 2 (1.2 and
 * 1.3) adds the floor of a claim taken over, before the checksum, which is
 * no longer read: a cached claim never decides anything.
 */
typedef struct SnowflakeClaimFile
{
	uint32		magic;
	uint32		version;
	uint64		system_identifier;	/* of the server that claimed */
	int32		datacenter_id;
	int32		worker_id;
	pg_crc32c	crc;			/* of everything above */
} SnowflakeClaimFile;

typedef struct SnowflakeClaimFileV2
{
	uint32		magic;
	uint32		version;
	uint64		system_identifier;
	int32		datacenter_id;
	int32		worker_id;
	int64		floor_unix_ms;
	pg_crc32c	crc;
} SnowflakeClaimFileV2;

/*---- local variables ----*/

SnowflakeRegistryState *registry_state = NULL;

/*
 * This postmaster's token, made once: a crash restart reinitialises shared
 * memory but keeps the postmaster, and with it the token, so that the
 * registry knows the new incarnation for the same server (whose durable mark
 * keeps its IDs above the old incarnation's) rather than a copy.  It is in
 * no file: a copy of the data directory never has it.
 */
static char postmaster_token[SNOWFLAKE_UUID_LEN];


/*---- GUC variables ----*/

char	   *registry_conninfo = NULL;
int			registry_check_in_interval = 2000;

/* the server's datacenter id and largest worker id, set at start */
int			registry_datacenter_id = 0;
int			registry_max_worker_id = 0;

/*---- function declarations ----*/

pg_noreturn static void registry_error(SnowflakeRegistryState *copy);


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
 * a new incarnation, with this postmaster's token, that has claimed nothing
 * yet.  Called by the module's shared-memory startup hook, in the
 * postmaster, with AddinShmemInitLock held.
 */
void
snowflake_registry_shmem_init(void)
{
	bool		found;

	registry_state = ShmemInitStruct("snowflake registry",
									 sizeof(SnowflakeRegistryState), &found);
	if (!found)
	{
		memset(registry_state, 0, sizeof(*registry_state));
		pg_atomic_init_u64(&registry_state->fast_gate, CLAIM_PENDING);
		pg_atomic_init_u64(&registry_state->fast_ceiling_ms, 0);
		SpinLockInit(&registry_state->mutex);
		registry_state->status = CLAIM_PENDING;
		registry_state->worker_id = -1;
		registry_state->holder_worker_id = -1;
		registry_state->retry_in_ms = -1;
		registry_state->claim.waiting_floor_unix_ms = -1;
		if (postmaster_token[0] == '\0' &&
			!registry_random_uuid(postmaster_token))
			ereport(FATAL,
					(errmsg("could not generate a random token for the snowflake registry")));
		strlcpy(registry_state->token, postmaster_token,
				sizeof(registry_state->token));
	}
}

/*
 * This server's layout as the registry records it: "epoch ms/time/
 * datacenter/worker/sequence bits".  Every server of a fleet must send the
 * same: the registry refuses a claim in another.
 */
void
registry_layout(char *out, size_t size)
{
	snprintf(out, size, INT64_FORMAT "/%d/%d/%d/%d",
			 snowflake_epoch_unix_ms, snowflake_layout.time_bits,
			 snowflake_layout.datacenter_bits, snowflake_layout.worker_bits,
			 snowflake_layout.sequence_bits);
}

/*
 * For ereport: the detail of a refusal of this server's layout, beside the
 * fleet's as the registry answered it (empty where it records none), as a
 * backend's error and the worker's log both give it.
 */
int
registry_errdetail_layout(const char *fleet_layout)
{
	char		layout[96];

	registry_layout(layout, sizeof(layout));
	if (fleet_layout[0] != '\0')
		return errdetail("The registry records the fleet's layout (epoch ms/time/datacenter/worker/sequence bits) as %s; this server's is %s. Servers of two layouts can make the same ID.",
						 fleet_layout, layout);
	return errdetail("The registry has no layout for its fleet: claims of 1.3 servers, or of several layouts, are there. This server's is %s.",
					 layout);
}

/*
 * Write a random (version 4) UUID as text into out, which has room for
 * SNOWFLAKE_UUID_LEN bytes.  Returns false if no random bytes could be had.
 */
bool
registry_random_uuid(char *out)
{
	uint8		bytes[16];

	if (!pg_strong_random(bytes, sizeof(bytes)))
		return false;
	bytes[6] = (bytes[6] & 0x0f) | 0x40;	/* a version 4 UUID */
	bytes[8] = (bytes[8] & 0x3f) | 0x80;
	snprintf(out, SNOWFLAKE_UUID_LEN,
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5],
			 bytes[6], bytes[7], bytes[8], bytes[9], bytes[10], bytes[11],
			 bytes[12], bytes[13], bytes[14], bytes[15]);
	return true;
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
 * Return once this server may generate with its claim (see registry.h).
 * The usual case costs two atomic reads.  While the claim is not usable,
 * wait for the registry worker, polling the shared state, for at most
 * max_wait_ms; then raise the error that says why.  A claim released for
 * shutdown fails at once.
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

		/* the worker id was written before the gate */
		pg_read_barrier();
		if (GATE_STATUS(gate) == CLAIM_HELD)
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
		if (copy.status != CLAIM_HELD && copy.status != CLAIM_RELEASED &&
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
 * changed or stopped being usable since the gate, or lie past the promise
 * the registry recorded (see registry.h).  Those ticks are never issued.
 * The atomic operation that claimed them (an addition or a compare-and-swap)
 * is a full barrier, so what is read here is at least as new as the claim's
 * state at that moment.
 */
void
snowflake_registry_recheck(uint64 gate, int64 end_ms)
{
	SnowflakeRegistryState copy;
	uint64		now_gate;
	uint64		ceiling_ms;

	if (!snowflake_registry_enabled())
		return;

	/*
	 * The ceiling counts only if the gate is the call's before and after it
	 * is read: a new generation changes the gate before its ceiling.
	 */
	now_gate = pg_atomic_read_u64(&registry_state->fast_gate);
	pg_read_barrier();
	ceiling_ms = pg_atomic_read_u64(&registry_state->fast_ceiling_ms);
	pg_read_barrier();
	if (now_gate == gate && end_ms <= (int64) ceiling_ms &&
		pg_atomic_read_u64(&registry_state->fast_gate) == gate)
		return;

	SpinLockAcquire(&registry_state->mutex);
	memcpy(&copy, registry_state, sizeof(copy));
	SpinLockRelease(&registry_state->mutex);
	if (copy.generation != (gate >> 8))
	{
		if (copy.status == CLAIM_HELD)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not generate a snowflake ID: this server's registry claim changed during the call"),
					 errdetail("The claim stopped being usable, or was granted again, while the call waited."),
					 errhint("Retry the call.")));
		registry_error(&copy);
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("could not generate a snowflake ID: the ID would pass the time the registry recorded for this server's claim"),
			 copy.failure[0] != '\0' ?
			 errdetail("The registry recorded that this server issues no ID later than %lld ms after snowflake.epoch until it extends the claim; the next ID is %lld ms later. The last check-in failed: %s",
					   (long long) ceiling_ms,
					   (long long) (end_ms - (int64) ceiling_ms),
					   copy.failure) :
			 errdetail("The registry recorded that this server issues no ID later than %lld ms after snowflake.epoch until it extends the claim; the next ID is %lld ms later.",
					   (long long) ceiling_ms,
					   (long long) (end_ms - (int64) ceiling_ms)),
			 errhint("Make the registry named by \"snowflake.registry\" reachable and writable, and check the system clock.")));
}

/*
 * The claimed worker id, or -1 before the first claim (see registry.h).  It
 * is set before the status that lets the gate pass, and changes only with
 * the gate's generation.
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
		case CLAIM_WAITING:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not generate a snowflake ID: worker id %d of datacenter %d is being freed for this server",
							copy->holder_worker_id, registry_datacenter_id),
					 copy->retry_in_ms >= 0 ?
					 errdetail("It was reassigned to this server's login; it passes once its holder confirms, or in %lld ms, when the time its holder promised has passed.",
							   (long long) copy->retry_in_ms) :
					 errdetail("It was reassigned to this server's login; it passes once its holder confirms."),
					 errhint("snowflake_registry.status on the registry shows the claim's state.")));
			break;
		case CLAIM_REFUSED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not generate a snowflake ID: the registry refused this server's claim"),
					 errdetail("Worker id %d of datacenter %d is held by another start of this server's login: %s. Unless it extends its claim again, the claim passes to this server in about %lld ms.",
							   copy->holder_worker_id, registry_datacenter_id,
							   copy->holder, (long long) Max(copy->retry_in_ms, 0)),
					 errhint("This is expected after a failover or a crash restart: the claim of the previous start passes once the time it promised has passed. A holder that keeps extending its claim is a running server, of which this server is a copy; give each server a login of its own.")));
			break;
		case CLAIM_FULL:
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("could not generate a snowflake ID: all %d worker ids of datacenter %d are claimed",
							registry_max_worker_id + 1, registry_datacenter_id),
					 errhint("Release the claims of servers that are gone with snowflake_registry.release() on the registry, or set another \"snowflake.datacenter_id\".")));
			break;
		case CLAIM_LIMIT:
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("could not generate a snowflake ID: this server's login holds as many claims as it may"),
					 errdetail("A login holds one claim (held, or idle until it is free to others) unless an operator allows more."),
					 errhint("Give each server a login of its own, or allow more with snowflake_registry.allow() on the registry.")));
			break;
		case CLAIM_LAYOUT:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not generate a snowflake ID: this server's layout is not its fleet's"),
					 registry_errdetail_layout(copy->holder),
					 errhint(REGISTRY_LAYOUT_HINT)));
			break;
		case CLAIM_UNREACHABLE:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not generate a snowflake ID: the registry cannot be used"),
					 errdetail_internal("%s", copy->reason),
					 errhint("Make the registry named by \"snowflake.registry\" reachable. This server never generates without a claim the registry recorded.")));
			break;
		case CLAIM_LOST:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not generate a snowflake ID: this server's claim on worker id %d of datacenter %d %s",
							copy->worker_id, registry_datacenter_id,
							copy->reason[0] != '\0' ? copy->reason : "was lost"),
					 copy->holder[0] != '\0' ?
					 errdetail("It is held by %s.", copy->holder) : 0,
					 errhint("This server claims a worker id again by itself.")));
			break;
		case CLAIM_RELEASED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not generate a snowflake ID: this server's registry worker stopped and released its claim"),
					 errdetail("The worker stops when the server shuts down; stopped otherwise, it restarts within a second and claims a worker id again."),
					 errhint("Retry the call.")));
			break;
		case CLAIM_HELD:
			break;
	}
	pg_unreachable();			/* every other status raises its error above */
}

/*---- the claim cache file ----*/

/*
 * The worker id this server last claimed, or -1.  No file is normal (a
 * server that never claimed); a file that cannot be trusted, or that another
 * server or datacenter wrote, is reported and ignored.
 */
int
registry_read_cache(void)
{
	SnowflakeClaimFileV2 contents;
	pg_crc32c	crc;
	int			fd;
	int			nread;
	int			expected;
	size_t		crc_offset;
	pg_crc32c	file_crc = 0;
	const char *reason = NULL;

	fd = OpenTransientFile(SNOWFLAKE_CLAIM_FILE, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not open file \"%s\": %m", SNOWFLAKE_CLAIM_FILE)));
		return -1;
	}
	memset(&contents, 0, sizeof(contents));
	nread = read(fd, &contents, sizeof(contents));
	CloseTransientFile(fd);

	/* versions 1 and 3 have the checksum where version 2 has its floor */
	if (contents.version == 2)
	{
		crc_offset = offsetof(SnowflakeClaimFileV2, crc);
		expected = sizeof(SnowflakeClaimFileV2);
	}
	else
	{
		crc_offset = offsetof(SnowflakeClaimFile, crc);
		expected = sizeof(SnowflakeClaimFile);
	}
	if (nread == expected)
		memcpy(&file_crc, (char *) &contents + crc_offset, sizeof(file_crc));
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &contents, crc_offset);
	FIN_CRC32C(crc);
	if (nread != expected)
		reason = "It does not have the size of a claim file.";
	else if (contents.magic != SNOWFLAKE_CLAIM_MAGIC ||
			 contents.version < 1 || contents.version > SNOWFLAKE_CLAIM_VERSION)
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
		return -1;
	}
	return contents.worker_id;
}

/* Keep the worker id durably; a failure is only logged. */
void
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
