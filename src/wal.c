/*-------------------------------------------------------------------------
 *
 * wal.c
 *		The WAL resource manager of the mark: the record, its redo, desc and
 *		identify.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlogreader.h"
#include "access/xlogrecovery.h"

#include "clock.h"
#include "layout.h"
#include "markfile.h"
#include "settings.h"
#include "state.h"
#include "wal.h"

/*---- WAL resource manager ----*/

static void snowflake_redo(XLogReaderState *record);
static void snowflake_read_mark_record(XLogReaderState *record,
									   xl_snowflake_mark *xlrec);
static void snowflake_desc(StringInfo buf, XLogReaderState *record);
static const char *snowflake_identify(uint8 info);

RmgrData	snowflake_rmgr = {
	.rm_name = "snowflake",
	.rm_redo = snowflake_redo,
	.rm_desc = snowflake_desc,
	.rm_identify = snowflake_identify,
};

/* A WAL record of mark_ms, with the epoch and layout it counts in. */
void
snowflake_fill_mark_record(xl_snowflake_mark *xlrec, int64 mark_ms)
{
	SnowflakeStamp stamp;

	memset(xlrec, 0, sizeof(*xlrec));
	xlrec->mark_ms = mark_ms;
	snowflake_stamp_current(&stamp);
	SNOWFLAKE_STAMP_STORE(xlrec, &stamp);
}

/*
 * Replay a mark: a standby (or crash recovery) raises its floor to it, and
 * keeps it on disk so that a restart of the standby remembers it too.
 *
 * In crash recovery the file was written before each of these records, so a
 * record above the file's mark means that the file went backwards (an older
 * copy replaced it), and generation is refused.  In a standby, in archive
 * recovery, or in the recovery of a base backup (a backup_label puts even a
 * plain restore into archive recovery), the file may lag the WAL, since the
 * backup copied it before later marks were written, so the record is
 * written to it.  If that fails, replay goes on, warning: the
 * floor is raised in memory but the mark is not published as durable, so
 * that after a promotion no ID is issued before a new mark is on disk, and
 * the next mark record, or a clean shutdown, tries the file again.
 *
 * Every record replayed counts for snowflake.uninstall_lsn, should this
 * server be promoted.
 *
 * A standby made from a cluster that pg_upgrade made, before the old
 * cluster's mark was copied into it, refuses to generate after a promotion
 * (see upgrade.c) until it has written a mark replayed from its primary: the
 * primary writes none before it resumed above the old cluster's mark.
 */
static void
snowflake_redo(XLogReaderState *record)
{
	SnowflakeSharedState *state = snowflake_state;
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	xl_snowflake_mark xlrec;
	SnowflakeStamp was;
	SnowflakeStamp now;
	int			us_into_ms;
	bool		in_archive;

	if (info != XLOG_SNOWFLAKE_MARK)
		elog(PANIC, "snowflake_redo: unknown op code %u", info);

	snowflake_read_mark_record(record, &xlrec);
	(void) snowflake_raise_counter(&state->last_record_end,
								   record->EndRecPtr);
	in_archive = StandbyMode || ArchiveRecoveryRequested || InArchiveRecovery;
	if (state->mark_invalid &&
		!(state->upgrade_pending && !state->layout_changed && in_archive))
		return;

	/*
	 * A mark counts in its writer's epoch and layout.  Under others it would
	 * mean other IDs: a standby configured unlike its primary must not
	 * generate after a promotion.
	 */
	SNOWFLAKE_STAMP_LOAD(&was, &xlrec);
	snowflake_stamp_current(&now);
	if (!snowflake_stamp_equal(&was, &now))
	{
		snowflake_refuse_layout(psprintf(_("WAL records a mark written under snowflake.epoch %lld ms since 1970 and a layout of %d/%d/%d/%d bits, but this server runs with %lld ms and %d/%d/%d/%d bits."),
										 (long long) was.epoch_unix_ms,
										 was.time_bits, was.datacenter_bits,
										 was.worker_bits, was.sequence_bits,
										 (long long) now.epoch_unix_ms,
										 now.time_bits, now.datacenter_bits,
										 now.worker_bits, now.sequence_bits),
								_("Give this server the epoch and layout of the server whose WAL it replays."));
		return;
	}
	if ((int64) pg_atomic_read_u64(&state->durable_mark) >= xlrec.mark_ms)
		return;

	if (!in_archive)
	{
		if (xlrec.mark_ms > state->file_mark)
		{
			snowflake_mark_went_back(psprintf(_("WAL records a mark of %lld ms, but the file holds %lld ms: it was replaced by an older copy, or removed."),
											  (long long) xlrec.mark_ms,
											  (long long) state->file_mark));
		}
		return;
	}

	pg_atomic_write_u64(&state->floor_clock_ms, (uint64) PG_INT64_MAX);
	if (!snowflake_write_mark_file(xlrec.mark_ms,
								   snowflake_clock_ms(&us_into_ms), WARNING))
	{
		snowflake_raise_tick_floor(state, xlrec.mark_ms);
		if (pg_atomic_exchange_u32(&state->redo_write_failed, 1) == 0)
			ereport(WARNING,
					(errmsg("snowflake high-water mark replayed from WAL is not on disk"),
					 errdetail("Replay goes on with the mark of %lld ms kept in memory; the file is written again with the next mark record or at shutdown.",
							   (long long) xlrec.mark_ms),
					 errhint("After a promotion no ID is issued until a new mark is on disk.")));
		return;
	}
	pg_atomic_write_u32(&state->redo_write_failed, 0);
	state->file_mark = xlrec.mark_ms;
	snowflake_raise_floor(state, xlrec.mark_ms);
	if (state->upgrade_pending)
	{
		snowflake_accept_upgraded_mark(xlrec.mark_ms, true);
		state->upgrade_pending = false;
		pg_write_barrier();
		state->mark_invalid = false;
	}
}

/*
 * Read a mark record.  One written by snowflake 1.0 holds only the mark, of
 * Twitter's layout, in the epoch of the time.
 */
static void
snowflake_read_mark_record(XLogReaderState *record, xl_snowflake_mark *xlrec)
{
	if (XLogRecGetDataLen(record) < sizeof(*xlrec))
	{
		SnowflakeStamp stamp;

		memcpy(&xlrec->mark_ms, XLogRecGetData(record),
			   SIZEOF_XL_SNOWFLAKE_MARK_V1);
		snowflake_stamp_twitter(&stamp, snowflake_epoch_unix_ms);
		SNOWFLAKE_STAMP_STORE(xlrec, &stamp);
		return;
	}
	memcpy(xlrec, XLogRecGetData(record), sizeof(*xlrec));
}

static void
snowflake_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	if (info == XLOG_SNOWFLAKE_MARK)
	{
		xl_snowflake_mark xlrec;

		snowflake_read_mark_record(record, &xlrec);
		appendStringInfo(buf, "mark %lld ms, epoch %lld ms, layout %d/%d/%d/%d",
						 (long long) xlrec.mark_ms,
						 (long long) xlrec.epoch_unix_ms, xlrec.time_bits,
						 xlrec.datacenter_bits, xlrec.worker_bits,
						 xlrec.sequence_bits);
	}
}

static const char *
snowflake_identify(uint8 info)
{
	if ((info & ~XLR_INFO_MASK) == XLOG_SNOWFLAKE_MARK)
		return "MARK";
	return NULL;
}
