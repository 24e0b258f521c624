# A change point on main found in git order, bisected to its commit
# (issue 17, planner.h "Bisection", changes.h), with the real controller
# daemon and a fake agent over the HTTP API on a real git history:
#  - main has 14 commits c0..c13; the mempool key without cache is 15 %
#    slower from c7 on, the key with cache never moves;
#  - baselines measure c9..c13 first, then c0..c4 (by hand, one at a
#    time): in the order measured the series would step up at c0, in
#    first-parent order it steps down between c4 and c9, and that is the
#    change point recorded, once, for the slow key only;
#  - `changes bisect` plans a baseline of c6 (the middle of c5..c8),
#    pinned to the host, its build mode only; c6 is at the old level, so
#    the next pass plans c7; c7 is at the new level: located at c7 after 2
#    baselines, told once;
#  - `changes list`, `changes show` and GET /api/v1/change-points say so;
#  - the located regression is mailed once to baseline.alert_to (a real
#    SMTP server on loopback): c7's author, its subject (with a control
#    byte, shown escaped) and the commands that measure it again.
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/delivery_lib.sh"

M=mempool_perf_demo
SLOW=mempool.nocache.cores1.keep128.get32.put32.const0
FLAT=mempool.cache.cores1.keep128.get32.put32.const0

demo_tree demo.json '.contexts["perfgate-demo-Performance"].build_modes = ["demo-release"]'
ESC=$(printf '\033')
for i in $(seq 1 13); do
	echo "$i" >"$TMP/dpdk/file.txt"
	git -C "$TMP/dpdk" add file.txt
	if [ "$i" = 7 ]; then
		git -C "$TMP/dpdk" commit -q --author 'Jane Slow <jane@example.org>' \
			-m "c7 mempool: slower ${ESC}[31mred"
	else
		git -C "$TMP/dpdk" commit -q -m "c$i"
	fi
done
# c[i]: the commit i of main, c0 the oldest.
set -- $(git -C "$TMP/dpdk" rev-list --reverse --first-parent main)
[ $# = 14 ] || fail "the tree has $# commits, not 14"
i=0
for oid in "$@"; do
	eval "c$i=$oid"
	i=$((i + 1))
done
start_smtp
cat >"$TMP/c.json" <<EOF
{ "db": "$db", "data_dir": "$TMP/state", "profiles_dir": "$TMP/profiles",
  "api": { "listen": "127.0.0.1:0", "public_url": "https://perfgate.example.org/",
           "web_dir": "$PG_TOP/web" },
  "mail": { "enabled": true, "smtp_url": "smtp://127.0.0.1:$sport/lab.example.org",
            "starttls": "off", "from": "perfgate CI <perfgate@lab.example.org>",
            "timeout_s": 10 },
  "baseline": { "alert_to": "DPDK maintainers <maint@example.org>" } }
EOF
C="$CTL --config $TMP/c.json"
expect_rc 0 $C db migrate
T1=$($C agent add lab-1 --labels pool=demo 2>/dev/null) || fail "agent add lab-1"
start_ctl "$TMP/c.json"
wait_until "the API" grep -q 'api: listening on http://' "$TMP/ctl.log"
URL=$(sed -n 's/.*api: listening on \(http:[^ ]*\).*/\1/p' "$TMP/ctl.log" | tail -n 1)

# index_of OID: i of c[i].
index_of() {
	i=0
	while [ $i -lt 14 ]; do
		eval "o=\$c$i"
		[ "$o" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
	fail "$1 is not a commit of main"
}
# answer JOB_JSON: the fake agent measures the job's commit: SLOW at
# 10e6 before c7 and 8.5e6 from c7 on, FLAT at 20e6, 6 pairs, both sides
# the same level (a baseline: one build).
answer() {
	job=$(jq -r .job.id "$1")
	att=$(jq -r .job.attempt "$1")
	idx=$(index_of "$(jq -r .job.tree.base_commit "$1")")
	lvl=10.0
	[ "$idx" -ge 7 ] && lvl=8.5
	# DRIFT_LVL: the host itself got slower (a drift, not a commit).
	kernel=6.1.0-1
	[ -n "${DRIFT_LVL:-}" ] && { lvl=$DRIFT_LVL; kernel=6.1.0-2; }
	jq -cn --argjson lvl "$lvl" --arg slow $SLOW --arg flat $FLAT --arg b $M --argjson a "$att" \
		--arg kernel "$kernel" '
		def runs(m; v): [range(0; 6) as $r | ("base", "patched") as $s |
			{side: $s, benchmark: $b, metric: m, repetition: $r, unit: "obj/s",
			 value: (v * (1 + (($r * 7 + ($s | length)) % 5 - 2) * 0.001))}];
		{attempt: $a, outcome: "ok", detail: "fake agent",
		 fingerprint: {runner: "fake", baseline: true, kernel: $kernel},
		 samples: (runs($slow; $lvl * 1e6) + runs($flat; 20e6))}' >"$TMP/result.json"
	code=$(curl -sS -o "$TMP/result.out" -w '%{http_code}' -H "Authorization: Bearer $T1" \
		-H 'Content-Type: application/json' --data-binary "@$TMP/result.json" \
		"$URL/api/v1/jobs/$job/result") || fail "result: curl failed"
	[ "$code" = 200 ] || { cat "$TMP/result.out"; fail "result of job $job: HTTP $code"; }
	decided() { [ -n "$(q "SELECT state FROM verdicts WHERE job_id = $job AND metric IS NULL")" ]; }
	wait_until "the verdict of job $job" decided
}
# measure I: a baseline of c[I] by hand, leased and answered.
measure() {
	eval "oid=\$c$1"
	expect_rc 0 $C baseline run dpdk-demo main --commit "$oid"
	expect_grep '^baseline run [0-9]+: dpdk-demo main, 1 job queued$' "$TMP/out"
	lease "$T1" "$TMP/lease.json"
	jq_is "$TMP/lease.json" .job.tree.base_commit "$oid"
	answer "$TMP/lease.json"
}

# ---- the history, measured out of order ---------------------------------------------

for i in 9 10 11 12 13 0 1 2 3; do
	measure $i
	[ "$(q "SELECT count(*) FROM change_points")" = 0 ] ||
		fail "a change point after $i: $(q "SELECT * FROM change_points")"
done
measure 4
[ "$(q "SELECT count(*) FROM change_points")" = 1 ] ||
	fail "change points: $(q "SELECT metric, commit_before, commit_after, effect FROM change_points")"
[ "$(q "SELECT metric || ' ' || commit_before || ' ' || commit_after || ' ' || state || ' ' ||
	context || ' ' || build_mode || ' ' || host || ' ' || (effect < -10) FROM change_points")" = \
	"$SLOW $c4 $c9 suspected perfgate-demo-Performance demo-release lab-1 1" ] ||
	fail "change point: $(q "SELECT * FROM change_points")"
cp=$(q "SELECT id FROM change_points")

# ---- bisection ----------------------------------------------------------------------

expect_rc 0 $C changes bisect
expect_grep '^bisect_runs=1 located=0 dismissed=0 alerts=0 errors=0$' "$TMP/out"
run=$(q "SELECT bisect_run_id FROM change_points WHERE id = $cp")
[ "$(q "SELECT trigger || ' ' || base_commit FROM runs WHERE id = $run")" = "bisect $c6" ] ||
	fail "first bisection baseline: $(q "SELECT * FROM runs WHERE id = $run")"
[ "$(q "SELECT count(*) || ' ' || group_concat(build_mode) || ' ' || group_concat(pin_agent_id)
	FROM jobs WHERE run_id = $run")" = "1 demo-release $(q "SELECT id FROM agents WHERE name = 'lab-1'")" ] ||
	fail "bisection job: $(q "SELECT build_mode, pin_agent_id FROM jobs WHERE run_id = $run")"
# While it waits, a pass changes nothing.
expect_rc 0 $C changes bisect
expect_grep '^bisect_runs=0 located=0 dismissed=0 alerts=0 errors=0$' "$TMP/out"
lease "$T1" "$TMP/lease.json"
jq_is "$TMP/lease.json" .job.baseline.trigger bisect
answer "$TMP/lease.json"
expect_rc 0 $C changes bisect
expect_grep '^bisect_runs=1 located=0 dismissed=0 alerts=0 errors=0$' "$TMP/out"
[ "$(q "SELECT commit_before || ' ' || commit_after || ' ' || bisect_runs FROM change_points")" = \
	"$c6 $c9 2" ] || fail "after c6: $(q "SELECT commit_before, commit_after, bisect_runs FROM change_points")"
run=$(q "SELECT bisect_run_id FROM change_points WHERE id = $cp")
[ "$(q "SELECT base_commit FROM runs WHERE id = $run")" = "$c7" ] || fail "the second baseline is not of c7"
lease "$T1" "$TMP/lease.json"
answer "$TMP/lease.json"
expect_rc 0 $C changes bisect
expect_grep '^bisect_runs=0 located=1 dismissed=0 alerts=1 errors=0$' "$TMP/out"
expect_grep "change point $cp located: dpdk-demo main at $(echo "$c7" | cut -c1-12): mempool_perf_demo $SLOW -15\\.0% on lab-1 demo-release \\(2 bisection baselines\\)" "$TMP/out"
[ "$(q "SELECT state || ' ' || located_commit || ' ' || commit_before || ' ' || commit_after || ' ' ||
	first_before || ' ' || first_after || ' ' || (alerted_at IS NOT NULL) FROM change_points")" = \
	"confirmed $c7 $c6 $c7 $c4 $c9 1" ] || fail "located: $(q "SELECT * FROM change_points")"
# Told once: another pass has nothing to do.
expect_rc 0 $C changes bisect
expect_grep '^bisect_runs=0 located=0 dismissed=0 alerts=0 errors=0$' "$TMP/out"
! grep -q 'change point .* located:' "$TMP/out" || fail "told twice"
[ "$(q "SELECT count(*) FROM change_points")" = 1 ] || fail "the bisection's baselines found another change"
[ "$(q "SELECT count(*) || ' ' || group_concat(to_addrs) FROM email_outbox WHERE change_point_id = $cp
	AND series_id IS NULL AND run_id IS NULL")" = "1 maint@example.org" ] ||
	fail "alert mails: $(q "SELECT id, change_point_id, to_addrs, delivery FROM email_outbox")"

# ---- the alert mail, delivered by the daemon ------------------------------------------

alert_sent() { [ "$(q "SELECT delivery FROM email_outbox WHERE change_point_id = $cp")" = sent ]; }
wait_until "the alert mail" alert_sent
"$PY" - "$TMP/spool" "$cp" "$c7" "$c6" "$SLOW" <<'EOF_PY' || fail "the alert mail is wrong"
import email, email.policy, glob, sys
spool, cp, c7, c6, key = sys.argv[1:]
mails = [p for p in glob.glob(spool + '/*.eml')
         if ('perfgate.cp%s.alert@lab.example.org' % cp).encode() in open(p, 'rb').read()]
assert len(mails) == 1, mails
raw = open(mails[0], 'rb').read()
assert b'\x1b' not in raw, 'a raw ESC in the mail'
m = email.message_from_bytes(raw.replace(b'\r\n', b'\n'), policy=email.policy.default)
subj = str(m['Subject'])
want = '[perfgate] main-branch regression: dpdk-demo/main mempool_perf_demo %s -15.0%% at %s (c7 mempool: slower \\x1b[31mred)' % (key, c7[:12])
assert subj == want, (subj, want)
assert m['To'].addresses[0].addr_spec == 'maint@example.org', m['To']
assert m['Cc'] is None, m['Cc']
body = m.get_content()
assert 'Test-Label' not in body, body
for line in ['_Performance regression on a main branch_',
             'Commit: ' + c7,
             'Author: Jane Slow <jane@example.org>, ',
             'Host: lab-1, build mode demo-release, context perfgate-demo-Performance',
             'located by 2 bisection baselines (bisected)',
             'Dashboard: https://perfgate.example.org/changes?state=confirmed#cp-' + cp,
             '  perfgate-controller baseline run dpdk-demo main --commit %s --context perfgate-demo-Performance' % c6,
             '  perfgate-controller baseline run dpdk-demo main --commit %s --context perfgate-demo-Performance' % c7,
             '  perfgate-controller changes show ' + cp]:
    assert line in body, (line, body)
EOF_PY
expect_rc 0 $C changes bisect
expect_grep 'alerts=0 ' "$TMP/out"
[ "$(q "SELECT count(*) FROM email_outbox")" = 1 ] || fail "the alert was mailed twice"

# ---- what a person sees ---------------------------------------------------------------

expect_rc 0 $C changes list
expect_grep "^$cp +confirmed +dpdk-demo +main +lab-1 +demo-release +$SLOW +-15\\.0% $(echo "$c6" | cut -c1-12)\\.\\.$(echo "$c7" | cut -c1-12) at $(echo "$c7" | cut -c1-12) 2 " "$TMP/out"
expect_rc 0 $C changes show "$cp"
expect_grep "^  located:    $c7$" "$TMP/out"
expect_grep "^  found:      between $c4 and $c9$" "$TMP/out"
expect_rc 1 $C changes show 999
expect_grep 'no change point 999' "$TMP/out"
curl -sf "$URL/api/v1/change-points?state=confirmed" >"$TMP/cps.json" || fail "GET /api/v1/change-points"
jq_is "$TMP/cps.json" '.change_points | length' 1
jq_is "$TMP/cps.json" '.change_points[0] | [.located_commit, .bisect_runs, .metric] | map(tostring) | join(" ")' \
	"$c7 2 $SLOW"
curl -sf "$URL/api/v1/change-points?state=dismissed" >"$TMP/cps.json" || fail "GET /api/v1/change-points"
jq_is "$TMP/cps.json" '.change_points | length' 0
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/change-points?state=nope")
[ "$code" = 400 ] || fail "a bad state: HTTP $code"
curl -sf "$URL/metrics" >"$TMP/metrics" || fail "GET /metrics"
expect_grep '^perfgate_change_points\{state="confirmed",direction="regression"\} 1$' "$TMP/metrics"
expect_grep '^perfgate_change_points\{state="suspected",direction="regression"\} 0$' "$TMP/metrics"

# ---- the history in git order -------------------------------------------------------

curl -sf "$URL/api/v1/history?agent=lab-1&tree=dpdk-demo&branch=main&mode=demo-release&key=$SLOW" \
	>"$TMP/hist.json" || fail "GET /api/v1/history"
jq_is "$TMP/hist.json" .benchmark $M
jq_is "$TMP/hist.json" '[.points[].commit] | join(" ")' \
	"$c0 $c1 $c2 $c3 $c4 $c6 $c7 $c9 $c10 $c11 $c12 $c13"
jq_is "$TMP/hist.json" '[.points[] | .median / 1e5 | round] | map(tostring) | join(" ")' \
	"100 100 100 100 100 100 85 85 85 85 85 85"
jq_is "$TMP/hist.json" '.points[6] | [(.jobs | length), .facts.kernel] | map(tostring) | join(" ")' \
	"1 6.1.0-1"
code=$(curl -s -o "$TMP/hist.err" -w '%{http_code}' "$URL/api/v1/history?agent=lab-1&tree=dpdk-demo")
[ "$code" = 400 ] || fail "a history without its key: HTTP $code"

# ---- host drift: the same commit slower on the same host ---------------------------

# c13 again, 18 % slower with a new kernel: flagged against its earlier
# baseline of c13 (the class has one host), named by the fact that changed.
DRIFT_LVL=7.0 measure 13
[ "$(q "SELECT host || ' ' || kind || ' ' || state || ' ' || metric || ' ' || commit_oid || ' ' ||
	(change_pct < -15) FROM host_drift")" = "lab-1 time flagged $SLOW $c13 1" ] ||
	fail "drift: $(q "SELECT * FROM host_drift")"
q "SELECT why FROM host_drift" >"$TMP/why"
expect_grep 'against its earlier baselines: kernel "6\.1\.0-1" -> "6\.1\.0-2"$' "$TMP/why"
curl -sf "$URL/api/v1/agents" >"$TMP/agents.json" || fail "GET /api/v1/agents"
jq_is "$TMP/agents.json" '.agents[0].drift | [.state, .kind, .metric] | join(" ")' "flagged time $SLOW"
curl -sf "$URL/metrics" >"$TMP/metrics" || fail "GET /metrics"
expect_grep '^perfgate_host_drift\{state="flagged"\} 1$' "$TMP/metrics"
expect_rc 0 $C agent list
expect_grep "^  flagged \(time, demo-release\): mempool_perf_demo $SLOW -1[0-9.]+% " "$TMP/out"
# Flagged only: the host still leases.
expect_rc 0 $C baseline run dpdk-demo main --commit "$c12"
lease "$T1" "$TMP/lease.json"
answer "$TMP/lease.json"
expect_rc 0 $C agent clear-drift lab-1
expect_grep 'agent lab-1: 1 drift flag cleared' "$TMP/out"
[ "$(q "SELECT state || ' ' || cleared_by FROM host_drift")" = \
	"cleared perfgate-controller agent clear-drift" ] || fail "not cleared: $(q "SELECT * FROM host_drift")"

# With drain_on_drift the host leases nothing until an operator clears it.
stop_ctl
jq '.baseline.drain_on_drift = true' "$TMP/c.json" >"$TMP/c2.json"
C="$CTL --config $TMP/c2.json"
start_ctl "$TMP/c2.json"
listening_again() { [ "$(grep -c 'api: listening on http://' "$TMP/ctl.log")" -ge 2 ]; }
wait_until "the API again" listening_again
URL=$(sed -n 's/.*api: listening on \(http:[^ ]*\).*/\1/p' "$TMP/ctl.log" | tail -n 1)
DRIFT_LVL=7.0 measure 12
[ "$(q "SELECT count(*) FROM host_drift WHERE state = 'drained' AND commit_oid = '$c12'")" = 1 ] ||
	fail "not drained: $(q "SELECT * FROM host_drift")"
expect_rc 0 $C baseline run dpdk-demo main --commit "$c11"
code=$(curl -sS -o "$TMP/lease.json" -w '%{http_code}' -H "Authorization: Bearer $T1" \
	-H 'Content-Type: application/json' --data-binary '{"wait_s": 1}' "$URL/api/v1/lease")
[ "$code" = 204 ] || fail "a drained host got HTTP $code: $(cat "$TMP/lease.json")"
expect_rc 0 $C agent list
expect_grep '^lab-1 +drained ' "$TMP/out"
expect_rc 0 $C agent clear-drift lab-1
lease "$T1" "$TMP/lease.json"
jq_is "$TMP/lease.json" .job.tree.base_commit "$c11"
stop_ctl
