/*-------------------------------------------------------------------------
 *
 * compat.h
 *		The differences between the PostgreSQL majors snowflake builds for,
 *		15 to 18 and 19 (a beta), in one place.  Each guard names the major
 *		that made the change; the code elsewhere calls the names defined here.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_COMPAT_H
#define SNOWFLAKE_COMPAT_H

#include "storage/proc.h"
#include "utils/datetime.h"
#include "utils/guc_tables.h"

#if PG_VERSION_NUM < 150000
#error "snowflake needs PostgreSQL 15 or later"
#endif

/*
 * 18: pg_noreturn, written before a declaration, replaced
 * pg_attribute_noreturn(), written after it.
 */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * 16: get_guc_variables() returns the number of settings through its
 * argument, and GetNumConfigOptions() is gone.
 */
static inline struct config_generic **
snowflake_guc_variables(int *count)
{
#if PG_VERSION_NUM >= 160000
	return get_guc_variables(count);
#else
	*count = GetNumConfigOptions();
	return get_guc_variables();
#endif
}

/*
 * 16: settings live in a memory context, and a check hook's extra data is
 * freed with guc_free(), so it comes from guc_malloc(); before, from
 * malloc().  NULL when out of memory.
 */
static inline void *
snowflake_guc_malloc(size_t size)
{
#if PG_VERSION_NUM >= 160000
	return guc_malloc(LOG, size);
#else
	return malloc(size);
#endif
}

/*
 * 16: the date and time decoders return an error code and fill in a
 * DateTimeErrorExtra, where 15 raised some errors itself; and
 * DecodeTimezoneAbbrev() returns the field's type through an argument.
 * snowflake_zone_abbrev_type() returns the type: UNKNOWN_FIELD when the
 * token is no time zone abbreviation.
 */
static inline int
snowflake_decode_date_time(char **field, int *ftype, int nf, int *dtype,
						   struct pg_tm *tm, fsec_t *fsec, int *tzp)
{
#if PG_VERSION_NUM >= 160000
	DateTimeErrorExtra extra;

	return DecodeDateTime(field, ftype, nf, dtype, tm, fsec, tzp, &extra);
#else
	return DecodeDateTime(field, ftype, nf, dtype, tm, fsec, tzp);
#endif
}

/*
 * 16: a zone name or abbreviation that the decoders do not know is returned
 * as DTERR_BAD_TIMEZONE or DTERR_BAD_ZONE_ABBREV, where 15 raised the error
 * "time zone ... not recognized" itself.
 */
#if PG_VERSION_NUM >= 160000
#define snowflake_dterr_is_bad_zone(dterr) \
	((dterr) == DTERR_BAD_TIMEZONE || (dterr) == DTERR_BAD_ZONE_ABBREV)
#else
#define snowflake_dterr_is_bad_zone(dterr)	false
#endif

static inline int
snowflake_zone_abbrev_type(int field, char *token)
{
	int			offset;
	pg_tz	   *tz;
#if PG_VERSION_NUM >= 160000
	int			type;
	DateTimeErrorExtra extra;

	if (DecodeTimezoneAbbrev(field, token, &type, &offset, &tz, &extra) != 0)
		return UNKNOWN_FIELD;
	return type;
#else
	return DecodeTimezoneAbbrev(field, token, &offset, &tz);
#endif
}

/* 17: an interval can be infinite */
#ifndef INTERVAL_NOT_FINITE
#define INTERVAL_NOT_FINITE(i)	false
#endif

/* 17: PGPROC lost pgprocno; a process's number is its place in allProcs */
#if PG_VERSION_NUM >= 170000
#define snowflake_proc_number(proc)	GetNumberFromPGProc(proc)
#else
#define snowflake_proc_number(proc)	((proc)->pgprocno)
#endif

/*
 * 17: an extension can name its wait events (WaitEventExtensionNew), and
 * pg_stat_activity shows the names; before, every wait of an extension is
 * "Extension".
 */
#if PG_VERSION_NUM >= 170000
#define SNOWFLAKE_NAMED_WAIT_EVENTS
#endif

/*
 * 18: the module's magic block carries its name and version, shown by
 * pg_get_loaded_modules().
 */
#ifdef PG_MODULE_MAGIC_EXT
#define SNOWFLAKE_MODULE_MAGIC \
	PG_MODULE_MAGIC_EXT(.name = "snowflake", .version = SNOWFLAKE_VERSION)
#else
#define SNOWFLAKE_MODULE_MAGIC	PG_MODULE_MAGIC
#endif

/*
 * 19: executor/tuptable.h, and with it funcapi.h, no longer includes
 * access/htup_details.h; the files that call heap_form_tuple() include it
 * themselves, which every major allows, so no guard is needed.
 */

#endif							/* SNOWFLAKE_COMPAT_H */
