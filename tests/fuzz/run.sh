#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Run libFuzzer targets one after the other (the machine is shared: one
# process at a time) and print a table of what each did:
#
#   ./tests/fuzz/run.sh build/fuzz/fuzz_mail build/fuzz/fuzz_mbox ...
#
# Each target NAME=fuzz_X runs from its seed corpus tests/fuzz/corpus/X/
# (read only) and its working corpus build/fuzz/corpus/X/ (where libFuzzer
# keeps what it finds), under the sanitizers it was built with, with
# -print_final_stats=1, whose stat:: lines the table reads.  Findings
# (crash-, leak-, timeout-, oom- files) go to build/fuzz/findings/X/; the
# log of the run to build/fuzz/log/X.log.
#
# Environment:
#   FUZZ_SECONDS   seconds per target (default 30), when FUZZ_RUNS is unset
#   FUZZ_RUNS      run each target until this many executions instead,
#                  capped at FUZZ_MAX_TIME seconds (default 600); the table
#                  then says whether each reached it
#   FUZZ_TIMEOUT   seconds one input may take before it is a finding (10)
#
# Exits 1 when any target has a finding (or did not start), else 0.

set -u

seconds=${FUZZ_SECONDS:-30}
runs=${FUZZ_RUNS:-}
max_time=${FUZZ_MAX_TIME:-600}
timeout=${FUZZ_TIMEOUT:-10}
src=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$src/../.." && pwd)
out=$top/build/fuzz
table=$out/table.txt

[ $# -gt 0 ] || { echo "usage: $0 FUZZ_BINARY..." >&2; exit 2; }
mkdir -p "$out/log" "$out/corpus" "$out/findings" || exit 2

# The longest input per target: what the parser meets in practice, with
# room, and small enough that mutations stay fast.
max_len() {
	case $1 in
	harness|mbox|apply) echo 262144 ;;
	mail) echo 131072 ;;
	bench_mempool|bench_testpmd) echo 16384 ;;
	route|subject|apply_paths|sanitize|base64|runone_line) echo 8192 ;;
	*) echo 65536 ;;
	esac
}

# stat NAME LOG: the value of libFuzzer's "stat::NAME:" line, or "-".
stat() {
	v=$(sed -n "s/^stat::$1:[[:space:]]*//p" "$2" | tail -n 1)
	echo "${v:--}"
}

if [ -n "$runs" ]; then
	what="until $runs executions (at most ${max_time}s each)"
	limit="-runs=$runs -max_total_time=$max_time"
else
	what="${seconds}s each"
	limit="-max_total_time=$seconds"
fi
echo "fuzz: $# targets, $what, one at a time"

rows=""
bad=0
total_start=$(date +%s)
for bin in "$@"; do
	name=$(basename "$bin")
	short=${name#fuzz_}
	seeds=$src/corpus/$short
	work=$out/corpus/$short
	found=$out/findings/$short
	log=$out/log/$short.log
	mkdir -p "$work" "$found" "$seeds"
	# Findings of an earlier run stay where they were until looked at:
	# count only this run's.
	ls "$found" >"$out/before"
	echo "fuzz: $name ..."
	start=$(date +%s)
	# shellcheck disable=SC2086 # limit is several options
	"$bin" $limit -max_len="$(max_len "$short")" -timeout="$timeout" \
		-print_final_stats=1 -artifact_prefix="$found/" \
		"$work" "$seeds" >"$log" 2>&1
	rc=$?
	end=$(date +%s)
	secs=$((end - start))
	execs=$(stat number_of_executed_units "$log")
	rate=$(stat average_exec_per_sec "$log")
	# The corpus as libFuzzer holds it at the end: its last "corp: N/" .
	corp=$(sed -n 's/.*corp: \([0-9]*\)\/.*/\1/p' "$log" | tail -n 1)
	new=$(ls "$found" | grep -vxF -f "$out/before" | grep -E '^(crash|leak|timeout|oom)-' |
		sed "s|^|$found/|" | tr '\n' ' ')
	nfind=$(echo "$new" | wc -w)
	if [ "$rc" -ne 0 ] && [ "$nfind" -eq 0 ]; then
		# A death without a file (a bad option, a crash at start-up).
		new="exit $rc, see $log"
		nfind=1
	fi
	[ "$nfind" -eq 0 ] || bad=1
	reached=""
	if [ -n "$runs" ]; then
		if [ "$execs" != "-" ] && [ "$execs" -ge "$runs" ]; then
			reached=yes
		else
			reached=no
		fi
	fi
	findings=$nfind
	[ "$nfind" -eq 0 ] || findings="$nfind: $new"
	rows="$rows$name|$secs|$execs|$rate|${corp:--}|$reached|$findings
"
	echo "fuzz: $name: $execs executions in ${secs}s, $nfind findings"
done
total=$(($(date +%s) - total_start))

{
	if [ -n "$runs" ]; then
		printf '%-22s %8s %12s %9s %8s %9s  %s\n' target seconds executions exec/s corpus \
			"reached" findings
	else
		printf '%-22s %8s %12s %9s %8s  %s\n' target seconds executions exec/s corpus findings
	fi
	printf '%s' "$rows" | while IFS='|' read -r n s e r c re f; do
		if [ -n "$runs" ]; then
			printf '%-22s %8s %12s %9s %8s %9s  %s\n' "$n" "$s" "$e" "$r" "$c" "$re" "$f"
		else
			printf '%-22s %8s %12s %9s %8s  %s\n' "$n" "$s" "$e" "$r" "$c" "$f"
		fi
	done
	echo "total: ${total}s, $(uname -n), $(date -u '+%Y-%m-%d %H:%M UTC')"
} >"$table"
cat "$table"
if [ "$bad" -ne 0 ]; then
	echo "fuzz: FINDINGS (reproduce: BINARY FILE; logs in $out/log/)"
	exit 1
fi
exit 0
