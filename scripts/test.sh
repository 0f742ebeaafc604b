#!/bin/bash
#
# test.sh: the whole test suite, from a fresh Debian 12 machine.
#
# Installs what is missing, builds and installs snowflake, then runs the
# regression tests, the isolation tests and the TAP tests against throwaway
# servers that the tests start and stop themselves.  initdb refuses to run
# as root, so the tests run as the "postgres" user in a copy of this tree.
# Ends with one line "N passed, N failed" that counts every test: each
# regression and isolation test and each TAP assertion.
#
set -uo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)

scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

work=$(mktemp -d /tmp/snowflake-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
tar --exclude=.git --exclude=./quickstart --exclude='tmp_check*' --exclude=results -cf - . | tar -C "$work" -xf -
chown -R postgres "$work"

log="$work/test.log"
pg_config=/usr/lib/postgresql/15/bin/pg_config
as_postgres()
{
	runuser -u postgres -- env PATH="/usr/lib/postgresql/15/bin:$PATH" \
		make -C "$work" -s PG_CONFIG=$pg_config "$@"
}

status=0
run_step()
{
	local name=$1
	shift
	echo "=== $name"
	if ! as_postgres "$@" 2>&1 | tee -a "$log"; then
		status=1
		for diffs in "$work"/regression.diffs "$work"/output_iso/regression.diffs \
			"$work"/output_nopreload/regression.diffs; do
			[ -s "$diffs" ] && { echo "--- $diffs"; cat "$diffs"; }
		done
	fi
}

run_step "regression tests" installcheck ISOLATION= TAP_TESTS=
run_step "regression tests without the preload" installcheck-nopreload
run_step "isolation tests" installcheck REGRESS= TAP_TESTS=
run_step "TAP tests" installcheck REGRESS= ISOLATION= PROVE_FLAGS=--verbose

# pg_regress and pg_isolation_regress print one line a test; prove --verbose
# prints one line an assertion.
passed=$(grep -cE '^(test +|     )?[A-Za-z0-9_-]+ +\.\.\. ok|^ok [0-9]+' "$log")
failed=$(grep -cE '^(test +|     )?[A-Za-z0-9_-]+ +\.\.\. FAILED|^not ok [0-9]+' "$log")
# a TAP script that died without a failing assertion still failed
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
	failed=1
fi
[ "$failed" -ne 0 ] && status=1
echo "$passed passed, $failed failed"
exit $status
