#!/bin/bash
# bench/profile.sh [--pg-config FILE] [--sessions N]: where one
# snowflake_next_id() spends its time.  On a throwaway server of the
# PostgreSQL whose pg_config is FILE (default: $PG_CONFIG, else pg_config on
# $PATH), N sessions (default 1) draw IDs ahead of the clock (max_lead 1 h,
# so that the lead never runs out) in the form of bench/bulk_snowflake.sql,
# and perf records their backends for 3 s.  It prints the functions that
# took the most samples, and the time of one ID in one session over
# 4,096,000 IDs (so that a share reads as nanoseconds; with N sessions, the
# time of one ID in one of them, measured while they all run), then the
# hottest instructions of snowflake_claim_ticks.  As root (perf needs it)
# the server runs as postgres.  Installs nothing; needs perf (Debian's
# linux-perf).  See docs/performance.md.
set -euo pipefail
pgc=${PG_CONFIG:-pg_config}; sessions=1
while [ $# -gt 0 ]; do case $1 in --pg-config) pgc=$2; shift ;; --sessions) sessions=$2; shift ;;
	*) echo "usage: bench/profile.sh [--pg-config FILE] [--sessions N]" >&2; exit 2 ;; esac; shift; done
command -v perf >/dev/null || { echo "bench/profile.sh: perf is missing (apt-get install linux-perf)" >&2; exit 2; }
bin=$("$pgc" --bindir)
as_server() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
dir=$(mktemp -d /var/tmp/snowflake-profile.XXXXXX); chmod 755 "$dir"
[ "$(id -u)" -eq 0 ] && chown postgres "$dir"
trap 'as_server "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || :; rm -rf "$dir"' EXIT
as_server "$bin/initdb" -D "$dir/data" -A trust >/dev/null
printf "%s\n" "shared_preload_libraries = 'snowflake'" "listen_addresses = ''" "unix_socket_directories = '$dir'" \
	"jit = off" >>"$dir/data/postgresql.conf"
as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w start >/dev/null
psql() { as_server "$bin/psql" -h "$dir" -d postgres -XAtq -v ON_ERROR_STOP=1 "$@"; }
psql -c "CREATE EXTENSION snowflake" -c "SELECT snowflake_next_id()" >/dev/null
# N sessions: each first draws 4,096,000 IDs, timed, then a long run to
# profile; the first session's timing is the one reported
for i in $(seq "$sessions"); do
	psql -c "SET snowflake.max_lead = '1h'" -c '\timing on' \
		-c 'SELECT count(snowflake_next_id()) FROM (SELECT generate_series(1, 4096000)) g' \
		-c 'SELECT count(snowflake_next_id()) FROM (SELECT generate_series(1, 200000000)) g' >"$dir/session$i.out" 2>&1 &
done
pids=
for _ in $(seq 100); do
	pids=$(psql -c "SELECT string_agg(pid::text, ',') FROM pg_stat_activity WHERE query LIKE '%200000000%' AND pid <> pg_backend_pid() HAVING count(*) = $sessions")
	[ -n "$pids" ] && break; sleep 0.1
done
[ -n "$pids" ] || { echo "bench/profile.sh: the sessions did not start" >&2; exit 1; }
sleep 1
perf record -q -p "$pids" -o "$dir/perf.data" -- sleep 3 >/dev/null 2>&1
psql -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%200000000%' AND pid <> pg_backend_pid()" >/dev/null
wait || :
ms=$(awk '/^Time:/ { print $2; exit }' "$dir/session1.out")
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $("$bin/postgres" --version). Command: bench/profile.sh --pg-config $pgc --sessions $sessions."
awk -v ms="$ms" -v s="$sessions" 'BEGIN { printf "%d session(s), max_lead 1 h: 4096000 IDs in one session in %.0f ms, %.1f ns an ID (with the executor'"'"'s share).\n\n", s, ms, ms * 1e6 / 4096000 }'
ns=$(awk -v ms="$ms" 'BEGIN { print ms * 1e6 / 4096000 }')
# by function: snowflake's, the clock's and PostgreSQL's named ones of 1% or
# more; the rest of PostgreSQL (its static functions have no symbol in a
# stripped build) and of the kernel in one line each
echo "| share of the samples | ns an ID | where | function |"
echo "|---|---|---|---|"
perf report -i "$dir/perf.data" --no-children --sort dso,symbol --stdio 2>/dev/null |
	awk -v ns="$ns" '
	/^ +[0-9.]+%/ { p = $1; sub("%", "", p); dso = $2; sym = $4
		if (dso == "snowflake.so" || dso == "[vdso]" || (dso ~ /^libc/ && p >= 0.5) || (sym !~ /^0x/ && p >= 1))
			printf "| %.1f%% | %.1f | %s | %s |\n", p, p * ns / 100, dso, sym
		else { rest[dso] += p } }
	END { for (d in rest) if (rest[d] >= 0.05) printf "| %.1f%% | %.1f | %s | all else |\n", rest[d], rest[d] * ns / 100, d }'
# within snowflake_claim_ticks: its instructions of 3% of its samples or
# more, with the one before each, which the time is usually for (a sample
# lands on the instruction after the one that stalled)
echo
echo "Within snowflake_claim_ticks, the instructions with 3% of its samples or more:"
echo
echo "| share of the function | the instruction before | the instruction sampled |"
echo "|---|---|---|"
perf annotate -i "$dir/perf.data" --stdio -s snowflake_claim_ticks 2>/dev/null |
	awk -F: '/^ +[0-9.]+ +: +[0-9a-f]+: / { p = $1 + 0; ins = $3; sub(/^ +/, "", ins); gsub(/[|]/, "/", ins)
		if (p >= 3) printf "| %.1f%% | `%s` | `%s` |\n", p, prev, ins; prev = ins }'
