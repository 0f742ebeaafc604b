#!/bin/bash
# bench/citus.sh [--secs N] [--rounds N] --pg-config FILE: inserts through
# every node of a throwaway Citus cluster (a coordinator and two workers on
# Unix sockets) at once, 8 pgbench clients per node, into tables keyed by
# snowflake_next_id(), by bigserial (Citus gives each node a range of its
# own) and, on 18 and later, by uuidv7(), each distributed by its key.
# FILE is the pg_config of a PostgreSQL with Citus and snowflake installed
# (a scratch copy of scripts/build-citus.sh's build, see docs/citus.md).
# Prints, per key: the inserts per second of the three nodes together (the
# median of the rounds, which alternate between the keys) and as a ratio to
# snowflake's, the key's bytes, the primary key's index bytes per row, and
# the share of rows out of time order: rows made later (clock_timestamp(),
# one machine, one clock) than some row with a greater key, by more than a
# millisecond; and the same among the rows of each node alone, whose keys
# a node makes in order: what is left there is rows whose clock_timestamp()
# was read well after their key was made.  The worker ids are set by hand: the registry plays no part
# in making an ID.  Installs nothing; as root it runs itself as postgres.
# Not run by scripts/test.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); secs=10; rounds=3; pgc=
while [ $# -gt 0 ]; do case $1 in --secs) secs=$2; shift ;; --rounds) rounds=$2; shift ;; --pg-config) pgc=$2; shift ;;
	*) echo "usage: bench/citus.sh [--secs N] [--rounds N] --pg-config FILE" >&2; exit 2 ;; esac; shift; done
[ -x "$pgc" ] || { echo "bench/citus.sh: --pg-config names no pg_config: '$pgc'" >&2; exit 2; }
[ -f "$("$pgc" --sharedir)/extension/citus.control" ] ||
	{ echo "bench/citus.sh: no Citus in $("$pgc" --sharedir)" >&2; exit 2; }
if [ "$(id -u)" -eq 0 ]; then   # initdb refuses root
	exec runuser -u postgres -- "$here/citus.sh" --secs "$secs" --rounds "$rounds" --pg-config "$pgc"
fi
bin=$("$pgc" --bindir)
dir=$(mktemp -d /var/tmp/snowflake-citus-bench.XXXXXX)
stop_all() { for n in 0 1 2; do "$bin/pg_ctl" -D "$dir/n$n" -m immediate stop >/dev/null 2>&1 || :; done; rm -rf "$dir"; }
trap stop_all EXIT
base=$((54000 + RANDOM % 1000))
for n in 0 1 2; do
	"$bin/initdb" -D "$dir/n$n" -A trust >/dev/null
	printf "%s\n" "shared_preload_libraries = 'citus,snowflake'" "snowflake.worker_id = $n" \
		"port = $((base + n))" "listen_addresses = ''" "unix_socket_directories = '$dir'" \
		"citus.local_hostname = '$dir'" "max_connections = 100" "max_prepared_transactions = 50" \
		"shared_buffers = 128MB" "citus.shard_count = 8" >>"$dir/n$n/postgresql.conf"
	"$bin/pg_ctl" -D "$dir/n$n" -l "$dir/log$n" -w start >/dev/null
	"$bin/psql" -XAtq -v ON_ERROR_STOP=1 -h "$dir" -p $((base + n)) -d postgres -c 'CREATE EXTENSION citus'
done
psql() { "$bin/psql" -XAtq -v ON_ERROR_STOP=1 -h "$dir" -p "$base" -d postgres "$@"; }
psql -c "SELECT citus_set_coordinator_host('$dir', $base)" >/dev/null
psql -c "SELECT citus_add_node('$dir', $((base + 1))), citus_add_node('$dir', $((base + 2)))" >/dev/null
psql -c 'CREATE EXTENSION snowflake'
keys="snowflake bigserial"
[ "$(psql -c 'SHOW server_version_num')" -ge 180000 ] && keys+=" uuidv7"
for k in $keys; do
	case $k in
	snowflake) key="bigint PRIMARY KEY DEFAULT snowflake_next_id()" ;;
	bigserial) key="bigserial PRIMARY KEY" ;;
	uuidv7) key="uuid PRIMARY KEY DEFAULT uuidv7()" ;;
	esac
	psql -c "CREATE TABLE t_$k (id $key, node smallint NOT NULL, made timestamptz NOT NULL DEFAULT clock_timestamp())" \
		-c "SELECT create_distributed_table('t_$k', 'id')" >/dev/null
	echo "INSERT INTO t_$k (node) VALUES (:node);" >"$dir/insert_$k.sql"
done
# the three nodes at once, 8 clients each: the sum of their tps
for r in $(seq "$rounds"); do for k in $keys; do
	for n in 0 1 2; do
		"$bin/pgbench" -n -c 8 -j 2 -T "$secs" -D node=$n -f "$dir/insert_$k.sql" \
			-h "$dir" -p $((base + n)) postgres >"$dir/pgbench_$n" 2>&1 &
	done
	wait
	echo "$k $(cat "$dir"/pgbench_[012] | awk '/^tps/ { t += $3 } END { printf "%.0f", t }')" >>"$dir/tps"
done; done
echo "Machine: $(nproc) cores, $("$bin/postgres" --version), $(psql -c 'SELECT citus_version()' | cut -d' ' -f1-2)."
echo "Command: bench/citus.sh --secs $secs --rounds $rounds --pg-config $pgc. Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| key | inserts/s, 3 nodes | ratio to snowflake | key bytes | index bytes/row | rows out of time order | the same among one node's rows |"
echo "|---|---|---|---|---|---|---|"
median() { grep "^$1 " "$dir/tps" | cut -d' ' -f2 | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
sf=$(median snowflake)
for k in $keys; do
	t=$(median "$k")
	row=$(psql -F' ' -c "
WITH k AS MATERIALIZED (SELECT id, node, made FROM t_$k),
	 o AS (SELECT made < max(made) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
				  - interval '1 ms' AS late,
				  made < max(made) OVER (PARTITION BY node ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
				  - interval '1 ms' AS late_in_node FROM k)
SELECT (SELECT pg_column_size(id) FROM t_$k LIMIT 1),
	   round((SELECT sum(result::bigint) FROM run_command_on_shards('t_$k', \$\$SELECT pg_indexes_size('%s')\$\$))
			 / (SELECT count(*) FROM k), 1),
	   round(100.0 * count(*) FILTER (WHERE late) / count(*), 1) || '_%_of_' || count(*),
	   round(100.0 * count(*) FILTER (WHERE late_in_node) / count(*), 1) || '_%'
FROM o")
	set -- $row
	echo "| $k | $t | $(awk -v a="$t" -v b="$sf" 'BEGIN { printf "%.2f", a / b }') | $1 | $2 | ${3//_/ } | ${4//_/ } |"
done
