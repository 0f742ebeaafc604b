/*-------------------------------------------------------------------------
 *
 * upgrade.h
 *		pg_upgrade: the file the restore of the extension leaves in the new
 *		cluster (upgrade.c).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_UPGRADE_H
#define SNOWFLAKE_UPGRADE_H

extern void snowflake_note_upgrade_restore(void);

#endif							/* SNOWFLAKE_UPGRADE_H */
