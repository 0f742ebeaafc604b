/*-------------------------------------------------------------------------
 *
 * settings.h
 *		The snowflake settings: their table, their values, and their checks
 *		(settings.c).
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_SETTINGS_H
#define SNOWFLAKE_SETTINGS_H

#include "utils/guc.h"
#include "utils/timestamp.h"

#include "layout.h"

/*
 * Every snowflake setting, with what a valid value is.  This list is what a
 * setting name is checked against, in postgresql.conf and in SET, whatever
 * the case of its letters, and what values are checked against where
 * PostgreSQL's own checks are looser (see snowflake_setting_value_is_valid).
 */
typedef enum SnowflakeSettingKind
{
	SNOWFLAKE_SETTING_NODE_ID,	/* a plain integer that fits its width */
	SNOWFLAKE_SETTING_WIDTH,	/* a plain integer, min_value to max_value */
	SNOWFLAKE_SETTING_EPOCH,	/* see snowflake_parse_epoch */
	SNOWFLAKE_SETTING_DURATION, /* an integer with units, min_value to
								 * max_value */
	SNOWFLAKE_SETTING_BOOL,
	SNOWFLAKE_SETTING_CONNINFO, /* see snowflake_registry_check_conninfo */
	SNOWFLAKE_SETTING_READ_ONLY /* shown, never set */
} SnowflakeSettingKind;

typedef struct SnowflakeSetting
{
	const char *name;
	SnowflakeSettingKind kind;
	const char *short_desc;
	const char *long_desc;
	bool		at_start;		/* read once at start when preloaded */
	GucContext	context;		/* the context otherwise */
	int			flags;			/* GUC_* flags, with the unit of a duration */
	/* the variable, its default and hooks: those of the setting's type */
	int		   *int_var;
	bool	   *bool_var;
	char	  **string_var;
	int			boot_int;
	bool		boot_bool;
	const char *boot_string;
	int			min_value;
	int			max_value;
	GucIntAssignHook int_assign;
	GucBoolAssignHook bool_assign;
	GucStringCheckHook string_check;
	GucStringAssignHook string_assign;
	GucShowHook show;
	const char *valid;			/* "must be ..."; for node ids, see
								 * snowflake_node_id_max */
} SnowflakeSetting;

/* the number of entries of snowflake_settings, which settings.c checks */
#define SNOWFLAKE_NUM_SETTINGS		15

extern const SnowflakeSetting snowflake_settings[];
extern int	snowflake_datacenter_id;
extern int	snowflake_worker_id;
extern int	snowflake_max_clock_wait;
extern int	snowflake_max_lead_ms;
extern int	snowflake_max_clock_jump_s;
extern bool snowflake_accept_layout_change;
extern bool snowflake_preloaded;
extern const char *snowflake_epoch_error;
extern const SnowflakeSetting *snowflake_width_error;
extern const char *snowflake_width_error_value;
extern void snowflake_define_settings(GucContext start_context);
extern bool snowflake_has_prefix(const char *name);
extern const SnowflakeSetting *snowflake_find_setting(const char *name);
extern bool snowflake_layout_from_settings(SnowflakeLayout *layout,
										   int elevel);
extern void snowflake_set_layout(void);
extern const SnowflakeLayout *snowflake_configured_layout(void);
extern bool snowflake_setting_value_is_valid(const SnowflakeSetting *setting,
											 const char *value,
											 const SnowflakeLayout *layout,
											 const char **detail);
extern void snowflake_report_bad_value(int elevel,
									   const SnowflakeSetting *setting,
									   const char *value,
									   const SnowflakeLayout *layout,
									   const char *epoch_detail,
									   const char *hint);
extern void snowflake_report_unknown_setting(int elevel, const char *name,
											 const char *filename, int line,
											 const char *hint);
extern void snowflake_reject_unknown_settings(void);
extern void snowflake_validate_preset(const SnowflakeSetting *setting,
									  const char *raw);
extern ConfigVariable *snowflake_read_config_files(const char **values);
extern int	snowflake_pending_layout(const char **values,
									 SnowflakeLayout *layout);
extern void snowflake_report_bad_layout(int elevel,
										const SnowflakeLayout *layout,
										int total, const char *hint);
extern void snowflake_warn_bad_config_files(void);
extern TimestampTz snowflake_configured_epoch(void);

#endif							/* SNOWFLAKE_SETTINGS_H */
