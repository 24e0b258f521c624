# Verdicts with the real controller daemon: the planner's jobs leased and
# answered by fake agents over the HTTP API (curl with agent tokens, samples
# in the results), the daemon's verdict pass deciding, the fake Patchwork
# (tests/fake_patchwork.py) receiving the final checks and a real SMTP
# server on loopback the report mails:
#  - a release job whose gated key is 20 % slower in 3 + 3 runs is
#    inconclusive (p >= 0.1): it is queued again pinned to its agent, which
#    leases it before other work while the other agent cannot; its spec
#    continues the repetitions; after 3 more runs the job fails;
#  - the debugoptimized job of the same context passes; the context fails
#    and its check reaches Patchwork with the exact state and description,
#    its mail the list with both tables;
#  - a series that does not apply gets a warning "apply patch failure";
#  - `verdicts` then finds nothing to decide; `run show` prints the tables.
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/delivery_lib.sh"

CTX=perfgate-demo-Performance
CI_TOKEN=04b5b8ffb66a2d9ba9ad32d0ba95a2b120a60b9a
KEY=mempool.nocache.cores1.keep128.get32.put32.const0

# ---- the fake Patchwork and the SMTP server --------------------------------------

cat >"$TMP/fixture.json" <<EOF
{ "users": [ { "id": 1, "username": "ci", "email": "ci@example.org", "token": "$CI_TOKEN",
               "maintainer_of": ["dpdk"] } ] }
EOF
start_patchwork "$TMP/fixture.json"
start_smtp
P=$PG_TOP/tests/patchwork
fake series "{\"mails\": [{\"file\": \"$P/single/0001-lib-fix-hello.patch\", \"id\": 301}]}"
fake series "{\"mails\": [{\"file\": \"$P/series-b/0001-net-one-add-one.patch\", \"id\": 201},
	{\"file\": \"$P/series-b/0002-net-two-add-two.patch\", \"id\": 202},
	{\"file\": \"$P/series-b/0003-net-three-add-three.patch\", \"id\": 203}]}"

# ---- the controller: a tree, the mails, a plan ----------------------------------

demo_tree
printf '%s\n' "$CI_TOKEN" >"$TMP/token"
chmod 600 "$TMP/token"
conf "$TMP/c.json" "$TMP/token" ci "\"mail\": { \"enabled\": true,
  \"smtp_url\": \"smtp://127.0.0.1:$sport/lab.example.org\", \"starttls\": \"off\",
  \"from\": \"perfgate CI <perfgate@lab.example.org>\", \"timeout_s\": 10 }"
C="$CTL --config $TMP/c.json"
cat "$P"/single/*.patch "$P"/series-b/*.patch >"$TMP/all.mbox"
expect_rc 0 $C ingest --mbox "$TMP/all.mbox"
expect_rc 0 $C plan
expect_grep 'runs=2 ' "$TMP/out"
run_s=$(run_of 20261130050000.4242-1-carol@example.net)
run_b=$(run_of e8066da13f2b3cc5fce95648547b13983b914b48.1796014702.git.alice@example.com)
[ -n "$run_s" ] && [ -n "$run_b" ] || fail "runs not found"
rel=$(q "SELECT id FROM jobs WHERE run_id = $run_s AND build_mode = 'demo-release'")
dbg=$(q "SELECT id FROM jobs WHERE run_id = $run_s AND build_mode = 'demo-debugoptimized'")
T1=$($C agent add lab-1 --labels pool=demo 2>/dev/null) || fail "agent add lab-1"
T2=$($C agent add lab-2 --labels pool=demo 2>/dev/null) || fail "agent add lab-2"

start_ctl "$TMP/c.json"
wait_until "the API" grep -q 'api: listening on http://' "$TMP/ctl.log"
URL=$(sed -n 's/.*api: listening on \(http:[^ ]*\).*/\1/p' "$TMP/ctl.log" | tail -n 1)

# ---- fake agents ------------------------------------------------------------------

# samples BENCH METRIC REP0 "BASE VALUES" "PATCHED VALUES": JSON samples.
samples() {
	jq -cn --arg b "$1" --arg m "$2" --argjson r0 "$3" --arg base "$4" --arg pat "$5" '
		[($base | split(" ") | to_entries[] | {side: "base", benchmark: $b, metric: $m,
			repetition: ($r0 + .key), value: (.value | tonumber), unit: "u"}),
		 ($pat | split(" ") | to_entries[] | {side: "patched", benchmark: $b, metric: $m,
			repetition: ($r0 + .key), value: (.value | tonumber), unit: "u"})]'
}
# result TOKEN JOB ATTEMPT OUTCOME SAMPLES_JSON: post it; 200 "recorded".
result() {
	jq -cn --argjson a "$3" --arg o "$4" --argjson s "$5" \
		'{attempt: $a, outcome: $o, detail: "fake agent", fingerprint: {runner: "fake"},
		  samples: $s}' >"$TMP/result.json"
	code=$(curl -sS -o "$TMP/result.out" -w '%{http_code}' -H "Authorization: Bearer $1" \
		-H 'Content-Type: application/json' --data-binary "@$TMP/result.json" \
		"$URL/api/v1/jobs/$2/result") || fail "result: curl failed"
	[ "$code" = 200 ] || { cat "$TMP/result.out"; fail "result of job $2: HTTP $code"; }
	jq_is "$TMP/result.out" .status recorded
}
M=mempool_perf_demo
same_mp="$(samples $M mempool.cache.cores1.keep128.get32.put32.const0 0 \
	"20.00e6 20.06e6 19.95e6" "20.02e6 19.97e6 20.04e6")"
same_fwd="$(samples testpmd_io_demo fwd.rx_pps 0 "5.00e6 5.03e6 4.98e6" "5.01e6 4.99e6 5.02e6")"
cycles="$(samples testpmd_io_demo fwd.cycles_per_pkt 0 "40 41 39" "42 40.5 41.5")"

# ---- 1. the release job: inconclusive, a pinned follow-up, then a fail ------------

lease "$T1" "$TMP/l1.json"
jq_is "$TMP/l1.json" .job.id "$rel"
jq_is "$TMP/l1.json" '.job.repetitions' 3
slow="$(samples $M $KEY 0 "10.00e6 10.04e6 9.97e6" "8.00e6 8.03e6 7.98e6")"
result "$T1" "$rel" 1 ok "$(echo "$slow $same_mp $same_fwd $cycles" | jq -cs add)"
pinned() { [ "$(q "SELECT state || ' ' || coalesce(pin_agent_id, 0) FROM jobs WHERE id = $rel")" = "queued 1" ]; }
wait_until "the follow-up of job $rel" pinned
[ "$(q "SELECT outcome_detail FROM jobs WHERE id = $rel")" = \
	"follow-up round 1: 3 more runs per side on lab-1 ($KEY: -20.0%, no 95% interval from 3 runs on demo-release, 3 more runs)" ] ||
	fail "follow-up detail: $(q "SELECT outcome_detail FROM jobs WHERE id = $rel")"
[ "$(q "SELECT count(*) FROM verdicts")" = 0 ] || fail "a verdict was stored for a pending job"
# lab-2 cannot take the pinned follow-up: it gets the debugoptimized job.
lease "$T2" "$TMP/l2.json"
jq_is "$TMP/l2.json" .job.id "$dbg"
# lab-1 gets its follow-up: attempt 2, the repetitions continued.
lease "$T1" "$TMP/l3.json"
jq_is "$TMP/l3.json" .job.id "$rel"
jq_is "$TMP/l3.json" .job.attempt 2
jq_is "$TMP/l3.json" '[.job.round, .job.repetition_base, .job.repetitions, .job.pin_agent] | map(tostring) | join(" ")' \
	"1 3 3 lab-1"
slow2="$(samples $M $KEY 3 "10.02e6 9.99e6 10.01e6" "8.01e6 7.99e6 8.02e6")"
same_mp2="$(samples $M mempool.cache.cores1.keep128.get32.put32.const0 3 \
	"20.01e6 19.99e6 20.03e6" "19.96e6 20.05e6 19.98e6")"
result "$T1" "$rel" 2 ok "$(echo "$slow2 $same_mp2" | jq -cs add)"
job_fail() { [ "$(q "SELECT state FROM verdicts WHERE job_id = $rel AND metric IS NULL")" = fail ]; }
wait_until "the release job's verdict" job_fail
[ "$(q "SELECT n_base || '/' || n_patched || ' ' || printf('%.4f', p) || ' ' || state
	FROM verdicts WHERE job_id = $rel AND metric = '$KEY'")" = "6/6 0.0313 regression" ] ||
	fail "key verdict: $(q "SELECT * FROM verdicts WHERE job_id = $rel AND metric = '$KEY'")"
# No check before the other build mode is decided.
[ "$(q "SELECT count(*) FROM check_outbox WHERE run_id = $run_s AND state <> 'pending'")" = 0 ] ||
	fail "a final check before every job was decided"

# ---- 2. the debugoptimized job passes after its follow-up; the context fails -------

# 3 pairs give no 95 % interval, however quiet: a pass needs a follow-up too.
ok_mp="$(samples $M $KEY 0 "10.00e6 10.04e6 9.97e6" "10.02e6 9.99e6 10.01e6")"
result "$T2" "$dbg" 1 ok "$(echo "$ok_mp $same_mp $same_fwd" | jq -cs add)"
dbg_pinned() { [ "$(q "SELECT state || ' ' || coalesce(pin_agent_id, 0) FROM jobs WHERE id = $dbg")" = "queued 2" ]; }
wait_until "the follow-up of job $dbg" dbg_pinned
lease "$T2" "$TMP/l4.json"
jq_is "$TMP/l4.json" .job.id "$dbg"
ok_mp2="$(samples $M $KEY 3 "10.01e6 9.98e6 10.03e6" "10.00e6 10.01e6 9.99e6")"
same_fwd2="$(samples testpmd_io_demo fwd.rx_pps 3 "5.01e6 4.99e6 5.02e6" "5.00e6 5.02e6 4.99e6")"
result "$T2" "$dbg" 2 ok "$(echo "$ok_mp2 $same_mp2 $same_fwd2" | jq -cs add)"
n_final() { checks; [ "$(jq "[.checks[] | select(.state != \"pending\")] | length" "$TMP/checks.json")" -ge "$1" ]; }
wait_until "the final check" n_final 1
DESC="Performance Testing FAIL: $KEY: -20.0% (95% CI -20.1%..-19.9%, p=0.031) on demo-release"
jq_is "$TMP/checks.json" '[.checks[] | select(.patch == 301) | [.state, .context, .description] | join("|")] | join(";")' \
	"pending|$CTX|Performance Testing pending;fail|$CTX|$DESC"
[ "$(q "SELECT state || ' ' || (finished_at IS NOT NULL) FROM runs WHERE id = $run_s")" = "done 1" ] ||
	fail "run $run_s not done"
mail_for() { ls "$TMP/spool"/*.json >/dev/null 2>&1 && grep -l "perfgate.r$1.$CTX@" "$TMP/spool"/*.eml >/dev/null 2>&1; }
wait_until "the report mail" mail_for "$run_s"
"$PY" - "$TMP/spool" "$run_s" "$DESC" "$KEY" <<'EOF_PY' || fail "the report mail is wrong"
import email, email.policy, glob, json, sys
spool, run, desc, key = sys.argv[1:5]
for path in sorted(glob.glob(spool + '/*.eml')):
    m = email.message_from_bytes(open(path, 'rb').read().replace(b'\r\n', b'\n'),
                                 policy=email.policy.default)
    if m['Message-ID'] == f'<perfgate.r{run}.perfgate-demo-Performance@lab.example.org>':
        break
else:
    sys.exit('no mail for run ' + run)
env = json.load(open(path[:-4] + '.json'))
assert m['Subject'] == '|FAILURE| pw301 [PATCH] lib: fix hello', m['Subject']
assert sorted(env['rcpt_tos']) == ['carol@example.net', 'test-report@dpdk.org'], env
body = m.get_content().split('\n')
assert body[:5] == ['Test-Label: perfgate-demo-Performance', 'Test-Status: FAILURE',
                    'http://patches.dpdk.org/patch/301/', '', '_' + desc + '_'], body[:5]
text = '\n'.join(body)
for want in ('demo-release on lab-1, 6 runs per side (with follow-ups): fail: ',
             'demo-debugoptimized on lab-2, 6 runs per side (with follow-ups): success: 3 keys exclude -10%; worst ',
             'regression', 'fwd.cycles_per_pkt*', '(inconclusive)',
             'git -C base worktree add --detach ../patched ',
             'curl -sS https://perfgate.example.org/api/v1/series/',
             'for run in $(seq 6); do for side in base patched; do',
             'sleep 5 | "$side/build/app/dpdk-testpmd" -l 0-1 --no-huge -m 1024'):
    assert want in text, (want, text)
row = [l for l in body if l.startswith('mempool_perf_demo  ' + key)]
assert len(row) == 2, body
assert row[0].split()[2:] == ['6/6', '10005000', '8005000', '-2000000', '-20.0%',
                              '-20.1%..-19.9%', '0.031', '0.2%', 'regression'], row[0]
assert ('change, p: median of the patched/base ratios of runs done back to back, '
        'Wilcoxon signed-rank test') in body, body
EOF_PY

# ---- 3. a series that does not apply: a warning ------------------------------------

for t in "$T1" "$T2"; do
	lease "$t" "$TMP/lb.json"
	jb=$(jq -r .job.id "$TMP/lb.json")
	[ "$(q "SELECT run_id FROM jobs WHERE id = $jb")" = "$run_b" ] || fail "leased job $jb"
	result "$t" "$jb" 1 apply-failure '[]'
done
wait_until "the apply-failure check" n_final 2
jq_is "$TMP/checks.json" '[.checks[] | select(.patch == 203 and .state != "pending") | [.state, .description] | join("|")] | join(";")' \
	"warning|apply patch failure"
wait_until "the warning mail" mail_for "$run_b"
grep -l "perfgate.r$run_b.$CTX@" "$TMP/spool"/*.eml | xargs grep -q '^Subject: |WARNING| pw203 \[PATCH 3/3\] net/three: add three' ||
	fail "the warning mail's subject"

# ---- 4. nothing left to decide; run show ---------------------------------------------

expect_rc 0 $C verdicts
expect_grep '^jobs=0 followups=0 given_up=0 contexts=0 runs_done=0 checks=0 mails=0 history=0 change_points=0 errors=0$' "$TMP/out"
[ "$(q "SELECT count(*) FROM check_outbox WHERE state <> 'pending'")" = 2 ] || fail "checks doubled"
[ "$(q "SELECT count(*) FROM email_outbox")" = 2 ] || fail "mails doubled"
[ "$(q "SELECT count(*) FROM history WHERE job_id = $rel")" = 4 ] ||
	fail "history of job $rel: $(q "SELECT metric, samples FROM history WHERE job_id = $rel")"
expect_rc 0 $C run show "$run_s"
grep -qxF "context $CTX: fail: $DESC" "$TMP/out" || { cat "$TMP/out"; fail "run show: context line"; }
expect_grep "^job $rel: done \(ok\); verdict fail: $KEY: -20.0% \(95% CI -20.1%\.\.-19.9%, p=0.031\) on demo-release\$" "$TMP/out"
expect_grep '^To reproduce by hand:$' "$TMP/out"
expect_rc 1 $C run show 999
expect_grep 'no run 999' "$TMP/out"
expect_rc 2 $C run show x
grep -q 'verdict: context perfgate-demo-Performance of run [0-9]*: fail: ' "$TMP/ctl.log" ||
	fail "the daemon did not log the decision"
stop_ctl
echo "verdict: follow-up, fail, pass, apply failure, check and mail delivered"
