#!/bin/sh
# Run each cmocka test binary from the repository root (fixtures are named
# relative to it), then print one closing line for the whole suite.
# Exits non-zero when any test failed or a binary did not run to the end.
# A failing binary's output is printed again at the very end, so that the
# tail of a CI log (often all that is kept) shows what failed and why.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# Process-lifetime allocations of libraries we link (see the file).
LSAN_OPTIONS="suppressions=$here/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS
passed=0
failed=0
bad_bins=""
keep=$(mktemp -d) || exit 1
trap 'rm -rf "$keep"' EXIT
for bin in "$@"; do
	out="$keep/$(basename "$bin").out"
	"$bin" >"$out" 2>&1
	rc=$?
	cat "$out"
	# cmocka: "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s), listed below:"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9][0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9][0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	if [ "$rc" -ne 0 ] || [ -z "$p" ]; then
		why="rc=$rc"
		[ -n "$p" ] || why="$why, no summary line"
		[ -s "$out" ] || why="$why, no output at all (disk full?)"
		bad_bins="$bad_bins $(basename "$bin")($why)"
		[ -n "$f" ] || failed=$((failed + 1))
	else
		rm -f "$out"
	fi
done
for out in "$keep"/*.out; do
	[ -e "$out" ] || continue
	echo "=== $(basename "$out" .out): the last 40 lines of its output, again"
	tail -n 40 "$out"
done
echo "unit: $passed passed, $failed failed"
if [ -n "$bad_bins" ]; then
	echo "unit: failing binaries:$bad_bins"
	df -h "${TMPDIR:-/tmp}" . 2>/dev/null | sed 's/^/unit: disk: /'
	exit 1
fi
exit 0
