#!/bin/sh
# Verdict quality on real runs of the demo profile on this machine (issue
# 6): PG_BENCH_VERDICT_RUNS (default 20) one-patch series whose patch
# changes no code (A/A: base and patched measure the same code), then as
# many whose patch adds work to every mempool get and put (a deliberate
# slowdown, tests/integration/dpdk_lib.sh), each taken to its context
# verdict by the real controller (planner, scheduler, verdict pass with its
# follow-ups) and a real agent with the DPDK runner, release build mode
# only, at the profile's repetitions.  Prints how many A/A runs failed or
# warned (goal: no fail, at most one warning) and how many slowdowns were
# called regressions (goal: at least 19 of 20).  About 70 s per A/A run and
# 140 s per slowdown run (3 pairs cannot decide: one follow-up) here.
set -u
PG_BUILD=${PG_BUILD:?run through make bench}
PG_TOP=$(cd "$(dirname "$0")/.." && pwd)
export PG_BUILD PG_TOP
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/dpdk_lib.sh"
runs=${PG_BENCH_VERDICT_RUNS:-20}

dpdk_setup
dpdk_profile '.contexts["perfgate-demo-Performance"].build_modes = ["demo-release"]'
dpdk_controller verdict-1
dpdk_agent_config verdict-1
"$AGENT" --config "$TMP/agent.json" --log-level warn >"$TMP/agent.log" 2>&1 &
agent=$!
stop_all() { kill -9 "$ctl" "$agent" 2>/dev/null; }
cleanup_hooks="stop_all"
q() { sqlite3 "$db" "$1"; }

# verdict_of N KIND: a series of KIND taken to its context verdict; prints
# the verdict's state and description.
verdict_of() {
	dpdk_patch "$2" "$TMP/s.mbox" "bench-$2-$1-$$@example.org" "run $1"
	t0=$(date +%s)
	before=$(q "SELECT coalesce(max(id), 0) FROM runs")
	dpdk_ingest_plan "$TMP/s.mbox"
	run=$(q "SELECT min(id) FROM runs WHERE id > $before")
	[ -n "$run" ] || { cat "$TMP/out"; fail "$2 series $1 was not planned into a run"; }
	i=0
	until [ -n "$(q "SELECT state FROM verdicts WHERE run_id = $run AND job_id IS NULL")" ]; do
		i=$((i + 1))
		[ $i -lt 1800 ] || { tail -n 20 "$TMP/agent.log"; fail "run $run: no verdict after 30 min"; }
		sleep 1
	done
	echo "$(( $(date +%s) - t0 )) $(cut -d' ' -f1 /proc/loadavg)" >>"$TMP/$2.time"
	q "SELECT metric || ' ' || state || ' ' || printf('%.2f', effect) || ' ' || n_base
	   FROM verdicts WHERE run_id = $run AND metric IS NOT NULL" >>"$TMP/$2.keys"
	q "SELECT state || ' ' || description FROM verdicts WHERE run_id = $run AND job_id IS NULL"
}

# keys KIND: per key over the runs of KIND, the key verdicts and the
# effect (patched against base, negative is worse): its median and range,
# and the largest number of runs per side a verdict needed.
keys() {
	sort -k1,1 -k3,3g "$TMP/$1.keys" | awk -v kind="$1" '
	function flush() {
		if (key == "") return
		printf "bench verdict_keys: %s %s runs=%d", kind, key, n
		for (s in st) printf " %s=%d", s, st[s]
		printf " effect_pct_median=%.1f min=%.1f max=%.1f max_runs_per_side=%d\n",
			e[int((n + 1) / 2)], e[1], e[n], maxn
	}
	$1 != key { flush(); key = $1; n = 0; maxn = 0; delete st; delete e }
	{ n++; st[$2]++; e[n] = $3; if ($4 > maxn) maxn = $4 }
	END { flush() }'
}

for kind in comment slowdown; do
	: >"$TMP/$kind.txt"
	: >"$TMP/$kind.keys"
	: >"$TMP/$kind.time"
	n=1
	while [ $n -le "$runs" ]; do
		verdict_of $n $kind >>"$TMP/$kind.txt"
		n=$((n + 1))
	done
done
count() { grep -c "^$1 " "$TMP/$2.txt"; }
echo "bench verdict_aa: runs=$runs success=$(count success comment) warning=$(count warning comment) fail=$(count fail comment) (goal: fail 0, warning <= 1)"
echo "bench verdict_detect: runs=$runs regression_found=$(count fail slowdown) warning=$(count warning slowdown) success=$(count success slowdown) (goal: >= 19 of 20)"
keys comment
keys slowdown
for kind in comment slowdown; do
	awk -v kind=$kind '{ s += $1; l += $2; if ($1 > m) m = $1 }
		END { printf "bench verdict_time: %s runs=%d total_s=%d mean_s=%.0f max_s=%d load1_mean=%.2f\n", kind, NR, s, s / NR, m, l / NR }' "$TMP/$kind.time"
done
sort "$TMP/comment.txt" "$TMP/slowdown.txt" | uniq -c | sort -rn | head -n 8 | sed 's/^/bench verdict_descriptions: /'
kill -TERM "$agent" "$ctl"
wait "$agent" "$ctl"
cleanup_hooks=""
