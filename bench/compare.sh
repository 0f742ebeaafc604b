#!/bin/bash
# bench/compare.sh [--rounds N] BINDIR...: the bulk forms of bench/run.sh
# for snowflake on several installations at once, such as the code before
# and after a change, each in its own throwaway server, interleaved round by
# round so that the machine's drift hits them alike.  Each BINDIR is the bin
# directory of a PostgreSQL into which a build of snowflake is installed.
# Prints, per installation (numbered from 0 in the order given) and form,
# the median IDs/s of N rounds (default 5), the slowest and fastest, the
# ratio against that installation's nextval() CACHE 1, the share of the
# 4096 IDs/ms cap and the cost per ID above the bare loop.  As root it runs
# itself as postgres.  Installs nothing; jit is off.  See
# docs/performance.md.
set -euo pipefail
rounds=5
[ "${1:-}" = --rounds ] && { rounds=$2; shift 2; }
[ $# -ge 1 ] || { echo "usage: bench/compare.sh [--rounds N] BINDIR..." >&2; exit 2; }
if [ "$(id -u)" -eq 0 ]; then exec runuser -u postgres -- "$0" --rounds "$rounds" "$@"; fi
bins=("$@")
. "$(dirname "$0")/servers.sh"
start_servers compare "CREATE SEQUENCE bench_seq"
n=4096000
# run INSTALLATION NAME SESSIONS MAX_LEAD SQL: one pgbench run, as "i:name|sessions|IDs/s"
run() {
	local t
	t=$(PGHOST=${dirs[$1]} PGDATABASE=postgres PGOPTIONS="-c snowflake.max_lead=$4" "${bins[$1]}/pgbench" -n \
		-f <(echo "$5") -D n=$((n / $3)) -c "$3" -j "$3" -t 1 | awk '/^tps/ { t = $3 } END { if (t == "") exit 1; print t }')
	awk -v t="$t" -v n=$((n / $3)) -v name="$1:$2" -v s="$3" 'BEGIN { printf "%s|%d|%.0f\n", name, s, t * n }'
}
single='SELECT count(snowflake_next_id()) FROM (SELECT generate_series(1, :n)) g;'
block='SELECT count(x) FROM (SELECT snowflake_next_ids(1000) x FROM generate_series(1, :n / 1000)) g;'
# each snowflake run starts after its lead (at most 1 s) was drained
for r in $(seq "$rounds"); do for i in "${!bins[@]}"; do
	run "$i" floor 1 0 'SELECT count(1) FROM (SELECT generate_series(1, :n)) g;'
	run "$i" nextval 1 0 "SELECT count(nextval('bench_seq')) FROM (SELECT generate_series(1, :n)) g;"
	sleep 1.05; run "$i" single_lead1000 1 1000 "$single"
	sleep 1.05; run "$i" single_lead1000 2 1000 "$single"
	sleep 1.05; run "$i" single_lead0 1 0 "$single"
	sleep 1.05; run "$i" blocks_lead0 1 0 "$block"
	sleep 1.05; run "$i" blocks_lead1000 1 1000 "$block"
done; done | sort -t'|' -k1,1 -k2,2n -k3,3n | awk -F'|' '
	{ k = $1 "|" $2; v[k, ++c[k]] = $3; if (!(k in seen)) { seen[k] = 1; order[++o] = k } }
	END {
		for (i = 1; i <= o; i++) { k = order[i]; med[k] = v[k, int((c[k] + 1) / 2)] }
		printf "| installation:form | sessions | IDs/s | slowest..fastest | x nextval() | share of the cap | ns an ID above the bare loop |\n|---|---|---|---|---|---|---|\n"
		for (i = 1; i <= o; i++) {
			k = order[i]; split(k, p, "|"); split(p[1], q, ":")
			printf "| %s | %s | %.0f | %.0f..%.0f | %.2fx | %.1f%% | %.1f |\n", p[1], p[2], med[k], v[k, 1], v[k, c[k]],
				med[k] / med[q[1] ":nextval|1"], 100 * med[k] / 4096000, 1e9 / med[k] * p[2] - 1e9 / med[q[1] ":floor|1"]
		}
	}'
