/*-------------------------------------------------------------------------
 *
 * control.c
 *		Reading pg_control: how the server last shut down, and where its
 *		last checkpoint lies.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/xlog_internal.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"

#include "control.h"

/*---- pg_control ----*/

/*
 * Read pg_control into *control.  Returns false if it cannot be read or its
 * checksum does not match, as when it is read while the checkpointer writes
 * it; a caller that runs beside the checkpointer holds ControlFileLock.
 */
bool
snowflake_read_control_file(ControlFileData *control)
{
	pg_crc32c	crc;
	int			fd;
	int			nread;

	fd = OpenTransientFile(XLOG_CONTROL_FILE, O_RDONLY | PG_BINARY);
	if (fd < 0)
		return false;
	nread = read(fd, control, sizeof(*control));
	CloseTransientFile(fd);
	if (nread != sizeof(*control))
		return false;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, control, offsetof(ControlFileData, crc));
	FIN_CRC32C(crc);
	return EQ_CRC32C(crc, control->crc);
}
