#!/bin/bash
# bench/profile.sh [--pg-config FILE]: where one snowflake_next_id() spends
# its time.  On a throwaway server of the PostgreSQL whose pg_config is FILE
# (default: $PG_CONFIG, else pg_config on $PATH), one session draws IDs ahead
# of the clock (max_lead 1 h, so that the lead never runs out) in the form
# of bench/bulk_snowflake.sql, and perf records that backend for 3 s.  It
# prints the functions that took 0.5% of the samples or more, and the time
# of one ID in the same session, so that a share reads as nanoseconds.  As
# root (perf needs it) the server runs as postgres.  Installs nothing;
# needs perf (Debian's linux-perf).  See docs/performance.md.
set -euo pipefail
pgc=${PG_CONFIG:-pg_config}
while [ $# -gt 0 ]; do case $1 in --pg-config) pgc=$2; shift ;;
	*) echo "usage: bench/profile.sh [--pg-config FILE]" >&2; exit 2 ;; esac; shift; done
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
# one session: first its time per ID over 4,096,000 IDs, then a long run to profile
psql -c "SET snowflake.max_lead = '1h'" -c '\timing on' \
	-c 'SELECT count(snowflake_next_id()) FROM (SELECT generate_series(1, 4096000)) g' \
	-c 'SELECT count(snowflake_next_id()) FROM (SELECT generate_series(1, 200000000)) g' >"$dir/session.out" 2>&1 &
session=$!
pid=
for _ in $(seq 100); do
	pid=$(psql -c "SELECT pid FROM pg_stat_activity WHERE query LIKE '%200000000%' AND pid <> pg_backend_pid()")
	[ -n "$pid" ] && break; sleep 0.1
done
[ -n "$pid" ] || { echo "bench/profile.sh: the session did not start" >&2; exit 1; }
sleep 1
perf record -q -p "$pid" -o "$dir/perf.data" -- sleep 3 >/dev/null 2>&1
psql -c "SELECT pg_cancel_backend($pid)" >/dev/null; wait "$session" || :
ms=$(awk '/^Time:/ { print $2; exit }' "$dir/session.out")
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $("$bin/postgres" --version). Command: bench/profile.sh --pg-config $pgc."
awk -v ms="$ms" 'BEGIN { printf "One session, max_lead 1 h: 4096000 IDs in %.0f ms, %.1f ns an ID (with the executor'"'"'s share).\n\n", ms, ms * 1e6 / 4096000 }'
echo "| share of the samples | ns an ID | where | function |"
echo "|---|---|---|---|"
perf report -i "$dir/perf.data" --no-children --sort dso,symbol --stdio 2>/dev/null |
	awk -v ns="$(awk -v ms="$ms" 'BEGIN { print ms * 1e6 / 4096000 }')" '
	/^ +[0-9.]+%/ { p = $1; sub("%", "", p); if (p + 0 < 0.5) next
		dso = $2; $1 = $2 = $3 = ""; sub(/^ +/, ""); printf "| %.1f%% | %.1f | %s | %s |\n", p, p * ns / 100, dso, $0 }'
