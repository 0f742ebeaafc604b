/*-------------------------------------------------------------------------
 *
 * functions.h
 *		The session's last ID (functions.c).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_FUNCTIONS_H
#define SNOWFLAKE_FUNCTIONS_H

extern bool snowflake_session_has_last_id;

#endif							/* SNOWFLAKE_FUNCTIONS_H */
