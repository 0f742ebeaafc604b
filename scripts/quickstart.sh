#!/bin/bash
#
# quickstart.sh: try snowflake in one command.  Run as root on Debian 12.
#
# 1. Runs scripts/setup.sh, which installs what is missing of PostgreSQL 15,
#    its server headers, make and gcc (nothing that only the tests need),
#    and builds and installs the extension.
# 2. Starts a throwaway PostgreSQL 15 server in ./quickstart/ of this tree:
#    data in ./quickstart/data, log in ./quickstart/server.log, reachable
#    only through a unix socket in ./quickstart (no TCP), port 5433, with
#    snowflake preloaded as datacenter 1, worker 1.  initdb refuses to run
#    as root, so the folder belongs to the "postgres" user and the server
#    runs as that user.  The folder is mode 0700 and local connections are
#    trusted, so only root and postgres can connect.
# 3. Runs scripts/quickstart.sql: creates the extension and runs a short
#    master/detail demo, with the tables of the README's "Getting started":
#    an order whose id is taken first with snowflake_next_id(), its items
#    inserted with it in one transaction, and a join that decodes the ids.
# 4. Prints how to connect with psql and how to stop the server.
#
# Safe to run again: an existing server folder is reused, and a running
# server is restarted so that it loads the freshly built extension.  The demo
# tables are kept, and each run adds one order.  Remove everything with
# "rm -rf quickstart" once the server is stopped.
#
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

if [ "$(id -u)" -ne 0 ]; then
	echo "quickstart.sh: run as root (it installs packages and the extension)" >&2
	exit 1
fi

bindir=/usr/lib/postgresql/15/bin
port=5433

step() { printf '\n==> %s\n' "$*"; }
# from /, since postgres may not be able to enter the current folder
as_postgres() { (cd / && runuser -u postgres -- "$@"); }

step "Installing packages, building and installing the extension (scripts/setup.sh)"
scripts/setup.sh

# The server runs as postgres, which must be able to enter the folder.  A
# tree under a private home (such as /root, mode 0700) is out of its reach;
# then the server lives in postgres's home instead.
dir=$repo/quickstart
if ! as_postgres test -x "$repo"; then
	dir=/var/lib/postgresql/snowflake-quickstart
	echo "note: the postgres user cannot enter $repo (a parent folder is private),"
	echo "      so the server lives in $dir instead of ./quickstart"
fi
data=$dir/data
log=$dir/server.log

mkdir -p "$dir"
chown postgres:postgres "$dir"
chmod 0700 "$dir"

if [ ! -s "$data/PG_VERSION" ]; then
	step "Creating a new cluster in $data"
	rm -rf "$data"
	as_postgres "$bindir/initdb" -D "$data" -U postgres -A trust -E UTF8 \
		--locale=C.UTF-8 >"$dir/initdb.log"
	cat >>"$data/postgresql.conf" <<EOF

# --- added by scripts/quickstart.sh ---
listen_addresses = ''			# unix socket only
unix_socket_directories = '$dir'
unix_socket_permissions = 0700
port = $port
shared_preload_libraries = 'snowflake'
snowflake.datacenter_id = 1
snowflake.worker_id = 1
EOF
else
	step "Reusing the cluster in $data"
fi

if as_postgres "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
	step "Stopping the server left running by an earlier run, to load the new build"
	if ! as_postgres "$bindir/pg_ctl" -D "$data" -m fast -w -t 60 stop >/dev/null; then
		echo "quickstart.sh: could not stop the server in $data; see $log" >&2
		exit 1
	fi
fi
step "Starting the server on port $port, socket in $dir"
if ! as_postgres "$bindir/pg_ctl" -D "$data" -l "$log" -w -t 60 start >/dev/null; then
	echo "quickstart.sh: the server did not start; the end of $log:" >&2
	tail -n 20 "$log" >&2
	exit 1
fi

psql_cmd=("$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d postgres)

step "Creating the extension and running the demo (scripts/quickstart.sql)"
"${psql_cmd[@]}" -f scripts/quickstart.sql

q_dir=$(printf '%q' "$dir")
q_data=$(printf '%q' "$data")
step "The server keeps running.  Connect (as root) with:"
echo "    psql -h $q_dir -p $port -U postgres postgres"
echo
echo "Stop it with:"
echo "    runuser -u postgres -- $bindir/pg_ctl -D $q_data stop"
echo
echo "Running scripts/quickstart.sh again (re)starts it and adds one more order."
echo "Once it is stopped, rm -rf $q_dir removes it."
