#!/bin/bash
# bench/edge.sh [--rounds N] [--sessions LIST] [--leads LIST] BINDIR...: the
# generator at the edge of its lead.  For each installation (numbered from 0
# in the order given), each max_lead of LIST (default 0,20,100,1000) and each
# number of sessions of LIST (default 1,8), the sessions first burst
# 8,192,000 IDs together, which uses any lead of 1000 ms up, then go on at
# once with 4,096,000 more, timed from the first session to start them to
# the last to finish.  Each BINDIR is the bin directory of a PostgreSQL into
# which a build of snowflake is installed; each gets its own throwaway
# server, and the runs interleave round by round so that the machine's
# drift hits them alike.  Prints per installation, lead and sessions the
# median time of the 4,096,000 IDs over N rounds (default 3), its ratio to
# max_lead 0 of that installation and sessions, the share of the 4096 IDs/ms
# cap, and the median of the ticks given up for each 100 IDs issued, from
# the moment the first session starts the stream: ticks_burnt of
# snowflake_status where the build has it, else the ticks the generator
# moved beyond the IDs issued (at max_lead 0 those are mostly the unused
# ends of milliseconds, not burnt ticks).  As root it runs itself as postgres.
# Installs nothing; jit is off.  See docs/performance.md.
set -euo pipefail
rounds=3; sessions_list=1,8; leads=0,20,100,1000
while [ $# -gt 0 ]; do case $1 in --rounds) rounds=$2; shift 2 ;; --sessions) sessions_list=$2; shift 2 ;;
	--leads) leads=$2; shift 2 ;; *) break ;; esac; done
[ $# -ge 1 ] || { echo "usage: bench/edge.sh [--rounds N] [--sessions LIST] [--leads LIST] BINDIR..." >&2; exit 2; }
if [ "$(id -u)" -eq 0 ]; then
	exec runuser -u postgres -- "$0" --rounds "$rounds" --sessions "$sessions_list" --leads "$leads" "$@"
fi
bins=("$@")
. "$(dirname "$0")/servers.sh"
start_servers edge "CREATE TABLE edge_times (client int, t0 float8, t1 float8, tick bigint, burnt bigint, issued bigint)"
burst=8192000; n=4096000
# the generator's newest tick, the ticks burnt so far (-1 where the build
# does not count them) and the IDs issued so far
status='(extract(epoch FROM p.ts - s.epoch) * 1000)::bigint
		* (1::bigint << current_setting($$snowflake.sequence_bits$$)::int) + p.sequence AS tick,
	coalesce((to_jsonb(s) ->> $$ticks_burnt$$)::bigint, -1) AS burnt, s.ids_issued AS issued
FROM snowflake_status s, snowflake_parse(s.last_id) p'
# run INSTALLATION LEAD SESSIONS: one burst and one timed stream, as
# "i|lead|sessions|seconds|ticks given up per 100 IDs of the stream|how
# counted"; the stream's counts start when the first session starts it
run() {
	local h=${dirs[$1]} b=${bins[$1]}
	PGHOST=$h "$b/psql" -d postgres -XAtq -c 'TRUNCATE edge_times' >/dev/null
	PGHOST=$h PGDATABASE=postgres PGOPTIONS="-c snowflake.max_lead=$2" "$b/pgbench" -n -c "$3" -j "$3" -t 1 \
		-D b=$((burst / $3)) -D m=$((n / $3)) -f <(printf '%s\n' \
		'SELECT count(snowflake_next_id()) FROM (SELECT generate_series(1, :b)) g;' \
		"SELECT extract(epoch FROM clock_timestamp()) AS t0, ${status//$'\n'/ } \\gset" \
		'SELECT count(snowflake_next_id()) FROM (SELECT generate_series(1, :m)) g;' \
		'INSERT INTO edge_times VALUES (:client_id, :t0, extract(epoch FROM clock_timestamp()), :tick, :burnt, :issued);') >/dev/null
	PGHOST=$h "$b/psql" -d postgres -XAtq -c "
SELECT '$1|$2|$3|' || round((max(t1) - min(t0))::numeric, 3) || '|'
	|| round(100.0 * CASE WHEN a.burnt >= 0 THEN a.burnt - f.burnt
		ELSE a.tick - f.tick - (a.issued - f.issued) END / (a.issued - f.issued), 3)
	|| CASE WHEN a.burnt >= 0 THEN '|counted' ELSE '|moved' END
FROM edge_times,
	(SELECT tick, burnt, issued FROM edge_times ORDER BY t0 LIMIT 1) f,
	(SELECT $status) a (tick, burnt, issued)
GROUP BY a.tick, a.burnt, a.issued, f.tick, f.burnt, f.issued"
}
for r in $(seq "$rounds"); do for i in "${!bins[@]}"; do for l in ${leads//,/ }; do for s in ${sessions_list//,/ }; do
	sleep 1.05; run "$i" "$l" "$s"
done; done; done; done | sort -t'|' -k1,1n -k3,3n -k2,2n -k4,4n | awk -F'|' '
	{ k = $1 "|" $2 "|" $3; t[k, ++c[k]] = $4; g[k, c[k]] = $5; how[k] = $6; if (!(k in seen)) { seen[k] = 1; order[++o] = k } }
	END {
		for (i = 1; i <= o; i++) {
			k = order[i]; med[k] = t[k, int((c[k] + 1) / 2)]
			# the ticks given up: the median of the rounds
			m = 0; for (j = 1; j <= c[k]; j++) v[j] = g[k, j]
			for (j = 1; j <= c[k]; j++) for (h = j + 1; h <= c[k]; h++) if (v[h] < v[j]) { x = v[j]; v[j] = v[h]; v[h] = x }
			gm[k] = v[int((c[k] + 1) / 2)]
		}
		printf "| installation | max_lead | sessions | 4,096,000 IDs at the edge, s | x max_lead 0 | share of the cap | ticks given up per 100 IDs |\n|---|---|---|---|---|---|---|\n"
		for (i = 1; i <= o; i++) {
			k = order[i]; split(k, p, "|"); z = p[1] "|0|" p[3]
			printf "| %s | %s | %s | %.3f | %.2fx | %.1f%% | %.2f (%s) |\n", p[1], p[2], p[3], med[k],
				(z in med) ? med[k] / med[z] : 0, 100 * 4096000 / 4096 / 1000 / med[k], gm[k], how[k]
		}
	}'
