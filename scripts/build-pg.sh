#!/bin/bash
#
# build-pg.sh: build a PostgreSQL from a source tarball in ../shared/pg (or
# shared/pg higher up, or $SNOWFLAKE_PG_SOURCES), once per machine, and print
# the path of its pg_config.
#
#   scripts/build-pg.sh 18      prints .../bin/pg_config of PostgreSQL 18
#
# A major's tarball is its newest release (postgresql-18.6.tar.bz2), else
# its newest release candidate or beta (postgresql-19beta3.tar.bz2).
#
# The tarball's SHA-256 is checked against SHA256SUMS beside it.  The build
# is installed under $SNOWFLAKE_PG_CACHE (default /var/cache/snowflake-pg),
# in a folder named after the tarball's hash and the build's version, so a
# machine builds each tarball once and a changed one is built anew.  A file
# "complete" is written into that folder last, so a build cut short is
# started again.  One build runs at a time on a machine: a second call
# that must build waits for the first (a lock in the cache folder).
# Exits 2, printing nothing on stdout, when no tarball for the major is
# there; 1 when the checksum or the build fails.  Run as root the first
# time (it installs bison and flex, which release tarballs of 18 need).
#
set -euo pipefail
cd "$(dirname "$0")/.."

major=${1:?usage: build-pg.sh MAJOR}
# $sources, $cache, check_tarball, lock_unless_built and build_failed
. scripts/sources.sh

# the newest tarball of the first kind there is: releases, then release
# candidates, then betas
tarball=
for kind in . rc beta; do
	tarball=$(ls "$sources"/postgresql-"$major$kind"[0-9]*.tar.bz2 2>/dev/null |
		sort -V | tail -n 1 || true)
	[ -n "$tarball" ] && break
done
if [ -z "$tarball" ]; then
	echo "build-pg.sh: no PostgreSQL $major source tarball in $sources" >&2
	exit 2
fi
name=$(basename "$tarball")
check_tarball build-pg.sh "$tarball"
hash=$(sha256sum "$tarball" | cut -c1-16)
# the build's own version: raise it when the build below changes, so that
# machines build anew
recipe=3
prefix="$cache/${name%.tar.bz2}-$hash-r$recipe"

lock_unless_built build-pg.sh "$prefix"
if [ ! -e "$prefix/complete" ]; then
	for p in bison flex zlib1g-dev libssl-dev; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="${missing:-} $p"
	done
	if [ -n "${missing:-}" ]; then
		echo "build-pg.sh: installing$missing" >&2
		apt-get update -q >/dev/null
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null
	fi
	echo "build-pg.sh: building $name into $prefix (a few minutes, once)" >&2
	build=$(mktemp -d /tmp/snowflake-pg-build.XXXXXX)
	trap 'rm -rf "$build"' EXIT
	rm -rf "$prefix"
	(
		cd "$build"
		tar xjf "$tarball"
		cd "${name%.tar.bz2}"
		# OpenSSL as Debian builds it: without, every random UUID (the
		# bench's contenders) opens /dev/urandom
		./configure --prefix="$prefix" --enable-tap-tests --with-openssl \
			--without-icu --without-readline
		make -j"$(nproc)" -s
		make -s install
		# bench/run.sh measures index fill with pgstattuple
		make -C contrib/pgstattuple -s install
	) >"$build/build.log" 2>&1 || build_failed build-pg.sh "$build/build.log" "$name"
	touch "$prefix/complete"
fi
echo "$prefix/bin/pg_config"
