/*-------------------------------------------------------------------------
 *
 * waits.c
 *		The wait events of the three waits a caller of snowflake_next_id()
 *		can meet: SnowflakeClock (the clock is behind the last ID),
 *		SnowflakeMark (another process is writing the high-water mark) and
 *		SnowflakeRegistryClaim (the registry has not granted a worker id
 *		yet).
 *
 * From PostgreSQL 17 on, pg_stat_activity shows them by these names
 * (wait_event_type "Extension"); before, each shows as "Extension".  A name
 * is registered in shared memory by the first backend that waits on it, and
 * each backend keeps the number it was given.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/wait_event.h"

#include "compat.h"
#include "waits.h"

#ifdef SNOWFLAKE_NAMED_WAIT_EVENTS
static const char *const wait_names[SNOWFLAKE_NUM_WAITS] = {
	[SNOWFLAKE_WAIT_CLOCK] = "SnowflakeClock",
	[SNOWFLAKE_WAIT_MARK] = "SnowflakeMark",
	[SNOWFLAKE_WAIT_REGISTRY_CLAIM] = "SnowflakeRegistryClaim",
};

static uint32 wait_events[SNOWFLAKE_NUM_WAITS];
#endif

/* The wait event to pass to WaitLatch() and its kin for a wait. */
uint32
snowflake_wait_event(SnowflakeWait wait)
{
	Assert(wait >= 0 && wait < SNOWFLAKE_NUM_WAITS);
#ifdef SNOWFLAKE_NAMED_WAIT_EVENTS
	if (wait_events[wait] == 0)
		wait_events[wait] = WaitEventExtensionNew(wait_names[wait]);
	return wait_events[wait];
#else
	return PG_WAIT_EXTENSION;
#endif
}
