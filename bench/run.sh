#!/bin/bash
# bench/run.sh [--quick] [--out DIR] [--pg-config FILE]: how fast snowflake
# IDs are made next to the usual alternatives, on a throwaway server of the
# PostgreSQL whose pg_config is FILE (default: $PG_CONFIG, else pg_config on
# $PATH); on 18 and later uuidv7() too (see docs/performance.md).  Installs
# nothing.  Writes results.csv, summary.md and bulk.png into DIR (default: a
# new directory under /tmp, never the source tree) and prints summary.md.  As
# root it runs itself as postgres.  Any failure stops it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); quick=; out=; pgc=${PG_CONFIG:-pg_config}
while [ $# -gt 0 ]; do case $1 in --quick) quick=--quick ;; --out) out=$2; shift ;; --pg-config) pgc=$2; shift ;;
	*) echo "usage: bench/run.sh [--quick] [--out DIR] [--pg-config FILE]" >&2; exit 2 ;; esac; shift; done
command -v "$pgc" >/dev/null || { echo "bench/run.sh: no pg_config: $pgc" >&2; exit 2; }; pgc=$(command -v "$pgc")
[ -n "$out" ] || out=$(mktemp -d /tmp/snowflake-bench.XXXXXX); mkdir -p "$out"; out=$(cd "$out" && pwd)
if [ "$(id -u)" -eq 0 ]; then   # initdb refuses root
	tmp=$(mktemp -d); chown postgres "$tmp"; trap 'rm -rf "$tmp"' EXIT
	runuser -u postgres -- env BENCH_DEST="$out" "$here/run.sh" $quick --pg-config "$pgc" --out "$tmp"; cp "$tmp"/* "$out"; exit
fi
bin=$("$pgc" --bindir); cd "$here"
q=${quick:+1}; rounds=$((q ? 2 : 5)); n=$((q ? 409600 : 4096000)); secs=$((q ? 3 : 10)); rows=$((q ? 200000 : 1000000))
dir=$(mktemp -d /var/tmp/snowflake-bench.XXXXXX)
trap '"$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || :; rm -rf "$dir"' EXIT
"$bin/initdb" -D "$dir/data" -A trust >/dev/null
printf "%s\n" "shared_preload_libraries = 'snowflake'" "listen_addresses = ''" "unix_socket_directories = '$dir'" \
	"max_connections = 40" "shared_buffers = 256MB" "synchronous_commit = off" \
	"snowflake.max_lead = 1000" >>"$dir/data/postgresql.conf"
"$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w start >/dev/null
export PGHOST=$dir PGDATABASE=postgres
psql() { "$bin/psql" -XAtq -v ON_ERROR_STOP=1 "$@"; }
psql -f schema.sql >/dev/null; major=$(psql -c "SELECT current_setting('server_version_num')::int / 10000")
# contender|file|max_lead in ms ('' when not snowflake); pgbench -D sets no GUC: PGOPTIONS does.
# The server's max_lead is the largest a contender uses, as a user who wants
# bursts sets it: the mark writer keeps the mark ahead of it.
contenders="count(1) floor|bulk_floor.sql|
nextval() CACHE 1|bulk_nextval.sql|
nextval() CACHE 100|bulk_nextval100.sql|
gen_random_uuid()|bulk_uuid.sql|
snowflake_next_id() max_lead 0|bulk_snowflake.sql|0
snowflake_next_id() max_lead 1000|bulk_snowflake.sql|1000
snowflake_next_ids(1000) per ID|bulk_snowflake_batch.sql|0
snowflake_next_ids(1000) per ID max_lead 1000|bulk_snowflake_batch.sql|1000"; keys="snowflake identity uuid"
if [ "$major" -ge 18 ]; then contenders+=$'\nuuidv7()|bulk_uuidv7.sql|'; keys+=" uuidv7"; fi
# tps LINE...: pgbench's tps, or a loud failure
tps() { "$bin/pgbench" -n "$@" | awk '/^tps/ { t = $3 } END { if (t == "") exit 1; print t }'; }
marks="SELECT marks_by_writer || ',' || marks_by_backends || ',' || extract(epoch FROM clock_timestamp()) FROM snowflake_status"
m0=$(psql -c "$marks"); last=0; raw=$dir/rows   # results.csv less its header and pg_major
for r in $(seq $rounds); do for s in 1 2 8; do while IFS='|' read -r name file lead; do
	# a run with a lead, and any snowflake run after one, starts from a drained lead
	[ -n "$lead" ] && { wait=$((lead > last ? lead : last)); sleep "$(printf %d.%03d $((wait / 1000)) $((wait % 1000)))"; last=$lead; }
	t=$(PGOPTIONS=${lead:+-c snowflake.max_lead=$lead} tps -f "$file" -D n=$((n / s)) -c $s -j $s -t 1)
	echo "bulk,$name,$s,$r,$(awk -v t="$t" -v n=$((n / s)) 'BEGIN { printf "%.0f", t * n }')" >>"$raw"
done <<<"$contenders"; done; done
m1=$(psql -c "$marks")
for k in $keys; do psql -c "TRUNCATE t_$k"
	for r in $(seq $rounds); do echo "insert,$k,8,$r,$(tps -f "insert_$k.sql" -c 8 -j 2 -T $secs)" >>"$raw"; done; done
psql -F, -c "SELECT x.* FROM bench_fill($rows) f, LATERAL (VALUES ('index bytes/row', key, '', '',
	bytes_per_row), ('index leaf fill %', key, '', '', leaf_fill)) x" >>"$raw"
echo "$m0,$m1" | awk -F, '{ t = $6 - $3; printf "marks/s,by the mark writer,,,%.2f\nmarks/s,by backends,,,%.2f\nmarks/s,seconds,,,%.0f\nmarks,by backends,,,%d\n", ($4 - $1) / t, ($5 - $2) / t, t, $5 - $2 }' >>"$raw"
# the ceiling of two sessions on one shared word (bench/contention.c), with
# spells of the cost of one ID in one session at max_lead 1000
cc -O2 -pthread -o "$dir/contention" contention.c
ns=$(awk -F, '$2 == "snowflake_next_id() max_lead 1000" && $3 == 1 { print $5 }' "$raw" | sort -n |
	awk '{ v[NR] = $1 } END { print 1e9 / v[int((NR + 1) / 2)] }')
"$dir/contention" "$ns" | awk -v ns="$ns" '{ printf "contention,one thread,1,,%.0f\ncontention,two threads,2,,%.0f\ncontention,spell ns,,,%.1f\n", $1, $2, ns }' >>"$raw"
{ echo "bench,name,sessions,round,value,pg_major"; sed "s/\$/,$major/" "$raw"; } >"$out/results.csv"
{ echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $("$bin/postgres" --version) $("$pgc" --configure | grep -o -- --with-openssl || echo --without-openssl): every figure is from PostgreSQL $major."
  echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg). Command: bench/run.sh${quick:+ $quick} --pg-config $pgc. N = $n, $rounds rounds, inserts ${secs} s a round, index after $rows rows."
  tail -n +2 "$out/results.csv" | sort -t, -k1,1 -k2,2 -k3,3n -k5,5g | awk -F, -v chart="$out/bulk.dat" -f summary.awk; } >"$out/summary.md"
gnuplot -e "data='$out/bulk.dat'; png='$out/bulk.png'; major='$major'" chart.gp
cat "$out/summary.md"; echo "bench/run.sh: results in ${BENCH_DEST:-$out}" >&2
