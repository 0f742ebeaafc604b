/*-------------------------------------------------------------------------
 *
 * markfile.c
 *		The mark file: its format, loading it at start, a change of epoch or
 *		layout, writing it, finding that it went backwards, and the refusal
 *		to generate after pg_upgrade until the old cluster's mark is here.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"

#include "clock.h"
#include "control.h"
#include "layout.h"
#include "markfile.h"
#include "settings.h"
#include "state.h"
#include "statefile.h"

/*---- the mark file ----*/

/*
 * The mark file.  mark_ms counts milliseconds since the epoch in force when
 * it was written, so it bounds the time field of the IDs themselves; the
 * epoch and the layout are kept so that a server restarted with another of
 * either does not resume under a mark that means something else (see
 * snowflake_accept_layout).  written_at_ms is the clock when the mark was
 * written a stride ahead, on the same scale, so that after a restart a mark
 * still ahead of a clock that has not gone back is known to be the stride,
 * not a clock fault; the exact mark of a clean shutdown has no stride, and
 * records itself.  Version 1 files, written by snowflake 1.0, end before
 * written_at_ms, and their layout is Twitter's; they are still read.
 */
typedef struct SnowflakeMarkFile
{
	uint32		magic;
	uint32		version;
	int64		epoch_unix_ms;
	int64		mark_ms;
	int64		written_at_ms;
	uint8		time_bits;
	uint8		datacenter_bits;
	uint8		worker_bits;
	uint8		sequence_bits;
	pg_crc32c	crc;			/* of everything above */
} SnowflakeMarkFile;

/* the size of a version 1 file, and how much of it its checksum covers */
#define SNOWFLAKE_MARK_V1_CRC_OFFSET	offsetof(SnowflakeMarkFile, written_at_ms)
#define SNOWFLAKE_MARK_V1_SIZE		32

static void snowflake_invalidate_mark(const char *reason);
static void snowflake_log_upgrade_refusal(void);
static bool snowflake_mark_layout_differs(const SnowflakeMarkFile *contents);
static void snowflake_accept_layout(SnowflakeSharedState *state,
									const SnowflakeMarkFile *contents);

/*
 * Read the state in pg_control, which the shutdown checkpoint has just
 * written, into *state.  Returns false if pg_control cannot be read or its
 * checksum does not match.
 */
static bool
snowflake_read_control_state(DBState *state)
{
	ControlFileData control;

	if (!snowflake_read_control_file(&control))
		return false;
	*state = control.state;
	return true;
}

/*
 * Was the server shut down cleanly as a primary, so that its next start
 * replays no WAL?
 */
static bool
snowflake_shut_down_cleanly_as_primary(void)
{
	DBState		state;

	return snowflake_read_control_state(&state) && state == DB_SHUTDOWNED;
}

/*
 * Was the server shut down cleanly, as a primary or as a standby?  A standby
 * shut down cleanly replays its primary's WAL again when it starts.
 */
bool
snowflake_shut_down_cleanly(void)
{
	DBState		state;

	return snowflake_read_control_state(&state) &&
		(state == DB_SHUTDOWNED || state == DB_SHUTDOWNED_IN_RECOVERY);
}

/*
 * Read the mark file into *contents.  Returns NULL if it holds a valid mark;
 * otherwise a reason in a full sentence, with *missing set when there is no
 * file at all.
 */
static const char *
snowflake_read_mark_file(SnowflakeMarkFile *contents, bool *missing)
{
	pg_crc32c	crc;
	int			fd;
	int			nread;
	char		extra;
	int			expected_size;
	size_t		crc_offset;
	pg_crc32c	file_crc;
	SnowflakeStamp stamp;
	const char *reason = NULL;

	*missing = false;
	fd = OpenTransientFile(SNOWFLAKE_MARK_FILE, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno == ENOENT)
		{
			*missing = true;
			return _("It does not exist.");
		}
		return psprintf(_("It could not be opened: %m."));
	}

	memset(contents, 0, sizeof(*contents));
	nread = read(fd, contents, sizeof(*contents));
	if (nread >= (int) offsetof(SnowflakeMarkFile, epoch_unix_ms) &&
		contents->magic == SNOWFLAKE_MARK_MAGIC && contents->version == 1)
	{
		/* snowflake 1.0's layout: the checksum where written_at_ms is now */
		expected_size = SNOWFLAKE_MARK_V1_SIZE;
		crc_offset = SNOWFLAKE_MARK_V1_CRC_OFFSET;
		memcpy(&file_crc, (char *) contents + crc_offset, sizeof(file_crc));
		contents->written_at_ms = PG_INT64_MAX;
		snowflake_stamp_twitter(&stamp, contents->epoch_unix_ms);
		SNOWFLAKE_STAMP_STORE(contents, &stamp);
	}
	else
	{
		expected_size = sizeof(*contents);
		crc_offset = offsetof(SnowflakeMarkFile, crc);
		file_crc = contents->crc;
	}

	if (nread < 0)
		reason = psprintf(_("It could not be read: %m."));
	else if (nread != expected_size || read(fd, &extra, 1) != 0)
		reason = _("It does not have the size of a mark file.");
	else if (contents->magic != SNOWFLAKE_MARK_MAGIC)
		reason = _("It does not begin with the mark file's magic number.");
	else if (contents->version > SNOWFLAKE_MARK_VERSION)
		reason = _("It was written by a newer version of snowflake.");
	else if (contents->version < 1)
		reason = _("It has an unknown version number.");
	else
	{
		INIT_CRC32C(crc);
		COMP_CRC32C(crc, contents, crc_offset);
		FIN_CRC32C(crc);
		if (!EQ_CRC32C(crc, file_crc))
			reason = _("Its checksum does not match its contents.");
		else if (contents->time_bits < SNOWFLAKE_MIN_TIME_BITS ||
				 contents->sequence_bits < SNOWFLAKE_MIN_SEQUENCE_BITS ||
				 contents->time_bits + contents->datacenter_bits +
				 contents->worker_bits + contents->sequence_bits >
				 SNOWFLAKE_MAX_ID_BITS)
			reason = _("It names a layout that is not valid.");
		else if (contents->mark_ms < 0 ||
				 contents->mark_ms > (INT64CONST(1) << contents->time_bits))
			reason = _("Its mark lies outside the time bits of its layout.");
	}
	CloseTransientFile(fd);
	return reason;
}

/*
 * Load the mark at startup.  No file is normal on a new server, and is
 * logged, since a file removed by hand is not.  A file that cannot be read
 * or trusted is reported, and generation is refused until an operator looks
 * at it: guessing could repeat IDs.
 *
 * After pg_upgrade (snowflake.upgraded is here, see upgrade.c), no file
 * means that the old cluster's mark has not been copied yet: generation is
 * refused.  A valid file then is that copy: it is accepted, and
 * snowflake.upgraded removed, except in pg_upgrade's own starts.
 */
void
snowflake_load_mark_file(SnowflakeSharedState *state)
{
	SnowflakeMarkFile contents;
	const char *reason;
	bool		missing;
	bool		upgraded;
	struct stat st;

	reason = snowflake_read_mark_file(&contents, &missing);
	upgraded = snowflake_upgrade_file_exists();
	if (missing && upgraded)
	{
		state->upgrade_pending = true;
		snowflake_invalidate_mark(_("pg_upgrade made this cluster, and the old cluster's mark file has not been copied into it."));
		snowflake_log_upgrade_refusal();
		return;
	}
	if (missing)
	{
		bool		dangling = lstat(SNOWFLAKE_MARK_FILE, &st) == 0;

		ereport(LOG,
				(errmsg("snowflake high-water mark file \"%s\" does not exist; IDs start from the clock",
						SNOWFLAKE_MARK_FILE),
				 dangling ?
				 errdetail("It is a symbolic link to a file that does not exist.") :
				 errdetail("This is expected the first time a server starts with snowflake."),
				 errhint("If the file was removed, IDs are unique only once the clock is past every ID this server issued before.")));
		return;
	}
	if (reason != NULL)
	{
		snowflake_invalidate_mark(reason);
		ereport(LOG,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("snowflake high-water mark file \"%s\" is invalid; ID generation is disabled",
						SNOWFLAKE_MARK_FILE),
				 errdetail_internal("%s", reason)));
		return;
	}
	if (upgraded && !IsBinaryUpgrade)
		snowflake_accept_upgraded_mark(contents.mark_ms, false);

	if (snowflake_mark_layout_differs(&contents))
	{
		snowflake_accept_layout(state, &contents);
		return;
	}
	if (snowflake_accept_layout_change)
		ereport(WARNING,
				(errmsg("snowflake.accept_layout_change is on, but the epoch and layout are those of the high-water mark"),
				 errhint("Remove snowflake.accept_layout_change from the configuration, so that a later change is not accepted unnoticed.")));
	state->file_mark = contents.mark_ms;
	snowflake_raise_floor(state, contents.mark_ms);
	pg_atomic_write_u64(&state->floor_clock_ms,
						(uint64) contents.written_at_ms);
}

/* Was the mark file written under another epoch or layout? */
static bool
snowflake_mark_layout_differs(const SnowflakeMarkFile *contents)
{
	SnowflakeStamp was;
	SnowflakeStamp now;

	SNOWFLAKE_STAMP_LOAD(&was, contents);
	snowflake_stamp_current(&now);
	return !snowflake_stamp_equal(&was, &now);
}

/*
 * The server starts with another epoch or layout than the mark file was
 * written under.  IDs made under the new one could equal or fall below IDs
 * already issued, so generation is refused, unless the operator accepts the
 * change (snowflake.accept_layout_change).  Then every new ID must be
 * greater than every old one, as a number: the old IDs all lie below the
 * old mark's first ID, so generation resumes at the first millisecond of the
 * new layout whose IDs lie above that.  If no such millisecond exists, or
 * the server did not shut down cleanly (crash recovery would replay marks
 * of the old layout), the change is refused all the same.
 */
static void
snowflake_accept_layout(SnowflakeSharedState *state,
						const SnowflakeMarkFile *contents)
{
	StringInfoData change;
	SnowflakeStamp was;
	SnowflakeStamp now;
	SnowflakeLayout old_layout;
	uint64		old_bound;
	int64		floor_ms;
	int			us_into_ms;

	SNOWFLAKE_STAMP_LOAD(&was, contents);
	snowflake_stamp_current(&now);
	initStringInfo(&change);
	snowflake_stamp_describe_change(&change, &was, &now);

	snowflake_stamp_layout(&was, &old_layout);
	old_bound = (uint64) contents->mark_ms << old_layout.time_shift;
	floor_ms = (int64) ((old_bound - 1) >> snowflake_layout.time_shift) + 1;
	if (old_bound == 0)
		floor_ms = 0;

	if (!snowflake_accept_layout_change)
		snowflake_refuse_layout(psprintf(_("Since the high-water mark was written, %s. IDs made now could equal or fall below IDs already issued."),
										 change.data),
								_("Restore the earlier settings, or set snowflake.accept_layout_change = on for one restart to resume above every earlier ID."));
	else if (!snowflake_shut_down_cleanly_as_primary())
		snowflake_refuse_layout(psprintf(_("Since the high-water mark was written, %s, but the server did not shut down cleanly as a primary, and recovery would replay marks of the earlier settings."),
										 change.data),
								_("Start once with the earlier settings and shut down cleanly, then change them; change a standby's settings together with its primary's."));
	else if (floor_ms > snowflake_layout.max_ms)
		snowflake_refuse_layout(psprintf(_("Since the high-water mark was written, %s. Every ID of the new layout lies below IDs already issued."),
										 change.data),
								_("Restore the earlier settings, or choose a layout with more time bits."));
	else if (floor_ms - snowflake_clock_ms(&us_into_ms) > INT_MAX)
		snowflake_refuse_layout(psprintf(_("Since the high-water mark was written, %s. The first ID of the new settings above IDs already issued lies %lld ms ahead of the clock, beyond any snowflake.max_lead."),
										 change.data,
										 (long long) (floor_ms - snowflake_clock_ms(&us_into_ms))),
								_("Restore the earlier settings, or choose settings under which the IDs already issued read as a time not far from now."));
	else if (!snowflake_write_mark_file(floor_ms, 0, LOG))
		snowflake_refuse_layout(psprintf(_("Since the high-water mark was written, %s, and the mark for the new settings could not be written."),
										 change.data),
								_("See the server log for why the file could not be written."));
	else
	{
		ereport(LOG,
				(errmsg("snowflake accepted a change of epoch or layout; IDs resume at %lld ms after the epoch, above every earlier ID",
						(long long) floor_ms),
				 errdetail("Since the high-water mark was written, %s.",
						   change.data),
				 errhint("Remove snowflake.accept_layout_change from the configuration.")));
		state->file_mark = floor_ms;
		snowflake_raise_floor(state, floor_ms);
		/* not the clock's fault if the new floor lies ahead of it */
		pg_atomic_write_u64(&state->floor_clock_ms, 0);
	}
	pfree(change.data);
}

/* Refuse generation at start: the epoch or layout changed. */
void
snowflake_refuse_layout(const char *reason, const char *hint)
{
	snowflake_state->layout_changed = true;
	strlcpy(snowflake_state->layout_hint, hint,
			sizeof(snowflake_state->layout_hint));
	snowflake_invalidate_mark(reason);
	ereport(LOG,
			(errmsg("snowflake epoch or layout changed since the high-water mark was written; ID generation is disabled"),
			 errdetail_internal("%s", reason),
			 errhint("%s", hint)));
}

/* Write the temporary mark file, fsynced, and rename it into place. */
static bool
snowflake_write_mark_contents(int64 mark_ms, int64 written_at_ms, int elevel)
{
	SnowflakeMarkFile contents;
	SnowflakeStamp stamp;

	memset(&contents, 0, sizeof(contents));
	contents.magic = SNOWFLAKE_MARK_MAGIC;
	contents.version = SNOWFLAKE_MARK_VERSION;
	snowflake_stamp_current(&stamp);
	SNOWFLAKE_STAMP_STORE(&contents, &stamp);
	contents.mark_ms = mark_ms;
	contents.written_at_ms = written_at_ms;
	INIT_CRC32C(contents.crc);
	COMP_CRC32C(contents.crc, &contents, offsetof(SnowflakeMarkFile, crc));
	FIN_CRC32C(contents.crc);

	return snowflake_write_file_durably(SNOWFLAKE_MARK_FILE,
										SNOWFLAKE_MARK_TEMP_FILE,
										&contents, sizeof(contents), elevel);
}

/*
 * Write a mark durably: a temporary file, then durable_rename(), which
 * fsyncs it before and after the rename and fsyncs the directory (unless
 * fsync is off).  On failure report at elevel and return false; the old mark
 * stays in force, and no temporary file is left behind.
 */
bool
snowflake_write_mark_file(int64 mark_ms, int64 written_at_ms, int elevel)
{
	volatile bool written = false;

	PG_TRY();
	{
		written = snowflake_write_mark_contents(mark_ms, written_at_ms,
												elevel);
	}
	PG_CATCH();
	{
		(void) unlink(SNOWFLAKE_MARK_TEMP_FILE);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (!written)
		(void) unlink(SNOWFLAKE_MARK_TEMP_FILE);
	return written;
}

/*
 * Has the file gone backwards since this server last read or wrote it?  A
 * copy restored from a backup, or a file replaced by hand, would let a crash
 * resume below IDs already issued.  Called under mark_lock before each new
 * mark is written.  If so, put the true mark back, so that a restart is
 * safe, and disable generation until the server restarts: something that
 * replaces the file needs an operator's eye.
 */
bool
snowflake_mark_file_went_back(void)
{
	SnowflakeSharedState *state = snowflake_state;
	SnowflakeMarkFile contents;
	const char *reason;
	bool		missing;
	int			us_into_ms;

	if (state->file_mark <= 0)
		return false;
	reason = snowflake_read_mark_file(&contents, &missing);
	if (reason == NULL && contents.mark_ms >= state->file_mark)
		return false;

	if (missing)
		reason = psprintf(_("The file was removed while the server ran; it held a mark of %lld ms."),
						  (long long) state->file_mark);
	else if (reason != NULL)
		reason = psprintf(_("The file was replaced by an invalid one while the server ran; it held a mark of %lld ms."),
						  (long long) state->file_mark);
	else
		reason = psprintf(_("The file's mark went back from %lld ms to %lld ms while the server ran."),
						  (long long) state->file_mark,
						  (long long) contents.mark_ms);
	if (snowflake_write_mark_file(state->written_mark,
								  snowflake_clock_ms(&us_into_ms), LOG))
	{
		state->file_mark = state->written_mark;
		state->mark_restored = true;
	}
	snowflake_mark_went_back(reason);
	return true;
}

/* Disable generation: the mark file went backwards, for reason. */
void
snowflake_mark_went_back(const char *reason)
{
	snowflake_invalidate_mark(reason);
	ereport(LOG,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("snowflake high-water mark file \"%s\" went backwards; ID generation is disabled",
					SNOWFLAKE_MARK_FILE),
			 errdetail_internal("%s", reason)));
}

/*
 * Disable generation for good, for reason (a full sentence).  The reason is
 * in place before the flag is seen.
 */
static void
snowflake_invalidate_mark(const char *reason)
{
	SnowflakeSharedState *state = snowflake_state;

	strlcpy(state->mark_invalid_reason, reason,
			sizeof(state->mark_invalid_reason));
	pg_write_barrier();
	state->mark_invalid = true;
}

/*---- after pg_upgrade (see upgrade.c) ----*/

/*
 * Is snowflake.upgraded in the data directory?  Anything there by that name
 * counts, and so does a data directory that cannot be looked into.
 */
bool
snowflake_upgrade_file_exists(void)
{
	struct stat st;

	return lstat(SNOWFLAKE_UPGRADE_FILE, &st) == 0 || errno != ENOENT;
}

/* The detail and the hint of the refusal after pg_upgrade. */
static int
snowflake_upgrade_errdetail(void)
{
	errdetail("pg_upgrade made this cluster from one that had snowflake, and does not copy the mark file; \"%s\" records the upgrade. "
			  "Without the old cluster's mark, IDs made from the clock could repeat IDs the old cluster issued.",
			  SNOWFLAKE_UPGRADE_FILE);
	errhint("Stop the server, copy \"%s\" from the old cluster's data directory into this one, and start the server again. "
			"If the old cluster's mark is lost, wait until the clock is past every ID the old cluster issued, then remove \"%s\" and restart.",
			SNOWFLAKE_MARK_FILE, SNOWFLAKE_UPGRADE_FILE);
	return 0;
}

/* At a start: generation is refused until the old cluster's mark is here. */
static void
snowflake_log_upgrade_refusal(void)
{
	ereport(LOG,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("snowflake high-water mark file \"%s\" is missing after pg_upgrade; ID generation is disabled",
					SNOWFLAKE_MARK_FILE),
			 snowflake_upgrade_errdetail()));
}

/* Refuse an ID: the old cluster's mark has not been copied. */
void
snowflake_report_upgrade_refusal(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("snowflake high-water mark file \"%s\" is missing after pg_upgrade",
					SNOWFLAKE_MARK_FILE),
			 snowflake_upgrade_errdetail()));
}

/*
 * The mark of mark_ms ends the refusal after pg_upgrade: copied in from the
 * old cluster and found at a start, or, on a standby, replayed from its
 * primary (replayed), which resumed above the old cluster's mark before it
 * wrote any.  Remove snowflake.upgraded, and log it.
 */
void
snowflake_accept_upgraded_mark(int64 mark_ms, bool replayed)
{
	bool		removed = durable_unlink(SNOWFLAKE_UPGRADE_FILE, LOG) == 0;

	ereport(LOG,
			(replayed ?
			 errmsg("snowflake high-water mark replayed from WAL ends the refusal after pg_upgrade") :
			 errmsg("snowflake accepted the high-water mark file \"%s\" copied after pg_upgrade",
					SNOWFLAKE_MARK_FILE),
			 removed ?
			 errdetail("The mark lies %lld ms after the epoch it was written under; \"%s\" was removed.",
					   (long long) mark_ms, SNOWFLAKE_UPGRADE_FILE) :
			 errdetail("The mark lies %lld ms after the epoch it was written under; \"%s\" could not be removed, and is looked at again at the next start.",
					   (long long) mark_ms, SNOWFLAKE_UPGRADE_FILE)));
}
