/*-------------------------------------------------------------------------
 *
 * epoch.c
 *		Parsing an epoch: milliseconds since 1970, or a timestamp that names
 *		its time zone.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/datetime.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "epoch.h"
#include "layout.h"

/*
 * Refuse what a relative or context-dependent epoch literal would otherwise
 * make of itself: special values ("now", "today", "epoch", "infinity"),
 * which ParseDateTime() gives as words or signed words, and time zone
 * abbreviations ("IST"), whose meaning depends on timezone_abbreviations.
 * UTC, GMT and Z mean the same under any abbreviation set.  Returns a reason,
 * or NULL when the fields are acceptable.
 */
static const char *
snowflake_refuse_epoch_fields(char **field, int *ftype, int nf)
{
	for (int i = 0; i < nf; i++)
	{
		int			value;

		if (ftype[i] == DTK_SPECIAL ||
			(ftype[i] == DTK_STRING &&
			 DecodeSpecial(i, field[i], &value) == RESERV))
			return psprintf(_("The epoch must be a fixed moment; \"%s\" is a special or relative value."),
							field[i]);
		if (ftype[i] == DTK_STRING &&
			strcmp(field[i], "utc") != 0 && strcmp(field[i], "gmt") != 0 &&
			strcmp(field[i], "z") != 0 &&
			snowflake_zone_abbrev_type(i, field[i]) != UNKNOWN_FIELD)
			return psprintf(_("The time zone abbreviation \"%s\" depends on timezone_abbreviations; give a numeric offset such as +05:30 or a full zone name such as Asia/Kolkata."),
							field[i]);
	}
	return NULL;
}

/*
 * Decode a timestamp literal that names its time zone into *ts.  On failure
 * set *detail and return false.  On PostgreSQL 15 the decoder reports some
 * bad zone names with ereport(ERROR), which the caller catches; from 16 on
 * it returns them, and they get the same detail here.
 */
static bool
snowflake_decode_timestamp(const char *value, TimestampTz *ts,
						   const char **detail)
{
	char		workbuf[MAXDATELEN + MAXDATEFIELDS];
	char	   *field[MAXDATEFIELDS];
	int			ftype[MAXDATEFIELDS];
	int			nf;
	int			dtype;
	struct pg_tm tm;
	fsec_t		fsec;
	int			tz;
	int			dterr;

	*detail = _("The epoch must be a timestamp with a time zone, such as '"
				SNOWFLAKE_DEFAULT_EPOCH "', or milliseconds since 1970.");
	if (strlen(value) >= MAXDATELEN ||
		ParseDateTime(value, workbuf, sizeof(workbuf), field, ftype,
					  MAXDATEFIELDS, &nf) != 0)
		return false;
	if ((*detail = snowflake_refuse_epoch_fields(field, ftype, nf)) != NULL)
		return false;

	/*
	 * Decoding without a place for a zone fails just when the literal names
	 * one.  Decoding changes the fields in place, so parse again before
	 * decoding for real.
	 */
	if (snowflake_decode_date_time(field, ftype, nf, &dtype, &tm, &fsec, NULL) == 0)
	{
		*detail = _("The epoch must name its time zone, as in '"
					SNOWFLAKE_DEFAULT_EPOCH "'.");
		return false;
	}
	*detail = _("The epoch must be a timestamp with a time zone, such as '"
				SNOWFLAKE_DEFAULT_EPOCH "', or milliseconds since 1970.");
	if (ParseDateTime(value, workbuf, sizeof(workbuf), field, ftype,
					  MAXDATEFIELDS, &nf) != 0)
		return false;
	dterr = snowflake_decode_date_time(field, ftype, nf, &dtype, &tm, &fsec, &tz);
	if (snowflake_dterr_is_bad_zone(dterr))
		*detail = _("The epoch's time zone is not recognized.");
	return dterr == 0 && dtype == DTK_DATE &&
		tm2timestamp(&tm, fsec, &tz, ts) == 0;
}

/*
 * Parse an epoch: integer milliseconds since 1970, or a timestamp literal
 * that names its time zone by a numeric offset or a full name.  A literal
 * without one is refused, because its meaning would change with the
 * server's TimeZone, and so are relative and special values.  On failure,
 * *detail says why in a full sentence.  Never throws: this runs in a GUC
 * check hook, and an error there would stop the postmaster on a reload.
 */
bool
snowflake_parse_epoch(const char *value, int64 *epoch_unix_ms,
					  const char **detail)
{
	int64		now_unix_ms;
	char	   *end;
	long long	integer_ms;

	/* integer milliseconds since 1970 */
	errno = 0;
	integer_ms = strtoll(value, &end, 10);
	if (end != value && *end == '\0')
	{
		if (errno == ERANGE || integer_ms < 0)
		{
			*detail = _("An epoch given in milliseconds must be a number from 0 up to now.");
			return false;
		}
		*epoch_unix_ms = (int64) integer_ms;
	}
	else
	{
		MemoryContext context = CurrentMemoryContext;
		volatile bool decoded = false;
		TimestampTz ts = 0;

		PG_TRY();
		{
			decoded = snowflake_decode_timestamp(value, &ts, detail);
		}
		PG_CATCH();
		{
			MemoryContextSwitchTo(context);
			FlushErrorState();
			*detail = _("The epoch's time zone is not recognized.");
		}
		PG_END_TRY();
		if (!decoded)
			return false;
		if (ts % 1000 != 0)
		{
			*detail = _("The epoch must be a whole number of milliseconds.");
			return false;
		}
		*epoch_unix_ms = ts / 1000 + SNOWFLAKE_UNIX_TO_PG_MS;
		if (*epoch_unix_ms < 0)
		{
			*detail = _("The epoch must not be before 1970-01-01 00:00:00 UTC.");
			return false;
		}
	}

	now_unix_ms = GetCurrentTimestamp() / 1000 + SNOWFLAKE_UNIX_TO_PG_MS;
	if (*epoch_unix_ms > now_unix_ms)
	{
		*detail = _("The epoch must not be in the future.");
		return false;
	}
	return true;
}
