#!/bin/bash
#
# setup.sh: install what building and testing snowflake needs, then build
# and install the extension.  Run as root on Debian 12; safe to run again.
#
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
	echo "setup.sh: run as root (it installs packages and the extension)" >&2
	exit 1
fi

packages="postgresql-15 postgresql-server-dev-15 libipc-run-perl faketime libfaketime strace make gcc"
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

# Debian's PGXS also emits JIT bitcode with clang-14; build without it where
# clang is missing.
llvm_flag=""
command -v clang-14 >/dev/null 2>&1 || llvm_flag="with_llvm=no"

make -s $llvm_flag PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
make -s $llvm_flag PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config install
