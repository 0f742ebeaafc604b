#!/bin/bash
#
# bench/run.sh: how fast snowflake_next_id() is, next to the alternatives.
# Run as root on Debian 12 (like scripts/quickstart.sh); takes about two
# minutes.
#
# It runs scripts/setup.sh (install, build, install the extension), then
# starts its own throwaway server as the postgres user in a temporary folder
# under /var/tmp (on disk, not tmpfs, so that fsync costs what it costs),
# reachable only through a unix socket there, and removes it at the end.
# On that one server, in one run, it measures:
#
#  1. Bulk generation: SELECT count(f()) FROM (SELECT generate_series(1, N)) g
#     with N = 4,096,000, for snowflake_next_id(), nextval() of a plain
#     sequence, gen_random_uuid(), and generate_series alone (the cost of
#     the loop).  The query streams its rows, so it measures the generator.
#     Snowflake's layout allows 4096 IDs a millisecond, so 4,096,000 IDs
#     take at least 1000 ms: the run reports the share of that ceiling it
#     reaches (target: at least 95%, that is at most 1.05 s).
#  2. Raw speed: the same with snowflake.max_lead = 1 hour, so that the
#     generator runs ahead of the clock instead of waiting for the next
#     millisecond, which shows what it costs without the layout's ceiling.
#  3. The cost of the durable high-water mark: what the generating backend
#     loses to it, and, apart, what its background writer spends (see the
#     comment at that step for how it is measured, and why that way).
#  4. pgbench, 8 clients, INSERT INTO t DEFAULT VALUES into a table whose
#     key defaults to snowflake_next_id(), to an identity column (a sequence,
#     as bigserial) and to gen_random_uuid() (bench/insert_*.sql), with
#     synchronous_commit off so that commits do not all wait for the disk.
#
# Each measurement is repeated 3 times, the kinds interleaved so that drift
# of the machine hits them alike, and the median is reported (all runs are
# shown too).  Times are wall times taken on the server with
# clock_timestamp() (bench_ms() in bench/schema.sql).  Other work on the
# machine skews every figure, so the load average is printed first.
#
# It prints ratios and never fails a build: it exits 0 whatever it measures,
# and even when a measurement cannot be made (that one is shown as n/a).
# Only scripts/setup.sh failing makes it exit non-zero.
#
# Settings: SNOWFLAKE_BENCH_PGBENCH_SECONDS (default 4) is the length of one
# pgbench run.
#
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
	echo "bench/run.sh: run as root (it installs packages and the extension)" >&2
	exit 1
fi

echo "== setup: scripts/setup.sh"
scripts/setup.sh || { echo "bench/run.sh: scripts/setup.sh failed" >&2; exit 1; }

bindir=/usr/lib/postgresql/15/bin
port=54329
n=4096000
reps=3
pgbench_seconds=${SNOWFLAKE_BENCH_PGBENCH_SECONDS:-4}
pgbench_clients=8
pgbench_jobs=$(nproc 2>/dev/null || echo 1)
[ "$pgbench_jobs" -gt "$pgbench_clients" ] && pgbench_jobs=$pgbench_clients
# one hour, the largest snowflake.max_lead allows
raw_lead=3600000

work=$(mktemp -d /var/tmp/snowflake-bench.XXXXXX)
data=$work/data
cleanup()
{
	if [ -s "$work/strace.pid" ]; then
		for p in $(cat "$work/strace.pid"); do kill "$p" 2>/dev/null; done
	fi
	if [ -f "$data/postmaster.pid" ]; then
		(cd / && runuser -u postgres -- "$bindir/pg_ctl" -D "$data" -m immediate -w stop) >/dev/null 2>&1
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

as_postgres() { (cd / && runuser -u postgres -- "$@"); }
psql_() { "$bindir/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres -d postgres "$@"; }

# median VALUE...: the median of the values that are numbers, or n/a
median()
{
	printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a";
			else if (NR % 2) print v[(NR + 1) / 2];
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# calc FORMAT EXPRESSION NAME=VALUE...: evaluate EXPRESSION with awk and print
# it with FORMAT; n/a when a value is missing or n/a
calc()
{
	local fmt=$1 expr=$2 arg
	local -a vars=()
	shift 2
	for arg in "$@"; do
		case ${arg#*=} in
			'' | n/a) echo "n/a"; return ;;
		esac
		vars+=(-v "$arg")
	done
	awk "${vars[@]}" "BEGIN { printf \"$fmt\", $expr }" 2>/dev/null || echo "n/a"
}

# ---------------------------------------------------------------------------
echo "== starting a throwaway server in $work (unix socket only, port $port)"
chown postgres:postgres "$work"
chmod 0700 "$work"
if ! as_postgres "$bindir/initdb" -D "$data" -U postgres -A trust -E UTF8 \
	--locale=C.UTF-8 --no-sync >"$work/initdb.log" 2>&1; then
	echo "bench/run.sh: initdb failed:"
	cat "$work/initdb.log"
	exit 0
fi
cat >>"$data/postgresql.conf" <<EOF

# --- bench/run.sh ---
listen_addresses = ''
unix_socket_directories = '$work'
port = $port
shared_preload_libraries = 'snowflake'
snowflake.datacenter_id = 1
snowflake.worker_id = 1
# the mark's cost is an fsync: keep fsync on, as in production
fsync = on
# keep background work out of the timings
autovacuum = off
jit = off
# keep the WAL of the bulk runs, where the mark writes are counted
wal_keep_size = '1GB'

EOF
if ! as_postgres "$bindir/pg_ctl" -D "$data" -l "$work/server.log" -w -t 60 start >/dev/null; then
	echo "bench/run.sh: the server did not start:"
	tail -n 20 "$work/server.log"
	exit 0
fi
if ! psql_ -f bench/schema.sql; then
	echo "bench/run.sh: could not create the benchmark schema"
	exit 0
fi
echo "   $(psql_ -c 'SELECT version()' | cut -d, -f1)"
echo "   $(nproc) CPUs, Linux $(uname -r), data on $(stat -f -c %T "$work"), load average" \
	"$(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews every figure)"

# ---------------------------------------------------------------------------
# Bulk generation.  bulk EXPR [SQL before [SETTLE_MS]]: prints the
# milliseconds that SELECT count(EXPR) FROM (SELECT generate_series(1, n)) g
# takes, the WAL positions before and after (to count the durable marks
# written meanwhile), and how far the last ID ran ahead of the clock.
#
# After a run with a large max_lead the generator is ahead of the clock, and
# the durable mark up to 1000 ms further: the session sleeps out the lead
# and SETTLE_MS more, so that the next run starts as if the raw run had not
# happened (level with the clock, and due for a new mark).
bulk()
{
	local expr=$1 before=${2:-} settle_ms=${3:-0} lead_sql=0
	case $expr in
		snowflake*) lead_sql="greatest(0, round(1000 * extract(epoch FROM
			(snowflake_parse(snowflake_last_id())).ts - clock_timestamp())))" ;;
	esac
	psql_ <<EOF 2>>"$work/errors.log" | tail -n 1
$before
SELECT pg_current_wal_insert_lsn() AS lsn0 \gset
SELECT round(bench_ms(\$q\$SELECT count($expr) FROM (SELECT generate_series(1, $n)) g\$q\$)::numeric, 1) AS ms \gset
SELECT pg_current_wal_insert_lsn() AS lsn1 \gset
-- get the WAL flushed, so that pg_waldump can read those records
SELECT txid_current() AS xid \gset
SELECT bench_wait_flushed(:'lsn1') AS flushed \gset
SELECT $lead_sql AS lead \gset
SELECT pg_sleep((:lead + $settle_ms) / 1000.0 + 0.005) AS slept \gset
\echo :ms :lsn0 :lsn1 :lead
EOF
}

# mark_writes LSN0 LSN1: the marks written between two WAL positions, one
# WAL record of snowflake's resource manager (custom146) each
mark_writes()
{
	"$bindir/pg_waldump" -p "$data/pg_wal" -s "$1" -e "$2" 2>/dev/null |
		grep -c '^rmgr: custom146 '
}

declare -A ms writes
kinds="snowflake nextval uuid loop raw"
declare -A expr=(
	[snowflake]="snowflake_next_id()"
	[nextval]="nextval('bench_seq')"
	[uuid]="gen_random_uuid()"
	[loop]="*"
	[raw]="snowflake_next_id()"
)
declare -A label=(
	[snowflake]="snowflake_next_id()"
	[nextval]="nextval('bench_seq')"
	[uuid]="gen_random_uuid()"
	[loop]="count(*): the loop alone"
	[raw]="snowflake_next_id(), max_lead 1 h"
)

echo
echo "== bulk generation: SELECT count(f()) FROM (SELECT generate_series(1, $n)) g, $reps runs each"
for rep in $(seq 1 $reps); do
	printf '   run %d/%d:' "$rep" "$reps"
	sep=""
	for k in $kinds; do
		before="" settle=0
		[ "$k" = raw ] && before="SET snowflake.max_lead = $raw_lead;" settle=1000
		read -r m l0 l1 ahead < <(bulk "${expr[$k]}" "$before" "$settle")
		ms[$k,$rep]=${m:-n/a}
		writes[$k,$rep]="n/a"
		if [ "${expr[$k]}" = "snowflake_next_id()" ] && [ -n "${l0:-}" ] && [ -n "${l1:-}" ]; then
			writes[$k,$rep]=$(mark_writes "$l0" "$l1")
		fi
		printf '%s %s %s ms' "${sep:-}" "$k" "${ms[$k,$rep]}"
		sep=","
	done
	echo
done

# ---------------------------------------------------------------------------
# The cost of the durable high-water mark.
#
# The generator keeps a durable mark 1000 ms of ID time ahead of the IDs and
# moves it once generation comes within 500 ms of it.  Moving it is a
# 32-byte file written and durably renamed (PostgreSQL's durable_rename:
# fsyncs of the file, the new name and the folder), then one small WAL
# record, inserted and flushed (there is no synchronous standby here to
# wait for).  That work
# is done by the mark writer, a background worker.  The backend that sees
# generation come near the mark only sets the writer's latch (SetLatch,
# which signals the writer with kill() if it is asleep) and goes on
# generating below the old mark.  A backend writes a mark itself, or waits
# on mark_lock for the writer, only when it reaches the mark: when the
# writer is not running or is slower than generation, or at the first ID
# after a minute without IDs (for a minute after the last ID the writer
# keeps the mark ahead of the clock).  The runs here come within seconds of
# each other, so the writer writes every mark.
#
# Where to look.  At the 4096 IDs/ms ceiling the generator waits for the
# next millisecond for part of every millisecond, and a mark write mostly
# takes time that would have gone to that wait: timing the ceiling runs
# would hide the cost.  With max_lead at one hour the generator never
# waits, and ID time runs faster than wall time (by raw speed over 4096
# IDs/ms), so marks also come more often per second than at the ceiling:
# the worst case, where the mark's share of the time is largest and the
# writer is most likely to fall behind.  Those are the runs measured.
#
# What is lost.  Bulk generation loses the wall time its backend spends on
# the mark (waking the writer, any mark it writes itself, any wait for the
# writer) over the wall time of the run.  The writer's own work is not on
# that path: it runs in another process, on another core, while the backend
# goes on.  It is measured and shown apart, not counted as a loss.  It can
# still slow generation down by taking a CPU the backend wanted (with 2
# CPUs, the writer shares the second one with the WAL writer, psql and,
# here, strace), so the time the backend waited for a CPU is shown too.
#
# How.  Three more raw-speed runs, each with strace -f -w -c attached to two
# processes (and /proc/PID/schedstat read before and after):
#   the generating backend: only the syscalls through which the mark can
#       reach it: kill and tgkill (waking the writer), the file syscalls,
#       write, pwrite64, close, fsync and fdatasync (a mark it writes
#       itself, with its WAL flush), and futex (waiting on mark_lock).  It
#       makes no other syscalls while it generates (the clock is read
#       through the vDSO; a full strace shows only a few reads, opens and
#       stats of catalog files as the query starts, and those opens and
#       stats are counted here), so strace stops it only around the mark,
#       but each stop adds time: the share is an upper bound.  Its median over the runs is the
#       headline.  schedstat adds the time the backend spent runnable but
#       waiting for a CPU, whatever took the CPU: an upper bound on what
#       the writer's CPU use cost it.
#   the mark writer (postgres: snowflake mark writer, a child of this
#       server's postmaster): every syscall but epoll_wait, where it sleeps
#       on its latch, that is its wall time per mark it wrote (renames);
#       and from schedstat the CPU time it used.  Off the generating path.
# The marks of each run are counted exactly, as WAL records (pg_waldump);
# the renames in the two traces tell who wrote them.
#
# Without tracing, a small C program replays the file part of a mark write
# (open, write, fsync, close, then durable_rename's opens, fsyncs and
# rename) 200 times on a 32-byte file in the same data folder: what one mark
# costs the writer in disk time, without strace's overhead and without the
# WAL flush.  Times the marks of the untraced runs, over their time, that is
# the share of a run the writer spends writing mark files, in parallel with
# generation; it is not a loss of the generating backend.
echo
echo "== the durable mark's cost"

# the mark writer of this server: a child of its postmaster (matched on its
# process title field by field, so that nothing matches its own command line)
writer_pid=$(ps -eo pid=,ppid=,cmd= | awk -v pm="$(head -n 1 "$data/postmaster.pid")" \
	'$2 == pm && $3 == "postgres:" && $4 == "snowflake" && $5 == "mark" && $6 == "writer" { print $1; exit }')

# trace.sh start|stop TAG: attach strace to the backend ($BENCH_BACKEND_PID)
# and the mark writer ($BENCH_WRITER_PID, if any) and read their schedstat;
# then read it again and detach.  Run by psql's \! between the statements.
cat >"$work/trace.sh" <<'EOF'
#!/bin/bash
w=$BENCH_WORK tag=$2
pid_of() { if [ "$1" = backend ]; then echo "$BENCH_BACKEND_PID"; else echo "${BENCH_WRITER_PID:-}"; fi; }
trace_of() { if [ "$1" = backend ]; then echo "$BENCH_BACKEND_TRACE"; else echo "$BENCH_WRITER_TRACE"; fi; }
case $1 in
start)
	for who in backend writer; do
		pid=$(pid_of $who)
		[ -n "$pid" ] || continue
		strace -f -w -c -e "trace=$(trace_of $who)" -o "$w/strace.$who.$tag" -p "$pid" \
			</dev/null >/dev/null 2>"$w/strace.$who.$tag.err" &
		echo $! >>"$w/strace.pid"
	done
	for who in backend writer; do
		[ -n "$(pid_of $who)" ] || continue
		i=0
		while [ $i -lt 100 ] && ! grep -q attached "$w/strace.$who.$tag.err"; do
			sleep 0.02; i=$((i + 1))
		done
	done
	for who in backend writer; do
		pid=$(pid_of $who)
		[ -n "$pid" ] && cat "/proc/$pid/schedstat" >"$w/sched.$who.$tag.0" 2>/dev/null
	done
	;;
stop)
	for who in backend writer; do
		pid=$(pid_of $who)
		[ -n "$pid" ] && cat "/proc/$pid/schedstat" >"$w/sched.$who.$tag.1" 2>/dev/null
	done
	for p in $(cat "$w/strace.pid"); do kill -INT "$p" 2>/dev/null; done
	for p in $(cat "$w/strace.pid"); do
		i=0
		while [ $i -lt 100 ] && kill -0 "$p" 2>/dev/null; do sleep 0.02; i=$((i + 1)); done
	done
	: >"$w/strace.pid"
	;;
esac
exit 0
EOF

# strace_sum FILE COLUMN REGEX: the sum of a column of strace -c's summary
# (2: seconds, 4: calls) over the syscalls matching REGEX; 0 for an empty
# summary (strace prints none when nothing it traced was called)
strace_sum()
{
	awk -v col="$2" -v re="$3" '$1 ~ /^[0-9.]+$/ && $NF != "total" && $NF ~ re { s += $col }
		END { printf "%.6g\n", s + 0 }' "$1" 2>/dev/null
}
# sched_ms TAG WHO FIELD: milliseconds a /proc/PID/schedstat field grew by
# (1: on a CPU, 2: runnable, waiting for a CPU), or n/a
sched_ms()
{
	local a b
	a=$(cut -d' ' -f"$3" "$work/sched.$2.$1.0" 2>/dev/null)
	b=$(cut -d' ' -f"$3" "$work/sched.$2.$1.1" 2>/dev/null)
	calc '%.3f' "(b - a) / 1000000" "a=$a" "b=$b"
}

backend_trace='%file,write,pwrite64,close,fsync,fdatasync,kill,tgkill,futex'
writer_trace='!epoll_wait,epoll_pwait'
declare -A t_ms t_marks b_ms b_inline b_fsyncs b_wakes b_wake_ms b_futex b_futex_ms b_cpu_wait
declare -A w_ms w_marks w_cpu t_loss
insitu_note=""
if ! command -v strace >/dev/null 2>&1; then
	insitu_note="strace is not installed"
else
	echo "   $reps more raw-speed runs, strace -f -w -c attached to the backend and to the mark writer" \
		"($(if [ -n "$writer_pid" ]; then echo "pid $writer_pid"; else echo "not running"; fi))"
	: >"$work/strace.pid"
	for rep in $(seq 1 $reps); do
		BENCH_WORK=$work BENCH_WRITER_PID=$writer_pid BENCH_BACKEND_TRACE=$backend_trace \
			BENCH_WRITER_TRACE=$writer_trace psql_ <<EOF >"$work/insitu.$rep" 2>>"$work/errors.log"
SET snowflake.max_lead = $raw_lead;
SELECT pg_backend_pid() AS pid \gset
\setenv BENCH_BACKEND_PID :pid
\! bash "\$BENCH_WORK/trace.sh" start $rep
SELECT pg_current_wal_insert_lsn() AS lsn0 \gset
SELECT round(bench_ms(\$q\$SELECT count(snowflake_next_id()) FROM (SELECT generate_series(1, $n)) g\$q\$)::numeric, 1) AS ms \gset
SELECT pg_current_wal_insert_lsn() AS lsn1 \gset
\! bash "\$BENCH_WORK/trace.sh" stop $rep
SELECT txid_current() AS xid \gset
SELECT bench_wait_flushed(:'lsn1') AS flushed \gset
SELECT greatest(0, round(1000 * extract(epoch FROM (snowflake_parse(snowflake_last_id())).ts - clock_timestamp()))) AS lead \gset
SELECT pg_sleep((:lead + 1000) / 1000.0 + 0.005) AS slept \gset
\echo :ms :lsn0 :lsn1
EOF
		read -r m l0 l1 < <(tail -n 1 "$work/insitu.$rep")
		t_ms[$rep]=n/a t_marks[$rep]=n/a t_loss[$rep]=n/a
		b_ms[$rep]=n/a b_inline[$rep]=n/a b_fsyncs[$rep]=n/a b_wakes[$rep]=n/a
		b_wake_ms[$rep]=n/a b_futex[$rep]=n/a b_futex_ms[$rep]=n/a b_cpu_wait[$rep]=n/a
		w_ms[$rep]=n/a w_marks[$rep]=n/a w_cpu[$rep]=n/a
		if [ -n "${l0:-}" ] && [ -n "${l1:-}" ]; then
			t_marks[$rep]=$(mark_writes "$l0" "$l1")
		fi
		# strace says "detached" when it summed up: an empty summary is then no calls
		f=$work/strace.backend.$rep
		if grep -q detached "$f.err" 2>/dev/null && [ -n "${m:-}" ]; then
			t_ms[$rep]=$m
			b_ms[$rep]=$(calc '%.3f' 's * 1000' "s=$(strace_sum "$f" 2 .)")
			b_inline[$rep]=$(strace_sum "$f" 4 '^rename')
			b_fsyncs[$rep]=$(strace_sum "$f" 4 '^f(data)?sync$')
			b_wakes[$rep]=$(strace_sum "$f" 4 '^t?g?kill$')
			b_wake_ms[$rep]=$(calc '%.3f' 's * 1000' "s=$(strace_sum "$f" 2 '^t?g?kill$')")
			b_futex[$rep]=$(strace_sum "$f" 4 '^futex$')
			b_futex_ms[$rep]=$(calc '%.3f' 's * 1000' "s=$(strace_sum "$f" 2 '^futex$')")
			b_cpu_wait[$rep]=$(sched_ms "$rep" backend 2)
			t_loss[$rep]=$(calc '%.3f' "s / m * 100" "s=${b_ms[$rep]}" "m=$m")
		elif [ -z "$insitu_note" ]; then
			insitu_note="strace could not trace the backend: $(head -n 1 "$f.err" 2>/dev/null)"
		fi
		f=$work/strace.writer.$rep
		if [ -n "$writer_pid" ] && grep -q detached "$f.err" 2>/dev/null; then
			w_ms[$rep]=$(calc '%.3f' 's * 1000' "s=$(strace_sum "$f" 2 .)")
			w_marks[$rep]=$(strace_sum "$f" 4 '^rename')
			w_cpu[$rep]=$(sched_ms "$rep" writer 1)
		fi
	done
	: >"$work/strace.pid"
fi

# replay: the file part of one mark write, untraced, with a small C program
echo "   timing 200 mark file writes replayed by a C program in the data folder"
cat >"$work/mark_replay.c" <<'EOF'
/* The syscalls of one snowflake mark write, as snowflake_write_mark_file()
 * and PostgreSQL's durable_rename() make them, timed n times. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* fsync_fname_ext(): open, fsync, close; a file that is not there is skipped */
static void fsync_path(const char *path, int flags)
{
	int fd = open(path, flags);
	if (fd < 0 && errno == ENOENT)
		return;
	if (fd < 0 || fsync(fd) != 0) { perror(path); exit(1); }
	close(fd);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int n = atoi(argv[2]);
	double *us = calloc(n, sizeof(double));
	char buf[32];

	if (chdir(argv[1]) != 0) { perror(argv[1]); return 1; }
	memset(buf, 0x5a, sizeof(buf));
	for (int i = -10; i < n; i++)	/* 10 warm-up writes */
	{
		struct timespec t0, t1;
		int fd;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		fd = open("bench_mark.tmp", O_CREAT | O_WRONLY | O_TRUNC, 0600);
		if (fd < 0 || write(fd, buf, sizeof(buf)) != sizeof(buf) || fsync(fd) != 0)
		{ perror("bench_mark.tmp"); return 1; }
		close(fd);
		/* durable_rename: the source, the old target, rename, the new name, the folder */
		fsync_path("bench_mark.tmp", O_RDWR);
		fsync_path("bench_mark", O_RDWR);
		if (rename("bench_mark.tmp", "bench_mark") != 0) { perror("rename"); return 1; }
		fsync_path("bench_mark", O_RDWR);
		fsync_path(".", O_RDONLY);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (i >= 0)
			us[i] = (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3;
	}
	unlink("bench_mark");
	qsort(us, n, sizeof(double), cmp);
	printf("%.1f %.1f %.1f\n", us[n / 2], us[0], us[n - 1]);
	return 0;
}
EOF
replay_us="n/a"; replay_min_us="n/a"; replay_max_us="n/a"
if gcc -O2 -o "$work/mark_replay" "$work/mark_replay.c" 2>>"$work/errors.log"; then
	read -r replay_us replay_min_us replay_max_us < <(as_postgres "$work/mark_replay" "$data" 200 2>>"$work/errors.log")
fi
replay_us=${replay_us:-n/a}

# ---------------------------------------------------------------------------
# pgbench: 8 clients inserting one row a transaction.  synchronous_commit is
# off for these sessions: with it on, every client waits for a WAL flush at
# each commit and all three tables measure the disk, not their keys.
echo
echo "== pgbench: $pgbench_clients clients, $pgbench_jobs threads, ${pgbench_seconds} s a run, INSERT INTO t DEFAULT VALUES, $reps runs each"
declare -A tps failed
pgbench_kinds="snowflake identity uuid"
for rep in $(seq 1 $reps); do
	printf '   run %d/%d:' "$rep" "$reps"
	sep=""
	for k in $pgbench_kinds; do
		out=$(PGOPTIONS="-c synchronous_commit=off" "$bindir/pgbench" -n -M prepared \
			-c "$pgbench_clients" -j "$pgbench_jobs" -T "$pgbench_seconds" \
			-f "bench/insert_$k.sql" -h "$work" -p "$port" -U postgres postgres 2>&1)
		tps[$k,$rep]=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' <<<"$out")
		tps[$k,$rep]=${tps[$k,$rep]:-n/a}
		f=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")
		failed[$k]=$(( ${failed[$k]:-0} + ${f:-0} ))
		if [ "${tps[$k,$rep]}" = "n/a" ]; then
			echo "$out" | tail -n 5 >>"$work/errors.log"
		fi
		printf '%s %s %s tps' "$sep" "$k" "$(calc '%.0f' 't' "t=${tps[$k,$rep]}")"
		sep=","
	done
	echo
done

# ---------------------------------------------------------------------------
# Report
runs_of() # ARRAY KIND: "run1 / run2 / run3" of ARRAY[KIND,rep]
{
	local -n values=$1
	local k=$2 rep s=""
	for rep in $(seq 1 $reps); do s="$s${s:+ / }${values[$k,$rep]}"; done
	echo "$s"
}
declare -A med
for k in $kinds; do
	med[$k]=$(median $(for rep in $(seq 1 $reps); do echo "${ms[$k,$rep]}"; done))
done

echo
echo "================================================================================"
echo "Bulk generation of $n values, one statement, one backend; median of $reps runs"
echo "(M/s = millions of values a second, i.e. values a µs; x snowflake = speed"
echo "relative to snowflake_next_id() at its ceiling)"
echo
printf '  %-34s %9s  %-26s %7s %12s\n' "generator" "median ms" "runs (ms)" "M/s" "x snowflake"
for k in snowflake nextval uuid raw loop; do
	printf '  %-34s %9s  %-26s %7s %12s\n' "${label[$k]}" "${med[$k]}" "$(runs_of ms "$k")" \
		"$(calc '%.2f' "$n / m / 1000" "m=${med[$k]}")" \
		"$(calc '%.2fx' "s / m" "m=${med[$k]}" "s=${med[snowflake]}")"
done
echo
ceiling=$(calc '%.1f' "100000 / m" "m=${med[snowflake]}")
verdict=$(calc '%s' "(c >= 95) ? \"meets\" : \"MISSES\"" "c=$ceiling")
echo "  Layout ceiling: 4096 IDs/ms, so $n IDs take at least 1000 ms."
echo "  snowflake_next_id() reached $ceiling% of it (1000 ms / ${med[snowflake]} ms; target >= 95%: $verdict)."
echo "  Without the ceiling (max_lead = 1 h) it makes $(calc '%.2f' "$n / m / 1000" "m=${med[raw]}") IDs/µs, $(calc '%.2f' "1000 / m" "m=${med[raw]}")x the ceiling;"
echo "  net of the loop, one ID costs $(calc '%.0f' "(r - l) * 1000000 / $n" "r=${med[raw]}" "l=${med[loop]}") ns."

echo
echo "Durable mark (worst case: the raw-speed runs, where marks come most often)"
raw_writes=$(median $(for rep in $(seq 1 $reps); do echo "${writes[raw,$rep]}"; done))
ceil_writes=$(median $(for rep in $(seq 1 $reps); do echo "${writes[snowflake,$rep]}"; done))
printf '  marks written a run (WAL records): %s raw, %s at the ceiling\n' \
	"$(runs_of writes raw)" "$(runs_of writes snowflake)"
# runs1 ARRAY: "run1 / run2 / run3" of ARRAY[rep]; total ARRAY: their sum,
# or n/a if one is missing
runs1()
{
	local -n values=$1
	local rep s=""
	for rep in $(seq 1 $reps); do s="$s${s:+ / }${values[$rep]:-n/a}"; done
	echo "$s"
}
total()
{
	local -n values=$1
	local rep
	for rep in $(seq 1 $reps); do echo "${values[$rep]:-n/a}"; done |
		awk '!/^[0-9.]+$/ { bad = 1 } { s += $1 } END { if (bad || NR == 0) print "n/a"; else printf "%.6g\n", s }'
}
loss=$(median $(for rep in $(seq 1 $reps); do echo "${t_loss[$rep]:-n/a}"; done))
all_ms=$(total t_ms)
share() { calc '%.3f' "x / m * 100" "x=$1" "m=$all_ms"; }  # share X: X ms in % of the traced runs
if [ "$loss" = n/a ]; then
	echo "  traced runs: n/a (${insitu_note:-no run could be traced})"
else
	echo "  traced raw runs (strace -f -w -c on the backend and the writer): $(runs1 t_ms) ms,"
	echo "    $(runs1 t_marks) marks (WAL records): $(runs1 b_inline) written by the backend itself," \
		"$(runs1 w_marks) by the writer"
	echo "  generating backend, time in the mark's syscalls (strace -w: an upper bound):"
	echo "    $(runs1 b_ms) ms = $(runs1 t_loss)% of the run; over the $reps runs:"
	echo "    - waking the writer (SetLatch: kill): $(total b_wakes) calls, $(total b_wake_ms) ms," \
		"$(share "$(total b_wake_ms)")% of the time"
	echo "    - waiting on mark_lock for the writer (futex): $(total b_futex) calls, $(total b_futex_ms) ms"
	rest=$(calc '%.3f' 'a - b - c' "a=$(total b_ms)" "b=$(total b_wake_ms)" "c=$(total b_futex_ms)")
	echo "    - writing marks itself ($(total b_inline), with $(total b_fsyncs) fsyncs), and the opens as each query starts:"
	echo "      $rest ms, $(share "$rest")% of the time"
	echo "    runnable but waiting for a CPU, whatever held it (the writer, the WAL writer, psql, strace):"
	echo "    $(runs1 b_cpu_wait) ms, $(share "$(total b_cpu_wait)")% of the time"
fi
w_per_mark=$(calc '%.3f' "w / c" "w=$(total w_ms)" "c=$(total w_marks)")
echo "  mark writer, OFF the generating path (its own process, in parallel, on another CPU):"
if [ -z "$writer_pid" ]; then
	echo "    n/a: the mark writer is not running (the backend then writes every mark itself, counted above)"
elif [ "$(total w_ms)" = n/a ]; then
	echo "    n/a: ${insitu_note:-strace could not trace it: $(head -n 1 "$work/strace.writer.1.err" 2>/dev/null)}"
else
	echo "    $(runs1 w_ms) ms in syscalls (all but its sleep) for $(runs1 w_marks) marks:"
	echo "    $w_per_mark ms a mark (strace -w, with the WAL flush), busy $(share "$(total w_ms)")% of the time;"
	echo "    CPU time it used: $(runs1 w_cpu) ms.  With $(nproc) CPUs it can still delay"
	echo "    generation by taking a CPU the backend wanted: see the backend's wait for a CPU above."
fi
echo "    untraced, the file part of one mark write (C replay, median of 200) takes" \
	"$(calc '%.3f' 'u / 1000' "u=$replay_us") ms ($(calc '%.3f' 'u / 1000' "u=$replay_min_us")-$(calc '%.3f' 'u / 1000' "u=$replay_max_us") ms);"
echo "    with the untraced runs' marks, the writer spends" \
	"$(calc '%.3f' "w * u / 1000 / m * 100" "w=$raw_writes" "u=$replay_us" "m=${med[raw]}")% of a raw run and" \
	"$(calc '%.3f' "w * u / 1000 / m * 100" "w=$ceil_writes" "u=$replay_us" "m=${med[snowflake]}")%"
echo "    of a ceiling run writing mark files"
echo "  => bulk generation loses $loss% to the mark (target <= 2%:" \
	"$(calc '%s' "(x <= 2) ? \"meets\" : \"MISSES\"" "x=$loss"))."
echo "     That is the generating backend's own time (median of the traced runs); the mark writer's"
echo "     $w_per_mark ms a mark is spent off the generating path, in parallel."

echo
echo "pgbench: $pgbench_clients clients, INSERT INTO t DEFAULT VALUES, synchronous_commit = off,"
echo "${pgbench_seconds} s a run; median of $reps runs"
echo
declare -A tmed
for k in $pgbench_kinds; do
	tmed[$k]=$(median $(for rep in $(seq 1 $reps); do echo "${tps[$k,$rep]}"; done))
done
declare -A tlabel=(
	[snowflake]="id bigint DEFAULT snowflake_next_id()"
	[identity]="id bigint GENERATED ... AS IDENTITY"
	[uuid]="id uuid DEFAULT gen_random_uuid()"
)
printf '  %-40s %10s  %-24s %12s %7s\n' "key" "median tps" "runs (tps)" "x snowflake" "errors"
for k in $pgbench_kinds; do
	runs=""
	for rep in $(seq 1 $reps); do
		runs="$runs${runs:+ / }$(calc '%.0f' t "t=${tps[$k,$rep]}")"
	done
	printf '  %-40s %10s  %-24s %12s %7s\n' "${tlabel[$k]}" "$(calc '%.0f' t "t=${tmed[$k]}")" "$runs" \
		"$(calc '%.2fx' "t / s" "t=${tmed[$k]}" "s=${tmed[snowflake]}")" "${failed[$k]}"
done
echo "================================================================================"
if [ -s "$work/errors.log" ]; then
	echo
	echo "Some measurements failed (n/a above):"
	head -n 20 "$work/errors.log" | sed 's/^/  /'
fi
exit 0
