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

extern bool snowflake_enabled;
extern void snowflake_uninstall_define_settings(void);
extern bool snowflake_is_enabled(void);
pg_noreturn extern void snowflake_report_disabled(void);

#endif							/* SNOWFLAKE_UNINSTALL_H */
