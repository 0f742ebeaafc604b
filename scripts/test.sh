#!/bin/bash
#
# test.sh: the whole test suite, from a fresh Debian 12 machine.
#
# Installs what is missing (scripts/setup.sh --test), then builds snowflake the ways
# others build it and tests each build.  On PostgreSQL 15:
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
# On PostgreSQL 16, 17 and 18, and on 19beta3 (a beta, an early warning;
# its steps say "(beta)"), each built from its source tarball in
# ../shared/pg once per machine (scripts/build-pg.sh):
#
#   gcc -Werror    built with warnings as errors and installed into a
#                  scratch copy of that build; runs every test, as on 15.
#                  Its TAP tests may run pg_upgrade from each major tested
#                  before it (SNOWFLAKE_UPGRADE_FROM_BINDIR).
#
# On PostgreSQL 16, 17 and 18 with Citus (scripts/build-citus.sh, from
# Citus's tarball in ../shared/pg), built the same way into a scratch copy
# of that build: t/046_citus.pl, a Citus cluster, which the runs above skip.
# SNOWFLAKE_CITUS_MAJORS names fewer (Citus 13.2.2, the one for 15, does
# not build against Debian's 15.20: docs/citus.md).
#
# A major without its tarball is not tested, and the output says so at its
# step and again before the closing line.
#
# The scratch copies live in a temporary directory; nothing but the gcc
# build for 15 is installed on the machine.  initdb refuses to run as root,
# so the tests run as the "postgres" user in copies of this tree.  Every
# step names its major.  Before the closing line come, for each regression
# or isolation run that failed, the start of its diffs; for each TAP file
# that failed, the end of its log and the lines of its servers' logs that
# tell of a crash; then the name of every step that failed (the temporary
# directory, and with it the logs, is removed on exit).  That line, "N passed, N failed", counts every test
# of every major: each build, each regression and isolation test and each
# TAP assertion.
#
# SNOWFLAKE_PG_CONFIG names the PostgreSQL 15 to build for and install into
# (default: Debian's); PROVE_JOBS the TAP files run at once;
# SNOWFLAKE_GIT_DIR the git repository whose history t/044 builds 1.3 from
# (default: a bare copy of this checkout's, which the unprivileged user can
# read wherever the checkout lies; the copies the tests run in have no
# .git).
#
set -uo pipefail
cd "$(dirname "$0")/.."

export SNOWFLAKE_PG_CONFIG=${SNOWFLAKE_PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
pg_config=$SNOWFLAKE_PG_CONFIG
prove_jobs=${PROVE_JOBS:-4}

scripts/setup.sh --test || { echo "0 passed, 1 failed"; exit 1; }

work=$(mktemp -d /tmp/snowflake-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
log="$work/test.log"
build_log="$work/build.log"
export PG_TEST_PORT_DIR=${PG_TEST_PORT_DIR:-/tmp/pg_test_ports}
mkdir -p -m 1777 "$PG_TEST_PORT_DIR"

# the major version of the PostgreSQL that the pg_config $1 describes
pg_major()
{
	"$1" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/'
}

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
	major=$(pg_major "$pg_config")
	mkdir -p "$root/usr/lib/postgresql" "$root/usr/share/postgresql" "$root/usr/include"
	cp -a "$(dirname "$("$pg_config" --bindir)")" "$root/usr/lib/postgresql/$major" &&
		cp -a "$("$pg_config" --sharedir)" "$root/usr/share/postgresql/$major" &&
		ln -s "$(dirname "$(dirname "$("$pg_config" --includedir-server)")")" \
			"$root/usr/include/postgresql" || return 1
	rm -rf "$root/usr/lib/postgresql/$major/lib/snowflake.so" \
		"$root/usr/lib/postgresql/$major/lib/bitcode/snowflake" \
		"$root/usr/lib/postgresql/$major/lib/bitcode/snowflake.index.bc" \
		"$root/usr/share/postgresql/$major/extension/"snowflake[-._]*
	if [ -n "$(find "$root/usr/lib" "$root/usr/share" -name 'snowflake*')" ]; then
		echo "snowflake files left in the clean tree $root" >&2
		return 1
	fi
	echo "$root/usr/lib/postgresql/$major/bin/pg_config"
}

# count_results: "PASSED FAILED" from the output of one test run on stdin,
# read from the runner's own summary (and prove's "Bailout called.", a failed
# test).  pg_regress and pg_isolation_regress
# end with "All N tests passed.", "N of M tests failed." or, with ignored
# tests, "N of M tests passed, ..." ("# " before it from PostgreSQL 16 on).
# prove ends with "Files=F, Tests=N, ..." (N counts every assertion run,
# failing ones too) and, when something went wrong, a "Test Summary Report"
# with a line "t/file.pl (Wstat: W Tests: N Failed: n)" for each file that
# failed: n assertions failed; a file that failed none but exited non-zero
# or broke its plan ("Parse errors:", as when it died before done_testing)
# counts as one failed test.  Where prove reported, the pg_regress lines
# are not looked for.  Prints "0 0" when neither runner reported.
count_results()
{
	awk '
	function end_file()
	{
		if (in_file)
		{
			tap_assertions_failed += file_failed
			tap_failed += file_failed > 0 ? file_failed : (file_bad ? 1 : 0)
		}
		in_file = 0
	}
	{
		line = $0
		sub(/^# /, "", line)
		sub(/^ +/, "", line)
	}
	line ~ /^All [0-9]+ tests passed/ {
		split(line, w, " ")
		regress_passed += w[2]
	}
	line ~ /^[0-9]+ of [0-9]+ tests failed/ {
		split(line, w, " ")
		regress_failed += w[1]
		regress_passed += w[3] - w[1]
	}
	line ~ /^[0-9]+ of [0-9]+ tests passed/ {
		split(line, w, " ")
		regress_passed += w[1]
		regress_failed += w[3] - w[1]
	}
	# a TAP file that bails out stops prove, whose summary then counts
	# only the files that ran: the bailout is a failed test, and the files
	# it kept from running are missing from the count
	/^Bailout called\./ { tap_failed += 1 }
	/^Files=[0-9]+, Tests=[0-9]+,/ {
		end_file()
		n = $0
		sub(/^Files=[0-9]+, Tests=/, "", n)
		sub(/,.*/, "", n)
		tap_run += n
		tap_seen = 1
	}
	/^[^ ].*\(Wstat: .* Tests: [0-9]+ Failed: [0-9]+\)$/ {
		end_file()
		in_file = 1
		n = $0
		sub(/.*Failed: /, "", n)
		sub(/\)$/, "", n)
		file_failed = n + 0
		n = $0
		sub(/.*\(Wstat: /, "", n)
		sub(/ .*/, "", n)
		file_bad = n != "0"
		next
	}
	in_file && /^  Parse errors:/ { file_bad = 1 }
	in_file && !/^  / { end_file() }
	END {
		end_file()
		if (tap_seen)
			print tap_run - tap_assertions_failed, tap_failed + 0
		else
			print regress_passed + 0, regress_failed + 0
	}
	'
}
touch "$log"

# t/044's history of 1.3, readable by the user the tests run as
if [ -z "${SNOWFLAKE_GIT_DIR:-}" ] && git rev-parse --git-dir >/dev/null 2>&1; then
	git clone -q --bare . "$work/history.git" 2>/dev/null &&
		chmod -R a+rX "$work/history.git" &&
		export SNOWFLAKE_GIT_DIR="$work/history.git"
fi

status=0
failed_steps=
steps_passed=0
steps_failed=0
tests_passed=0
tests_failed=0

# check NAME COMMAND...: run a build step, count it as one test; on failure
# show the end of its output
check()
{
	local name=$1 start
	shift
	echo "=== $name"
	echo "=== $name" >>"$build_log"
	start=$(wc -l <"$build_log")
	if "$@" >>"$build_log" 2>&1; then
		steps_passed=$((steps_passed + 1))
		echo "ok: $name"
	else
		steps_failed=$((steps_failed + 1))
		status=1
		echo "FAILED: $name (see below)"
		failed_steps="$failed_steps$name"$'\n'
		tail -n +"$((start + 1))" "$build_log" | tail -n 30
	fi
}

# lines of a server log that tell of a crash or a failed assertion
crash_lines='PANIC|terminated by signal|exited with exit code [2-9]|TRAP'

# tap_failure_logs NAME DIR OUTPUT: for each TAP file that prove's OUTPUT
# lists as failed, the last 60 lines of its log and its servers' crash
# lines, kept in $failures for the end of the run (DIR goes with $work)
tap_failure_logs()
{
	local name=$1 dir=$2 output=$3 file test logs
	for file in $(sed -nE 's/^(t\/[^ ]+\.pl) +\(Wstat: .*/\1/p' "$output"); do
		test=$(basename "$file" .pl)
		logs="$dir/tmp_check/log"
		{
			echo "--- $name: $file failed; the end of its log, regress_log_$test:"
			tail -n 60 "$logs/regress_log_$test" 2>&1
			echo "--- $name: $file: its servers' logs, lines matching '$crash_lines':"
			find "$logs" -maxdepth 1 -name "${test}_*.log" -exec grep -HE "$crash_lines" {} + |
				sed "s|^$logs/||" | head -n 100
		} >>"$failures"
	done
}

# unfinished_tap_logs NAME DIR OUTPUT: the end of the log of each TAP file
# that wrote one in DIR but whose result prove's OUTPUT lacks (prove -j
# prints a file's output when it ends): the files that were running when a
# TAP run ended without its summary
unfinished_tap_logs()
{
	local name=$1 dir=$2 output=$3 log test
	for log in "$dir"/tmp_check/log/regress_log_*; do
		[ -e "$log" ] || continue
		test=${log##*/regress_log_}
		grep -qE "^(\[[0-9:]+\] )?t/$test\.pl \.+" "$output" && continue
		echo "--- $name: t/$test.pl did not end; the end of its log:"
		tail -n 20 "$log"
	done
}

# run_tests NAME DIR PG_CONFIG MAKE-ARGS...: make installcheck (or another
# target) as postgres in DIR against the PostgreSQL of PG_CONFIG.  A run that
# fails without a failing test (a server that did not start, a TAP script
# that died) counts as one failed test.
run_tests()
{
	local name=$1 dir=$2 pgc=$3 out="$work/run.out" ok=1 passed failed
	shift 3
	echo "=== $name"
	echo "=== $name" >>"$log"
	chown -R postgres "$dir"
	runuser -u postgres -- env PATH="$("$pgc" --bindir):$PATH" \
		make -C "$dir" -s PG_CONFIG="$pgc" "$@" 2>&1 | tee "$out" || ok=0
	cat "$out" >>"$log"
	read -r passed failed < <(count_results <"$out")
	tests_passed=$((tests_passed + passed))
	tests_failed=$((tests_failed + failed))
	# a run that reports no test, or fails without a failing test, counts
	# as one failed test
	if [ "$passed" -eq 0 ] && [ "$failed" -eq 0 ] ||
		{ [ "$ok" -eq 0 ] && [ "$failed" -eq 0 ]; }; then
		steps_failed=$((steps_failed + 1))
		{
			echo "--- $name: failed without a failing test; the last 60 lines of its output:"
			tail -n 60 "$out"
			unfinished_tap_logs "$name" "$dir" "$out"
		} >>"$failures"
	fi
	if [ "$ok" -eq 0 ] || [ "$failed" -ne 0 ]; then
		status=1
		failed_steps="$failed_steps$name: $failed failed"$'\n'
		for diffs in "$dir"/regression.diffs "$dir"/output_iso/regression.diffs \
			"$dir"/output_nopreload/regression.diffs; do
			[ -s "$diffs" ] && {
				echo "--- $name: $diffs"
				cat "$diffs"
				{
					echo "--- $name: the first 80 lines of $(basename "$(dirname "$diffs")")/regression.diffs"
					head -n 80 "$diffs"
				} >>"$failures"
			}
		done
		tap_failure_logs "$name" "$dir" "$out"
		if grep -q '^Bailout called' "$out"; then
			{
				echo "--- $name: $(grep -m1 '^Bailout called' "$out")"
				unfinished_tap_logs "$name" "$dir" "$out"
			} >>"$failures"
		fi
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

# the TAP files that take longest, from two minutes down to half a minute
# each on 2 cores, the longest first (the fresh-clone run of 93687d7):
# prove -j starts the files in the order given, and these go first, so that
# the run does not end with one of them running alone
slow_tap_files="t/033_registry_faults.pl t/037_registry_went_back.pl
	t/044_registry_rolling_upgrade.pl t/043_patroni.pl
	t/038_registry_dump_reload.pl t/031_fencing.pl t/030_registry.pl
	t/034_registry_lease.pl t/045_registry_patroni.pl t/040_pg_upgrade.pl
	t/009_lead_edge.pl t/011_crash.pl"

# every TAP file, the slow ones first; prove -j runs the files in parallel
# but prints each file's output whole, and --timer when it started and how
# long it took
run_tap_tests()
{
	local name=$1 dir=$2 pgc=$3 slow rest= file
	slow=$(echo $slow_tap_files)
	for file in t/*.pl; do
		case " $slow " in
		*" $file "*) ;;
		*) rest="$rest $file" ;;
		esac
	done
	run_tests "$name: TAP tests" "$dir" "$pgc" \
		installcheck REGRESS= ISOLATION= PROVE_TESTS="$slow$rest" \
		PROVE_FLAGS="--verbose --timer -j$prove_jobs"
}

# build_into_copy NAME PG_CONFIG PG_DIR DIR: a scratch copy in PG_DIR of the
# PostgreSQL build of PG_CONFIG (from the cache, which stays as it is),
# without snowflake's files, and snowflake built from a copy of this tree in
# DIR with warnings as errors and installed into it
build_into_copy()
{
	local name=$1 cache_config=$2 pg_dir=$3 dir=$4
	check "$name: a scratch copy of its build" \
		cp -a "$(dirname "$(dirname "$cache_config")")" "$pg_dir"
	find "$pg_dir/lib" "$pg_dir/share" -name 'snowflake*' -prune -exec rm -rf {} +
	copy_tree "$dir"
	check "$name: gcc build with -Werror" \
		make -C "$dir" -s PG_CONFIG="$pg_dir/bin/pg_config" PG_CFLAGS=-Werror all install
}

failures="$work/failures.log"
pg="PostgreSQL $(pg_major "$pg_config")"

# 1. gcc with warnings as errors, installed; every test
copy_tree "$work/gcc"
check "$pg: gcc build with -Werror" \
	make -C "$work/gcc" -s PG_CONFIG="$pg_config" PG_CFLAGS=-Werror all install
run_sql_tests "$pg: gcc build" "$work/gcc" "$pg_config"
run_tap_tests "$pg: gcc build" "$work/gcc" "$pg_config"

# 2. assertions, in a scratch PostgreSQL
copy_tree "$work/assert"
if assert_pg_config=$(clean_pg_tree "$work/pg-assert"); then
	check "$pg: build with assertions" \
		make -C "$work/assert" -s PG_CONFIG="$assert_pg_config" \
		PG_CFLAGS=-Werror PG_CPPFLAGS=-DUSE_ASSERT_CHECKING all install
	run_sql_tests "$pg: assertions" "$work/assert" "$assert_pg_config"
else
	check "$pg: scratch PostgreSQL for the build with assertions" false
fi

# 3. clang
copy_tree "$work/clang"
check "$pg: clang build with -Werror" \
	make -C "$work/clang" -s PG_CONFIG="$pg_config" CC=clang PG_CFLAGS=-Werror

# 4. the Debian package, unpacked into a scratch PostgreSQL and tested from
# a tree that has no build of its own
copy_tree "$work/deb/src"
check "$pg: Debian package build" \
	sh -c "cd '$work/deb/src' && dpkg-buildpackage -us -uc -b"
deb=$(ls "$work"/deb/postgresql-*-snowflake_*.deb 2>/dev/null | head -n 1)
if [ -n "$deb" ] && deb_pg_config=$(clean_pg_tree "$work/pg-deb"); then
	check "$pg: Debian package unpacked: $(basename "$deb")" dpkg-deb -x "$deb" "$work/pg-deb"
	copy_tree "$work/deb-test"
	run_sql_tests "$pg: Debian package" "$work/deb-test" "$deb_pg_config"
else
	check "$pg: Debian package unpacked into a scratch PostgreSQL" false
fi

# 5. The supported majors after 15 and the next major, a beta (an early
# warning of what it breaks), each built once per machine from
# ../shared/pg; snowflake goes into a scratch copy of that build, which
# stays as it is.  Every test.  The TAP files get every older major tested
# before with snowflake installed, to pg_upgrade from.  t/000_metadata.pl
# reads the newest supported major here.
supported_majors="16 17 18"
beta_majors="19"
upgrade_from=$("$pg_config" --bindir)
not_tested=
for major in $supported_majors $beta_majors; do
	cache_config=$(scripts/build-pg.sh "$major")
	case $? in
	0)
		# the name in every step: the major, and the beta or release
		# candidate it is when it is one
		version=$("$cache_config" --version | sed -E 's/^PostgreSQL ([^ ]+).*/\1/')
		case $version in
		*beta* | *rc*) name="PostgreSQL $version (beta)" ;;
		*) name="PostgreSQL $major" ;;
		esac
		cfg="$work/pg$major/bin/pg_config"
		build_into_copy "$name" "$cache_config" "$work/pg$major" "$work/gcc$major"
		run_sql_tests "$name: gcc build" "$work/gcc$major" "$cfg"
		SNOWFLAKE_UPGRADE_FROM_BINDIR=$upgrade_from \
			run_tap_tests "$name: gcc build" "$work/gcc$major" "$cfg"
		[ -f "$("$cfg" --pkglibdir)/snowflake.so" ] &&
			upgrade_from="$upgrade_from:$("$cfg" --bindir)"
		;;
	2)
		missing="PostgreSQL $major NOT TESTED: scripts/build-pg.sh found no source tarball of it in ${SNOWFLAKE_PG_SOURCES:-../shared/pg} (SNOWFLAKE_PG_SOURCES names another directory)"
		echo "$missing"
		not_tested="$not_tested$missing"$'\n'
		;;
	*)
		check "PostgreSQL $major: built by scripts/build-pg.sh $major (its errors are above)" false
		;;
	esac
done

# 6. Citus: t/046_citus.pl, which the runs above skip, against a PostgreSQL
# with Citus installed, built once per machine into a copy of that major's
# build (scripts/build-citus.sh); snowflake goes into a scratch copy of it.
# Every major Citus 14 builds for: about a minute each (the test starts
# five servers), and a build of Citus each, once per machine.
# SNOWFLAKE_CITUS_MAJORS="18" tests the newest only.
citus_majors="${SNOWFLAKE_CITUS_MAJORS:-16 17 18}"
for major in $citus_majors; do
	cache_config=$(scripts/build-citus.sh "$major")
	case $? in
	0)
		name="PostgreSQL $major with Citus"
		build_into_copy "$name" "$cache_config" "$work/citus$major" "$work/citus-gcc$major"
		run_tests "$name: TAP test t/046_citus.pl" "$work/citus-gcc$major" \
			"$work/citus$major/bin/pg_config" installcheck REGRESS= ISOLATION= \
			PROVE_TESTS=t/046_citus.pl PROVE_FLAGS="--verbose --timer"
		;;
	2)
		missing="Citus on PostgreSQL $major NOT TESTED: scripts/build-citus.sh found no source tarball of Citus for it, or of PostgreSQL $major, in ${SNOWFLAKE_PG_SOURCES:-../shared/pg} (SNOWFLAKE_PG_SOURCES names another directory)"
		echo "$missing"
		not_tested="$not_tested$missing"$'\n'
		;;
	*)
		check "Citus on PostgreSQL $major: built by scripts/build-citus.sh $major (its errors are above)" false
		;;
	esac
done

if [ -s "$failures" ]; then
	echo "=== the tests that failed: their diffs and logs"
	cat "$failures"
fi
if [ -n "$failed_steps" ]; then
	echo "=== the steps that failed"
	printf '%s' "$failed_steps"
fi
printf '%s' "$not_tested"
passed=$((tests_passed + steps_passed))
failed=$((tests_failed + steps_failed))
[ "$failed" -ne 0 ] && status=1
echo "$passed passed, $failed failed"
exit $status
