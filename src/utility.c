/*-------------------------------------------------------------------------
 *
 * utility.c
 *		The ProcessUtility hook: the checks of statements that set snowflake
 *		settings, and DISCARD.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
#include "utils/guc.h"

#include "functions.h"
#include "settings.h"
#include "upgrade.h"
#include "utility.h"

/*---- SET statements and DISCARD ----*/

ProcessUtility_hook_type prev_process_utility_hook = NULL;

/*
 * Refuse SET, RESET and ALTER ... SET of a snowflake setting that does not
 * exist, whatever the case of its prefix: PostgreSQL compares reserved
 * prefixes case-sensitively, so "Snowflake.Wokrer_Id" would otherwise be
 * kept as a setting of its own, unused.  Returns the snowflake setting
 * stmt sets, or NULL when it sets none.
 */
static const SnowflakeSetting *
snowflake_require_known_setting(VariableSetStmt *stmt)
{
	const SnowflakeSetting *setting;

	if (stmt == NULL || stmt->name == NULL || !snowflake_has_prefix(stmt->name))
		return NULL;
	setting = snowflake_find_setting(stmt->name);
	if (setting == NULL)
		snowflake_report_unknown_setting(ERROR, stmt->name, NULL, 0,
										 _("SELECT name FROM pg_settings WHERE name LIKE 'snowflake.%' lists the snowflake settings."));
	return setting;
}

/*
 * ALTER SYSTEM SET: the name as for any SET, and the value as the next
 * server start will check it.
 */
static void
snowflake_require_valid_alter_system(VariableSetStmt *stmt)
{
	const SnowflakeSetting *setting;
	const char *detail;
	char	   *value;
	const char *values[SNOWFLAKE_NUM_SETTINGS];
	ConfigVariable *head;
	SnowflakeLayout layout;
	int			total;

	setting = snowflake_require_known_setting(stmt);
	if (setting == NULL || stmt->kind != VAR_SET_VALUE)
		return;
	value = ExtractSetVariableArgs(stmt);
	if (value == NULL)
		return;

	/* node ids and widths are checked with the layout the files will give */
	head = snowflake_read_config_files(values);
	values[setting - snowflake_settings] = value;
	total = snowflake_pending_layout(values, &layout);
	if (!snowflake_setting_value_is_valid(setting, value, &layout, &detail))
		snowflake_report_bad_value(ERROR, setting, value, &layout, detail,
								   NULL);
	if (total > SNOWFLAKE_MAX_ID_BITS && setting->kind == SNOWFLAKE_SETTING_WIDTH)
		snowflake_report_bad_layout(ERROR, &layout, total, NULL);
	FreeConfigVariables(head);
}

/* The SET clauses of CREATE FUNCTION and ALTER FUNCTION. */
static void
snowflake_require_valid_function_options(List *options)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *option = lfirst_node(DefElem, lc);

		if (strcmp(option->defname, "set") == 0)
			(void) snowflake_require_known_setting((VariableSetStmt *) option->arg);
	}
}

/*
 * ProcessUtility hook: check statements that set snowflake settings, and
 * forget this session's last ID on DISCARD ALL and DISCARD SEQUENCES, as
 * PostgreSQL forgets lastval(), so that a pooled connection does not show
 * one client's ID to the next.  In binary upgrade mode, ALTER EXTENSION
 * snowflake ADD is pg_upgrade restoring the extension into a new cluster,
 * which must not generate until it has the old cluster's mark (upgrade.c).
 */
void
snowflake_process_utility(PlannedStmt *pstmt, const char *queryString,
						  bool readOnlyTree, ProcessUtilityContext context,
						  ParamListInfo params, QueryEnvironment *queryEnv,
						  DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;

	switch (nodeTag(parsetree))
	{
		case T_VariableSetStmt:
			(void) snowflake_require_known_setting((VariableSetStmt *) parsetree);
			break;
		case T_AlterSystemStmt:
			snowflake_require_valid_alter_system(((AlterSystemStmt *) parsetree)->setstmt);
			break;
		case T_AlterRoleSetStmt:
			(void) snowflake_require_known_setting(((AlterRoleSetStmt *) parsetree)->setstmt);
			break;
		case T_AlterDatabaseSetStmt:
			(void) snowflake_require_known_setting(((AlterDatabaseSetStmt *) parsetree)->setstmt);
			break;
		case T_CreateFunctionStmt:
			snowflake_require_valid_function_options(((CreateFunctionStmt *) parsetree)->options);
			break;
		case T_AlterFunctionStmt:
			snowflake_require_valid_function_options(((AlterFunctionStmt *) parsetree)->actions);
			break;
		case T_AlterExtensionContentsStmt:
			if (IsBinaryUpgrade &&
				strcmp(((AlterExtensionContentsStmt *) parsetree)->extname,
					   "snowflake") == 0)
				snowflake_note_upgrade_restore();
			break;
		default:
			break;
	}

	if (prev_process_utility_hook)
		prev_process_utility_hook(pstmt, queryString, readOnlyTree, context,
								  params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);

	if (IsA(parsetree, DiscardStmt) &&
		(((DiscardStmt *) parsetree)->target == DISCARD_ALL ||
		 ((DiscardStmt *) parsetree)->target == DISCARD_SEQUENCES))
		snowflake_session_has_last_id = false;
}
