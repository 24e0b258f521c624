#!/bin/sh
# Run every tests/integration/t_*.sh against the built binaries.
# Usage: run.sh BUILD_DIR [t_name.sh ...]
# Each script exits 0 when it passed; its output is shown only on failure
# (or always with VERBOSE=1).  The closing line counts the scripts.
set -u
build=${1:?usage: run.sh BUILD_DIR [tests...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
if [ $# -eq 0 ]; then
	set -- "$here"/t_*.sh
fi
passed=0
failed=0
names=""
# A failing test's log is printed where it fails and its tail again at
# the end, so that the tail of a CI log says what failed and why.
keep=$(mktemp -d) || exit 1
trap 'rm -rf "$keep"' EXIT
for t in "$@"; do
	name=$(basename "$t" .sh)
	log="$keep/$name.log"
	start=$(date +%s)
	PG_BUILD="$build" PG_TOP="$top" sh "$t" >"$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok   $name (${secs}s)"
		[ "${VERBOSE:-0}" = 1 ] && sed 's/^/    /' "$log"
	else
		failed=$((failed + 1))
		names="$names $name"
		echo "FAIL $name (rc=$rc, ${secs}s)"
		sed 's/^/    /' "$log"
		continue
	fi
	rm -f "$log"
done
for log in "$keep"/*.log; do
	[ -e "$log" ] || continue
	echo "=== $(basename "$log" .log): the last 40 lines of its log, again"
	tail -n 40 "$log" | sed 's/^/    /'
done
echo "integration: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || { echo "integration: failed:$names"; exit 1; }
