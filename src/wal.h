/*-------------------------------------------------------------------------
 *
 * wal.h
 *		The WAL record of the mark (wal.c).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_WAL_H
#define SNOWFLAKE_WAL_H

#include "access/xlog_internal.h"

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
	/* the settings the mark counts in; records of snowflake 1.0 end here */
	int64		epoch_unix_ms;
	uint8		time_bits;
	uint8		datacenter_bits;
	uint8		worker_bits;
	uint8		sequence_bits;
} xl_snowflake_mark;

#define SIZEOF_XL_SNOWFLAKE_MARK_V1 sizeof(int64)

extern RmgrData snowflake_rmgr;
extern void snowflake_fill_mark_record(xl_snowflake_mark *xlrec,
									   int64 mark_ms);

#endif							/* SNOWFLAKE_WAL_H */
