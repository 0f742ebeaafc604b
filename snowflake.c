/*-------------------------------------------------------------------------
 *
 * snowflake.c
 *		Twitter-Snowflake IDs generated inside PostgreSQL.
 *
 * An ID is a positive bigint laid out as Twitter defined it:
 *
 *	 bit 63		always 0, so every ID is a positive bigint
 *	 bits 62-22 milliseconds since the epoch (snowflake.epoch), 41 bits
 *	 bits 21-17 datacenter id (snowflake.datacenter_id), 5 bits
 *	 bits 16-12 worker id (snowflake.worker_id), 5 bits
 *	 bits 11-0	sequence within the millisecond, 12 bits
 *
 * All widths and shifts are defined once, below, and everything else is
 * derived from them.
 *
 * One server is one generator.  Its whole state is one 64-bit word in
 * shared memory, the "tick" of the last ID issued: (ms << sequence bits) |
 * sequence.  The tick is the ID without the node bits, so ticks order IDs
 * exactly as the IDs themselves order, and tick + 1 carries from a used-up
 * sequence into the next millisecond.  A backend reads the word, computes
 * max(last + 1, now << sequence bits) and installs it with one
 * compare-and-swap.  Whoever wins owns that tick; whoever loses retries with
 * the value it was handed.  No lock is held while generating, so nothing can
 * wait on a backend that has been descheduled, and two backends can never
 * own the same tick.  Since every issued tick was installed into the word,
 * the word is always the largest tick ever issued, so every ID is greater
 * than all IDs issued before it, by any backend.
 *
 * The generator may run ahead of the wall clock by at most snowflake.max_lead
 * milliseconds (0 by default); beyond that it waits, for the next
 * millisecond when a millisecond's sequence is used up, or for a clock that
 * has stepped back for at most snowflake.max_clock_wait, and then errors.
 *
 * Shared memory is empty after a restart, so the generator also keeps a
 * durable high-water mark: a millisecond that no issued ID has reached.  The
 * mark is stored in a small file in the data directory (written to a
 * temporary name, fsynced and durably renamed) and is always on disk before
 * any ID at or past the previous mark is handed out.  When generation comes
 * within half a stride of the mark, the backend that notices wakes the mark
 * writer, a background worker, which writes a new mark
 * SNOWFLAKE_MARK_STRIDE_MS ahead under mark_lock while every backend goes on
 * below the old one, so generating backends do no I/O.  Only a backend that
 * reaches the mark itself (the writer is not running, or is slower than
 * generation) writes it, or waits for the writer.  At server start
 * generation resumes at the mark, so
 * a restart or crash never repeats an ID even when the clock went back; a
 * clean shutdown writes the exact mark so that a restart does not have to
 * wait for the clock.  The same mark is WAL-logged through a custom resource
 * manager before it is used, so a standby that replays a commit has also
 * replayed a mark above every ID that transaction could hold; after
 * promotion it resumes above that mark.  The file does not depend on
 * synchronous_commit.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "common/int.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "port/pg_crc32c.h"
#include "portability/instr_time.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "replication/syncrep.h"
#include "replication/walsender_private.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

PG_MODULE_MAGIC;

/*---- ID layout: the one place that knows the widths ----*/

#define SNOWFLAKE_SEQUENCE_BITS		12
#define SNOWFLAKE_WORKER_BITS		5
#define SNOWFLAKE_DATACENTER_BITS	5
#define SNOWFLAKE_TIME_BITS			41

#define SNOWFLAKE_WORKER_SHIFT		SNOWFLAKE_SEQUENCE_BITS
#define SNOWFLAKE_DATACENTER_SHIFT	(SNOWFLAKE_WORKER_SHIFT + SNOWFLAKE_WORKER_BITS)
#define SNOWFLAKE_TIME_SHIFT		(SNOWFLAKE_DATACENTER_SHIFT + SNOWFLAKE_DATACENTER_BITS)

#define SNOWFLAKE_MAX_SEQUENCE		((INT64CONST(1) << SNOWFLAKE_SEQUENCE_BITS) - 1)
#define SNOWFLAKE_MAX_WORKER_ID		((1 << SNOWFLAKE_WORKER_BITS) - 1)
#define SNOWFLAKE_MAX_DATACENTER_ID ((1 << SNOWFLAKE_DATACENTER_BITS) - 1)
#define SNOWFLAKE_MAX_MS			((INT64CONST(1) << SNOWFLAKE_TIME_BITS) - 1)

StaticAssertDecl(SNOWFLAKE_TIME_SHIFT + SNOWFLAKE_TIME_BITS == 63,
				 "a snowflake ID must use bits 0-62 exactly");

/* Twitter's epoch, 2010-11-04 01:42:54.657 UTC */
#define SNOWFLAKE_DEFAULT_EPOCH		"2010-11-04 01:42:54.657+00"

/* Milliseconds from the Unix epoch to PostgreSQL's (2000-01-01) */
#define SNOWFLAKE_UNIX_TO_PG_MS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000)

/*---- the durable high-water mark ----*/

/*
 * How far ahead of the generator a newly written mark lies, and so how far
 * past the last real ID a server may resume after a crash.  A new mark is
 * written once generation is within half of this of the old one: at full
 * speed that is one small fsync every 500 ms of ID time.  It is no larger
 * than the default snowflake.max_clock_wait, so that after a crash the first
 * call waits out the rest of the stride instead of failing.
 */
#define SNOWFLAKE_MARK_STRIDE_MS	1000

/*
 * A mark must still lie ahead of the clock once it is durable, so when
 * writing one takes longer than half a stride (a slow disk, a synchronous
 * standby far away), the stride grows to twice the time the last write took,
 * up to this.
 */
#define SNOWFLAKE_MAX_STRIDE_MS		60000

/*
 * How long after the last ID the mark writer keeps the mark ahead of the
 * clock: one write every half stride, on a server that has gone quiet.
 */
#define SNOWFLAKE_WRITER_ACTIVE_MS	60000

#define SNOWFLAKE_MARK_FILE			"snowflake.mark"
#define SNOWFLAKE_MARK_TEMP_FILE	SNOWFLAKE_MARK_FILE ".tmp"
#define SNOWFLAKE_MARK_MAGIC		0x534E4F57	/* "SNOW" */
#define SNOWFLAKE_MARK_VERSION		1

/*
 * The mark file.  mark_ms counts milliseconds since the epoch in force when
 * it was written, so it bounds the time field of the IDs themselves; the
 * epoch is kept to explain a mark that looks far off after the epoch was
 * changed.
 */
typedef struct SnowflakeMarkFile
{
	uint32		magic;
	uint32		version;
	int64		epoch_unix_ms;
	int64		mark_ms;
	pg_crc32c	crc;			/* of everything above */
} SnowflakeMarkFile;

/*
 * WAL resource manager for the mark.  Custom resource manager ids are
 * 128-255; this one is not yet in PostgreSQL's registry of them (see
 * README).
 */
#define SNOWFLAKE_RMGR_ID			146
#define XLOG_SNOWFLAKE_MARK			0x00

typedef struct xl_snowflake_mark
{
	int64		mark_ms;
} xl_snowflake_mark;

/* the error for a clock behind, which the server log gets once an episode */
#define SNOWFLAKE_CLOCK_BEHIND_MESSAGE \
	"could not generate a snowflake ID: the clock is behind"

/*---- shared state ----*/

/*
 * Everything all backends share.  last_tick and durable_mark are read and
 * advanced with atomics only; mark_lock is held only by the one process (the
 * mark writer, or a backend) that writes a new mark, and never while waiting
 * for a standby or while an ID is being chosen.  mark_writer_latch is set and cleared by the mark writer
 * alone and read without a lock, as PostgreSQL does with the WAL writer's
 * latch: at worst a backend sets a latch that no longer matters.
 * mark_invalid and its reason are set once at startup and only read
 * afterwards.
 */
typedef struct SnowflakeSharedState
{
	pg_atomic_uint64 last_tick; /* largest tick issued, or the floor - 1 */
	pg_atomic_uint64 durable_mark;	/* no ID reaches this ms until a larger
									 * mark is durable */
	LWLock	   *mark_lock;		/* serialises writers of the mark */
	int64		written_mark;	/* largest mark in the file and WAL, which
								 * synchronous standbys may not have yet;
								 * under mark_lock */
	XLogRecPtr	written_lsn;	/* its WAL record; under mark_lock */
	pg_atomic_uint64 write_duration_us; /* how long the last mark took */
	Latch	   *mark_writer_latch;	/* the mark writer's latch while it runs */

	/* counters for a status view */
	pg_atomic_uint64 sequence_waits;	/* calls that waited for the next ms */
	pg_atomic_uint64 clock_behind_waits;	/* calls that waited for the clock */
	pg_atomic_uint64 clock_behind_errors;	/* calls refused, clock behind */
	pg_atomic_uint64 leads_taken;	/* IDs issued ahead of the clock */
	pg_atomic_uint64 mark_writes;	/* marks made durable */
	pg_atomic_uint32 clock_behind_logged;	/* current episode already logged */
	pg_atomic_uint64 episode_first_error;	/* clock_behind_errors when the
											 * current episode began */

	bool		mark_invalid;	/* the mark file could not be trusted */
	char		mark_invalid_reason[256];
} SnowflakeSharedState;

/*---- local variables ----*/

static SnowflakeSharedState *snowflake_state = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static emit_log_hook_type prev_emit_log_hook = NULL;

/* the last ID this backend returned, for snowflake_last_id() */
static int64 snowflake_session_last_id;
static bool snowflake_session_has_last_id = false;

/*---- GUC variables ----*/

static int	snowflake_datacenter_id = 0;
static int	snowflake_worker_id = 0;
static char *snowflake_epoch_string = NULL;
static int	snowflake_max_clock_wait = 1000;
static int	snowflake_max_lead = 0;

/* the epoch parsed from snowflake.epoch, in milliseconds since 1970 */
static int64 snowflake_epoch_unix_ms;

/*---- function declarations ----*/

void		_PG_init(void);
PGDLLEXPORT void snowflake_mark_writer_main(Datum main_arg);

/* this process is the mark writer */
static bool snowflake_am_mark_writer = false;

PG_FUNCTION_INFO_V1(snowflake_next_id);
PG_FUNCTION_INFO_V1(snowflake_last_id);
PG_FUNCTION_INFO_V1(snowflake_parse);
PG_FUNCTION_INFO_V1(snowflake_parse_with_epoch);

static void snowflake_shmem_request(void);
static void snowflake_shmem_startup(void);
static void snowflake_shmem_shutdown(int code, Datum arg);
static void snowflake_emit_log(ErrorData *edata);
static void snowflake_read_mark_file(SnowflakeSharedState *state);
static bool snowflake_write_mark_file(int64 mark_ms, int elevel);
static void snowflake_raise_floor(SnowflakeSharedState *state, int64 mark_ms);
static void snowflake_advance_mark(int64 needed_ms, int64 margin_ms,
								   bool wait);
static bool snowflake_standbys_have(XLogRecPtr lsn);
static inline int64 snowflake_clock_ms(int *us_into_ms);
static void snowflake_publish_mark(int64 mark_ms);
static void snowflake_reject_unknown_settings(void);
static void snowflake_mark_writer_detach(int code, Datum arg);
static int64 snowflake_generate(void);
static bool snowflake_parse_epoch(const char *value, int64 *epoch_unix_ms,
								  const char **detail);
static bool snowflake_check_epoch(char **newval, void **extra, GucSource source);
static void snowflake_assign_epoch(const char *newval, void *extra);
static const char *snowflake_show_epoch(void);
static void snowflake_validate_preset(const char *name, const char *raw,
									  int max_value);
static void snowflake_redo(XLogReaderState *record);
static void snowflake_desc(StringInfo buf, XLogReaderState *record);
static const char *snowflake_identify(uint8 info);

static RmgrData snowflake_rmgr = {
	.rm_name = "snowflake",
	.rm_redo = snowflake_redo,
	.rm_desc = snowflake_desc,
	.rm_identify = snowflake_identify,
};


/*
 * Module load: define the settings, reserve their prefix, register the WAL
 * resource manager and the mark writer, and ask for shared memory.
 *
 * All of this needs shared_preload_libraries.  Loaded any other way (a first
 * call after CREATE EXTENSION, or LOAD), the module defines nothing, the
 * decoding functions still work, and the generating ones raise an error that
 * names the setting.
 */
void
_PG_init(void)
{
	const char *raw_datacenter_id;
	const char *raw_worker_id;
	const char *raw_epoch;
	BackgroundWorker worker;

	if (!process_shared_preload_libraries_in_progress)
		return;

	/*
	 * A value from postgresql.conf that fails validation only draws a
	 * WARNING when a custom setting is defined, and the default stays.  For
	 * node ids and the epoch that would silently hand out colliding IDs, so
	 * keep the raw values and refuse to start on a bad one below.
	 */
	raw_datacenter_id = GetConfigOption("snowflake.datacenter_id", true, false);
	raw_worker_id = GetConfigOption("snowflake.worker_id", true, false);
	raw_epoch = GetConfigOption("snowflake.epoch", true, false);
	raw_datacenter_id = raw_datacenter_id ? pstrdup(raw_datacenter_id) : NULL;
	raw_worker_id = raw_worker_id ? pstrdup(raw_worker_id) : NULL;
	raw_epoch = raw_epoch ? pstrdup(raw_epoch) : NULL;

	DefineCustomIntVariable("snowflake.datacenter_id",
							"Datacenter id written into every snowflake ID.",
							"Each server of a fleet needs its own pair of "
							"datacenter id and worker id.",
							&snowflake_datacenter_id,
							0, 0, SNOWFLAKE_MAX_DATACENTER_ID,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("snowflake.worker_id",
							"Worker id written into every snowflake ID.",
							"Each server of a fleet needs its own pair of "
							"datacenter id and worker id.",
							&snowflake_worker_id,
							0, 0, SNOWFLAKE_MAX_WORKER_ID,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomStringVariable("snowflake.epoch",
							   "Moment from which snowflake IDs count milliseconds.",
							   "A timestamp with a time zone, such as '"
							   SNOWFLAKE_DEFAULT_EPOCH "' (Twitter's epoch, "
							   "the default), or milliseconds since "
							   "1970-01-01 00:00:00 UTC.",
							   &snowflake_epoch_string,
							   SNOWFLAKE_DEFAULT_EPOCH,
							   PGC_POSTMASTER,
							   0,
							   snowflake_check_epoch,
							   snowflake_assign_epoch,
							   snowflake_show_epoch);

	DefineCustomIntVariable("snowflake.max_clock_wait",
							"Longest time one call waits for a clock that is behind.",
							"When the clock reads earlier than the generator's "
							"state allows (beyond snowflake.max_lead), a call "
							"waits up to this long for it to catch up, then "
							"fails. 0 fails at once.",
							&snowflake_max_clock_wait,
							1000, 0, 3600 * 1000,
							PGC_SUSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	/* up to 24 days: enough to ride out a VM restored from an old snapshot */
	DefineCustomIntVariable("snowflake.max_lead",
							"How far IDs may run ahead of the clock instead of waiting.",
							"When a millisecond's sequence is used up, or the "
							"clock steps back, the generator goes on in later "
							"milliseconds as long as it stays within this much "
							"of the clock. 0 never runs ahead.",
							&snowflake_max_lead,
							0, 0, INT_MAX,
							PGC_SUSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	snowflake_reject_unknown_settings();
	MarkGUCPrefixReserved("snowflake");

	snowflake_validate_preset("snowflake.datacenter_id", raw_datacenter_id,
							  SNOWFLAKE_MAX_DATACENTER_ID);
	snowflake_validate_preset("snowflake.worker_id", raw_worker_id,
							  SNOWFLAKE_MAX_WORKER_ID);
	snowflake_validate_preset("snowflake.epoch", raw_epoch, 0);

	RegisterCustomRmgr(SNOWFLAKE_RMGR_ID, &snowflake_rmgr);

	/*
	 * The mark writer runs only where IDs are generated: on a primary, and
	 * on a standby from its promotion on.
	 */
	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 1;
	strlcpy(worker.bgw_library_name, "snowflake", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "snowflake_mark_writer_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "snowflake mark writer", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "snowflake mark writer", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = snowflake_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = snowflake_shmem_startup;
	prev_emit_log_hook = emit_log_hook;
	emit_log_hook = snowflake_emit_log;
}

/*
 * Stop the server when postgresql.conf names a snowflake setting that does
 * not exist.  PostgreSQL would only warn and drop it, and a misspelt
 * snowflake.worker_id would leave the server on worker 0, colliding with
 * another server's IDs.  Runs once the real settings are defined, so any
 * placeholder left with the prefix is unknown.
 */
static void
snowflake_reject_unknown_settings(void)
{
	struct config_generic **variables = get_guc_variables();
	int			count = GetNumConfigOptions();

	for (int i = 0; i < count; i++)
	{
		if ((variables[i]->flags & GUC_CUSTOM_PLACEHOLDER) != 0 &&
			strncmp(variables[i]->name, "snowflake.", strlen("snowflake.")) == 0)
			ereport(FATAL,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("unrecognized configuration parameter \"%s\"",
							variables[i]->name),
					 errdetail("\"snowflake\" is a reserved prefix."),
					 errhint("The snowflake settings are snowflake.datacenter_id, snowflake.worker_id, "
							 "snowflake.epoch, snowflake.max_clock_wait and snowflake.max_lead.")));
	}
}

/*
 * Stop the server when a setting given before the module was loaded did not
 * take, rather than run with the default in its place.  max_value bounds an
 * integer setting; 0 means the setting is the epoch.
 */
static void
snowflake_validate_preset(const char *name, const char *raw, int max_value)
{
	if (raw == NULL)
		return;
	if (max_value == 0)
	{
		int64		epoch_unix_ms;
		const char *detail;

		if (!snowflake_parse_epoch(raw, &epoch_unix_ms, &detail))
			ereport(FATAL,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for parameter \"%s\": \"%s\"",
							name, raw),
					 errdetail_internal("%s", detail)));
	}
	else
	{
		int			value;

		if (!parse_int(raw, &value, 0, NULL) || value < 0 || value > max_value)
			ereport(FATAL,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for parameter \"%s\": \"%s\"",
							name, raw),
					 errdetail("\"%s\" must be an integer from 0 to %d.",
							   name, max_value),
					 errhint("Each server of a fleet needs its own pair of "
							 "snowflake.datacenter_id and snowflake.worker_id.")));
	}
}

/*
 * Decode a timestamp literal that names its time zone into *ts.  On failure
 * set *detail and return false.  DecodeDateTime() reports some bad zone
 * names with ereport(ERROR), which the caller catches.
 */
static bool
snowflake_decode_timestamp(const char *value, TimestampTz *ts,
						   const char **detail)
{
	char		workbuf[MAXDATELEN + MAXDATEFIELDS];
	char	   *field[MAXDATEFIELDS];
	int			ftype[MAXDATEFIELDS];
	int			nf;
	int			dtype;
	struct pg_tm tm;
	fsec_t		fsec;
	int			tz;

	*detail = "The epoch must be a timestamp with a time zone, such as '"
		SNOWFLAKE_DEFAULT_EPOCH "', or milliseconds since 1970.";
	if (strlen(value) >= MAXDATELEN ||
		ParseDateTime(value, workbuf, sizeof(workbuf), field, ftype,
					  MAXDATEFIELDS, &nf) != 0)
		return false;

	/*
	 * Decoding without a place for a zone fails just when the literal names
	 * one.  Decoding changes the fields in place, so parse again before
	 * decoding for real.
	 */
	if (DecodeDateTime(field, ftype, nf, &dtype, &tm, &fsec, NULL) == 0)
	{
		*detail = "The epoch must name its time zone, as in '"
			SNOWFLAKE_DEFAULT_EPOCH "'.";
		return false;
	}
	return ParseDateTime(value, workbuf, sizeof(workbuf), field, ftype,
						 MAXDATEFIELDS, &nf) == 0 &&
		DecodeDateTime(field, ftype, nf, &dtype, &tm, &fsec, &tz) == 0 &&
		dtype == DTK_DATE &&
		tm2timestamp(&tm, fsec, &tz, ts) == 0;
}

/*
 * Parse an epoch: integer milliseconds since 1970, or a timestamp literal
 * that names its time zone.  A literal without one is refused, because its
 * meaning would change with the server's TimeZone.  On failure, *detail says
 * why in a full sentence.  Never throws: this runs in a GUC check hook, and
 * an error there would stop the postmaster on a reload.
 */
static bool
snowflake_parse_epoch(const char *value, int64 *epoch_unix_ms,
					  const char **detail)
{
	int64		now_unix_ms;
	char	   *end;
	long long	integer_ms;

	/* integer milliseconds since 1970 */
	errno = 0;
	integer_ms = strtoll(value, &end, 10);
	if (end != value && *end == '\0')
	{
		if (errno == ERANGE || integer_ms < 0)
		{
			*detail = "An epoch given in milliseconds must be a number from 0 up to now.";
			return false;
		}
		*epoch_unix_ms = (int64) integer_ms;
	}
	else
	{
		MemoryContext context = CurrentMemoryContext;
		volatile bool decoded = false;
		TimestampTz ts = 0;

		PG_TRY();
		{
			decoded = snowflake_decode_timestamp(value, &ts, detail);
		}
		PG_CATCH();
		{
			MemoryContextSwitchTo(context);
			FlushErrorState();
			*detail = "The epoch's time zone is not recognized.";
		}
		PG_END_TRY();
		if (!decoded)
			return false;
		if (ts % 1000 != 0)
		{
			*detail = "The epoch must be a whole number of milliseconds.";
			return false;
		}
		*epoch_unix_ms = ts / 1000 + SNOWFLAKE_UNIX_TO_PG_MS;
		if (*epoch_unix_ms < 0)
		{
			*detail = "The epoch must not be before 1970-01-01 00:00:00 UTC.";
			return false;
		}
	}

	now_unix_ms = GetCurrentTimestamp() / 1000 + SNOWFLAKE_UNIX_TO_PG_MS;
	if (*epoch_unix_ms > now_unix_ms)
	{
		*detail = "The epoch must not be in the future.";
		return false;
	}
	return true;
}

/* GUC check hook for snowflake.epoch: parse once, keep the number */
static bool
snowflake_check_epoch(char **newval, void **extra, GucSource source)
{
	int64		epoch_unix_ms;
	const char *detail;
	int64	   *parsed;

	if (!snowflake_parse_epoch(*newval, &epoch_unix_ms, &detail))
	{
		GUC_check_errdetail("%s", detail);
		return false;
	}
	/* GUC extra data is freed with free(), so allocate it with malloc() */
	parsed = malloc(sizeof(int64));
	if (parsed == NULL)
	{
		GUC_check_errcode(ERRCODE_OUT_OF_MEMORY);
		GUC_check_errmsg("out of memory");
		return false;
	}
	*parsed = epoch_unix_ms;
	*extra = parsed;
	return true;
}

static void
snowflake_assign_epoch(const char *newval, void *extra)
{
	snowflake_epoch_unix_ms = *((int64 *) extra);
}

/*
 * SHOW snowflake.epoch: the epoch as an ISO timestamp in UTC, whichever form
 * it was given in, and whatever the session's TimeZone and DateStyle.
 */
static const char *
snowflake_show_epoch(void)
{
	static char buf[MAXDATELEN + 1];
	struct pg_tm tm;
	fsec_t		fsec;
	Timestamp	ts;

	ts = (snowflake_epoch_unix_ms - SNOWFLAKE_UNIX_TO_PG_MS) * 1000;
	if (timestamp2tm(ts, NULL, &tm, &fsec, NULL, NULL) != 0)
		return "invalid";
	tm.tm_isdst = 0;			/* UTC: print the zone as +00 */
	EncodeDateTime(&tm, fsec, true, 0, NULL, USE_ISO_DATES, buf);
	return buf;
}

/* Reserve the shared state and the lock that serialises mark writers. */
static void
snowflake_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(MAXALIGN(sizeof(SnowflakeSharedState)));
	RequestNamedLWLockTranche("snowflake", 1);
}

/*
 * Create the shared state at postmaster start (and after a crash of a
 * backend), resuming from the durable mark.
 */
static void
snowflake_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	snowflake_state = ShmemInitStruct("snowflake",
									  sizeof(SnowflakeSharedState),
									  &found);
	if (!found)
	{
		SnowflakeSharedState *state = snowflake_state;

		memset(state, 0, sizeof(*state));
		pg_atomic_init_u64(&state->last_tick, 0);
		pg_atomic_init_u64(&state->durable_mark, 0);
		pg_atomic_init_u64(&state->sequence_waits, 0);
		pg_atomic_init_u64(&state->clock_behind_waits, 0);
		pg_atomic_init_u64(&state->clock_behind_errors, 0);
		pg_atomic_init_u64(&state->leads_taken, 0);
		pg_atomic_init_u64(&state->mark_writes, 0);
		pg_atomic_init_u64(&state->write_duration_us, 0);
		pg_atomic_init_u32(&state->clock_behind_logged, 0);
		pg_atomic_init_u64(&state->episode_first_error, 0);
		state->mark_lock = &(GetNamedLWLockTranche("snowflake"))->lock;
		snowflake_read_mark_file(state);
	}
	LWLockRelease(AddinShmemInitLock);

	if (!IsUnderPostmaster)
		on_shmem_exit(snowflake_shmem_shutdown, (Datum) 0);
}

/*
 * At a clean shutdown every backend has exited, so last_tick is exactly the
 * largest ID ever issued: store the mark just above it, so that the next
 * start does not have to wait out the stride.  After a crash (code != 0) the
 * mark on disk stays, since memory cannot be trusted.
 */
static void
snowflake_shmem_shutdown(int code, Datum arg)
{
	uint64		last_tick;

	if (code != 0 || snowflake_state == NULL || snowflake_state->mark_invalid)
		return;
	last_tick = pg_atomic_read_u64(&snowflake_state->last_tick);
	if (last_tick == 0)
		return;
	snowflake_write_mark_file((int64) (last_tick >> SNOWFLAKE_SEQUENCE_BITS) + 1,
							  LOG);
}

/*
 * Load the mark at startup.  No file is normal (a new server).  A file that
 * cannot be read or trusted is reported, and generation is refused until an
 * operator looks at it: guessing could repeat IDs.
 */
static void
snowflake_read_mark_file(SnowflakeSharedState *state)
{
	SnowflakeMarkFile contents;
	pg_crc32c	crc;
	int			fd;
	int			nread;
	const char *reason = NULL;

	fd = OpenTransientFile(SNOWFLAKE_MARK_FILE, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno == ENOENT)
			return;
		snprintf(state->mark_invalid_reason, sizeof(state->mark_invalid_reason),
				 "It could not be opened: %m.");
		state->mark_invalid = true;
	}
	else
	{
		char		extra;

		nread = read(fd, &contents, sizeof(contents));
		if (nread < 0)
			snprintf(state->mark_invalid_reason,
					 sizeof(state->mark_invalid_reason),
					 "It could not be read: %m.");
		else if (nread != sizeof(contents) || read(fd, &extra, 1) != 0)
			reason = "It does not have the size of a mark file.";
		else if (contents.magic != SNOWFLAKE_MARK_MAGIC)
			reason = "It does not begin with the mark file's magic number.";
		else if (contents.version > SNOWFLAKE_MARK_VERSION)
			reason = "It was written by a newer version of snowflake.";
		else if (contents.version != SNOWFLAKE_MARK_VERSION)
			reason = "It has an unknown version number.";
		else
		{
			INIT_CRC32C(crc);
			COMP_CRC32C(crc, &contents, offsetof(SnowflakeMarkFile, crc));
			FIN_CRC32C(crc);
			if (!EQ_CRC32C(crc, contents.crc))
				reason = "Its checksum does not match its contents.";
			else if (contents.mark_ms < 0 ||
					 contents.mark_ms > SNOWFLAKE_MAX_MS + 1)
				reason = "Its mark lies outside the 41 bits of time.";
		}
		if (reason != NULL)
			strlcpy(state->mark_invalid_reason, reason,
					sizeof(state->mark_invalid_reason));
		if (reason != NULL || nread < 0)
			state->mark_invalid = true;
		CloseTransientFile(fd);
	}

	if (state->mark_invalid)
	{
		ereport(LOG,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("snowflake high-water mark file \"%s\" is invalid; ID generation is disabled",
						SNOWFLAKE_MARK_FILE),
				 errdetail_internal("%s", state->mark_invalid_reason)));
		return;
	}

	snowflake_raise_floor(state, contents.mark_ms);
	if (contents.epoch_unix_ms != snowflake_epoch_unix_ms)
		ereport(LOG,
				(errmsg("snowflake.epoch has changed since the high-water mark was written"),
				 errdetail("IDs resume at the mark, %lld ms after the current epoch.",
						   (long long) contents.mark_ms)));
}

/*
 * Write a mark durably: a temporary file, then durable_rename(), which
 * fsyncs it before and after the rename and fsyncs the directory.  On
 * failure report at elevel and return false; the old mark stays in force.
 */
static bool
snowflake_write_mark_file(int64 mark_ms, int elevel)
{
	SnowflakeMarkFile contents;
	int			fd;

	memset(&contents, 0, sizeof(contents));
	contents.magic = SNOWFLAKE_MARK_MAGIC;
	contents.version = SNOWFLAKE_MARK_VERSION;
	contents.epoch_unix_ms = snowflake_epoch_unix_ms;
	contents.mark_ms = mark_ms;
	INIT_CRC32C(contents.crc);
	COMP_CRC32C(contents.crc, &contents, offsetof(SnowflakeMarkFile, crc));
	FIN_CRC32C(contents.crc);

	fd = OpenTransientFile(SNOWFLAKE_MARK_TEMP_FILE,
						   O_CREAT | O_WRONLY | O_TRUNC | PG_BINARY);
	if (fd < 0)
	{
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m",
						SNOWFLAKE_MARK_TEMP_FILE)));
		return false;
	}
	errno = 0;
	if (write(fd, &contents, sizeof(contents)) != sizeof(contents))
	{
		/* a short write with no errno is most likely a full disk */
		if (errno == 0)
			errno = ENOSPC;
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m",
						SNOWFLAKE_MARK_TEMP_FILE)));
		CloseTransientFile(fd);
		return false;
	}
	if (CloseTransientFile(fd) != 0)
	{
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m",
						SNOWFLAKE_MARK_TEMP_FILE)));
		return false;
	}
	return durable_rename(SNOWFLAKE_MARK_TEMP_FILE, SNOWFLAKE_MARK_FILE,
						  elevel) == 0;
}

/*
 * Make sure generation resumes at or past mark_ms, which is in the file:
 * raise the durable mark, the written mark and the last tick to it, never
 * lowering any.  Runs at startup and in redo, never beside generation.
 */
static void
snowflake_raise_floor(SnowflakeSharedState *state, int64 mark_ms)
{
	uint64		old_mark;
	uint64		old_tick;
	uint64		floor_tick;

	if (mark_ms <= 0)
		return;

	state->written_mark = Max(state->written_mark, mark_ms);
	old_mark = pg_atomic_read_u64(&state->durable_mark);
	while (old_mark < (uint64) mark_ms &&
		   !pg_atomic_compare_exchange_u64(&state->durable_mark, &old_mark,
										   (uint64) mark_ms))
		;

	floor_tick = ((uint64) mark_ms << SNOWFLAKE_SEQUENCE_BITS) - 1;
	old_tick = pg_atomic_read_u64(&state->last_tick);
	while (old_tick < floor_tick &&
		   !pg_atomic_compare_exchange_u64(&state->last_tick, &old_tick,
										   floor_tick))
		;
}

/*
 * Move the durable mark so that it lies more than margin_ms above needed_ms.
 *
 * Under mark_lock, write a new mark a stride ahead of the clock to the file
 * (so a crash never forgets it), then WAL-log it and flush the record (so a
 * standby learns it before any commit that could hold an ID under it).
 * Then, without the lock, wait until the synchronous standbys, if any, have
 * the record, so that even IDs that no transaction commits are known to
 * them, and publish the mark.  A mark that another process wrote and is
 * still waiting for is waited for, not written again.
 *
 * With wait, this blocks until the mark is published, or errors out (the
 * file cannot be written, or the wait for standbys is cancelled) and the old
 * mark stays in force.  Without wait (a backend's early refresh while the
 * mark writer is away), it returns at once if another process holds the
 * lock, only warns if the file cannot be written, and publishes only if no
 * standby has to confirm: its caller's ID lies below the old mark anyway.
 */
static void
snowflake_advance_mark(int64 needed_ms, int64 margin_ms, bool wait)
{
	SnowflakeSharedState *state = snowflake_state;
	int64		target;
	XLogRecPtr	lsn;
	instr_time	started;
	instr_time	duration;
	xl_snowflake_mark xlrec;

	if ((int64) pg_atomic_read_u64(&state->durable_mark) > needed_ms + margin_ms)
		return;
	if (wait)
		LWLockAcquire(state->mark_lock, LW_EXCLUSIVE);
	else if (!LWLockConditionalAcquire(state->mark_lock, LW_EXCLUSIVE))
		return;

	/* another process may have moved it while we waited for the lock */
	if ((int64) pg_atomic_read_u64(&state->durable_mark) > needed_ms + margin_ms)
	{
		LWLockRelease(state->mark_lock);
		return;
	}

	INSTR_TIME_SET_CURRENT(started);
	if (state->written_mark > needed_ms + margin_ms)
	{
		target = state->written_mark;
		lsn = state->written_lsn;
	}
	else
	{
		int64		stride_ms;
		int			us_into_ms;

		stride_ms = Min(Max(SNOWFLAKE_MARK_STRIDE_MS,
							2 * (int64) pg_atomic_read_u64(&state->write_duration_us) / 1000),
						SNOWFLAKE_MAX_STRIDE_MS);
		target = Max(needed_ms, snowflake_clock_ms(&us_into_ms)) + stride_ms;
		target = Min(Max(target, state->written_mark), SNOWFLAKE_MAX_MS + 1);

		if (!snowflake_write_mark_file(target, wait ? ERROR : WARNING))
		{
			LWLockRelease(state->mark_lock);
			return;
		}
		xlrec.mark_ms = target;
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, sizeof(xlrec));
		lsn = XLogInsert(SNOWFLAKE_RMGR_ID, XLOG_SNOWFLAKE_MARK);
		XLogFlush(lsn);
		state->written_mark = target;
		state->written_lsn = lsn;
	}
	LWLockRelease(state->mark_lock);

	if (!snowflake_standbys_have(lsn))
	{
		if (!wait)
			return;
		do
		{
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 10L, WAIT_EVENT_SYNC_REP);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			if (snowflake_am_mark_writer && ConfigReloadPending)
			{
				ConfigReloadPending = false;
				ProcessConfigFile(PGC_SIGHUP);
			}
		} while (!snowflake_standbys_have(lsn));
	}

	snowflake_publish_mark(target);
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, started);
	pg_atomic_write_u64(&state->write_duration_us,
						INSTR_TIME_GET_MICROSEC(duration));
}

/*
 * Have the synchronous standbys, if any are configured, flushed WAL up to
 * lsn?  Asked of the WAL senders' shared state directly, rather than through
 * SyncRepWaitForLSN(), whose wait depends on the caller's
 * synchronous_commit and ends without confirmation on a cancel.
 */
static bool
snowflake_standbys_have(XLogRecPtr lsn)
{
	bool		have;

	LWLockAcquire(SyncRepLock, LW_SHARED);
#ifdef SYNC_STANDBY_DEFINED
	have = (WalSndCtl->sync_standbys_status & SYNC_STANDBY_DEFINED) == 0 ||
		WalSndCtl->lsn[SYNC_REP_WAIT_FLUSH] >= lsn;
#else
	have = !WalSndCtl->sync_standbys_defined ||
		WalSndCtl->lsn[SYNC_REP_WAIT_FLUSH] >= lsn;
#endif
	LWLockRelease(SyncRepLock);
	return have;
}

/* Raise the published mark to mark_ms, never lowering it. */
static void
snowflake_publish_mark(int64 mark_ms)
{
	uint64		old_mark;

	old_mark = pg_atomic_read_u64(&snowflake_state->durable_mark);
	while (old_mark < (uint64) mark_ms)
	{
		if (pg_atomic_compare_exchange_u64(&snowflake_state->durable_mark,
										   &old_mark, (uint64) mark_ms))
		{
			pg_atomic_fetch_add_u64(&snowflake_state->mark_writes, 1);
			break;
		}
	}
}

/*
 * The clock in milliseconds since the epoch, and the microseconds already
 * gone in that millisecond.
 */
static inline int64
snowflake_clock_ms(int *us_into_ms)
{
	int64		unix_us;

	unix_us = GetCurrentTimestamp() + SNOWFLAKE_UNIX_TO_PG_MS * 1000;
	*us_into_ms = (int) (unix_us % 1000);
	return unix_us / 1000 - snowflake_epoch_unix_ms;
}

/* Everything that must hold before this backend may generate an ID. */
static void
snowflake_check_can_generate(void)
{
	if (snowflake_state == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake must be loaded via \"shared_preload_libraries\" to generate IDs"),
				 errhint("Add snowflake to \"shared_preload_libraries\" in postgresql.conf and restart the server.")));

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot generate snowflake IDs during recovery"),
				 errdetail("A standby carries its primary's datacenter and worker ids, so IDs generated here could collide with the primary's."),
				 errhint("Generate IDs on the primary.")));

	if (snowflake_state->mark_invalid)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("snowflake high-water mark file \"%s\" is invalid",
						SNOWFLAKE_MARK_FILE),
				 errdetail_internal("%s", snowflake_state->mark_invalid_reason),
				 errhint("Without a valid mark this server could repeat IDs it issued before. "
						 "Once the clock is past every ID this server issued (decode the largest with snowflake_parse), "
						 "remove the file and restart the server.")));
}

/*
 * Refuse an ID because the clock is behind.  Each caller gets the error; the
 * server log gets one message with the figures when an episode begins and
 * one when it ends (at the end of snowflake_generate), not one per call:
 * snowflake_emit_log keeps the callers' errors out of it.
 */
static void
snowflake_report_clock_behind(int64 behind_ms)
{
	SnowflakeSharedState *state = snowflake_state;
	uint64		errors_before;

	errors_before = pg_atomic_fetch_add_u64(&state->clock_behind_errors, 1);
	if (pg_atomic_exchange_u32(&state->clock_behind_logged, 1) == 0)
	{
		pg_atomic_write_u64(&state->episode_first_error, errors_before);
		ereport(LOG,
				(errmsg("the clock is %lld ms behind the snowflake generator; refusing IDs until it catches up",
						(long long) behind_ms),
				 errdetail("snowflake.max_lead is %d ms and snowflake.max_clock_wait is %d ms.",
						   snowflake_max_lead, snowflake_max_clock_wait)));
	}
	ereport(ERROR,
			(errcode(ERRCODE_SYSTEM_ERROR),
			 errmsg(SNOWFLAKE_CLOCK_BEHIND_MESSAGE),
			 errdetail("The clock is %lld ms behind the newest ID (or, after a restart, the high-water mark), %lld ms more than snowflake.max_lead allows, and did not catch up within snowflake.max_clock_wait (%d ms).",
					   (long long) behind_ms,
					   (long long) (behind_ms - snowflake_max_lead),
					   snowflake_max_clock_wait),
			 errhint("Check the system clock, or raise snowflake.max_clock_wait or snowflake.max_lead.")));
}

/*
 * Keep the per-call "clock is behind" errors out of the server log; the log
 * has the episode's own messages.  The client still gets every error.
 */
static void
snowflake_emit_log(ErrorData *edata)
{
	if (edata->elevel == ERROR && edata->message_id != NULL &&
		strcmp(edata->message_id, SNOWFLAKE_CLOCK_BEHIND_MESSAGE) == 0)
		edata->output_to_server = false;
	if (prev_emit_log_hook)
		prev_emit_log_hook(edata);
}

/*
 * Issue the next ID's tick: the heart of the generator (see the file header).
 *
 * Returns with the tick installed in shared memory, strictly above every
 * tick issued before, within max_lead of the clock and below the durable
 * mark.
 */
static int64
snowflake_generate(void)
{
	SnowflakeSharedState *state = snowflake_state;
	uint64		last;
	uint64		next;
	int64		now_ms;
	int64		last_ms;
	int64		next_ms;
	int			us_into_ms;
	bool		counted_sequence_wait = false;
	bool		counted_clock_wait = false;
	instr_time	wait_start;

	INSTR_TIME_SET_ZERO(wait_start);
	last = pg_atomic_read_u64(&state->last_tick);
	for (;;)
	{
		now_ms = snowflake_clock_ms(&us_into_ms);
		if (now_ms < 0)
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("could not generate a snowflake ID: the clock is before the epoch"),
					 errdetail("The clock reads %lld ms before snowflake.epoch.",
							   (long long) -now_ms),
					 errhint("Check the system clock.")));

		next = Max(last + 1, (uint64) now_ms << SNOWFLAKE_SEQUENCE_BITS);
		next_ms = (int64) (next >> SNOWFLAKE_SEQUENCE_BITS);
		if (next_ms > SNOWFLAKE_MAX_MS)
			ereport(ERROR,
					(errcode(ERRCODE_SEQUENCE_GENERATOR_LIMIT_EXCEEDED),
					 errmsg("snowflake IDs are exhausted: the 41 bits of time since the epoch are used up"),
					 errdetail("The largest time a snowflake ID can carry is %lld ms after snowflake.epoch.",
							   (long long) SNOWFLAKE_MAX_MS),
					 errhint("Choose a later snowflake.epoch for a new ID space.")));

		if (next_ms > now_ms + snowflake_max_lead)
		{
			last_ms = (int64) (last >> SNOWFLAKE_SEQUENCE_BITS);
			if (last_ms <= now_ms + snowflake_max_lead)
			{
				/* this millisecond's sequence is used up: wait for the next */
				if (!counted_sequence_wait)
					pg_atomic_fetch_add_u64(&state->sequence_waits, 1);
				counted_sequence_wait = true;
				pg_usleep(1000 - us_into_ms);
			}
			else
			{
				/* the clock is behind: wait for it, within max_clock_wait */
				instr_time	waited;
				int64		waited_ms;
				int64		sleep_ms;

				if (INSTR_TIME_IS_ZERO(wait_start))
					INSTR_TIME_SET_CURRENT(wait_start);
				INSTR_TIME_SET_CURRENT(waited);
				INSTR_TIME_SUBTRACT(waited, wait_start);
				waited_ms = INSTR_TIME_GET_MILLISEC(waited);
				if (waited_ms >= snowflake_max_clock_wait)
					snowflake_report_clock_behind(last_ms - now_ms);
				if (!counted_clock_wait)
					pg_atomic_fetch_add_u64(&state->clock_behind_waits, 1);
				counted_clock_wait = true;
				sleep_ms = Min(last_ms - now_ms - snowflake_max_lead,
							   snowflake_max_clock_wait - waited_ms);
				sleep_ms = Max(Min(sleep_ms, 100), 1);
				(void) WaitLatch(MyLatch,
								 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
								 (long) sleep_ms, PG_WAIT_EXTENSION);
				ResetLatch(MyLatch);
			}
			CHECK_FOR_INTERRUPTS();
			last = pg_atomic_read_u64(&state->last_tick);
			continue;
		}

		if ((uint64) next_ms >= pg_atomic_read_u64(&state->durable_mark))
		{
			Latch	   *writer_latch = state->mark_writer_latch;

			/*
			 * Generation reached the mark, most likely after a pause: write
			 * it here, and wake the mark writer, so that from now on it keeps
			 * the mark ahead of the clock.
			 */
			snowflake_advance_mark(next_ms, 0, true);
			if (writer_latch != NULL)
				SetLatch(writer_latch);
			last = pg_atomic_read_u64(&state->last_tick);
			continue;
		}

		if (pg_atomic_compare_exchange_u64(&state->last_tick, &last, next))
			break;
	}

	/* the header's invariants: the tick only grows, the mark only grows */
	Assert(next > last);
	Assert(next_ms <= now_ms + snowflake_max_lead);
	Assert((uint64) next_ms < pg_atomic_read_u64(&state->durable_mark));

	if (next_ms > now_ms)
		pg_atomic_fetch_add_u64(&state->leads_taken, 1);
	if (pg_atomic_read_u32(&state->clock_behind_logged) != 0 &&
		pg_atomic_exchange_u32(&state->clock_behind_logged, 0) != 0)
	{
		uint64		refused = pg_atomic_read_u64(&state->clock_behind_errors) -
			pg_atomic_read_u64(&state->episode_first_error);

		ereport(LOG,
				(errmsg("the clock has caught up with the snowflake generator"),
				 errdetail_plural("%llu call was refused while it was behind.",
								  "%llu calls were refused while it was behind.",
								  refused,
								  (unsigned long long) refused)));
	}

	/*
	 * Refresh the mark early, so that nobody has to wait for it: wake the
	 * mark writer, or, while it is not running, try to write it here.
	 */
	if ((uint64) (next_ms + SNOWFLAKE_MARK_STRIDE_MS / 2) >=
		pg_atomic_read_u64(&state->durable_mark))
	{
		Latch	   *writer_latch = state->mark_writer_latch;

		if (writer_latch != NULL)
			SetLatch(writer_latch);
		else
			snowflake_advance_mark(next_ms, SNOWFLAKE_MARK_STRIDE_MS / 2, false);
	}

	return (int64) next;
}

/*
 * The mark writer: a background worker that moves the durable mark ahead,
 * so that the fsync is not paid by a backend that is generating.  A backend
 * wakes it when generation comes within half a stride of the mark.  As long
 * as IDs were issued within SNOWFLAKE_WRITER_ACTIVE_MS, it also keeps the
 * mark half a stride ahead of the clock, so that the first ID after a pause
 * does not find the mark behind the clock and write it itself; a server that
 * issues no IDs writes nothing.  If the writer fails, it exits and is
 * restarted a second later; meanwhile backends write the mark themselves.
 */
void
snowflake_mark_writer_main(Datum main_arg)
{
	SnowflakeSharedState *state = snowflake_state;
	uint64		start_tick;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	if (state->mark_invalid)
		proc_exit(0);

	snowflake_am_mark_writer = true;
	on_shmem_exit(snowflake_mark_writer_detach, (Datum) 0);
	state->mark_writer_latch = MyLatch;
	start_tick = pg_atomic_read_u64(&state->last_tick);

	for (;;)
	{
		uint64		last_tick;
		int64		last_ms;
		int64		now_ms;
		int			us_into_ms;
		bool		active = false;

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		/* nothing to do until IDs are issued */
		last_tick = pg_atomic_read_u64(&state->last_tick);
		if (last_tick != start_tick)
		{
			last_ms = (int64) (last_tick >> SNOWFLAKE_SEQUENCE_BITS);
			now_ms = snowflake_clock_ms(&us_into_ms);
			active = last_ms + SNOWFLAKE_WRITER_ACTIVE_MS >= now_ms;
			snowflake_advance_mark(active ? Max(last_ms, now_ms) : last_ms,
								   SNOWFLAKE_MARK_STRIDE_MS / 2, true);
		}

		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_EXIT_ON_PM_DEATH |
						 (active ? WL_TIMEOUT : 0),
						 SNOWFLAKE_MARK_STRIDE_MS / 4, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* Backends write the mark themselves once the mark writer has gone. */
static void
snowflake_mark_writer_detach(int code, Datum arg)
{
	snowflake_state->mark_writer_latch = NULL;
}

/*
 * snowflake_next_id() returns bigint: a new ID, greater than every ID this
 * server issued before.
 */
Datum
snowflake_next_id(PG_FUNCTION_ARGS)
{
	uint64		tick;
	int64		id;

	snowflake_check_can_generate();
	tick = (uint64) snowflake_generate();

	id = (int64) (((tick >> SNOWFLAKE_SEQUENCE_BITS) << SNOWFLAKE_TIME_SHIFT) |
				  ((uint64) snowflake_datacenter_id << SNOWFLAKE_DATACENTER_SHIFT) |
				  ((uint64) snowflake_worker_id << SNOWFLAKE_WORKER_SHIFT) |
				  (tick & SNOWFLAKE_MAX_SEQUENCE));

	snowflake_session_last_id = id;
	snowflake_session_has_last_id = true;
	PG_RETURN_INT64(id);
}

/*
 * snowflake_last_id() returns bigint: the ID this session's last
 * snowflake_next_id() returned, as lastval() does for sequences.
 */
Datum
snowflake_last_id(PG_FUNCTION_ARGS)
{
	if (!snowflake_session_has_last_id)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake_last_id is not yet defined in this session"),
				 errhint("Call snowflake_next_id() first.")));
	PG_RETURN_INT64(snowflake_session_last_id);
}

/*
 * Decode id into (ts, datacenter_id, worker_id, sequence), counting time
 * from epoch (a PostgreSQL timestamp).
 */
static Datum
snowflake_decode(FunctionCallInfo fcinfo, int64 id, TimestampTz epoch)
{
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	int64		ms;
	TimestampTz ts;

	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowflake ID: %lld", (long long) id),
				 errdetail("Snowflake IDs are never negative: bit 63 is always 0.")));
	if (TIMESTAMP_NOT_FINITE(epoch))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowflake epoch must be finite")));

	ms = id >> SNOWFLAKE_TIME_SHIFT;
	if (pg_add_s64_overflow(epoch, ms * 1000, &ts) || !IS_VALID_TIMESTAMP(ts))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range"),
				 errdetail("Snowflake ID %lld lies %lld ms after the epoch, past the largest timestamp.",
						   (long long) id, (long long) ms)));

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	values[0] = TimestampTzGetDatum(ts);
	values[1] = Int32GetDatum((int32) ((id >> SNOWFLAKE_DATACENTER_SHIFT) &
									   SNOWFLAKE_MAX_DATACENTER_ID));
	values[2] = Int32GetDatum((int32) ((id >> SNOWFLAKE_WORKER_SHIFT) &
									   SNOWFLAKE_MAX_WORKER_ID));
	values[3] = Int32GetDatum((int32) (id & SNOWFLAKE_MAX_SEQUENCE));

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * The configured epoch as a PostgreSQL timestamp.  Without the preload the
 * setting is not defined, so read its raw value, if any, the same way.
 */
static TimestampTz
snowflake_configured_epoch(void)
{
	int64		epoch_unix_ms = snowflake_epoch_unix_ms;

	if (snowflake_state == NULL && snowflake_epoch_string == NULL)
	{
		const char *raw = GetConfigOption("snowflake.epoch", true, false);
		const char *detail;

		if (!snowflake_parse_epoch(raw ? raw : SNOWFLAKE_DEFAULT_EPOCH,
								   &epoch_unix_ms, &detail))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for parameter \"%s\": \"%s\"",
							"snowflake.epoch", raw),
					 errdetail_internal("%s", detail)));
	}
	return (epoch_unix_ms - SNOWFLAKE_UNIX_TO_PG_MS) * 1000;
}

/* snowflake_parse(id bigint): decode with the configured epoch */
Datum
snowflake_parse(PG_FUNCTION_ARGS)
{
	return snowflake_decode(fcinfo, PG_GETARG_INT64(0),
							snowflake_configured_epoch());
}

/* snowflake_parse(id bigint, epoch timestamptz): decode with another epoch */
Datum
snowflake_parse_with_epoch(PG_FUNCTION_ARGS)
{
	return snowflake_decode(fcinfo, PG_GETARG_INT64(0),
							PG_GETARG_TIMESTAMPTZ(1));
}

/*
 * Replay a mark: a standby (or crash recovery) raises its floor to it, and
 * keeps it on disk so that a restart of the standby remembers it too.
 */
static void
snowflake_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	xl_snowflake_mark xlrec;

	if (info != XLOG_SNOWFLAKE_MARK)
		elog(PANIC, "snowflake_redo: unknown op code %u", info);

	memcpy(&xlrec, XLogRecGetData(record), sizeof(xlrec));
	if (snowflake_state->mark_invalid ||
		(int64) pg_atomic_read_u64(&snowflake_state->durable_mark) >= xlrec.mark_ms)
		return;
	snowflake_write_mark_file(xlrec.mark_ms, ERROR);
	snowflake_raise_floor(snowflake_state, xlrec.mark_ms);
}

static void
snowflake_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	if (info == XLOG_SNOWFLAKE_MARK)
	{
		xl_snowflake_mark xlrec;

		memcpy(&xlrec, XLogRecGetData(record), sizeof(xlrec));
		appendStringInfo(buf, "mark %lld ms", (long long) xlrec.mark_ms);
	}
}

static const char *
snowflake_identify(uint8 info)
{
	if ((info & ~XLR_INFO_MASK) == XLOG_SNOWFLAKE_MARK)
		return "MARK";
	return NULL;
}
