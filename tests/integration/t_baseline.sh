# Baseline runs (issue 17, controller/planner.h "Baselines") with the real
# controller daemon and a fake agent over the HTTP API:
#  - `baseline run` queues the branch head of the demo tree measured by
#    itself: a run without a series, its trigger 'manual', one job per build
#    mode at priority 0, a spec without a series that asks for the 6 pairs
#    of a 95 % interval; asked again while it waits, nothing more;
#  - a patch series planned meanwhile is leased first;
#  - the fake agent's A/A result is decided without a follow-up, without a
#    check and without a mail; `baseline list` and `run show` say what it
#    measured, the API gives the run with series null and its trigger;
#  - serve with "baseline" enabled queues nothing while the head is the one
#    measured, and a 'head' baseline once a commit lands on the branch;
#  - the host's own noise (GET /api/v1/hosts/NAME/noise) is the A/A
#    pairs' spread and the MDE it gives at the context's cap;
#  - a patch job whose base side lies far outside the host's own baseline
#    of its base commit is measured again (once) instead of decided, and
#    decided on the new round only;
#  - bad requests are refused by name.
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/delivery_lib.sh"

CTX=perfgate-demo-Performance
M=mempool_perf_demo
KEY=mempool.nocache.cores1.keep128.get32.put32.const0

demo_tree
# Checks go nowhere here (none may be posted): a closed port.
cat >"$TMP/c.json" <<EOF
{ "db": "$db", "data_dir": "$TMP/state", "profiles_dir": "$TMP/profiles",
  "api": { "listen": "127.0.0.1:0", "public_url": "https://perfgate.example.org/",
           "web_dir": "$PG_TOP/web" },
  "baseline": { "enabled": true, "interval_s": 86400, "poll_s": 10 } }
EOF
C="$CTL --config $TMP/c.json"
head1=$(git -C "$TMP/dpdk" rev-parse main)

# ---- by hand -----------------------------------------------------------------------

expect_rc 0 $C baseline list
expect_grep '^\(no baseline runs\)$' "$TMP/out"
expect_rc 0 $C baseline run dpdk-demo main
expect_grep '^baseline run [0-9]+: dpdk-demo main, 2 jobs queued$' "$TMP/out"
run=$(q "SELECT id FROM runs WHERE reason = 'baseline'")
[ "$(q "SELECT coalesce(series_id, 'null') || ' ' || trigger || ' ' || base_commit || ' ' || state
	FROM runs WHERE id = $run")" = "null manual $head1 planned" ] ||
	fail "baseline run: $(q "SELECT * FROM runs WHERE id = $run")"
[ "$(q "SELECT group_concat(build_mode || ':' || priority, ' ') FROM (SELECT build_mode, priority
	FROM jobs WHERE run_id = $run ORDER BY build_mode)")" = "demo-debugoptimized:0 demo-release:0" ] ||
	fail "baseline jobs: $(q "SELECT build_mode, priority FROM jobs WHERE run_id = $run")"
expect_rc 0 $C baseline run dpdk-demo main
expect_grep '^nothing queued: a baseline of dpdk-demo main is already waiting' "$TMP/out"
[ "$(q "SELECT count(*) FROM runs WHERE reason = 'baseline'")" = 1 ] || fail "a second baseline queued"
# Refused, by name.
expect_rc 1 $C baseline run dpdk-demo no-such-branch
expect_grep "'no-such-branch' is not a branch of tree dpdk-demo" "$TMP/out"
expect_rc 1 $C baseline run dpdk-demo main --commit 0123456789012345678901234567890123456789
expect_grep "commit 0123456789012345678901234567890123456789 is not in tree dpdk-demo" "$TMP/out"
expect_rc 2 $C baseline run dpdk-demo
expect_rc 2 $C baseline frobnicate

# A series planned after the baseline still goes first.
P=$PG_TOP/tests/patchwork
expect_rc 0 $C ingest --mbox "$P/single/0001-lib-fix-hello.patch"
expect_rc 0 $C plan
series_run=$(q "SELECT id FROM runs WHERE series_id IS NOT NULL")
[ -n "$series_run" ] || fail "the series was not planned"
T1=$($C agent add lab-1 --labels pool=demo 2>/dev/null) || fail "agent add lab-1"

start_ctl "$TMP/c.json"
wait_until "the API" grep -q 'api: listening on http://' "$TMP/ctl.log"
URL=$(sed -n 's/.*api: listening on \(http:[^ ]*\).*/\1/p' "$TMP/ctl.log" | tail -n 1)

# samples BENCH METRIC "BASE VALUES" "PATCHED VALUES": JSON samples from 0.
samples() {
	jq -cn --arg b "$1" --arg m "$2" --arg base "$3" --arg pat "$4" '
		[($base | split(" ") | to_entries[] | {side: "base", benchmark: $b, metric: $m,
			repetition: .key, value: (.value | tonumber), unit: "u"}),
		 ($pat | split(" ") | to_entries[] | {side: "patched", benchmark: $b, metric: $m,
			repetition: .key, value: (.value | tonumber), unit: "u"})]'
}
result() {
	jq -cn --argjson a "$3" --argjson s "$4" \
		'{attempt: $a, outcome: "ok", detail: "fake agent", fingerprint: {runner: "fake", baseline: true},
		  samples: $s}' >"$TMP/result.json"
	code=$(curl -sS -o "$TMP/result.out" -w '%{http_code}' -H "Authorization: Bearer $1" \
		-H 'Content-Type: application/json' --data-binary "@$TMP/result.json" \
		"$URL/api/v1/jobs/$2/result") || fail "result: curl failed"
	[ "$code" = 200 ] || { cat "$TMP/result.out"; fail "result of job $2: HTTP $code"; }
}

# ---- the fake agent: the series' job first, then the baseline's ---------------------

lease "$T1" "$TMP/l1.json"
[ "$(jq -r .job.run "$TMP/l1.json")" = "$series_run" ] ||
	fail "the baseline was leased before the series: $(jq -c '.job | {id, run}' "$TMP/l1.json")"
sj=$(jq -r .job.id "$TMP/l1.json")
result "$T1" "$sj" 1 "$(samples $M $KEY "10.00e6 10.04e6 9.97e6" "10.02e6 9.99e6 10.01e6")"
ended() { [ "$(q "SELECT state FROM jobs WHERE id = $sj")" != leased ]; }
wait_until "the series' job ends" ended
# The series is not what this test is about: its other jobs (and a
# follow-up) are cancelled so that the host turns to the baseline.
q "UPDATE jobs SET state = 'cancelled', finished_at = 1, pin_agent_id = NULL,
   outcome_detail = 'test' WHERE run_id = $series_run AND state = 'queued'"

lease "$T1" "$TMP/l2.json"
jq_is "$TMP/l2.json" .job.run "$run"
jq_is "$TMP/l2.json" .job.reason baseline
jq_is "$TMP/l2.json" .job.baseline.trigger manual
jq_is "$TMP/l2.json" '.job | has("series")' false
jq_is "$TMP/l2.json" .job.tree.base_commit "$head1"
jq_is "$TMP/l2.json" .job.repetitions 6
bj=$(jq -r .job.id "$TMP/l2.json")
aa="$(samples $M $KEY "10.00e6 10.04e6 9.97e6 10.02e6 9.99e6 10.01e6" \
	"10.01e6 10.02e6 9.98e6 10.00e6 10.03e6 9.99e6")"
fwd="$(samples testpmd_io_demo fwd.rx_pps "5.00e6 5.03e6 4.98e6 5.01e6 4.99e6 5.02e6" \
	"5.01e6 4.99e6 5.02e6 5.00e6 5.02e6 4.99e6")"
mpc="$(samples $M mempool.cache.cores1.keep128.get32.put32.const0 \
	"20.00e6 20.06e6 19.95e6 20.02e6 19.97e6 20.04e6" \
	"20.02e6 19.97e6 20.04e6 20.01e6 19.99e6 20.03e6")"
result "$T1" "$bj" 1 "$(echo "$aa $fwd $mpc" | jq -cs add)"
decided() { [ -n "$(q "SELECT state FROM verdicts WHERE job_id = $bj AND metric IS NULL")" ]; }
wait_until "the baseline job's verdict" decided
# Decided on its one round: no follow-up, the key's A/A interval.
[ "$(q "SELECT state || ' ' || attempt FROM jobs WHERE id = $bj")" = "done 1" ] ||
	fail "baseline job: $(q "SELECT state, attempt, outcome_detail FROM jobs WHERE id = $bj")"
[ "$(q "SELECT n_base || '/' || n_patched || ' ' || state FROM verdicts
	WHERE job_id = $bj AND metric = '$KEY'")" = "6/6 pass" ] ||
	fail "baseline key verdict: $(q "SELECT * FROM verdicts WHERE job_id = $bj AND metric = '$KEY'")"
# The A/A spread and what it lets the host resolve, in the job's verdict JSON.
curl -sf "$URL/api/v1/jobs/$bj/verdict" >"$TMP/v.json" || fail "GET the baseline job's verdict"
jq -e --arg k "$KEY" '.keys[] | select(.metric == $k) | .sigma > 0 and .mde_pct > 0 and .ci_valid' \
	"$TMP/v.json" >/dev/null || fail "no A/A spread and MDE: $(jq -c .keys "$TMP/v.json")"
# The host's own noise from its baselines: the A/A pairs' robust spread
# (computed here again from the values sent) and the MDE at the cap.
curl -sf "$URL/api/v1/hosts/lab-1/noise" >"$TMP/noise.json" || fail "GET the host's noise"
jq -e --arg k "$KEY" '.agent == "lab-1" and ([.keys[] | select(.metric == $k and
	.build_mode == "demo-release" and .pairs == 6 and .jobs == 1 and .max_repetitions == 9 and
	.alpha == 0.05 and .mde_pct > .sigma_pct and .mde_pct < 5 * .sigma_pct)] | length == 1)' \
	"$TMP/noise.json" >/dev/null || fail "host noise: $(jq -c . "$TMP/noise.json")"
want=$(python3 -c '
import math, statistics
b = [10.00e6, 10.04e6, 9.97e6, 10.02e6, 9.99e6, 10.01e6]
p = [10.01e6, 10.02e6, 9.98e6, 10.00e6, 10.03e6, 9.99e6]
r = [math.log(y / x) for x, y in zip(b, p)]
m = statistics.median(r)
print("%.4f" % (100 * 1.4826 * statistics.median(abs(x - m) for x in r)))')
got=$(jq -r --arg k "$KEY" '.keys[] | select(.metric == $k) | .sigma_pct * 10000 | round / 10000' "$TMP/noise.json")
python3 -c "import sys; sys.exit(abs($got - $want) > 1e-3)" ||
	fail "host noise sigma_pct $got, computed $want"
# Every verdict on that host states it: the series' job's table and JSON.
curl -sf "$URL/api/v1/jobs/$sj/verdict" >"$TMP/sv.json" || fail "GET the series job's verdict"
jq -e --arg k "$KEY" '.keys[] | select(.metric == $k) | .host_noise.pairs == 6 and
	.host_noise.jobs == 1 and .host_noise.mde_pct > 0' "$TMP/sv.json" >/dev/null ||
	fail "the series' verdict does not give the host's noise: $(jq -c '.keys[] | {metric, host_noise}' "$TMP/sv.json")"
expect_rc 0 $C run show "$series_run"
expect_grep "^host lab-1, A/A over its last 1 baseline \(6 pairs\): $KEY spread [0-9.]+%, MDE [0-9.]+% at 9 runs per side$" "$TMP/out"
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/hosts/nobody/noise")
[ "$code" = 404 ] || fail "the noise of an unknown agent: HTTP $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/hosts/lab%2F1/noise")
[ "$code" = 404 ] || fail "an agent name with a slash: HTTP $code"

# Nothing posted or mailed for a baseline.
[ "$(q "SELECT count(*) FROM check_outbox WHERE run_id = $run")" = 0 ] || fail "a baseline queued a check"
[ "$(q "SELECT count(*) FROM email_outbox WHERE run_id = $run")" = 0 ] || fail "a baseline queued a mail"

# The API: series null, reason and trigger.
curl -sf "$URL/api/v1/runs/$run" >"$TMP/run.json" || fail "GET the baseline run"
jq_is "$TMP/run.json" '.series | tostring' null
jq_is "$TMP/run.json" '.reason + " " + .trigger' "baseline manual"
curl -sf "$URL/api/v1/queue" >"$TMP/queue.json" || fail "GET the queue"
jq -e '[.queued[] | select(.series == null)] | length == 1' "$TMP/queue.json" >/dev/null ||
	fail "the other baseline job is not in the queue with series null: $(jq -c .queued "$TMP/queue.json")"

# The CLI: list and show.
expect_rc 0 $C baseline list
expect_grep "^$run +dpdk-demo +main +$(echo "$head1" | cut -c1-12) +manual +(planned|running) .* 1/2 " "$TMP/out"
expect_rc 0 $C baseline list --json
jq_is "$TMP/out" ".baselines[0].run" "$run"
jq_is "$TMP/out" ".baselines[0].commit" "$head1"
expect_rc 0 $C run show "$run"
expect_grep "^run $run: baseline \(manual\) of dpdk-demo main at $head1, one build as both sides" "$TMP/out"
expect_grep "# a baseline: nothing to apply" "$TMP/out"

# ---- verdicts that read the baseline -------------------------------------------------

# A series on head1, on the host that measured head1's baseline (its build
# mode only): its base side 30 % below that baseline is the host, not the
# patch: measured again, once, and decided on the new round alone.
bmode=$(q "SELECT build_mode FROM jobs WHERE id = $bj")
cat "$P"/series-a/*.patch >"$TMP/a.mbox"
expect_rc 0 $C ingest --mbox "$TMP/a.mbox"
expect_rc 0 $C plan
arun=$(q "SELECT max(id) FROM runs WHERE series_id IS NOT NULL")
[ "$(q "SELECT base_commit FROM runs WHERE id = $arun")" = "$head1" ] || fail "series a is not on head1"
q "UPDATE jobs SET state = 'cancelled', finished_at = 1, pin_agent_id = NULL,
   outcome_detail = 'test' WHERE state = 'queued' AND (run_id <> $arun OR build_mode <> '$bmode')"
lease "$T1" "$TMP/l3.json"
aj=$(jq -r .job.id "$TMP/l3.json")
jq_is "$TMP/l3.json" .job.run "$arun"
low="$(samples $M $KEY "7.00e6 7.03e6 6.98e6 7.01e6 6.99e6 7.02e6" \
	"7.01e6 7.02e6 6.98e6 7.00e6 7.03e6 6.99e6")"
result "$T1" "$aj" 1 "$(echo "$low $fwd $mpc" | jq -cs add)"
requeued() { [ "$(q "SELECT state FROM jobs WHERE id = $aj")" = queued ]; }
wait_until "the disturbed job measured again" requeued
[ "$(q "SELECT json_extract(spec, '$.from_attempt') || ' ' || json_extract(spec, '$.reruns') ||
	' ' || json_extract(spec, '$.repetition_base') FROM jobs WHERE id = $aj")" = "2 1 0" ] ||
	fail "re-run spec: $(q "SELECT spec FROM jobs WHERE id = $aj")"
q "SELECT outcome_detail FROM jobs WHERE id = $aj" >"$TMP/detail"
expect_grep "^measured again \(1 of 1\): the host was disturbed: base side $M $KEY -30\.0% from this host's 12 baseline samples of $(echo "$head1" | cut -c1-12)" "$TMP/detail"
[ "$(q "SELECT count(*) FROM verdicts WHERE job_id = $aj")" = 0 ] || fail "decided on a disturbed round"
lease "$T1" "$TMP/l4.json"
jq_is "$TMP/l4.json" .job.id "$aj"
jq_is "$TMP/l4.json" .job.attempt 2
result "$T1" "$aj" 2 "$(echo "$aa $fwd $mpc" | jq -cs add)"
adecided() { [ -n "$(q "SELECT state FROM verdicts WHERE job_id = $aj AND metric IS NULL")" ]; }
wait_until "the re-run job's verdict" adecided
[ "$(q "SELECT n_base || '/' || n_patched FROM verdicts WHERE job_id = $aj AND metric = '$KEY'")" = "6/6" ] ||
	fail "the disturbed round was counted: $(q "SELECT n_base, n_patched, description FROM verdicts WHERE job_id = $aj AND metric = '$KEY'")"
grep -q "pending: measured again (1 of 1): the host was disturbed" "$TMP/ctl.log" ||
	fail "the re-run is not in the log"

# ---- scheduled: nothing while the head is measured; a commit queues one ------------

# The other build mode's baseline job still waits: nothing more.
expect_rc 0 $C baseline due
expect_grep '^baselines=0 ' "$TMP/out"
# Cancelled, nothing waits; but the head is the one measured an instant ago.
q "UPDATE jobs SET state = 'cancelled', finished_at = 1, outcome_detail = 'test'
   WHERE run_id = $run AND state = 'queued'"
expect_rc 0 $C baseline due
expect_grep '^baselines=0 ' "$TMP/out"
[ "$(q "SELECT count(*) FROM runs WHERE reason = 'baseline'")" = 1 ] ||
	fail "a baseline of a head just measured was queued"
printf '22.11.1\n' >"$TMP/dpdk/VERSION"
git -C "$TMP/dpdk" commit -q -am "version 22.11.1"
head2=$(git -C "$TMP/dpdk" rev-parse main)
headed() { [ "$(q "SELECT count(*) FROM runs WHERE reason = 'baseline' AND trigger = 'head'
	AND base_commit = '$head2'")" = 1 ]; }
wait_until "serve's baseline of the new head" headed
grep -q 'serve: baselines: 1 runs, 2 jobs, 0 bisecting' "$TMP/ctl.log" || fail "serve did not log its baselines"
stop_ctl
