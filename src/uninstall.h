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

/* the variables and hooks that settings.c's table names */
extern char *snowflake_uninstall_lsn;
extern void snowflake_assign_enabled(bool newval, void *extra);
extern const char *snowflake_show_uninstall_lsn(void);
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
