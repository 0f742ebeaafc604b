#!/bin/bash
#
# sources.sh: what build-pg.sh and build-citus.sh share, sourced by both:
# where the source tarballs and the cache of builds are, and the check of a
# tarball against SHA256SUMS.
#
# Sets $sources: $SNOWFLAKE_PG_SOURCES, else the first shared/pg folder in
# a parent folder of the checkout in the current directory (../shared/pg
# beside it, or higher up for a clone made inside another folder); and
# $cache: $SNOWFLAKE_PG_CACHE, default /var/cache/snowflake-pg.
#
sources=${SNOWFLAKE_PG_SOURCES:-}
if [ -z "$sources" ]; then
	dir=$(cd .. && pwd)
	while [ -z "$sources" ]; do
		[ -d "$dir/shared/pg" ] && sources=$dir/shared/pg
		[ "$dir" = / ] && break
		dir=$(dirname "$dir")
	done
	sources=${sources:-$(cd .. && pwd)/shared/pg}
fi
cache=${SNOWFLAKE_PG_CACHE:-/var/cache/snowflake-pg}

# check_tarball PROGRAM TARBALL: TARBALL's SHA-256 is the one SHA256SUMS
# beside it lists; else says so as PROGRAM and exits 1
check_tarball()
{
	local name
	name=$(basename "$2")
	if ! (cd "$(dirname "$2")" && grep -E " [ *]?$name\$" SHA256SUMS | sha256sum -c --quiet -) >&2; then
		echo "$1: $2 does not match $(dirname "$2")/SHA256SUMS" >&2
		exit 1
	fi
}

# lock_unless_built PROGRAM PREFIX: unless the build in PREFIX is complete,
# take the machine's build lock (in $cache), waiting, as PROGRAM says, for
# another build that holds it; the lock lasts until the script exits
lock_unless_built()
{
	[ -e "$2/complete" ] && return 0
	mkdir -p "$cache"
	exec 9>"$cache/build.lock"
	if ! flock -n 9; then
		echo "$1: waiting for another build to finish" >&2
		flock 9
	fi
}

# build_failed PROGRAM LOG WHAT: the end of the build's LOG, and that
# building WHAT failed; exits 1
build_failed()
{
	tail -n 40 "$2" >&2
	echo "$1: building $3 failed" >&2
	exit 1
}
