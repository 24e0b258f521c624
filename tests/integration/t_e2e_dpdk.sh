# End to end with real DPDK: Debian's DPDK 22.11 source package as a git
# tree, a one-patch series mailed against it, the controller planning it
# with the demo profile (release and debugoptimized), and a real agent with
# the DPDK runner building both modes base and patched in its sandbox,
# applying the patch, and running mempool_perf (subset harness) and
# testpmd (io on net_null) interleaved, 3 repetitions each.  Checks that
# every sample the profile promises arrived, once, with plausible values,
# and that the fingerprint says what was measured.  The patch makes the
# ring driver several times slower (the pool without cache), and 3 pairs
# of runs can never reach p < 0.05 (the signed-rank test's smallest p is
# 0.25): so each job is inconclusive in the worse direction and gets one
# follow-up round of three more runs per side (max_repetitions 6) on the
# same agent and build directories, numbered from 3, and then its verdict
# from 6 pairs.
#
# The agent's work directory (mirrors, worktrees, build directories,
# ccache) lives in $PG_CACHE/e2e and is kept between runs on one machine,
# so that only the first run pays the cold builds (about 9 minutes per
# mode on 2 cores); PG_E2E_FRESH=1 starts from nothing.
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/dpdk_lib.sh"

dpdk_setup
dpdk_patch slowring "$TMP/series.mbox" e2e-1@example.org
dpdk_profile '.contexts["perfgate-demo-Performance"] += {"noise_limit_pct": 100,
	"max_repetitions": 6}'
dpdk_controller e2e-1
stop_ctl() { kill -9 "$ctl" 2>/dev/null; }
cleanup_hooks="stop_ctl"
dpdk_ingest_plan "$TMP/series.mbox"
[ "$(sqlite3 "$db" "SELECT count(*) FROM jobs WHERE state = 'queued'")" = 2 ] ||
	{ sqlite3 "$db" "SELECT id, state, spec FROM jobs"; fail "expected 2 queued jobs (one per build mode)"; }
[ "$(sqlite3 "$db" "SELECT base_commit FROM runs")" = "$base" ] ||
	fail "the run is not on the patch's base-commit"
dpdk_agent_config e2e-1
q() { sqlite3 "$db" "$1" || fail "sqlite3: $1"; }
# run_once N: one job through agent --once.
run_once() {
	start=$(date +%s)
	"$AGENT" --config "$TMP/agent.json" --once >"$TMP/agent-$1.log" 2>&1
	rc=$?
	echo "e2e: round $1 took $(( $(date +%s) - start )) s (agent exit $rc)"
	[ $rc -eq 0 ] || { tail -n 50 "$TMP/agent-$1.log"; fail "agent --once exited $rc"; }
}
# Rounds until the context is decided: both jobs, then their follow-ups,
# which the daemon's verdict pass queues pinned to the agent.  Which job a
# round leases depends on when the pass ran (a follow-up queued before the
# second job was leased comes first), so the order is not assumed.
n=0
until [ "$(q "SELECT count(*) FROM verdicts WHERE job_id IS NULL")" = 1 ]; do
	n=$((n + 1))
	[ $n -le 4 ] || { q "SELECT id, state, attempt, outcome_detail FROM jobs"; \
		tail -n 20 "$TMP/serve.log"; fail "no context verdict after 4 rounds"; }
	run_once "$n"
	# Wait for the verdict pass: a job to lease, or the context decided.
	i=0
	until [ "$(q "SELECT (SELECT count(*) FROM jobs WHERE state = 'queued') +
		(SELECT count(*) FROM verdicts WHERE job_id IS NULL)")" -ge 1 ]; do
		i=$((i + 1))
		[ $i -le 150 ] || { q "SELECT id, state, outcome_detail FROM jobs"; \
			tail -n 20 "$TMP/serve.log"; fail "nothing queued after round $n"; }
		sleep 0.2
	done
done
[ $n = 4 ] || fail "the context was decided after $n rounds, not 4 (2 jobs, 2 follow-ups)"
# What each benchmark run came to, as the agent uploaded it.
sqlite3 "$db" "SELECT path FROM logs WHERE stage = 'bench' ORDER BY job_id, attempt" |
	while read -r p; do grep -h '^== ' "$TMP/state/$p" "$p" 2>/dev/null; done | grep -v '^== [a-z_]*, ' || true
grep 'verdict: ' "$TMP/serve.log" | sed 's/^.* info verdict: /e2e: verdict: /'
# 6 pairs of runs of a pool several times slower: a regression, found.
q "SELECT state || ' ' || description FROM verdicts WHERE job_id IS NULL" >"$TMP/verdict.txt"
expect_grep '^fail Performance Testing FAIL: mempool\.nocache\.' "$TMP/verdict.txt"

q "SELECT id, outcome, substr(outcome_detail, 1, 300) FROM jobs" >"$TMP/jobs.txt"
[ "$(q "SELECT count(*) FROM jobs WHERE state = 'done' AND outcome = 'ok'")" = 2 ] ||
	{ cat "$TMP/jobs.txt"; tail -n 40 "$TMP/agent-4.log"; fail "both jobs should end ok"; }
[ "$(q "SELECT count(*) FROM results WHERE outcome = 'ok'")" = 4 ] ||
	fail "not exactly two rounds per job"
# Each follow-up ran as attempt 2 of its job on the agent of attempt 1.
[ "$(q "SELECT count(*) FROM attempts a JOIN attempts b ON b.job_id = a.job_id
	AND b.attempt = 2 AND b.agent_id = a.agent_id WHERE a.attempt = 1")" = 2 ] ||
	fail "the follow-ups did not run on the first round's agent"
[ "$(q "SELECT count(*) FROM verdicts WHERE job_id IS NOT NULL AND metric IS NULL
	AND n_base = 6")" = 2 ] || fail "the job verdicts do not count 6 runs per side"

# Every sample the demo profile promises, per job: 3 + 3 repetitions x 2
# sides of the two gated mempool keys and of testpmd's rx/tx rates, the
# follow-up's numbered 3.
for job in $(q "SELECT id FROM jobs"); do
	for key in mempool.nocache.cores1.keep128.get32.put32.const0 \
		   mempool.cache.cores1.keep128.get32.put32.const0 fwd.rx_pps fwd.tx_pps \
		   fwd.rx_packets fwd.cycles_per_pkt; do
		for side in base patched; do
			n=$(q "SELECT group_concat(attempt || ':' || repetition) FROM (SELECT attempt,
			       repetition FROM samples WHERE job_id = $job AND side = '$side'
			       AND metric = '$key' ORDER BY attempt, repetition)")
			[ "$n" = "1:0,1:1,1:2,2:3,2:4,2:5" ] ||
				fail "job $job: repetitions of $key on the $side side: $n, not 1:0,1:1,1:2,2:3,2:4,2:5"
		done
	done
	# Plausible: a mempool does millions of objects per second here, testpmd
	# forwards at least a hundred thousand packets per second on net_null.
	low=$(q "SELECT count(*) FROM samples WHERE job_id = $job AND
		 ((metric LIKE 'mempool.%' AND value < 1000000) OR
		  (metric IN ('fwd.rx_pps', 'fwd.tx_pps') AND value < 100000) OR
		  (metric = 'fwd.cycles_per_pkt' AND (value <= 0 OR value > 100000)))")
	[ "$low" = 0 ] || { q "SELECT side, metric, value FROM samples WHERE job_id = $job"; \
		fail "job $job: $low implausible samples"; }
	# Only the subset's configurations ran: no other mempool key.
	other=$(q "SELECT count(*) FROM samples WHERE job_id = $job AND metric LIKE 'mempool.%'
		   AND metric NOT IN ('mempool.nocache.cores1.keep128.get32.put32.const0',
				      'mempool.cache.cores1.keep128.get32.put32.const0')")
	[ "$other" = 0 ] || fail "job $job: $other mempool samples outside the subset"
	fp=$(q "SELECT fingerprint FROM results WHERE job_id = $job AND attempt = 1")
	echo "$fp" >"$TMP/fp.json"
	jq_is "$TMP/fp.json" '.runner' dpdk
	jq_is "$TMP/fp.json" '.dpdk_version' 22.11.11
	jq_is "$TMP/fp.json" '.harness' subset
	jq_is "$TMP/fp.json" '.apply.applied' 1
	jq -e '.host_check.governor and .host_check.compiler != ""' "$TMP/fp.json" >/dev/null ||
		fail "job $job: no host check in the fingerprint"
	# The quiet check ran before each of the attempt's 3 x 2 x 2 runs, and
	# what it saw is bounded by the job's budget (agent/hostcheck.h).
	jq -e '.quiet_check.runs == 12 and .quiet_check.busy <= 12 and
	       .quiet_check.waited <= 12 and .quiet_check.wait_ms <= 120000 and
	       .quiet_check.limit_cpus == 0.25' "$TMP/fp.json" >/dev/null ||
		fail "job $job: the fingerprint's quiet check: $(jq -c .quiet_check "$TMP/fp.json")"
	if [ "$(jq .quiet_check.busy "$TMP/fp.json")" -gt 0 ]; then
		jq -e '.warnings | map(select(test("benchmark runs started on a busy host"))) | length == 1' \
			"$TMP/fp.json" >/dev/null || fail "job $job: busy runs without their warning"
	fi
done
# Both build modes ran, each its own build type.
[ "$(q "SELECT count(DISTINCT json_extract(fingerprint, '\$.build.buildtype')) FROM results")" = 2 ] ||
	fail "the two jobs did not build two build types"
# The logs of each stage reached the controller.
for stage in prepare apply build-base build-patched bench; do
	[ "$(q "SELECT count(*) FROM logs WHERE stage = '$stage'")" -ge 2 ] ||
		fail "no '$stage' log for both jobs"
done
# The run is done and its check queued (checks are not enabled here).
[ "$(q "SELECT state FROM runs")" = done ] || fail "the run is not done"
[ "$(q "SELECT count(*) FROM check_outbox WHERE state IN ('success', 'warning', 'fail')")" = 1 ] ||
	fail "no final check queued"

# The check's target URL is the run's page on the dashboard.
# shellcheck disable=SC2046
fetch_targets "$TMP/serve.log" $(q "SELECT DISTINCT target_url FROM check_outbox")

kill -TERM $ctl
wait $ctl
cleanup_hooks=""

# scripts/web-fixture.sh keeps what this run made (the store, its logs,
# the series) for the dashboard's browser tests.
if [ -n "${PG_E2E_KEEP:-}" ]; then
	mkdir -p "$PG_E2E_KEEP" && cp -a "$TMP/state/." "$PG_E2E_KEEP/" &&
		cp "$TMP/series.mbox" "$PG_E2E_KEEP/series.mbox" || fail "keep the run in $PG_E2E_KEEP"
fi
