/*-------------------------------------------------------------------------
 *
 * markfile.h
 *		The mark file, and the refusal after pg_upgrade (markfile.c).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_MARKFILE_H
#define SNOWFLAKE_MARKFILE_H

#include "compat.h"
#include "state.h"

#define SNOWFLAKE_MARK_FILE			"snowflake.mark"
#define SNOWFLAKE_MARK_TEMP_FILE	SNOWFLAKE_MARK_FILE ".tmp"
#define SNOWFLAKE_MARK_MAGIC		0x534E4F57	/* "SNOW" */
#define SNOWFLAKE_MARK_VERSION		2

/*
 * Left in the new cluster's data directory when pg_upgrade restores the
 * extension into it (upgrade.c): as long as it is there and the mark file
 * is not, generation is refused.
 */
#define SNOWFLAKE_UPGRADE_FILE		"snowflake.upgraded"

/*
 * A mark file found in the new cluster when pg_upgrade restores the
 * extension was not copied from the old cluster after the upgrade: it is
 * set aside under this name, never trusted.
 */
#define SNOWFLAKE_MARK_SET_ASIDE_FILE	SNOWFLAKE_MARK_FILE ".before-upgrade"

extern bool snowflake_shut_down_cleanly(void);
extern void snowflake_load_mark_file(SnowflakeSharedState *state);
extern void snowflake_refuse_layout(const char *reason, const char *hint);
extern bool snowflake_write_mark_file(int64 mark_ms, int64 written_at_ms,
									  int elevel);
extern bool snowflake_mark_file_went_back(void);
extern void snowflake_mark_went_back(const char *reason);
extern bool snowflake_upgrade_file_exists(void);
pg_noreturn extern void snowflake_report_upgrade_refusal(void);
extern void snowflake_accept_upgraded_mark(int64 mark_ms, bool replayed);

#endif							/* SNOWFLAKE_MARKFILE_H */
