#!/bin/bash
#
# build-citus.sh: build Citus from a source tarball in ../shared/pg (or
# shared/pg higher up, or $SNOWFLAKE_PG_SOURCES) against the PostgreSQL that
# scripts/build-pg.sh builds for a major, once per machine, and print the
# path of the pg_config of a PostgreSQL that has Citus installed.
#
#   scripts/build-citus.sh 18   prints .../bin/pg_config of PostgreSQL 18
#                               with Citus
#
# The Citus tarball is the newest citus-*.tar.bz2 whose configure accepts
# the major (Citus 14 takes 16, 17 and 18).  Citus 13.2.2, the last for 15,
# does not compile against Debian 12's 15.20 (its pg_version_compat.h
# defines a function 15.20 now declares), and 15 is Debian's, not a build of
# build-pg.sh: Citus is tested from 16 on, and "build-citus.sh 15" exits 2.
#
# Citus is not installed into build-pg.sh's build, which scripts/test.sh
# copies for the tests that expect no Citus: this script copies that build
# into a folder of its own in $SNOWFLAKE_PG_CACHE (default
# /var/cache/snowflake-pg), named after both tarballs' hashes and this
# build's version, and installs Citus there.  A file "complete" is written
# into that folder last, so a build cut short is started again; one build
# runs at a time (build-pg.sh's lock).  Exits 2, printing nothing on stdout,
# when there is no Citus tarball for the major or no PostgreSQL tarball; 1
# when a checksum or a build fails.  Citus's columnar storage needs
# liblz4-dev and libzstd-dev, which scripts/setup.sh --test installs.
#
set -euo pipefail
cd "$(dirname "$0")/.."

major=${1:?usage: build-citus.sh MAJOR}
# $sources, $cache, check_tarball, lock_unless_built and build_failed
. scripts/sources.sh

if [ "$major" -lt 16 ]; then
	echo "build-citus.sh: Citus is tested from PostgreSQL 16 on (13.2.2, the last Citus for $major, does not compile against Debian 12's 15.20)" >&2
	exit 2
fi
# the newest Citus tarball whose configure lists the major among those it
# builds against ("$version_num" != '18')
tarball=
for candidate in $(ls "$sources"/citus-[0-9]*.tar.bz2 2>/dev/null | sort -rV); do
	configure=$(tar xjf "$candidate" -O "$(basename "$candidate" .tar.bz2)/configure" 2>/dev/null || true)
	if grep -q "\"\$version_num\" != '$major'" <<<"$configure"; then
		tarball=$candidate
		break
	fi
done
if [ -z "$tarball" ]; then
	echo "build-citus.sh: no Citus source tarball for PostgreSQL $major in $sources" >&2
	exit 2
fi
name=$(basename "$tarball")
check_tarball build-citus.sh "$tarball"

# the PostgreSQL to build against; its folder's name carries its tarball's
# hash and build-pg.sh's recipe
status=0
pg_config=$(scripts/build-pg.sh "$major") || status=$?
[ "$status" -eq 0 ] || exit "$status"
pg_prefix=$(dirname "$(dirname "$pg_config")")

hash=$(sha256sum "$tarball" | cut -c1-16)
# this build's own version: raise it when the build below changes
recipe=1
prefix="$cache/$(basename "$pg_prefix")+${name%.tar.bz2}-$hash-r$recipe"

lock_unless_built build-citus.sh "$prefix"
if [ ! -e "$prefix/complete" ]; then
	echo "build-citus.sh: building $name against $pg_prefix into $prefix (a few minutes, once)" >&2
	build=$(mktemp -d /tmp/snowflake-citus-build.XXXXXX)
	trap 'rm -rf "$build"' EXIT
	rm -rf "$prefix"
	(
		set -e
		cp -a "$pg_prefix" "$prefix"
		rm -f "$prefix/complete"
		cd "$build"
		tar xjf "$tarball"
		cd "${name%.tar.bz2}"
		# without libcurl: Citus uses it only to report statistics to its
		# makers
		./configure PG_CONFIG="$prefix/bin/pg_config" --without-libcurl
		make -j"$(nproc)" -s
		make -s install
	) >"$build/build.log" 2>&1 || build_failed build-citus.sh "$build/build.log" "$name"
	touch "$prefix/complete"
fi
echo "$prefix/bin/pg_config"
