#!/bin/sh
# Run each cmocka test binary from the repository root (fixtures are named
# relative to it), then print one closing line for the whole suite.
# Exits non-zero when any test failed or a binary did not run to the end.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# Process-lifetime allocations of libraries we link (see the file).
LSAN_OPTIONS="suppressions=$here/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS
passed=0
failed=0
bad_bins=""
for bin in "$@"; do
	out=$(mktemp)
	"$bin" >"$out" 2>&1
	rc=$?
	cat "$out"
	# cmocka: "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s), listed below:"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9][0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9][0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	rm -f "$out"
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	if [ "$rc" -ne 0 ] || [ -z "$p" ]; then
		bad_bins="$bad_bins $(basename "$bin")(rc=$rc)"
		[ -n "$f" ] || failed=$((failed + 1))
	fi
done
echo "unit: $passed passed, $failed failed"
if [ -n "$bad_bins" ]; then
	echo "unit: failing binaries:$bad_bins"
	exit 1
fi
exit 0
