/*-------------------------------------------------------------------------
 *
 * epoch.h
 *		Parsing snowflake.epoch (epoch.c).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_EPOCH_H
#define SNOWFLAKE_EPOCH_H

extern bool snowflake_parse_epoch(const char *value, int64 *epoch_unix_ms,
								  const char **detail);

#endif							/* SNOWFLAKE_EPOCH_H */
