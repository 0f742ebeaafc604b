/*-------------------------------------------------------------------------
 *
 * statefile.h
 *		Writing a small state file of the data directory durably
 *		(statefile.c), for the mark file and the registry's claim file.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_STATEFILE_H
#define SNOWFLAKE_STATEFILE_H

/*
 * Write data to path through temp_path, durably.  On failure report at
 * elevel and return false; the caller removes temp_path.
 */
extern bool snowflake_write_file_durably(const char *path,
										 const char *temp_path,
										 const void *data, size_t size,
										 int elevel);

#endif							/* SNOWFLAKE_STATEFILE_H */
