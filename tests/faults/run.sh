#!/bin/sh
# The fault-injection suite (make check-faults): every tests/faults/f_*.sh
# injects one kind of fault, FAULT_REPS times (make check runs it with
# FAULT_REPS=1, the short form), and reports one or more rows through
# fault_row (tests/faults/lib.sh).  This script prints them as one table:
#
#   case | repetitions | jobs | completed | results lost | duplicated results
#        | checks lost | duplicated checks
#
# and fails when a case script fails, reports no row, or any row has a lost
# or duplicated result or check.
# Usage: run.sh BUILD_DIR [f_name.sh ...]
set -u
build=${1:?usage: run.sh BUILD_DIR [cases...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
if [ $# -eq 0 ]; then
	set -- "$here"/f_*.sh
fi
: "${FAULT_REPS:=1}"
export FAULT_REPS
rows=$(mktemp)
failed=""
for t in "$@"; do
	name=$(basename "$t" .sh)
	log=$(mktemp)
	mine=$(mktemp)
	start=$(date +%s)
	PG_BUILD="$build" PG_TOP="$top" PG_FAULT_ROWS="$mine" sh "$t" >"$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [ "$rc" -ne 0 ] || [ ! -s "$mine" ]; then
		failed="$failed $name"
		echo "FAIL $name (rc=$rc, ${secs}s$( [ -s "$mine" ] || echo ', no row'))"
		sed 's/^/    /' "$log"
	else
		echo "ok   $name (${secs}s)"
		[ "${VERBOSE:-0}" = 1 ] && sed 's/^/    /' "$log"
	fi
	cat "$mine" >>"$rows"
	rm -f "$log" "$mine"
done
echo
echo "fault injection, FAULT_REPS=$FAULT_REPS, $(date -u +%Y-%m-%d), $(uname -n), $(nproc) cores"
# One row per line: case|reps|jobs|completed|rlost|rdup|clost|cdup
awk -F'|' '
BEGIN {
	h[1] = "case"; h[2] = "repetitions"; h[3] = "jobs"; h[4] = "completed"
	h[5] = "results lost"; h[6] = "duplicated results"; h[7] = "checks lost"
	h[8] = "duplicated checks"
	for (i = 1; i <= 8; i++) w[i] = length(h[i])
}
NF == 8 {
	n++
	for (i = 1; i <= 8; i++) { c[n, i] = $i; if (length($i) > w[i]) w[i] = length($i) }
	for (i = 2; i <= 8; i++) tot[i] += $i
	if ($5 + $6 + $7 + $8 > 0) bad++
}
function line(a, i, s) {
	s = sprintf("%-" w[1] "s", a[1])
	for (i = 2; i <= 8; i++) s = s sprintf(" | %" w[i] "s", a[i])
	print s
}
END {
	line(h)
	s = ""
	for (i = 1; i <= 8; i++) s = s (i > 1 ? "-+-" : "") sprintf("%" w[i] "s", "")
	gsub(/ /, "-", s); print s
	for (r = 1; r <= n; r++) { for (i = 1; i <= 8; i++) a[i] = c[r, i]; line(a) }
	a[1] = "total"; for (i = 2; i <= 8; i++) a[i] = tot[i] + 0
	print s; line(a)
	exit bad > 0
}' "$rows"
bad=$?
rm -f "$rows"
[ "$bad" -eq 0 ] || { echo "faults: a row lost or duplicated a result or check"; exit 1; }
[ -z "$failed" ] || { echo "faults: failed:$failed"; exit 1; }
echo "faults: every row 0 lost, 0 duplicated"
