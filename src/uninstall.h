/*-------------------------------------------------------------------------
 *
 * uninstall.h
 *		Taking snowflake out of a replication group: snowflake.enabled and
 *		snowflake.uninstall_lsn (uninstall.c).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_UNINSTALL_H
#define SNOWFLAKE_UNINSTALL_H

#include "compat.h"
#include "state.h"

extern bool snowflake_enabled;
extern void snowflake_uninstall_define_settings(void);
pg_noreturn extern void snowflake_report_disabled(void);

/*
 * Does this server generate IDs and write marks to WAL?  Whoever writes a
 * mark record asks under mark_lock, right before it writes the mark; every
 * generating call asks too, so it is inline.
 */
static inline bool
snowflake_is_enabled(void)
{
	return pg_atomic_read_u32(&snowflake_state->enabled) != 0;
}

#endif							/* SNOWFLAKE_UNINSTALL_H */
