/*-------------------------------------------------------------------------
 *
 * control.h
 *		Reading pg_control (control.c).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_CONTROL_H
#define SNOWFLAKE_CONTROL_H

#include "catalog/pg_control.h"

extern bool snowflake_read_control_file(ControlFileData *control);

#endif							/* SNOWFLAKE_CONTROL_H */
