#!/bin/bash
#
# setup.sh [--test]: install what building snowflake needs, then build and
# install the extension.  Run as root on Debian 12; safe to run again.
#
# Alone (as scripts/quickstart.sh runs it), it installs only the server, its
# headers, make and gcc.  With --test (as scripts/test.sh runs it), it also
# installs what the test suite, the Debian package and the benchmark need,
# and node-postgres for t/027_javascript.pl.  SNOWFLAKE_PG_CONFIG names the
# PostgreSQL to install into (default: Debian's PostgreSQL 15).
#
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
	echo "setup.sh: run as root (it installs packages and the extension)" >&2
	exit 1
fi

test_packages=0
case "${1:-}" in
"") ;;
--test) test_packages=1 ;;
*)
	echo "usage: scripts/setup.sh [--test]" >&2
	exit 2
	;;
esac

pg_config=${SNOWFLAKE_PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}

# The server and its headers (which bring clang-14 for PostgreSQL's JIT
# bitcode), make and gcc build and run the extension.
packages="postgresql-15 postgresql-server-dev-15 make gcc"
# The test suite's: the Perl modules, libfaketime and strace for the TAP
# tests, pg_partman for t/042_partman.pl, pgbouncer for t/041_pgbouncer.pl,
# patroni and etcd-server for t/043_patroni.pl; debhelper and
# postgresql-server-dev-all to build the Debian package; clang for the build
# with clang; gnuplot for bench/run.sh's chart; liblz4-dev and libzstd-dev for
# Citus (scripts/build-citus.sh, t/046_citus.pl).  (t/006_layouts.pl and
# t/027_javascript.pl run node where the machine has it.)
if [ "$test_packages" -eq 1 ]; then
	packages="$packages libipc-run-perl faketime libfaketime strace
		postgresql-15-partman pgbouncer patroni etcd-server clang debhelper
		postgresql-server-dev-all gnuplot-nox liblz4-dev libzstd-dev"
fi
missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "setup.sh: installing$missing"
	# Debian starts etcd, patroni and pgbouncer as services when it installs
	# them; the tests run their own, on loopback, with ports and directories
	# of their own.  Without a policy of the machine's own (containers have
	# one that starts nothing), keep every service from starting during the
	# install.
	policy=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		policy=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		trap 'rm -f "$policy"' EXIT
	fi
	apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null
	if [ -n "$policy" ]; then
		rm -f "$policy"
		trap - EXIT
	fi
	# and keep the services that were just installed from starting at boot
	if [ -d /run/systemd/system ]; then
		for package_service in etcd-server:etcd patroni:patroni \
			pgbouncer:pgbouncer; do
			case " $missing " in
			*" ${package_service%%:*} "*)
				systemctl disable --now "${package_service#*:}.service" \
					>/dev/null 2>&1 || true
				;;
			esac
		done
	fi
fi

# node-postgres, at the versions of t/js/package-lock.json, for
# t/027_javascript.pl, where the machine has npm (the test skips itself
# without node or without it)
if [ "$test_packages" -eq 1 ]; then
	if command -v npm >/dev/null; then
		echo "setup.sh: npm ci in t/js (node-postgres for t/027_javascript.pl)"
		(cd t/js && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
	else
		echo "setup.sh: no npm on this machine: t/027_javascript.pl will skip itself"
	fi
fi

make -s PG_CONFIG="$pg_config"
make -s PG_CONFIG="$pg_config" install
