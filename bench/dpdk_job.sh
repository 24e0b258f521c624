#!/bin/sh
# One real DPDK job of the demo profile on this machine, end to end through
# the controller and the agent's DPDK runner, release build mode only, with
# PG_BENCH_REPS repetitions (default 10) of both benchmarks, base and
# patched interleaved, on a patch that changes no code (A/A).  Prints:
#   - the job's wall time and the share spent in benchmark runs, builds,
#     and the rest (mirror, checkouts, apply, harness, host check, uploads:
#     orchestration; goal under 2 % of the job);
#   - the spread of the base side's samples per benchmark key (coefficient
#     of variation, robust: MAD * 1.4826 / median, and classic), from which
#     the profile's noise limit and threshold can be set.
# The agent's work directory is the end-to-end test's ($PG_CACHE/e2e), so
# builds are incremental when `make check` ran before; the first run on a
# machine pays the cold build (about 9 minutes).
set -u
PG_BUILD=${PG_BUILD:?run through make bench}
PG_TOP=$(cd "$(dirname "$0")/.." && pwd)
export PG_BUILD PG_TOP
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/dpdk_lib.sh"
reps=${PG_BENCH_REPS:-10}

dpdk_setup
dpdk_patch comment "$TMP/aa.mbox" "bench-aa-$$@example.org"
dpdk_profile ".contexts[\"perfgate-demo-Performance\"].repetitions = $reps |
	.contexts[\"perfgate-demo-Performance\"].build_modes = [\"demo-release\"]"
dpdk_controller bench-1
stop_ctl() { kill -9 "$ctl" 2>/dev/null; }
cleanup_hooks="stop_ctl"
dpdk_ingest_plan "$TMP/aa.mbox"
dpdk_agent_config bench-1
"$AGENT" --config "$TMP/agent.json" --log-level warn --once >"$TMP/agent.log" 2>&1 ||
	{ tail -n 30 "$TMP/agent.log"; fail "the agent did not run the job"; }
q() { sqlite3 "$db" "$1" || fail "sqlite3: $1"; }
[ "$(q "SELECT outcome FROM jobs")" = ok ] || { q "SELECT outcome, outcome_detail FROM jobs"; fail "job not ok"; }
q "SELECT fingerprint FROM results" >"$TMP/fp.json"
jq -r --arg reps "$reps" '.timings |
	(.total_ms / 1000) as $t |
	((.build_base_ms + .build_patched_ms) / 1000) as $b |
	(.bench_runs_ms / 1000) as $r |
	($t - $b - $r) as $o |
	"bench dpdk_job: repetitions=\($reps) job_s=\($t * 10 | round / 10) bench_runs_s=\($r * 10 | round / 10) bench_share_pct=\($r * 1000 / $t | round / 10) builds_s=\($b * 10 | round / 10) orchestration_s=\($o * 10 | round / 10) orchestration_pct=\($o * 10000 / $t | round / 100) (goal < 2) of which prepare_s=\(.prepare_ms / 100 | round / 10) fetch_s=\(.fetch_ms / 100 | round / 10) apply_s=\(.apply_ms / 100 | round / 10)"' \
	"$TMP/fp.json"
jq -r '"bench dpdk_job: builds base \(.builds.base.steps) steps in \(.builds.base.duration_ms / 100 | round / 10) s, patched \(.builds.patched.steps) steps in \(.builds.patched.duration_ms / 100 | round / 10) s; host: governor \(.host_check.governor), turbo \(.host_check.turbo), SMT \(.host_check.smt), load \(.host_check.load[0]), busy \(.host_check.busy_share)"' \
	"$TMP/fp.json"
# Spread per key of the base side, computed by python from the samples.
q "SELECT benchmark, metric, value FROM samples WHERE side = 'base' ORDER BY benchmark, metric, repetition" |
python3 -c '
import sys, statistics
rows = {}
for line in sys.stdin:
    b, m, v = line.rstrip("\n").split("|")
    rows.setdefault((b, m), []).append(float(v))
for (b, m), v in sorted(rows.items()):
    med = statistics.median(v)
    mad = statistics.median(abs(x - med) for x in v)
    robust = 100 * 1.4826 * mad / med if med else float("nan")
    classic = 100 * statistics.stdev(v) / statistics.mean(v) if len(v) > 1 and statistics.mean(v) else float("nan")
    print("bench dpdk_cv: %s %s n=%d median=%.6g cv_robust_pct=%.2f cv_pct=%.2f" % (b, m, len(v), med, robust, classic))
'
kill -TERM "$ctl"
wait "$ctl"
cleanup_hooks=""
