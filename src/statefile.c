/*-------------------------------------------------------------------------
 *
 * statefile.c
 *		Writing a small state file of the data directory durably, for the
 *		mark file and the registry's claim file.
 *
 * Copyright (c) 2026, the snowflake authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "storage/fd.h"

#include "statefile.h"

/*
 * Write a small state file of the data directory (the mark, the registry's
 * claim cache): a temporary file, then durable_rename(), which fsyncs it
 * before and after the rename and fsyncs the directory (unless fsync is
 * off).  On failure report at elevel and return false; the old file stays,
 * and the caller removes the temporary one.
 */
bool
snowflake_write_file_durably(const char *path, const char *temp_path,
							 const void *data, size_t size, int elevel)
{
	int			fd;

	fd = OpenTransientFile(temp_path, O_CREAT | O_WRONLY | O_TRUNC | PG_BINARY);
	if (fd < 0)
	{
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", temp_path)));
		return false;
	}
	errno = 0;
	if (write(fd, data, size) != (ssize_t) size)
	{
		/* a short write with no errno is most likely a full disk */
		if (errno == 0)
			errno = ENOSPC;
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", temp_path)));
		CloseTransientFile(fd);
		return false;
	}
	if (CloseTransientFile(fd) != 0)
	{
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", temp_path)));
		return false;
	}
	return durable_rename(temp_path, path, elevel) == 0;
}
