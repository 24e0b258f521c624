# A baseline on real DPDK (issue 17): the head of the demo tree measured by
# itself, one job per build mode (release and debugoptimized), each by a
# real agent with the DPDK runner, on a host driven over SSH (issue 18: the
# controller's dispatcher runs `perfgate-agent run-one` through a real
# sshd on loopback, ssh_lib.sh), so that the real runner's sandboxed
# builds and benchmarks, samples and logs are shown to work over SSH too.  The agent checks out and builds the base side alone
# (nothing to apply), runs that one build as both sides, interleaved, at
# the 6 repetitions a baseline asks for; the controller decides it without
# follow-up, check or mail, and the host's A/A spread and minimum
# detectable effect appear in the API.  The work directory is the one
# t_e2e_dpdk keeps ($PG_CACHE/e2e): the base slot's build is incremental.
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/dpdk_lib.sh"
. "$PG_TOP/tests/integration/ssh_lib.sh"

dpdk_setup
dpdk_profile '.'
sshd_start
dpdk_agent_config e2e-1
dpdk_controller e2e-1 ssh
stop_ctl() { kill -9 "$ctl" 2>/dev/null; }
cleanup_hooks="$cleanup_hooks stop_ctl"
q() { sqlite3 "$db" "$1" || fail "sqlite3: $1"; }

expect_rc 0 $C baseline run dpdk-demo main
expect_grep '^baseline run [0-9]+: dpdk-demo main, 2 jobs queued$' "$TMP/out"
run=$(q "SELECT id FROM runs WHERE reason = 'baseline'")
[ "$(q "SELECT base_commit FROM runs WHERE id = $run")" = "$base" ] ||
	fail "the baseline is not of the tree's main"
# The dispatcher leases both jobs for the SSH host, one after the other.
i=0
until [ "$(q "SELECT count(*) FROM jobs WHERE run_id = $run AND state IN ('done', 'infra-error')")" = 2 ]; do
	i=$((i + 1))
	[ $i -le 7200 ] || { q "SELECT id, state, outcome_detail FROM jobs"; tail -n 40 "$TMP/serve.log"; \
		fail "the baseline's jobs did not finish over SSH"; }
	sleep 0.5
done
q "SELECT 'e2e-baseline: job ' || j.id || ' (' || j.build_mode || ') took ' || (a.ended_at - a.started_at) || ' s on ' || g.name || ' (' || g.transport || ')'
	FROM jobs j JOIN attempts a ON a.job_id = j.id JOIN agents g ON g.id = a.agent_id WHERE j.run_id = $run ORDER BY j.id"
[ "$(q "SELECT count(*) FROM attempts a JOIN agents g ON g.id = a.agent_id WHERE g.transport = 'ssh'")" = 2 ] ||
	fail "the jobs did not run on the SSH host: $(q "SELECT job_id, agent_id, outcome FROM attempts")"
i=0
until [ "$(q "SELECT count(*) FROM verdicts WHERE run_id = $run AND job_id IS NULL")" = 1 ]; do
	i=$((i + 1))
	[ $i -le 150 ] || { q "SELECT id, state, outcome_detail FROM jobs"; tail -n 20 "$TMP/serve.log"; \
		fail "the baseline was not decided"; }
	sleep 0.2
done

for job in $(q "SELECT id FROM jobs WHERE run_id = $run ORDER BY id"); do
	# One round, ok, both sides from one build, 6 runs per side.
	[ "$(q "SELECT state || ' ' || outcome || ' ' || attempt FROM jobs WHERE id = $job")" = "done ok 1" ] ||
		fail "baseline job: $(q "SELECT state, outcome, attempt, outcome_detail FROM jobs WHERE id = $job")"
	[ -n "$(q "SELECT 1 FROM jobs WHERE id = $job AND outcome_detail LIKE '%a baseline: one build as both sides%'")" ] ||
		fail "the result does not say it was a baseline: $(q "SELECT outcome_detail FROM jobs WHERE id = $job")"
	for key in mempool.nocache.cores1.keep128.get32.put32.const0 fwd.rx_pps; do
		for side in base patched; do
			[ "$(q "SELECT count(*) FROM samples WHERE job_id = $job AND side = '$side' AND metric = '$key'")" = 6 ] ||
				fail "$key on the $side side of job $job: not 6 samples"
		done
	done
	fp=$(q "SELECT fingerprint FROM results WHERE job_id = $job")
	echo "$fp" >"$TMP/fp.json"
	jq_is "$TMP/fp.json" .baseline true
	jq_is "$TMP/fp.json" '.builds | keys | join(",")' base
	jq_is "$TMP/fp.json" .apply.applied 0
	grep -q "measured by itself, one build run as both sides" "$TMP/state/$(q "SELECT path FROM logs WHERE job_id = $job AND stage = 'apply'")" ||
		fail "the apply log does not say the baseline applied nothing"
	[ "$(q "SELECT count(*) FROM logs WHERE job_id = $job AND stage = 'build-patched'")" = 0 ] ||
		fail "a baseline built a patched side"
done
[ "$(q "SELECT group_concat(build_mode, ' ') FROM (SELECT build_mode FROM jobs WHERE run_id = $run ORDER BY build_mode)")" = \
	"demo-debugoptimized demo-release" ] || fail "the baseline's build modes"
[ "$(q "SELECT count(*) FROM check_outbox") $(q "SELECT count(*) FROM email_outbox")" = "0 0" ] ||
	fail "a baseline queued a check or a mail"

# The host's own noise: the A/A spread and MDE of the gated keys.
curl -sf "$url/api/v1/hosts/e2e-1/noise" >"$TMP/noise.json" || fail "GET the host's noise"
for mode in demo-release demo-debugoptimized; do
	jq -e --arg m $mode '[.keys[] | select(.build_mode == $m and .pairs == 6 and .jobs == 1 and
		(.metric == "fwd.rx_pps" or (.metric | startswith("mempool."))) and
		.sigma_pct >= 0 and (.mde_pct | type) == "number")] | length >= 3' "$TMP/noise.json" >/dev/null ||
		fail "host noise in $mode: $(jq -c . "$TMP/noise.json")"
done
jq -r '.keys[] | select(.metric == "fwd.rx_pps" or (.metric | startswith("mempool.")))
	| "e2e-baseline: \(.build_mode) \(.metric) A/A spread \(.sigma_pct * 100 | round / 100)%, MDE \(.mde_pct * 10 | round / 10)% at \(.max_repetitions) runs"' \
	"$TMP/noise.json"
expect_rc 0 $C run show "$run"
expect_grep "^run $run: baseline \(manual\) of dpdk-demo main at $base" "$TMP/out"
