/*-------------------------------------------------------------------------
 *
 * snowflake.c
 *		Twitter-Snowflake IDs generated inside PostgreSQL.
 *
 * An ID is a positive bigint laid out, by default, as Twitter defined it:
 *
 *	 bit 63		always 0, so every ID is a positive bigint
 *	 bits 62-22 milliseconds since the epoch (snowflake.epoch), 41 bits
 *	 bits 21-17 datacenter id (snowflake.datacenter_id), 5 bits
 *	 bits 16-12 worker id (snowflake.worker_id), 5 bits
 *	 bits 11-0	sequence within the millisecond, 12 bits
 *
 * A server may choose other widths at start (snowflake.time_bits,
 * datacenter_bits, worker_bits, sequence_bits); the ID is then the low bits
 * of a bigint, in the same order.  The widths and what follows from them are
 * kept once, in a SnowflakeLayout, and everything else is derived from it.
 * The mark file records the layout and the epoch, so that a server restarted
 * with other ones refuses to generate until the change is accepted.
 *
 * One server is one generator.  Its whole state is one 64-bit word in
 * shared memory, the "tick" of the last ID issued: (ms << sequence bits) |
 * sequence.  The tick is the ID without the node bits, so ticks order IDs
 * exactly as the IDs themselves order, and tick + 1 carries from a used-up
 * sequence into the next millisecond.  A backend reads the word and the
 * clock.  Well ahead of the clock, where a millisecond holds more ticks
 * than there are backends, it adds 1 to the word, and the value it gets
 * back names its tick, whoever else added first; a tick that no longer
 * fits (past the lead or the mark, below) is burnt, never issued.
 * Otherwise it installs max(last + 1, now << sequence bits) with one
 * compare-and-swap, and whoever loses retries.  Either way the word only
 * grows and every tick is handed to one backend only.  No lock is held
 * while generating, so nothing can wait on a backend that has been
 * descheduled, and two backends can never own the same tick.  Since every
 * issued tick was installed into the word, the word is always at least the
 * largest tick ever issued, so every ID is greater than all IDs issued
 * before it, by any backend.  A block of n IDs (snowflake_next_ids) is
 * claimed with one compare-and-swap that installs the block's last tick.
 * Like nextval(), generating is refused in a read-only transaction and
 * during recovery.
 *
 * The generator may run ahead of the wall clock by at most snowflake.max_lead
 * milliseconds (0 by default); beyond that it waits, for the next
 * millisecond when a millisecond's sequence is used up, or for a clock that
 * has stepped back for at most snowflake.max_clock_wait, and then errors.  A
 * clock that jumps forward further than the monotonic clock moved, by more
 * than snowflake.max_clock_jump, is refused before any ID carries its time,
 * so that one bad reading cannot use up the ID space.  An ID carries a time
 * no earlier than the clock at the start of its call.  While the generator
 * is far enough ahead of the clock, the kernel's coarse clock, which is
 * cheaper to read and never ahead of the clock, shows that this holds and
 * that the lead is within max_lead, without reading the clock itself.
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
 * generation) writes it, or waits for the writer on a condition variable,
 * which a cancel interrupts.  At server start generation resumes at the
 * mark, so a restart or crash never repeats an ID even when the clock went
 * back; a clean shutdown writes the exact mark so that a restart does not
 * have to wait for the clock.
 *
 * The same mark is WAL-logged through a custom resource manager before it is
 * used, so a standby that replays a commit has also replayed a mark above
 * every ID that transaction could hold; after promotion it resumes above
 * that mark.  The mark writer logs the mark again after each checkpoint, so
 * that the WAL a crash recovery replays always holds it: a mark file found
 * below it was replaced by an older copy, and generation is refused rather
 * than resumed under it.  The same check is made before each write of the
 * file.  The file does not depend on synchronous_commit.
 *
 * A server replays those records only with the library preloaded.  To take
 * it out of a replication group, snowflake.enabled = off stops generation
 * and every mark record, and snowflake.uninstall_lsn says when the standbys
 * may restart without it (see uninstall.c).
 *
 * The files of src/:
 *
 *	 snowflake.c	 module load: _PG_init, the registration of both
 *					 workers, the one chain of shared-memory hooks
 *	 compat.h		 every difference between PostgreSQL majors
 *	 layout.h/.c	 the bit layout and the server's layout
 *	 settings.h/.c	 the settings: the table that defines every one, and
 *					 the checks of their values
 *	 epoch.h/.c		 parsing an epoch
 *	 utility.h/.c	 the ProcessUtility hook: SET checks and DISCARD
 *	 state.h/.c		 the shared state, its size, raising its floors
 *	 clock.h/.c		 the clock, the coarse clock and the monotonic clock
 *	 statefile.h/.c	 writing a state file durably
 *	 control.h/.c	 reading pg_control
 *	 markfile.h/.c	 the mark file: format, load, layout change, write,
 *					 went-back check, the refusal after pg_upgrade
 *	 wal.h/.c		 the mark's WAL record and its callbacks
 *	 mark.h/.c		 moving the durable mark; what the registry asks of the
 *					 generator
 *	 generate.h/.c	 claiming ticks, waits for the clock
 *	 refusals.h/.c	 a call refused for the clock, the mark, a registry
 *					 floor or a used-up lead; logged once an episode
 *	 waits.h/.c		 the wait events of those waits
 *	 mark_writer.c	 the mark writer's main loop
 *	 functions.h/.c	 snowflake_next_id, _next_ids, _last_id, _status
 *	 decode.h/.c	 snowflake_parse and the other functions on IDs
 *	 ranges.c		 time ranges: snowflake_min_id, _max_id, _between
 *					 and its planner support, _partition_bounds
 *	 registry.h/.c	 the worker id registry: its settings' values, the
 *					 gate backends pass, the claim state in shared
 *					 memory and the cache file
 *	 registry_worker.c the registry worker
 *	 registry_libpq.h/.c talking to the registry over libpq, with timeouts
 *	 uninstall.h/.c	 snowflake.enabled, which stops generation and the
 *					 mark's WAL records, and snowflake.uninstall_lsn
 *	 upgrade.h/.c	 pg_upgrade: the file the restore leaves, so that the
 *					 new cluster waits for the old cluster's mark
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog_internal.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "clock.h"
#include "compat.h"
#include "epoch.h"
#include "generate.h"
#include "layout.h"
#include "markfile.h"
#include "refusals.h"
#include "registry.h"
#include "settings.h"
#include "state.h"
#include "uninstall.h"
#include "utility.h"
#include "wal.h"

/* the default_version of snowflake.control (t/000_metadata.pl checks) */
#define SNOWFLAKE_VERSION "1.4"

SNOWFLAKE_MODULE_MAGIC;

/*---- local variables ----*/

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/*---- function declarations ----*/

void		_PG_init(void);

static void snowflake_note_bad_presets(const char **raw);
static bool snowflake_check_presets(const char **raw);
static void snowflake_register_mark_writer(void);
static void snowflake_register_registry_worker(void);
static void snowflake_register_worker(const char *function_name,
									  const char *name);
static void snowflake_shmem_request(void);
static void snowflake_shmem_startup(void);
static void snowflake_shmem_shutdown(int code, Datum arg);

/*---- module load and settings ----*/

/*
 * Module load: define the settings, reserve their prefix, install the check
 * of SET statements and, when preloaded, register the WAL resource manager
 * and the mark writer and ask for shared memory.
 *
 * Generating needs shared_preload_libraries.  Loaded any other way (a first
 * call after CREATE EXTENSION, or LOAD), the module defines the same
 * settings, but the ones that need a restart become settings of the
 * configuration file (PGC_SIGHUP), since only the postmaster may define
 * PGC_POSTMASTER ones: no session can set them either way.  The decoding
 * functions then work, and the generating ones raise an error that names
 * the setting.
 */
void
_PG_init(void)
{
	const char *raw[SNOWFLAKE_NUM_SETTINGS];
	bool		worker_id_set;

	/*
	 * A value from postgresql.conf that fails validation only draws a WARNING
	 * when a custom setting is defined, and the default stays.  For node ids
	 * and the epoch that would silently hand out colliding IDs, so keep the
	 * raw values and refuse them below.
	 */
	for (size_t i = 0; i < SNOWFLAKE_NUM_SETTINGS; i++)
	{
		const char *value = GetConfigOption(snowflake_settings[i].name,
											true, false);

		raw[i] = value ? pstrdup(value) : NULL;
	}

	prev_process_utility_hook = ProcessUtility_hook;
	ProcessUtility_hook = snowflake_process_utility;

	if (!process_shared_preload_libraries_in_progress)
	{
		snowflake_define_settings(PGC_SIGHUP);
		MarkGUCPrefixReserved("snowflake");
		snowflake_note_bad_presets(raw);
		return;
	}

	snowflake_preloaded = true;
	snowflake_define_settings(PGC_POSTMASTER);
	snowflake_reject_unknown_settings();
	MarkGUCPrefixReserved("snowflake");
	worker_id_set = snowflake_check_presets(raw);
	snowflake_clock_init();

	/*
	 * pg_upgrade's servers (binary upgrade mode) issue no IDs: no mark to
	 * keep ahead, and no claim to take, which would claim a worker id for the
	 * new cluster before its operator could reassign the old one.
	 */
	RegisterCustomRmgr(SNOWFLAKE_RMGR_ID, &snowflake_rmgr);
	if (!IsBinaryUpgrade)
		snowflake_register_mark_writer();
	snowflake_registry_start(worker_id_set, snowflake_datacenter_id,
							 snowflake_layout.max_worker_id);
	if (snowflake_registry_enabled() && !IsBinaryUpgrade)
		snowflake_register_registry_worker();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = snowflake_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = snowflake_shmem_startup;
	prev_emit_log_hook = emit_log_hook;
	emit_log_hook = snowflake_emit_log;
}

/*
 * Loaded without the preload: the layout the settings give, or Twitter's
 * where they give none, is what the decoding functions use.  An epoch or a
 * width from postgresql.conf that fails its check is remembered, so that
 * snowflake_parse(id) and its kin refuse to decode with the default in its
 * place.
 */
static void
snowflake_note_bad_presets(const char **raw)
{
	if (!snowflake_layout_from_settings(&snowflake_layout, 0))
		snowflake_layout_init_twitter(&snowflake_layout);
	for (size_t i = 0; i < SNOWFLAKE_NUM_SETTINGS; i++)
	{
		const SnowflakeSetting *setting = &snowflake_settings[i];
		int64		epoch_unix_ms;
		const char *detail;

		if (raw[i] == NULL)
			continue;
		if (setting->kind == SNOWFLAKE_SETTING_EPOCH &&
			!snowflake_parse_epoch(raw[i], &epoch_unix_ms, &detail))
			snowflake_epoch_error = MemoryContextStrdup(TopMemoryContext,
														raw[i]);
		if (setting->kind == SNOWFLAKE_SETTING_WIDTH &&
			snowflake_width_error == NULL &&
			!snowflake_setting_value_is_valid(setting, raw[i], NULL, &detail))
		{
			snowflake_width_error = setting;
			snowflake_width_error_value =
				MemoryContextStrdup(TopMemoryContext, raw[i]);
		}
	}
}

/*
 * Preloaded: refuse to start on a value from postgresql.conf that fails its
 * check, the layout first, since node ids are checked against its widths.
 * Returns whether snowflake.worker_id was set, which the registry forbids.
 */
static bool
snowflake_check_presets(const char **raw)
{
	bool		worker_id_set = false;

	for (size_t i = 0; i < SNOWFLAKE_NUM_SETTINGS; i++)
	{
		if (snowflake_settings[i].kind == SNOWFLAKE_SETTING_WIDTH)
			snowflake_validate_preset(&snowflake_settings[i], raw[i]);
	}
	snowflake_set_layout();
	for (size_t i = 0; i < SNOWFLAKE_NUM_SETTINGS; i++)
	{
		if (snowflake_settings[i].kind != SNOWFLAKE_SETTING_WIDTH)
			snowflake_validate_preset(&snowflake_settings[i], raw[i]);
		if (strcmp(snowflake_settings[i].name, "snowflake.worker_id") == 0)
			worker_id_set = raw[i] != NULL;
	}
	return worker_id_set;
}

/*
 * The mark writer runs only where IDs are generated: on a primary, and on a
 * standby from its promotion on.  An error makes it exit and the postmaster
 * starts it again a second later; a SIGTERM ends it for good.
 */
static void
snowflake_register_mark_writer(void)
{
	snowflake_register_worker("snowflake_mark_writer_main",
							  "snowflake mark writer");
}

/*
 * The registry worker runs where IDs are generated: on a primary, and on a
 * standby from its promotion on, so that a standby never holds a claim.
 */
static void
snowflake_register_registry_worker(void)
{
	snowflake_register_worker("snowflake_registry_main",
							  "snowflake registry worker");
}

/*
 * Register a background worker of this library (function_name is its entry
 * point, name its title) that starts where IDs are generated: on a primary,
 * and on a standby at its promotion; restarted a second after an error.
 */
static void
snowflake_register_worker(const char *function_name, const char *name)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 1;
	strlcpy(worker.bgw_library_name, "snowflake", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, function_name, BGW_MAXLEN);
	strlcpy(worker.bgw_name, name, BGW_MAXLEN);
	strlcpy(worker.bgw_type, name, BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

/*---- shared memory ----*/

/*
 * Reserve the shared state and the lock that serialises mark writers, and
 * in registry mode the registry's state.
 */
static void
snowflake_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(snowflake_shmem_size());
	RequestNamedLWLockTranche("snowflake", 1);
	if (snowflake_registry_enabled())
		RequestAddinShmemSpace(snowflake_registry_shmem_size());
}

/*
 * Create the shared state at postmaster start (and after a crash of a
 * backend), resuming from the durable mark, and in registry mode the
 * registry's state.
 */
static void
snowflake_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	snowflake_state = ShmemInitStruct("snowflake", snowflake_shmem_size(),
									  &found);
	if (!found)
	{
		SnowflakeSharedState *state = snowflake_state;
		int			us_into_ms;

		memset(state, 0, snowflake_shmem_size());
		pg_atomic_init_u64(&state->last_tick, 0);
		pg_atomic_init_u64(&state->floor_tick, 0);
		pg_atomic_init_u64(&state->registry_floor_tick, 0);
		pg_atomic_init_u64(&state->floor_clock_ms, (uint64) PG_INT64_MAX);
		pg_atomic_init_u64(&state->durable_mark, 0);
		pg_atomic_init_u64(&state->sequence_waits, 0);
		pg_atomic_init_u64(&state->clock_behind_waits, 0);
		pg_atomic_init_u64(&state->clock_errors, 0);
		pg_atomic_init_u64(&state->max_step_back_ms, 0);
		pg_atomic_init_u64(&state->coarse_margin_ms,
						   (uint64) Max(snowflake_coarse_lag_ms, 0));
		pg_atomic_init_u64(&state->coarse_misses, 0);
		pg_atomic_init_u64(&state->writer_marks, 0);
		pg_atomic_init_u64(&state->backend_marks, 0);
		pg_atomic_init_u64(&state->write_duration_us, 0);
		pg_atomic_init_u64(&state->max_write_duration_us, 0);
		for (int i = 0; i < MaxBackends; i++)
		{
			pg_atomic_init_u64(&state->backend_counts[i].n.ids, 0);
			pg_atomic_init_u64(&state->backend_counts[i].n.leads, 0);
			pg_atomic_init_u64(&state->backend_counts[i].n.burnt, 0);
			pg_atomic_init_u64(&state->backend_counts[i].n.clock_ms, 0);
		}
		pg_atomic_init_u32(&state->refusal_logged, 0);
		pg_atomic_init_u64(&state->episode_first_error, 0);
		pg_atomic_init_u32(&state->redo_write_failed, 0);
		pg_atomic_init_u32(&state->enabled, snowflake_enabled ? 1 : 0);
		pg_atomic_init_u64(&state->last_record_end, 0);
		state->mark_lock = &(GetNamedLWLockTranche("snowflake"))->lock;
		ConditionVariableInit(&state->mark_cv);
		state->clock_ref_ms = snowflake_clock_ms(&us_into_ms);
		state->monotonic_ref_ms = snowflake_monotonic_ms();
		snowflake_load_mark_file(state);
	}
	if (snowflake_registry_enabled())
		snowflake_registry_shmem_init();
	LWLockRelease(AddinShmemInitLock);

	if (!IsUnderPostmaster)
		on_shmem_exit(snowflake_shmem_shutdown, (Datum) 0);
}

/*
 * At a clean shutdown every backend has exited, so last_tick is the largest
 * ID ever issued, or a tick burnt just above it: store the mark just above
 * it (no further than the time bits reach), so that the next
 * start does not have to wait out the stride.  On a standby, whose last_tick
 * is the floor that replay raised, this also stores a replayed mark that
 * could not be written during replay.  After a crash (code != 0), or an
 * immediate shutdown, the next start replays WAL whose marks may lie above
 * the exact one, and would take the file for an older copy: the mark on disk
 * stays.  pg_upgrade's servers issued no ID, and a new cluster's mark is the
 * old cluster's to give (see upgrade.c): the file stays as it is there too.
 */
static void
snowflake_shmem_shutdown(int code, Datum arg)
{
	uint64		last_tick;
	int64		mark_ms;

	if (code != 0 || snowflake_state == NULL || snowflake_state->mark_invalid ||
		IsBinaryUpgrade)
		return;
	last_tick = pg_atomic_read_u64(&snowflake_state->last_tick);
	if (last_tick == 0 || !snowflake_shut_down_cleanly())
		return;
	mark_ms = Min((int64) (last_tick >> snowflake_layout.sequence_bits),
				  snowflake_layout.max_ms) + 1;
	snowflake_write_mark_file(mark_ms, mark_ms, LOG);
}
