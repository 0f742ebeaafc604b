/*
 * faketime_shim.c - a preload library for the TAP tests, listed before
 * libfaketime in LD_PRELOAD (see SnowflakeTest.pm, which compiles it)
 *
 * Copyright (c) 2026, the snowflake authors
 *
 * It keeps libfaketime 0.9.10 out of PostgreSQL's signal handlers, in two
 * ways.
 *
 * select(): libfaketime wraps it and calls the real one inside its
 * DONT_FAKE_TIME(), which sets a thread-local flag that makes every clock
 * read in the process return the real time until select() returns.  Up to
 * PostgreSQL 15 the postmaster waits in select() with signals unblocked and
 * forks the autovacuum launcher, the WAL writer and background workers from
 * its signal handlers, i.e. from inside that select(): such a child starts
 * with the flag set, never returns to clear it, and runs on the real clock
 * for good (so do the postmaster's own handlers, e.g. its "ready to accept
 * connections" log line).  This select() issues the system call itself when
 * it waits for file descriptors, so libfaketime never sets the flag there.
 * A select() on no descriptors at all is a sleep (pg_usleep()), which
 * libfaketime stretches for a clock with a rate; that one still goes to
 * libfaketime.  PostgreSQL does not call pselect(), and from 16 on the
 * postmaster waits with epoll and forks only after the wait has returned.
 *
 * Clock reads in signal handlers: PostgreSQL's SIGALRM handler reads the
 * clock (GetCurrentTimestamp() in handle_sig_alarm) whenever a timeout is
 * active, such as the statement_timeout that snowflake's registry worker
 * sets on its connection to the registry, so at any point of a statement.
 * libfaketime reads its clock file there with fopen(), which allocates: a
 * signal that came while the statement was in malloc() corrupted the heap
 * of a registry under libfaketime ("malloc(): unsorted double linked list
 * corrupted", SIGABRT), and t/033 bailed out.  So every handler installed
 * with sigaction() runs through a trampoline that counts the handlers
 * running, and a clock read inside one returns the real clock plus the
 * offset of the faked clock at the last read outside any handler: system
 * calls only, which a handler may make.  The real clock does not need the
 * shim: the C library's reads are safe in a handler.  A child forked from a
 * handler (the PostgreSQL 15 postmaster's) starts outside any.
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
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

/* the handlers running in this thread, and each signal's own handler */
static __thread volatile sig_atomic_t handler_depth;
static struct sigaction app_action[NSIG];

/* the next clock_gettime() and gettimeofday() (libfaketime's), the C
 * library's own clock_gettime(), and the next sigaction() */
static int	(*next_clock_gettime) (clockid_t, struct timespec *);
static int	(*next_gettimeofday) (struct timeval *, void *);
static int	(*libc_clock_gettime) (clockid_t, struct timespec *);
static int	(*next_sigaction) (int, const struct sigaction *,
							   struct sigaction *);

/* the faked clock minus the real one, in ns, at the last read outside any
 * handler (one aligned 64-bit word: a handler never sees half of it) */
static volatile long long fake_offset_ns;

static void
reset_depth_in_child(void)
{
	handler_depth = 0;
}

__attribute__((constructor))
static void
shim_init(void)
{
	void	   *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	next_clock_gettime = dlsym(RTLD_NEXT, "clock_gettime");
	next_gettimeofday = dlsym(RTLD_NEXT, "gettimeofday");
	next_sigaction = dlsym(RTLD_NEXT, "sigaction");
	if (libc != NULL)
		libc_clock_gettime = dlsym(libc, "clock_gettime");
	pthread_atfork(NULL, NULL, reset_depth_in_child);
}

static void
trampoline(int signo, siginfo_t *info, void *context)
{
	struct sigaction *a = &app_action[signo];

	handler_depth++;
	if (a->sa_flags & SA_SIGINFO)
		a->sa_sigaction(signo, info, context);
	else
		a->sa_handler(signo);
	handler_depth--;
}

int
sigaction(int signo, const struct sigaction *act, struct sigaction *oldact)
{
	struct sigaction mine;
	struct sigaction previous;
	int			rc;

	if (next_sigaction == NULL)
		next_sigaction = dlsym(RTLD_NEXT, "sigaction");
	if (signo <= 0 || signo >= NSIG)
		return next_sigaction(signo, act, oldact);
	previous = app_action[signo];
	if (act != NULL && !(act->sa_flags & SA_SIGINFO) &&
		(act->sa_handler == SIG_DFL || act->sa_handler == SIG_IGN))
		rc = next_sigaction(signo, act, oldact);
	else if (act != NULL)
	{
		app_action[signo] = *act;
		mine = *act;
		mine.sa_flags |= SA_SIGINFO;
		mine.sa_sigaction = trampoline;
		rc = next_sigaction(signo, &mine, oldact);
		if (rc != 0)
			app_action[signo] = previous;
	}
	else
		rc = next_sigaction(signo, NULL, oldact);
	if (rc == 0 && oldact != NULL && (oldact->sa_flags & SA_SIGINFO) &&
		oldact->sa_sigaction == trampoline)
		*oldact = previous;
	return rc;
}

/* the real clock, by the C library (or the system call) */
static int
real_clock(clockid_t clock, struct timespec *ts)
{
	if (libc_clock_gettime != NULL)
		return libc_clock_gettime(clock, ts);
	return syscall(SYS_clock_gettime, clock, ts);
}

static int
fakes(clockid_t clock)
{
	return clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE;
}

int
clock_gettime(clockid_t clock, struct timespec *ts)
{
	struct timespec real;
	long long	ns;
	int			rc;

	if (handler_depth > 0 || next_clock_gettime == NULL)
	{
		rc = real_clock(clock, ts);
		if (rc == 0 && fakes(clock))
		{
			ns = ts->tv_sec * 1000000000LL + ts->tv_nsec + fake_offset_ns;
			ts->tv_sec = ns / 1000000000LL;
			ts->tv_nsec = ns % 1000000000LL;
		}
		return rc;
	}
	rc = next_clock_gettime(clock, ts);
	if (rc == 0 && clock == CLOCK_REALTIME && real_clock(clock, &real) == 0)
		fake_offset_ns = (ts->tv_sec - real.tv_sec) * 1000000000LL +
			(ts->tv_nsec - real.tv_nsec);
	return rc;
}

int
gettimeofday(struct timeval *tv, void *tz)
{
	struct timespec ts;
	int			rc;

	if (handler_depth == 0 && next_gettimeofday != NULL)
	{
		rc = next_gettimeofday(tv, tz);
		if (rc == 0 && real_clock(CLOCK_REALTIME, &ts) == 0)
			fake_offset_ns = (tv->tv_sec - ts.tv_sec) * 1000000000LL +
				(tv->tv_usec * 1000LL - ts.tv_nsec);
		return rc;
	}
	rc = clock_gettime(CLOCK_REALTIME, &ts);
	if (rc == 0)
	{
		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = ts.tv_nsec / 1000;
	}
	return rc;
}
