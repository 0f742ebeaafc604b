/*-------------------------------------------------------------------------
 *
 * markfile.h
 *		The mark file (markfile.c).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_MARKFILE_H
#define SNOWFLAKE_MARKFILE_H

#include "state.h"

#define SNOWFLAKE_MARK_FILE			"snowflake.mark"
#define SNOWFLAKE_MARK_TEMP_FILE	SNOWFLAKE_MARK_FILE ".tmp"
#define SNOWFLAKE_MARK_MAGIC		0x534E4F57	/* "SNOW" */
#define SNOWFLAKE_MARK_VERSION		2

extern bool snowflake_shut_down_cleanly(void);
extern void snowflake_load_mark_file(SnowflakeSharedState *state);
extern void snowflake_refuse_layout(const char *reason, const char *hint);
extern bool snowflake_write_mark_file(int64 mark_ms, int64 written_at_ms,
									  int elevel);
extern bool snowflake_mark_file_went_back(void);
extern void snowflake_mark_went_back(const char *reason);

#endif							/* SNOWFLAKE_MARKFILE_H */
