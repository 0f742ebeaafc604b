#!/bin/bash
#
# test.sh: the whole test suite, from a fresh Debian 12 machine.
#
# Installs what is missing (scripts/setup.sh), then builds snowflake the ways
# others build it and tests each build:
#
#   gcc -Werror    built with warnings as errors and installed into
#                  PostgreSQL; runs every test: regression, isolation and
#                  TAP (the TAP files in parallel);
#   assertions     built with -DUSE_ASSERT_CHECKING and installed into a
#                  scratch copy of PostgreSQL; runs the regression and
#                  isolation tests;
#   clang          make CC=clang, warnings as errors; builds only;
#   Debian package postgresql-15-snowflake built with dpkg-buildpackage and
#                  unpacked into a scratch copy of PostgreSQL that has no
#                  snowflake files; runs the regression and isolation tests,
#                  so a package that puts a file where PostgreSQL does not
#                  look fails.
#
# The scratch copies live in a temporary directory; nothing but the gcc
# build is installed on the machine.  initdb refuses to run as root, so the
# tests run as the "postgres" user in copies of this tree.  Ends with one
# line "N passed, N failed" that counts every test: each build, each
# regression and isolation test and each TAP assertion.
#
# SNOWFLAKE_PG_CONFIG names the PostgreSQL to build for and install into
# (default: Debian's PostgreSQL 15); PROVE_JOBS the TAP files run at once.
#
set -uo pipefail
cd "$(dirname "$0")/.."

export SNOWFLAKE_PG_CONFIG=${SNOWFLAKE_PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
pg_config=$SNOWFLAKE_PG_CONFIG
prove_jobs=${PROVE_JOBS:-3}

scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

work=$(mktemp -d /tmp/snowflake-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
log="$work/test.log"
build_log="$work/build.log"
export PG_TEST_PORT_DIR=${PG_TEST_PORT_DIR:-/tmp/pg_test_ports}
mkdir -p -m 1777 "$PG_TEST_PORT_DIR"

# a copy of this tree, without git's files and build products, in $1
copy_tree()
{
	mkdir -p "$1"
	tar --exclude=.git --exclude=./quickstart --exclude='tmp_check*' \
		--exclude=results --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
		-cf - . | tar -C "$1" -xf -
}

# A copy, in $1, of the PostgreSQL installation that $pg_config describes,
# laid out as Debian installs it and with every snowflake file removed.  The
# server binaries find their library and share directories relative to
# themselves, so a server started from the copy loads extensions from the
# copy only.
clean_pg_tree()
{
	local root=$1 major
	major=$("$pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
	mkdir -p "$root/usr/lib/postgresql" "$root/usr/share/postgresql" "$root/usr/include"
	cp -a "$(dirname "$("$pg_config" --bindir)")" "$root/usr/lib/postgresql/$major" &&
		cp -a "$("$pg_config" --sharedir)" "$root/usr/share/postgresql/$major" &&
		ln -s "$(dirname "$(dirname "$("$pg_config" --includedir-server)")")" \
			"$root/usr/include/postgresql" || return 1
	rm -rf "$root/usr/lib/postgresql/$major/lib/snowflake.so" \
		"$root/usr/lib/postgresql/$major/lib/bitcode/snowflake" \
		"$root/usr/lib/postgresql/$major/lib/bitcode/snowflake.index.bc" \
		"$root/usr/share/postgresql/$major/extension/"snowflake[-.]*
	if [ -n "$(find "$root/usr/lib" "$root/usr/share" -name 'snowflake*')" ]; then
		echo "snowflake files left in the clean tree $root" >&2
		return 1
	fi
	echo "$root/usr/lib/postgresql/$major/bin/pg_config"
}

# pg_regress and pg_isolation_regress print one line a test; prove --verbose
# prints one line an assertion.
passed_re='^(test +|     )?[A-Za-z0-9_-]+ +\.\.\. ok|^ok [0-9]+'
failed_re='^(test +|     )?[A-Za-z0-9_-]+ +\.\.\. FAILED|^not ok [0-9]+'
touch "$log"

status=0
steps_passed=0
steps_failed=0

# check NAME COMMAND...: run a build step, count it as one test
check()
{
	local name=$1
	shift
	echo "=== $name"
	echo "=== $name" >>"$build_log"
	if "$@" >>"$build_log" 2>&1; then
		steps_passed=$((steps_passed + 1))
		echo "ok: $name"
	else
		steps_failed=$((steps_failed + 1))
		status=1
		echo "FAILED: $name (see below)"
		tail -n 30 "$build_log"
	fi
}

# run_tests NAME DIR PG_CONFIG MAKE-ARGS...: make installcheck (or another
# target) as postgres in DIR against the PostgreSQL of PG_CONFIG.  A run that
# fails without a failing test (a server that did not start, a TAP script
# that died) counts as one failed test.
run_tests()
{
	local name=$1 dir=$2 pgc=$3 failed_before
	shift 3
	echo "=== $name"
	chown -R postgres "$dir"
	failed_before=$(grep -cE "$failed_re" "$log")
	if ! runuser -u postgres -- env PATH="$("$pgc" --bindir):$PATH" \
		make -C "$dir" -s PG_CONFIG="$pgc" "$@" 2>&1 | tee -a "$log"; then
		status=1
		[ "$(grep -cE "$failed_re" "$log")" -eq "$failed_before" ] &&
			steps_failed=$((steps_failed + 1))
		for diffs in "$dir"/regression.diffs "$dir"/output_iso/regression.diffs \
			"$dir"/output_nopreload/regression.diffs; do
			[ -s "$diffs" ] && { echo "--- $diffs"; cat "$diffs"; }
		done
	fi
}

# the regression and isolation tests, which need no TAP
run_sql_tests()
{
	local name=$1 dir=$2 pgc=$3
	run_tests "$name: regression tests" "$dir" "$pgc" installcheck ISOLATION= TAP_TESTS=
	run_tests "$name: regression tests without the preload" "$dir" "$pgc" installcheck-nopreload
	run_tests "$name: isolation tests" "$dir" "$pgc" installcheck REGRESS= TAP_TESTS=
}

# 1. gcc with warnings as errors, installed; every test
copy_tree "$work/gcc"
check "gcc build with -Werror" \
	make -C "$work/gcc" -s PG_CONFIG="$pg_config" PG_CFLAGS=-Werror all install
run_sql_tests "gcc build" "$work/gcc" "$pg_config"
# prove -j runs the files in parallel but prints each file's output whole
run_tests "gcc build: TAP tests" "$work/gcc" "$pg_config" \
	installcheck REGRESS= ISOLATION= PROVE_FLAGS="--verbose -j$prove_jobs"

# 2. assertions, in a scratch PostgreSQL
copy_tree "$work/assert"
if assert_pg_config=$(clean_pg_tree "$work/pg-assert"); then
	check "build with assertions" \
		make -C "$work/assert" -s PG_CONFIG="$assert_pg_config" \
		PG_CFLAGS=-Werror PG_CPPFLAGS=-DUSE_ASSERT_CHECKING all install
	run_sql_tests "assertions" "$work/assert" "$assert_pg_config"
else
	check "scratch PostgreSQL for the build with assertions" false
fi

# 3. clang
copy_tree "$work/clang"
check "clang build with -Werror" \
	make -C "$work/clang" -s PG_CONFIG="$pg_config" CC=clang PG_CFLAGS=-Werror

# 4. the Debian package, unpacked into a scratch PostgreSQL and tested from
# a tree that has no build of its own
copy_tree "$work/deb/src"
check "Debian package build" \
	sh -c "cd '$work/deb/src' && dpkg-buildpackage -us -uc -b"
deb=$(ls "$work"/deb/postgresql-*-snowflake_*.deb 2>/dev/null | head -n 1)
if [ -n "$deb" ] && deb_pg_config=$(clean_pg_tree "$work/pg-deb"); then
	check "Debian package unpacked: $(basename "$deb")" dpkg-deb -x "$deb" "$work/pg-deb"
	copy_tree "$work/deb-test"
	run_sql_tests "Debian package" "$work/deb-test" "$deb_pg_config"
else
	check "Debian package unpacked into a scratch PostgreSQL" false
fi

passed=$(($(grep -cE "$passed_re" "$log") + steps_passed))
failed=$(($(grep -cE "$failed_re" "$log") + steps_failed))
[ "$failed" -ne 0 ] && status=1
echo "$passed passed, $failed failed"
exit $status
