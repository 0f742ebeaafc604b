#!/bin/bash
#
# bench/run.sh [--quick]: how fast snowflake IDs are made, next to the usual
# alternatives, on a throwaway server.  Installs nothing: build and install
# the extension first (scripts/setup.sh).  Run as a user that may run initdb
# (as root it re-runs itself as postgres).  Prints Markdown; never fails.
#
# Bulk: SELECT count(EXPR) FROM (SELECT generate_series(1, N / sessions)) g,
# from the files bench/bulk_*.sql, in 1, 2 and 8 sessions at once (pgbench),
# as total IDs per second.  Inserts: pgbench, 8 clients, bench/insert_*.sql.  Index:
# bytes per row and leaf fill of each key after the inserts.  Contenders are
# interleaved over the rounds so that the machine's drift hits them alike;
# the table shows medians, the spread (slowest to fastest round, in % of the
# median) and ratios against nextval() CACHE 1.  --quick: under 2 minutes;
# the full run: about 12.
#
set -uo pipefail
cd "$(dirname "$0")"
if [ "$(id -u)" -eq 0 ]; then
	tmp=$(mktemp -d); chown postgres "$tmp"
	BENCH_OUT=$tmp runuser -u postgres -- "$PWD/run.sh" "$@"
	cp "$tmp/bulk.png" . 2>/dev/null; rm -rf "$tmp"; exit 0
fi
bin=$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)
quick=0; [ "${1:-}" = --quick ] && quick=1
rounds=$((quick ? 2 : 5)); n=$((quick ? 409600 : 4096000)); secs=$((quick ? 3 : 10))
rows=$((quick ? 200000 : 1000000))
dir=$(mktemp -d /var/tmp/snowflake-bench.XXXXXX); out=${BENCH_OUT:-$PWD}
trap '"$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1; rm -rf "$dir"' EXIT
"$bin/initdb" -D "$dir/data" -A trust >/dev/null || exit 0
cat >>"$dir/data/postgresql.conf" <<CONF
shared_preload_libraries = 'snowflake'
listen_addresses = ''
unix_socket_directories = '$dir'
max_connections = 40
shared_buffers = 256MB
synchronous_commit = off
CONF
"$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w start >/dev/null || exit 0
export PGHOST=$dir PGDATABASE=postgres
psql() { "$bin/psql" -XAtq -v ON_ERROR_STOP=1 "$@"; }
psql -f schema.sql >/dev/null || exit 0
has_batch=$(psql -c "SELECT count(*) FROM pg_proc WHERE proname = 'snowflake_next_ids'")
# contender name|file|settings (pgbench -D does not set GUCs: PGOPTIONS does)
contenders="count(1) floor|bulk_floor.sql|
nextval() CACHE 1|bulk_nextval.sql|
nextval() CACHE 100|bulk_nextval100.sql|
gen_random_uuid()|bulk_uuid.sql|
snowflake_next_id(), max_lead 0|bulk_snowflake.sql|-c snowflake.max_lead=0
snowflake_next_id(), max_lead 1000|bulk_snowflake.sql|-c snowflake.max_lead=1000"
[ "$has_batch" = 1 ] && contenders="$contenders
snowflake_next_ids(1000), per ID|bulk_snowflake_batch.sql|-c snowflake.max_lead=0"
# bulk NAME FILE OPTS SESSIONS: total IDs per second of one pgbench run
bulk() {
	PGOPTIONS="$3" "$bin/pgbench" -n -f "$2" -D n=$((n / $4)) -c "$4" -j "$4" -t 1 2>/dev/null |
		awk -v n=$((n / $4)) '/^tps/ { printf "%.0f\n", $3 * n; exit }'
}
marks="SELECT marks_by_writer, marks_by_backends, extract(epoch FROM clock_timestamp()) FROM snowflake_status"
m0=$(psql -F' ' -c "$marks" 2>/dev/null)
: >"$dir/bulk"
for r in $(seq "$rounds"); do
	for s in 1 2 8; do
		while IFS='|' read -r name file opts; do
			echo "$name|$s|$(bulk "$name" "$file" "$opts" "$s")" >>"$dir/bulk"
		done <<<"$contenders"
	done
done
for k in snowflake identity uuid; do
	psql -c "TRUNCATE t_$k" >/dev/null
	for r in $(seq "$rounds"); do
		"$bin/pgbench" -n -f "insert_$k.sql" -c 8 -j 2 -T "$secs" 2>/dev/null |
			awk -v k="$k" '/^tps/ { printf "%s|8|%.0f\n", k, $3 }' >>"$dir/insert"
	done
done
psql -c "SELECT * FROM bench_fill($rows)" >"$dir/index" 2>/dev/null
m1=$(psql -F' ' -c "$marks" 2>/dev/null)
# median, spread and ratio against the first row's median, per group
summary() {
	sort -t'|' -k1,1 -k2,2n -k3,3n "$1" | awk -F'|' -v base="$2" -v ceil="$3" -v medians="$1.medians" '
	function flush() { if (k == "") return; m = v[int((c + 1) / 2)]; med[k] = m
		spread[k] = m ? 100 * (v[c] - v[1]) / m : 0; order[++o] = k }
	{ key = $1 "|" $2; if (key != k) { flush(); k = key; c = 0 } v[++c] = $3 }
	END { flush(); for (i = 1; i <= o; i++) { split(order[i], p, "|")
		b = med[base "|" p[2]]; share = (ceil && p[1] ~ /^snowflake/) ? sprintf(" (%.1f%% of the ceiling)", 100 * med[order[i]] / ceil) : ""
		print p[1] "|" p[2] "|" med[order[i]] > medians
		printf "| %s | %s | %.0f%s | %.1f%% | %s |\n", p[1], p[2], med[order[i]], share, spread[order[i]],
			b ? sprintf("%.2fx", med[order[i]] / b) : "n/a" } }'
}
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $("$bin/postgres" --version)."
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg). Command: bench/run.sh${1:+ $1}."
echo
echo "## Bulk: total IDs/s (median of $rounds rounds, N = $n)"
echo; echo "| contender | sessions | IDs/s | spread | x nextval() CACHE 1 |"; echo "|---|---|---|---|---|"
summary "$dir/bulk" "nextval() CACHE 1" 4096000
echo; echo "## pgbench INSERT ... DEFAULT VALUES, 8 clients, ${secs} s, synchronous_commit off (tps)"
echo; echo "| key | clients | tps | spread | x identity |"; echo "|---|---|---|---|---|"
summary "$dir/insert" identity 0
echo; echo "## Primary key after $rows rows"; echo
echo "| key | bytes per row | leaf fill % |"; echo "|---|---|---|"
awk -F'|' '{ printf "| %s | %s | %s |\n", $1, $2, $3 }' "$dir/index"
[ -n "$m0" ] && [ -n "$m1" ] && echo "$m0 $m1" | awk '{ t = $6 - $3
	printf "\n## Durable mark during the bulk runs (%.0f s)\n\n%.2f marks/s written by the mark writer, %.2f by backends\n", t, ($4 - $1) / t, ($5 - $2) / t }'
# the chart: total IDs/s against sessions, one line a contender
{
	echo "set terminal pngcairo noenhanced size 1000,560; set output '$out/bulk.png'"
	echo "set key outside; set logscale xy; set xrange [0.8:10]; set xtics (1, 2, 8)"
	echo "set xlabel 'sessions at once'; set ylabel 'IDs per second, all sessions (log)'"
	echo "set format y '%.1s%c'; set grid"
	printf "plot 4096000 title 'ceiling: 4096 IDs/ms per server' dashtype 2"
	i=0
	while IFS='|' read -r name file opts; do
		i=$((i + 1)); grep -F "$name|" "$dir/bulk.medians" | cut -d'|' -f2,3 | tr '|' ' ' >"$dir/c$i"
		printf ", '%s' using 1:2 with linespoints title '%s'" "$dir/c$i" "$name"
	done <<<"$contenders"
	echo
} >"$dir/chart.gp"
command -v gnuplot >/dev/null && gnuplot "$dir/chart.gp"
exit 0
