/*
 * faketime_select.c - a preload library for the TAP tests, listed before
 * libfaketime in LD_PRELOAD (see SnowflakeTest.pm, which compiles it)
 *
 * Copyright (c) 2026, the snowflake authors
 *
 * libfaketime 0.9.10 wraps select() and calls the real one inside its
 * DONT_FAKE_TIME(), which sets a thread-local flag that makes every clock
 * read in the process return the real time until select() returns.  Up to
 * PostgreSQL 15 the postmaster waits in select() with signals unblocked and
 * forks the autovacuum launcher, the WAL writer and background workers from
 * its signal handlers, i.e. from inside that select(): such a child starts
 * with the flag set, never returns to clear it, and runs on the real clock
 * for good (so do the postmaster's own handlers, e.g. its "ready to accept
 * connections" log line).
 *
 * This select() issues the system call itself when it waits for file
 * descriptors, so libfaketime never sets the flag there.  A select() on no
 * descriptors at all is a sleep (pg_usleep()), which libfaketime stretches
 * for a clock with a rate; that one still goes to libfaketime.  PostgreSQL
 * does not call pselect(), and from 16 on the postmaster waits with epoll
 * and forks only after the wait has returned, so this changes nothing there.
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int
select(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	   struct timeval *timeout)
{
	if (nfds == 0)
	{
		static int	(*next_select) (int, fd_set *, fd_set *, fd_set *,
									struct timeval *);

		if (next_select == NULL)
			next_select = dlsym(RTLD_NEXT, "select");
		if (next_select == NULL)
		{
			errno = ENOSYS;
			return -1;
		}
		return next_select(nfds, readfds, writefds, exceptfds, timeout);
	}

#ifdef SYS_select
	return syscall(SYS_select, nfds, readfds, writefds, exceptfds, timeout);
#else
	{
		/* no select system call (e.g. arm64): pselect6 with no mask */
		struct timespec ts;
		long		rc;

		if (timeout != NULL)
		{
			ts.tv_sec = timeout->tv_sec;
			ts.tv_nsec = timeout->tv_usec * 1000;
		}
		rc = syscall(SYS_pselect6, nfds, readfds, writefds, exceptfds,
					 timeout != NULL ? &ts : NULL, NULL);
		if (timeout != NULL)
		{
			/* Linux's select() reports the time left, as pselect6 does */
			timeout->tv_sec = ts.tv_sec;
			timeout->tv_usec = ts.tv_nsec / 1000;
		}
		return rc;
	}
#endif
}
