/*-------------------------------------------------------------------------
 *
 * settings.c
 *		The snowflake settings: their definition, their values, and the
 *		checks of postgresql.conf at start and after a reload.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "epoch.h"
#include "layout.h"
#include "registry.h"
#include "settings.h"
#include "uninstall.h"

/*---- GUC variables ----*/

int			snowflake_datacenter_id = 0;
int			snowflake_worker_id = 0;
static char *snowflake_epoch_string = NULL;
int			snowflake_max_clock_wait = 1000;
int			snowflake_max_lead_ms = 0;
int			snowflake_max_clock_jump_s = 3600;
static int	snowflake_time_bits = SNOWFLAKE_DEFAULT_TIME_BITS;
static int	snowflake_datacenter_bits = SNOWFLAKE_DEFAULT_DATACENTER_BITS;
static int	snowflake_worker_bits = SNOWFLAKE_DEFAULT_WORKER_BITS;
static int	snowflake_sequence_bits = SNOWFLAKE_DEFAULT_SEQUENCE_BITS;
bool		snowflake_accept_layout_change = false;

/* the module was preloaded: the server's layout is fixed at start */
bool		snowflake_preloaded = false;

/*
 * Set when snowflake.epoch from postgresql.conf failed its check in a
 * session that loaded the module without the preload: the setting then keeps
 * its default, which snowflake_parse(id) must not use in its place.
 */
const char *snowflake_epoch_error = NULL;

/* The same for a width of the layout: its setting, and the value refused. */
const SnowflakeSetting *snowflake_width_error = NULL;
const char *snowflake_width_error_value = NULL;

static bool snowflake_check_epoch(char **newval, void **extra, GucSource source);
static void snowflake_assign_epoch(const char *newval, void *extra);
static const char *snowflake_show_epoch(void);
static void snowflake_assign_width(int newval, void *extra);

/*---- settings ----*/

#define SNOWFLAKE_MAX_CLOCK_WAIT_MS (3600 * 1000)
#define SNOWFLAKE_MAX_NODE_ID		((1 << SNOWFLAKE_MAX_NODE_BITS) - 1)

/*
 * Every setting, once: snowflake_define_settings defines each from its
 * entry, and the checks of postgresql.conf and of SET read the same bounds
 * (but for node ids, which must fit the layout's widths: see
 * snowflake_node_id_max).
 * The widths come first, in the order of the layout
 * (snowflake_pending_layout relies on it).
 */
const SnowflakeSetting snowflake_settings[] = {
	{
		.name = "snowflake.time_bits",
		.kind = SNOWFLAKE_SETTING_WIDTH,
		.short_desc = "Bits of an ID that count milliseconds since the epoch.",
		.long_desc = "With the other widths at most 63. 41 bits last 69.7 years.",
		.at_start = true,
		.int_var = &snowflake_time_bits,
		.boot_int = SNOWFLAKE_DEFAULT_TIME_BITS,
		.min_value = SNOWFLAKE_MIN_TIME_BITS,
		.max_value = SNOWFLAKE_MAX_TIME_BITS,
		.int_assign = snowflake_assign_width,
		.valid = "an integer from " CppAsString2(SNOWFLAKE_MIN_TIME_BITS)
		" to " CppAsString2(SNOWFLAKE_MAX_TIME_BITS),
	},
	{
		.name = "snowflake.datacenter_bits",
		.kind = SNOWFLAKE_SETTING_WIDTH,
		.short_desc = "Bits of an ID that hold the datacenter id.",
		.long_desc = "0 leaves the datacenter out of the ID.",
		.at_start = true,
		.int_var = &snowflake_datacenter_bits,
		.boot_int = SNOWFLAKE_DEFAULT_DATACENTER_BITS,
		.min_value = 0,
		.max_value = SNOWFLAKE_MAX_NODE_BITS,
		.int_assign = snowflake_assign_width,
		.valid = "an integer from 0 to " CppAsString2(SNOWFLAKE_MAX_NODE_BITS),
	},
	{
		.name = "snowflake.worker_bits",
		.kind = SNOWFLAKE_SETTING_WIDTH,
		.short_desc = "Bits of an ID that hold the worker id.",
		.long_desc = "0 leaves the worker out of the ID.",
		.at_start = true,
		.int_var = &snowflake_worker_bits,
		.boot_int = SNOWFLAKE_DEFAULT_WORKER_BITS,
		.min_value = 0,
		.max_value = SNOWFLAKE_MAX_NODE_BITS,
		.int_assign = snowflake_assign_width,
		.valid = "an integer from 0 to " CppAsString2(SNOWFLAKE_MAX_NODE_BITS),
	},
	{
		.name = "snowflake.sequence_bits",
		.kind = SNOWFLAKE_SETTING_WIDTH,
		.short_desc = "Bits of an ID that count IDs within a millisecond.",
		.long_desc = "A server issues at most 2^sequence_bits IDs a millisecond.",
		.at_start = true,
		.int_var = &snowflake_sequence_bits,
		.boot_int = SNOWFLAKE_DEFAULT_SEQUENCE_BITS,
		.min_value = SNOWFLAKE_MIN_SEQUENCE_BITS,
		.max_value = SNOWFLAKE_MAX_SEQUENCE_BITS,
		.int_assign = snowflake_assign_width,
		.valid = "an integer from " CppAsString2(SNOWFLAKE_MIN_SEQUENCE_BITS)
		" to " CppAsString2(SNOWFLAKE_MAX_SEQUENCE_BITS),
	},
	{
		.name = "snowflake.datacenter_id",
		.kind = SNOWFLAKE_SETTING_NODE_ID,
		.short_desc = "Datacenter id written into every snowflake ID.",
		.long_desc = "Each server of a fleet needs its own pair of datacenter "
		"id and worker id; it must fit snowflake.datacenter_bits.",
		.at_start = true,
		.int_var = &snowflake_datacenter_id,
		.max_value = SNOWFLAKE_MAX_NODE_ID,
	},
	{
		.name = "snowflake.worker_id",
		.kind = SNOWFLAKE_SETTING_NODE_ID,
		.short_desc = "Worker id written into every snowflake ID.",
		.long_desc = "Each server of a fleet needs its own pair of datacenter "
		"id and worker id; it must fit snowflake.worker_bits.",
		.at_start = true,
		.int_var = &snowflake_worker_id,
		.max_value = SNOWFLAKE_MAX_NODE_ID,
	},
	{
		.name = "snowflake.epoch",
		.kind = SNOWFLAKE_SETTING_EPOCH,
		.short_desc = "Moment from which snowflake IDs count milliseconds.",
		.long_desc = "A timestamp with a numeric UTC offset or a full time "
		"zone name, such as '" SNOWFLAKE_DEFAULT_EPOCH "' (Twitter's epoch, "
		"the default), or milliseconds since 1970-01-01 00:00:00 UTC.",
		.at_start = true,
		.string_var = &snowflake_epoch_string,
		.boot_string = SNOWFLAKE_DEFAULT_EPOCH,
		.string_check = snowflake_check_epoch,
		.string_assign = snowflake_assign_epoch,
		.show = snowflake_show_epoch,
	},
	{
		.name = "snowflake.accept_layout_change",
		.kind = SNOWFLAKE_SETTING_BOOL,
		.short_desc = "Resume above the old IDs after a change of layout or epoch.",
		.long_desc = "At a start that finds the high-water mark written under "
		"another layout or epoch, resume above every ID issued under it "
		"instead of refusing to generate.",
		.at_start = true,
		.bool_var = &snowflake_accept_layout_change,
		.valid = "a Boolean value",
	},
	{
		.name = "snowflake.max_clock_wait",
		.kind = SNOWFLAKE_SETTING_DURATION,
		.short_desc = "Longest time one call waits for the clock.",
		.long_desc = "When the clock reads earlier than the generator's state "
		"allows (beyond snowflake.max_lead), or other calls keep taking the "
		"IDs that the clock makes room for, a call waits up to this long in "
		"all, then fails; it always waits as long as its own IDs first "
		"needed. 0 fails at once.",
		.context = PGC_SUSET,
		.flags = GUC_UNIT_MS,
		.int_var = &snowflake_max_clock_wait,
		.boot_int = 1000,
		.max_value = SNOWFLAKE_MAX_CLOCK_WAIT_MS,
		.valid = "a duration from 0 to 1h",
	},
	/* up to 24 days: enough to ride out a VM restored from an old snapshot */
	{
		.name = "snowflake.max_lead",
		.kind = SNOWFLAKE_SETTING_DURATION,
		.short_desc = "How far IDs may run ahead of the clock instead of waiting.",
		.long_desc = "When a millisecond's sequence is used up, or the clock "
		"steps back, the generator goes on in later milliseconds as long as "
		"it stays within this much of the clock. 0 never runs ahead.",
		.context = PGC_SUSET,
		.flags = GUC_UNIT_MS,
		.int_var = &snowflake_max_lead_ms,
		.max_value = INT_MAX,
		.valid = "a duration from 0 to 2147483647ms (24.8 days)",
	},
	{
		.name = "snowflake.max_clock_jump",
		.kind = SNOWFLAKE_SETTING_DURATION,
		.short_desc = "Largest forward jump of the clock that IDs follow.",
		.long_desc = "When the clock has moved forward this much further than "
		"the monotonic clock since the last high-water mark, generating is "
		"refused until the clock is corrected or this is raised. 0 follows "
		"any jump.",
		.context = PGC_SUSET,
		.flags = GUC_UNIT_S,
		.int_var = &snowflake_max_clock_jump_s,
		.boot_int = 3600,
		.max_value = INT_MAX,
		.valid = "a duration from 0 (no limit) to 2147483647s",
	},
	/* the registry (registry.c) */
	{
		.name = "snowflake.registry",
		.kind = SNOWFLAKE_SETTING_CONNINFO,
		.short_desc = "Connection string of the registry this server claims its worker id from.",
		.long_desc = "A libpq connection string. Empty (the default) means "
		"the worker id is set by hand with snowflake.worker_id.",
		.at_start = true,
		.flags = GUC_SUPERUSER_ONLY,
		.string_var = &registry_conninfo,
		.boot_string = "",
		.valid = "a libpq connection string",
	},
	{
		.name = "snowflake.registry_check_in_interval",
		.kind = SNOWFLAKE_SETTING_DURATION,
		.short_desc = "Time between two extensions of this server's claim on the registry.",
		.long_desc = "The registry worker extends the promise of this server's "
		"claim this often; keep it well below the registry's lease.",
		.context = PGC_SIGHUP,
		.flags = GUC_UNIT_MS,
		.int_var = &registry_check_in_interval,
		.boot_int = 2000,
		.min_value = SNOWFLAKE_REGISTRY_MIN_CHECK_IN_MS,
		.max_value = SNOWFLAKE_REGISTRY_MAX_CHECK_IN_MS,
		.valid = "a duration from 100ms to 1h",
	},
	/* taking snowflake out (uninstall.c) */
	{
		.name = "snowflake.enabled",
		.kind = SNOWFLAKE_SETTING_BOOL,
		.short_desc = "Whether this server generates snowflake IDs and writes their high-water mark to WAL.",
		.long_desc = "Off refuses every ID and writes no WAL record, so that "
		"the library can then be removed from shared_preload_libraries (see "
		"snowflake.uninstall_lsn).",
		.context = PGC_SIGHUP,
		.bool_var = &snowflake_enabled,
		.boot_bool = true,
		.bool_assign = snowflake_assign_enabled,
		.valid = "a Boolean value",
	},
	{
		.name = "snowflake.uninstall_lsn",
		.kind = SNOWFLAKE_SETTING_READ_ONLY,
		.short_desc = "WAL location that standbys must have replayed before they restart without snowflake.",
		.long_desc = "Empty until snowflake.enabled is off on this primary, "
		"no mark is being written, and a checkpoint has completed since the "
		"last mark record; then the location of that checkpoint.",
		.context = PGC_INTERNAL,
		.flags = GUC_NOT_IN_SAMPLE | GUC_DISALLOW_IN_FILE,
		.string_var = &snowflake_uninstall_lsn,
		.boot_string = "",
		.show = snowflake_show_uninstall_lsn,
	},
};

StaticAssertDecl(lengthof(snowflake_settings) == SNOWFLAKE_NUM_SETTINGS,
				 "SNOWFLAKE_NUM_SETTINGS counts snowflake_settings");

/*
 * Define the settings from their table.  start_context is the context of the
 * ones that are read once, at server start, when the module is preloaded.
 */
void
snowflake_define_settings(GucContext start_context)
{
	for (size_t i = 0; i < lengthof(snowflake_settings); i++)
	{
		const SnowflakeSetting *s = &snowflake_settings[i];
		GucContext	context = s->at_start ? start_context : s->context;

		if (s->int_var != NULL)
			DefineCustomIntVariable(s->name, s->short_desc, s->long_desc,
									s->int_var, s->boot_int,
									s->min_value, s->max_value,
									context, s->flags,
									NULL, s->int_assign, NULL);
		else if (s->bool_var != NULL)
			DefineCustomBoolVariable(s->name, s->short_desc, s->long_desc,
									 s->bool_var, s->boot_bool,
									 context, s->flags,
									 NULL, s->bool_assign, NULL);
		else
			DefineCustomStringVariable(s->name, s->short_desc, s->long_desc,
									   s->string_var, s->boot_string,
									   context, s->flags,
									   s->string_check, s->string_assign,
									   s->show);
	}
}

/*
 * Does name begin with "snowflake."?  Setting names are case-insensitive, so
 * the prefix is too: "Snowflake.Worker_Id" sets snowflake.worker_id, and
 * "Snowflake.Wokrer_Id" is a misspelling of it, not some other setting.
 */
bool
snowflake_has_prefix(const char *name)
{
	return pg_strncasecmp(name, "snowflake.", strlen("snowflake.")) == 0;
}

/* The snowflake setting called name, in any case, or NULL. */
const SnowflakeSetting *
snowflake_find_setting(const char *name)
{
	for (size_t i = 0; i < lengthof(snowflake_settings); i++)
	{
		if (pg_strcasecmp(name, snowflake_settings[i].name) == 0)
			return &snowflake_settings[i];
	}
	return NULL;
}

/*
 * Fill in layout from the four width settings.  If they add up to more
 * than a positive bigint holds, report that at elevel (when not 0) and
 * return false.
 */
bool
snowflake_layout_from_settings(SnowflakeLayout *layout, int elevel)
{
	int			total = snowflake_time_bits + snowflake_datacenter_bits +
		snowflake_worker_bits + snowflake_sequence_bits;

	snowflake_layout_init(layout, snowflake_time_bits,
						  snowflake_datacenter_bits, snowflake_worker_bits,
						  snowflake_sequence_bits);
	if (total <= SNOWFLAKE_MAX_ID_BITS)
		return true;
	if (elevel != 0)
		snowflake_report_bad_layout(elevel, layout, total, NULL);
	return false;
}

/*
 * Set the server's layout from its settings, stopping the server if the
 * widths do not fit.  Runs once, at start.
 */
void
snowflake_set_layout(void)
{
	(void) snowflake_layout_from_settings(&snowflake_layout, FATAL);
}

/*
 * The layout that decoding with the configured layout uses.  Preloaded,
 * the server's, fixed at start; otherwise the one postgresql.conf names now,
 * checked at each use, since a reload may change it.
 */
const SnowflakeLayout *
snowflake_configured_layout(void)
{
	static SnowflakeLayout layout;

	if (snowflake_preloaded)
		return &snowflake_layout;
	if (snowflake_width_error != NULL)
		snowflake_report_bad_value(ERROR, snowflake_width_error,
								   snowflake_width_error_value, NULL, NULL,
								   NULL);
	(void) snowflake_layout_from_settings(&layout, ERROR);
	return &layout;
}

/* The largest value of a node id setting under layout. */
static int
snowflake_node_id_max(const SnowflakeSetting *setting,
					  const SnowflakeLayout *layout)
{
	if (strcmp(setting->name, "snowflake.datacenter_id") == 0)
		return layout->max_datacenter_id;
	return layout->max_worker_id;
}

/*
 * Is value a plain decimal integer from 0 to max_value?  PostgreSQL's own
 * parse_int() also takes fractions and rounds them ("31.4" is 31), and hex;
 * a node id must be written as what it is.
 */
static bool
snowflake_parse_node_id(const char *value, int max_value)
{
	const char *p = value;
	int64		result = 0;

	while (isspace((unsigned char) *p))
		p++;
	if (!isdigit((unsigned char) *p))
		return false;
	while (isdigit((unsigned char) *p))
	{
		result = result * 10 + (*p++ - '0');
		if (result > max_value)
			return false;
	}
	while (isspace((unsigned char) *p))
		p++;
	return *p == '\0';
}

/*
 * Is value valid for setting, by the rules that hold at server start, node
 * ids checked against layout?  For an epoch that is not, *detail says why.
 * Never throws.
 */
bool
snowflake_setting_value_is_valid(const SnowflakeSetting *setting,
								 const char *value,
								 const SnowflakeLayout *layout,
								 const char **detail)
{
	int			result;
	int64		epoch_unix_ms;
	bool		flag;

	*detail = NULL;
	switch (setting->kind)
	{
		case SNOWFLAKE_SETTING_NODE_ID:
			return snowflake_parse_node_id(value,
										   snowflake_node_id_max(setting,
																 layout));
		case SNOWFLAKE_SETTING_WIDTH:
			return snowflake_parse_node_id(value, setting->max_value) &&
				atoi(value) >= setting->min_value;
		case SNOWFLAKE_SETTING_BOOL:
			return parse_bool(value, &flag);
		case SNOWFLAKE_SETTING_EPOCH:
			return snowflake_parse_epoch(value, &epoch_unix_ms, detail);
		case SNOWFLAKE_SETTING_DURATION:
			return parse_int(value, &result, setting->flags, NULL) &&
				result >= setting->min_value && result <= setting->max_value;
		case SNOWFLAKE_SETTING_CONNINFO:
			return snowflake_registry_check_conninfo(value, detail);
		case SNOWFLAKE_SETTING_READ_ONLY:
			return false;
	}
	return false;
}

/*
 * Report at elevel that value is not valid for setting: for a read-only
 * setting, any value, in PostgreSQL's own words.
 */
void
snowflake_report_bad_value(int elevel, const SnowflakeSetting *setting,
						   const char *value, const SnowflakeLayout *layout,
						   const char *epoch_detail, const char *hint)
{
	if (setting->kind == SNOWFLAKE_SETTING_READ_ONLY)
	{
		ereport(elevel,
				(errcode(ERRCODE_CANT_CHANGE_RUNTIME_PARAM),
				 errmsg("parameter \"%s\" cannot be changed", setting->name),
				 hint ? errhint("%s", hint) : 0));
		return;
	}
	/* a connection string may hold a password: keep it out of the log */
	ereport(elevel,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 setting->kind == SNOWFLAKE_SETTING_CONNINFO ?
			 errmsg("invalid value for parameter \"%s\"", setting->name) :
			 errmsg("invalid value for parameter \"%s\": \"%s\"",
					setting->name, value),
			 epoch_detail ? errdetail_internal("%s", epoch_detail) :
			 setting->kind == SNOWFLAKE_SETTING_NODE_ID ?
			 errdetail("\"%s\" must be an integer from 0 to %d.",
					   setting->name, snowflake_node_id_max(setting, layout)) :
			 errdetail("\"%s\" must be %s.", setting->name, setting->valid),
			 hint ? errhint("%s", hint) : 0));
}

/*
 * Report at elevel that name is not a snowflake setting, though it has the
 * prefix; filename and line say where, when it comes from a file.
 */
void
snowflake_report_unknown_setting(int elevel, const char *name,
								 const char *filename, int line,
								 const char *hint)
{
	/* the lease settings of 1.3's registry, which 1.4 retired */
	if (pg_strcasecmp(name, "snowflake.registry_takeover_delay") == 0 ||
		pg_strcasecmp(name, "snowflake.registry_reclaim_lease") == 0 ||
		pg_strcasecmp(name, "snowflake.registry_require_check_in") == 0)
		hint = _("Remove it: since 1.4 every claim is fenced by the promise the registry records, and the lease is set on the registry with snowflake_registry.configure().");

	ereport(elevel,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 filename ?
			 errmsg("unrecognized configuration parameter \"%s\" in file \"%s\" line %d",
					name, filename, line) :
			 errmsg("unrecognized configuration parameter \"%s\"", name),
			 errdetail("\"snowflake\" is a reserved prefix."),
			 errhint("%s", hint)));
}

/*
 * Stop the server when postgresql.conf names a snowflake setting that does
 * not exist.  PostgreSQL would only warn and drop it (and not even warn when
 * the prefix is written with capitals), and a misspelt snowflake.worker_id
 * would leave the server on worker 0, colliding with another server's IDs.
 * Runs once the real settings are defined, so any placeholder left with the
 * prefix is unknown.
 */
void
snowflake_reject_unknown_settings(void)
{
	int			count;
	struct config_generic **variables = snowflake_guc_variables(&count);

	for (int i = 0; i < count; i++)
	{
		if ((variables[i]->flags & GUC_CUSTOM_PLACEHOLDER) != 0 &&
			snowflake_has_prefix(variables[i]->name))
			snowflake_report_unknown_setting(FATAL, variables[i]->name,
											 NULL, 0,
											 _("SELECT name FROM pg_settings WHERE name LIKE 'snowflake.%' lists the snowflake settings."));
	}
}

/*
 * Stop the server when a setting given before the module was loaded is not
 * valid, rather than run with the default in its place.
 */
void
snowflake_validate_preset(const SnowflakeSetting *setting, const char *raw)
{
	const char *detail;

	if (raw == NULL ||
		snowflake_setting_value_is_valid(setting, raw, &snowflake_layout,
										 &detail))
		return;
	snowflake_report_bad_value(FATAL, setting, raw, &snowflake_layout, detail,
							   setting->kind == SNOWFLAKE_SETTING_NODE_ID ?
							   _("Each server of a fleet needs its own pair of snowflake.datacenter_id and snowflake.worker_id.") :
							   NULL);
}

/*
 * What the configuration files set, as the next server start will read
 * them: for each snowflake setting, the value of its last line, with
 * postgresql.auto.conf read last, or NULL.  Returns the parsed lines, which
 * the caller frees, or NULL (and no values) when postgresql.conf cannot be
 * read.
 */
ConfigVariable *
snowflake_read_config_files(const char **values)
{
	ConfigVariable *head = NULL;
	ConfigVariable *tail = NULL;

	memset(values, 0, sizeof(const char *) * lengthof(snowflake_settings));
	if (!ParseConfigFile(ConfigFileName, true, NULL, 0, 0, DEBUG1,
						 &head, &tail))
	{
		FreeConfigVariables(head);
		return NULL;
	}
	(void) ParseConfigFile(PG_AUTOCONF_FILENAME, false, NULL, 0, 0, DEBUG1,
						   &head, &tail);
	for (ConfigVariable *item = head; item != NULL; item = item->next)
	{
		const SnowflakeSetting *setting;

		if (item->name != NULL && item->value != NULL &&
			(setting = snowflake_find_setting(item->name)) != NULL)
			values[setting - snowflake_settings] = item->value;
	}
	return head;
}

/*
 * The layout that values (one for each snowflake setting, or NULL) would
 * give at the next start; widths that are unset or not valid count as their
 * defaults, since they are reported on their own.  The four widths come
 * first in snowflake_settings, in the order of the layout.  Returns the sum
 * of the widths, which may exceed 63.
 */
int
snowflake_pending_layout(const char **values, SnowflakeLayout *layout)
{
	int			widths[4] = {SNOWFLAKE_DEFAULT_TIME_BITS,
		SNOWFLAKE_DEFAULT_DATACENTER_BITS, SNOWFLAKE_DEFAULT_WORKER_BITS,
	SNOWFLAKE_DEFAULT_SEQUENCE_BITS};
	const char *detail;

	for (int i = 0; i < 4; i++)
	{
		Assert(snowflake_settings[i].kind == SNOWFLAKE_SETTING_WIDTH);
		if (values[i] != NULL &&
			snowflake_setting_value_is_valid(&snowflake_settings[i], values[i],
											 NULL, &detail))
			widths[i] = atoi(values[i]);
	}
	snowflake_layout_init(layout, widths[0], widths[1],
						  widths[2], widths[3]);
	return widths[0] + widths[1] + widths[2] + widths[3];
}

/* Report at elevel a layout whose widths add up to total, more than 63. */
void
snowflake_report_bad_layout(int elevel, const SnowflakeLayout *layout,
							int total, const char *hint)
{
	ereport(elevel,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid snowflake layout: %d bits do not fit in a positive bigint",
					total),
			 errdetail("snowflake.time_bits (%d), snowflake.datacenter_bits (%d), snowflake.worker_bits (%d) and snowflake.sequence_bits (%d) must add up to at most 63.",
					   layout->time_bits, layout->datacenter_bits,
					   layout->worker_bits, layout->sequence_bits),
			 hint ? errhint("%s", hint) : 0));
}

/*
 * After a configuration reload, warn about what in the configuration files
 * the next server start will refuse: an unknown snowflake setting, a value
 * that is not valid (the one that takes effect, node ids against the layout
 * the files give), a layout that does not fit.  PostgreSQL itself only logs
 * bad values (or, for a name with capitals, nothing), and the server would
 * then refuse to start at some later restart, long after the change was
 * made.  The mark writer calls this after each reload.
 */
void
snowflake_warn_bad_config_files(void)
{
	const char *values[lengthof(snowflake_settings)];
	ConfigVariable *head;
	SnowflakeLayout layout;
	int			total;
	const char *hint = _("The next server start will refuse it.");

	head = snowflake_read_config_files(values);
	if (head == NULL)
		return;
	for (ConfigVariable *item = head; item != NULL; item = item->next)
	{
		if (item->name != NULL && item->value != NULL &&
			snowflake_has_prefix(item->name) &&
			snowflake_find_setting(item->name) == NULL)
			snowflake_report_unknown_setting(WARNING, item->name,
											 item->filename, item->sourceline,
											 hint);
	}
	total = snowflake_pending_layout(values, &layout);
	if (total > SNOWFLAKE_MAX_ID_BITS)
		snowflake_report_bad_layout(WARNING, &layout, total, hint);
	for (size_t i = 0; i < lengthof(snowflake_settings); i++)
	{
		const char *detail;

		if (values[i] != NULL &&
			!snowflake_setting_value_is_valid(&snowflake_settings[i], values[i],
											  &layout, &detail))
			snowflake_report_bad_value(WARNING, &snowflake_settings[i],
									   values[i], &layout, detail, hint);
	}
	FreeConfigVariables(head);
}

/* GUC check hook for snowflake.epoch: parse once, keep the number */
static bool
snowflake_check_epoch(char **newval, void **extra, GucSource source)
{
	int64		epoch_unix_ms;
	const char *detail;
	int64	   *parsed;

	if (!snowflake_parse_epoch(*newval, &epoch_unix_ms, &detail))
	{
		GUC_check_errdetail("%s", detail);
		return false;
	}
	parsed = snowflake_guc_malloc(sizeof(int64));
	if (parsed == NULL)
	{
		GUC_check_errcode(ERRCODE_OUT_OF_MEMORY);
		GUC_check_errmsg("out of memory");
		return false;
	}
	*parsed = epoch_unix_ms;
	*extra = parsed;
	return true;
}

static void
snowflake_assign_epoch(const char *newval, void *extra)
{
	snowflake_epoch_unix_ms = *((int64 *) extra);
	snowflake_epoch_error = NULL;
}

/*
 * GUC assign hook for the widths: a valid value from a reload replaces one
 * that was refused when the module was loaded without the preload.
 */
static void
snowflake_assign_width(int newval, void *extra)
{
	snowflake_width_error = NULL;
}

/*
 * SHOW snowflake.epoch: the epoch as an ISO timestamp in UTC, whichever form
 * it was given in, and whatever the session's TimeZone and DateStyle.
 */
static const char *
snowflake_show_epoch(void)
{
	static char buf[MAXDATELEN + 1];
	struct pg_tm tm;
	fsec_t		fsec;
	Timestamp	ts;

	ts = (snowflake_epoch_unix_ms - SNOWFLAKE_UNIX_TO_PG_MS) * 1000;
	if (timestamp2tm(ts, NULL, &tm, &fsec, NULL, NULL) != 0)
		return "invalid";
	tm.tm_isdst = 0;			/* UTC: print the zone as +00 */
	EncodeDateTime(&tm, fsec, true, 0, NULL, USE_ISO_DATES, buf);
	return buf;
}

/*
 * The configured epoch as a PostgreSQL timestamp.  Without the preload the
 * setting follows postgresql.conf at each reload; if its value there is not
 * valid, say so rather than decode with the default.
 */
TimestampTz
snowflake_configured_epoch(void)
{
	if (snowflake_epoch_error != NULL)
	{
		int64		epoch_unix_ms;
		const char *detail;

		(void) snowflake_parse_epoch(snowflake_epoch_error, &epoch_unix_ms,
									 &detail);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"%s\": \"%s\"",
						"snowflake.epoch", snowflake_epoch_error),
				 errdetail_internal("%s", detail)));
	}
	return (snowflake_epoch_unix_ms - SNOWFLAKE_UNIX_TO_PG_MS) * 1000;
}
