/*-------------------------------------------------------------------------
 *
 * utility.h
 *		The ProcessUtility hook (utility.c).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_UTILITY_H
#define SNOWFLAKE_UTILITY_H

#include "tcop/utility.h"

extern ProcessUtility_hook_type prev_process_utility_hook;
extern void snowflake_process_utility(PlannedStmt *pstmt,
									  const char *queryString,
									  bool readOnlyTree,
									  ProcessUtilityContext context,
									  ParamListInfo params,
									  QueryEnvironment *queryEnv,
									  DestReceiver *dest,
									  QueryCompletion *qc);

#endif							/* SNOWFLAKE_UTILITY_H */
