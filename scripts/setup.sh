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
# the TAP tests, pg_partman for t/042_partman.pl, pgbouncer for
# t/041_pgbouncer.pl, patroni and etcd-server for t/043_patroni.pl;
# debhelper and postgresql-server-dev-all to build the Debian package; clang
# for the build with clang; gnuplot for bench/run.sh's chart.
# (t/006_layouts.pl reads IDs with node where the machine has it.)
packages="postgresql-15 postgresql-server-dev-15 libipc-run-perl faketime libfaketime
	strace postgresql-15-partman pgbouncer patroni etcd-server make gcc clang
	debhelper postgresql-server-dev-all gnuplot-nox"
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

make -s PG_CONFIG="$pg_config"
make -s PG_CONFIG="$pg_config" install
