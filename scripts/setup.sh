#!/bin/bash
#
# setup.sh: install what building, packaging and testing snowflake needs,
# then build and install the extension.  Run as root on Debian 12; safe to
# run again.  SNOWFLAKE_PG_CONFIG names the PostgreSQL to install into
# (default: Debian's PostgreSQL 15).
#
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
	echo "setup.sh: run as root (it installs packages and the extension)" >&2
	exit 1
fi

pg_config=${SNOWFLAKE_PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}

# The server and its headers; the Perl modules, libfaketime and strace for
# the TAP tests, pg_partman for t/042_partman.pl and pgbouncer for
# t/041_pgbouncer.pl; debhelper and postgresql-server-dev-all to build the
# Debian package; clang for the build with clang; gnuplot for bench/run.sh's
# chart.  (t/006_layouts.pl reads IDs with node where the machine has it.)
packages="postgresql-15 postgresql-server-dev-15 libipc-run-perl faketime libfaketime
	strace postgresql-15-partman pgbouncer make gcc clang debhelper
	postgresql-server-dev-all gnuplot-nox"
missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "setup.sh: installing$missing"
	apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null
fi

make -s PG_CONFIG="$pg_config"
make -s PG_CONFIG="$pg_config" install
