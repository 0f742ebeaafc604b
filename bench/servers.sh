# bench/servers.sh, sourced by bench/compare.sh and bench/edge.sh: a
# throwaway server for each bin directory of the array bins, each set up
# alike (the preload, a socket in its own directory, synchronous_commit off,
# jit off, snowflake.max_lead 1000, so that the mark writer keeps the mark
# ahead of any lead a run sets), with the extension created and one ID
# drawn.  start_servers NAME SQL... starts them, their directories named
# after NAME, and runs each SQL on each; their directories are in the array
# dirs, and they are stopped and removed when the script exits.
dirs=()
cleanup_servers() { for i in "${!dirs[@]}"; do "${bins[$i]}/pg_ctl" -D "${dirs[$i]}/data" -m immediate stop >/dev/null 2>&1 || :; rm -rf "${dirs[$i]}"; done; }
start_servers() {
	local name=$1 d b i s sql=()
	shift
	for s in "$@"; do sql+=(-c "$s"); done
	trap cleanup_servers EXIT
	for i in "${!bins[@]}"; do
		d=$(mktemp -d "/var/tmp/snowflake-$name.XXXXXX"); dirs+=("$d"); b=${bins[$i]}
		"$b/initdb" -D "$d/data" -A trust >/dev/null
		printf "%s\n" "shared_preload_libraries = 'snowflake'" "listen_addresses = ''" "unix_socket_directories = '$d'" \
			"max_connections = 40" "shared_buffers = 128MB" "synchronous_commit = off" "jit = off" \
			"snowflake.max_lead = 1000" >>"$d/data/postgresql.conf"
		"$b/pg_ctl" -D "$d/data" -l "$d/log" -w start >/dev/null
		PGHOST=$d "$b/psql" -d postgres -XAtq -v ON_ERROR_STOP=1 -c "CREATE EXTENSION snowflake" \
			"${sql[@]}" -c "SELECT snowflake_next_id()" >/dev/null
	done
}
