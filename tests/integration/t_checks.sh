# The check and mail outboxes, with the real controller daemon, the fake
# Patchwork (tests/fake_patchwork.py) and a real SMTP server on loopback:
#  - pending checks queued by the real planner arrive as Patchwork wants
#    them (the exact JSON, a token), on the patch Patchwork knows by the
#    series' last Message-ID, then the final check after them;
#  - a pending check whose run's final check came first is cancelled, and
#    a patch Patchwork does not know yet waits, then goes;
#  - an outage (503s, then dropped connections; the first POST creates its
#    check and loses the answer) with a kill -9 of the controller in the
#    middle: every check arrives exactly once;
#  - a 403 (a token without rights) is tried once, recorded with its body,
#    not retried until an admin says so;
#  - report mails: a refused author's Cc is dropped, a 451 retried, each
#    mail delivered once;
#  - Patchwork down (its port refusing connections), then back: tries
#    refused at connect cannot have posted, so no try looks its check up
#    first (a lost answer, in 4, still does).
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/delivery_lib.sh"

OTOOL="$PG_BUILD/tests/tools/outbox-tool"
[ -x "$OTOOL" ] || fail "$OTOOL not built"
CTX=perfgate-demo-Performance
CI_TOKEN=04b5b8ffb66a2d9ba9ad32d0ba95a2b120a60b9a
BOB_TOKEN=1111111111111111111111111111111111111111

# ---- the fake Patchwork ------------------------------------------------------

cat >"$TMP/fixture.json" <<EOF
{ "users": [
    { "id": 1, "username": "ci", "email": "ci@example.org", "token": "$CI_TOKEN",
      "maintainer_of": ["dpdk"] },
    { "id": 2, "username": "bob", "email": "bob@example.org", "token": "$BOB_TOKEN" } ] }
EOF
start_patchwork "$TMP/fixture.json"
n_checks() { checks; [ "$(jq '.checks | length' "$TMP/checks.json")" -ge "$1" ]; }

P=$PG_TOP/tests/patchwork
fake series "{\"mails\": [{\"file\": \"$P/series-a/v2-0000-cover-letter.patch\", \"id\": 1001},
	{\"file\": \"$P/series-a/v2-0001-lib-add-world.patch\", \"id\": 101},
	{\"file\": \"$P/series-a/v2-0002-lib-add-bang.patch\", \"id\": 102}]}"
fake series "{\"mails\": [{\"file\": \"$P/series-b/0001-net-one-add-one.patch\", \"id\": 201},
	{\"file\": \"$P/series-b/0002-net-two-add-two.patch\", \"id\": 202},
	{\"file\": \"$P/series-b/0003-net-three-add-three.patch\", \"id\": 203}]}"
fake series "{\"mails\": [{\"file\": \"$P/single/0001-lib-fix-hello.patch\", \"id\": 301}]}"

# ---- the controller: a tree, the same mails read from an mbox, a plan ---------

demo_tree
printf '%s\n' "$CI_TOKEN" >"$TMP/token"
printf '%s\n' "$BOB_TOKEN" >"$TMP/bob-token"
chmod 600 "$TMP/token" "$TMP/bob-token"
conf "$TMP/c.json" "$TMP/token" ci
C="$CTL --config $TMP/c.json"
expect_rc 0 $C --check-config
jq_is "$TMP/out" .config.checks.patchwork_url "$base/api/1.3"
jq_is "$TMP/out" .config.checks.token_file "$TMP/token"
jq_is "$TMP/out" .config.checks.max_backoff_s 2
grep -q "$CI_TOKEN" "$TMP/out" && fail "--check-config printed the token"

cat "$P"/series-a/*.patch "$P"/series-b/*.patch "$P"/single/*.patch >"$TMP/all.mbox"
expect_rc 0 $C ingest --mbox "$TMP/all.mbox"
expect_rc 0 $C plan
expect_grep 'runs=3 ' "$TMP/out"
[ "$(q "SELECT count(*) FROM check_outbox WHERE state = 'pending' AND delivery = 'queued'")" = 3 ] ||
	fail "expected 3 pending checks queued by the planner"
# Read from an mbox: Patchwork's ids are not known yet.
[ "$(q "SELECT count(*) FROM patches WHERE pw_patch_id IS NOT NULL")" = 0 ] || fail "pw ids known"
series_of() {
	q "SELECT p.series_id FROM patches p JOIN messages m ON m.id = p.message_id
	   WHERE m.msgid = '$1'"
}
A_LAST=597bfca348d1682d6f1d2a3d46c63d2c958911e4.1796014702.git.alice@example.com
B_LAST=e8066da13f2b3cc5fce95648547b13983b914b48.1796014702.git.alice@example.com
S_ONE=20261130050000.4242-1-carol@example.net
run_a=$(run_of "$A_LAST")
run_b=$(run_of "$B_LAST")
run_s=$(run_of "$S_ONE")
[ -n "$run_a" ] && [ -n "$run_b" ] && [ -n "$run_s" ] || fail "runs not found"

# ---- 1. pending checks ---------------------------------------------------------

start_ctl "$TMP/c.json"
wait_until "3 pending checks" n_checks 3
sent() { [ "$(q "SELECT count(*) FROM check_outbox WHERE delivery = 'sent'")" -ge "$1" ]; }
wait_until "3 rows sent" sent 3
checks
jq_is "$TMP/checks.json" '.checks | length' 3
jq_is "$TMP/checks.json" '[.checks[].patch] | sort | map(tostring) | join(",")' "102,203,301"
jq_is "$TMP/checks.json" '[.checks[] | select(.user == 1 and .state == "pending" and .context == "'$CTX'"
	and .description == "Performance Testing pending")] | length' 3
jq_is "$TMP/checks.json" '.posts.total' 3
# The exact requests: JSON, the token's scheme, one POST per check.
curl -sS -f "$base/_fake/requests" >"$TMP/requests.json" || fail "GET /_fake/requests"
jq -c '[.[] | select(.method == "POST")] | sort_by(.path)[] | [.path, .content_type, .authorization, .body, .status]' \
	"$TMP/requests.json" >"$TMP/posts.txt"
for pair in "102:$A_LAST" "203:$B_LAST" "301:$S_ONE"; do
	printf '["/api/1.3/patches/%s/checks/","application/json","Token","{\\"state\\":\\"pending\\",\\"context\\":\\"%s\\",\\"description\\":\\"Performance Testing pending\\",\\"target_url\\":\\"https://perfgate.example.org/series/%s\\"}",201]\n' \
		"${pair%%:*}" "$CTX" "$(series_of "${pair#*:}")"
done >"$TMP/posts.want"
diff -u "$TMP/posts.want" "$TMP/posts.txt" || fail "the POSTs are not the exact requests"
# The ids were found by Message-ID and kept; each row settled by its 201.
[ "$(q "SELECT group_concat(pw_patch_id) FROM (SELECT pw_patch_id FROM patches
	WHERE pw_patch_id IS NOT NULL ORDER BY 1)")" = "102,203,301" ] || fail "pw ids not recorded"
[ "$(q "SELECT count(*) FROM check_outbox WHERE delivery = 'sent' AND response_code = 201
	AND attempts = 1 AND sent_at IS NOT NULL AND response LIKE '{\"id\":%'")" = 3 ] ||
	fail "rows not recorded as sent with Patchwork's answer"

# ---- 2. the final check, after the pending one -----------------------------------

expect_rc 0 "$OTOOL" queue-check "$TMP/c.json" "$run_a" "$CTX" success "Performance Testing PASS"
expect_grep '^queued 1$' "$TMP/out"
# Again: nothing more (one row per run, patch, context and state).
expect_rc 0 "$OTOOL" queue-check "$TMP/c.json" "$run_a" "$CTX" success "Performance Testing PASS"
expect_grep '^queued 0$' "$TMP/out"
wait_until "the final check" n_checks 4
jq -c '[.checks[] | select(.patch == 102) | [.state, .target_url]]' "$TMP/checks.json" >"$TMP/a.txt"
echo "[[\"pending\",\"https://perfgate.example.org/series/$(series_of "$A_LAST")\"],[\"success\",\"https://perfgate.example.org/series/$(series_of "$A_LAST")\"]]" |
	diff -u - "$TMP/a.txt" || fail "on patch 102: pending, then success, same target URL"
stop_ctl

# ---- 3. a pending check made pointless; a patch Patchwork does not know yet -----

sed -e 's/lib: fix hello/lib: fix hello late/' \
	-e 's/^Message-I[dD]: <\(.*\)>/Message-ID: <late.\1>/' \
	"$P/single/0001-lib-fix-hello.patch" >"$TMP/late.patch"
expect_rc 0 $C ingest --mbox "$TMP/late.patch"
expect_rc 0 $C plan
run_l=$(run_of "late.$S_ONE")
[ -n "$run_l" ] || fail "the late series was not planned"
expect_rc 0 "$OTOOL" queue-check "$TMP/c.json" "$run_l" "$CTX" warning "Performance Testing WARNING"
start_ctl "$TMP/c.json"
waiting() {
	[ "$(q "SELECT count(*) FROM check_outbox WHERE run_id = $run_l AND state = 'warning'
		AND delivery = 'queued' AND attempts = 0
		AND response LIKE 'waiting: patch <late.%> is not on Patchwork yet'")" = 1 ]
}
wait_until "the late check to wait for its patch" waiting
[ "$(q "SELECT delivery FROM check_outbox WHERE run_id = $run_l AND state = 'pending'")" = cancelled ] ||
	fail "the pending check of a run with a final check was not cancelled"
expect_rc 0 $C outbox list
expect_grep "^check +[0-9]+ +queued +0 +[0-9T:Z-]+ +$run_l +$CTX +warning patch 1 \(pw \?\) +waiting: patch <late\." "$TMP/out"
fake series "{\"mails\": [{\"file\": \"$TMP/late.patch\", \"id\": 401}]}"
wait_until "the late check" n_checks 5
jq_is "$TMP/checks.json" '[.checks[] | select(.patch == 401) | .state] | join(",")' warning
[ "$(q "SELECT pw_patch_id FROM patches p JOIN messages m ON m.id = p.message_id
	WHERE m.msgid = 'late.$S_ONE'")" = 401 ] || fail "the late patch's id not recorded"

# ---- 4. an outage, a lost reply, and kill -9 in the middle ------------------------

# The first POST creates its check and loses the answer; the second is
# dropped unread (no check); then 503s for 8 s, then dropped connections
# until 16 s after now.
fake fail '{"count": 1, "lost_reply": true, "method": "POST", "path": "/api/"}'
fake fail '{"count": 1, "drop": true, "method": "POST", "path": "/api/"}'
fake fail '{"status": 503, "for_s": 8, "path": "/api/"}'
fake fail '{"drop": true, "for_s": 16, "path": "/api/"}'
outage_start=$(date +%s)
expect_rc 0 "$OTOOL" queue-check "$TMP/c.json" "$run_b" "$CTX" fail "Performance Testing FAIL"
expect_rc 0 "$OTOOL" queue-check "$TMP/c.json" "$run_s" "$CTX" success "Performance Testing PASS"
tried_twice() {
	[ "$(q "SELECT count(*) FROM check_outbox WHERE run_id IN ($run_b, $run_s)
		AND state <> 'pending' AND attempts >= 2")" = 2 ]
}
wait_until "two tries of each check in the outage" tried_twice
# The API answers meanwhile: the outbox has its own thread and connection.
api=$(sed -n 's|.*api: listening on \(http://[0-9.:]*\).*|\1|p' "$TMP/ctl.log" | tail -n 1)
[ -n "$api" ] || fail "no API address in the log"
code=$(curl -sS -o "$TMP/series.json" -w '%{http_code}' --max-time 10 "$api/api/v1/series") ||
	fail "the API did not answer during the outage"
[ "$code" = 200 ] || fail "the API answered $code during the outage"
jq_is "$TMP/series.json" '.total' 4
kill -9 "$ctl"
wait "$ctl" 2>/dev/null
killed_at=$(date +%s)
start_ctl "$TMP/c.json"
both_sent() {
	[ "$(q "SELECT count(*) FROM check_outbox WHERE run_id IN ($run_b, $run_s)
		AND state <> 'pending' AND delivery = 'sent'")" = 2 ]
}
wait_until "both checks after the outage" both_sent
done_at=$(date +%s)
checks
# Exactly once: one check per (patch, context, state), and the two finals.
jq_is "$TMP/checks.json" '[.checks[] | [.patch, .context, .state] | tostring] | (length == (unique | length))' true
jq_is "$TMP/checks.json" '[.checks[] | select(.patch == 203) | .state] | join(",")' pending,fail
jq_is "$TMP/checks.json" '[.checks[] | select(.patch == 301) | .state] | join(",")' pending,success
jq_is "$TMP/checks.json" '.checks | length' 7
# The lost reply's check was found, not posted again.
[ "$(q "SELECT count(*) FROM check_outbox WHERE run_id IN ($run_b, $run_s)
	AND response LIKE '%\"found\":true%'")" = 1 ] || fail "the lost reply was not found by the lookup"
grep -q 'already on Patchwork as check [0-9]* (the answer to an earlier try was lost)' "$TMP/ctl.log" ||
	fail "no log line for the lost reply"
# Both kinds of lost POST happened: one answered 201 unheard, one dropped.
jq -c '.posts.by_status' "$TMP/checks.json" >"$TMP/by_status"
jq_is "$TMP/checks.json" '.posts.by_status["0"]' 1
attempts=$(q "SELECT group_concat(attempts) FROM check_outbox WHERE run_id IN ($run_b, $run_s)
	AND state <> 'pending'")
echo "outage: 16 s of 503s and drops from $(date -d "@$outage_start" +%T), kill -9 after" \
	"$((killed_at - outage_start)) s, all delivered after $((done_at - outage_start)) s;" \
	"attempts per check: $attempts; POSTs by status: $(cat "$TMP/by_status"); duplicates: 0"
stop_ctl

# ---- 5. a token without rights: 403, once ------------------------------------------

conf "$TMP/bob.json" "$TMP/bob-token" bob
expect_rc 0 "$OTOOL" queue-check "$TMP/bob.json" "$run_a" "$CTX" fail "Performance Testing FAIL"
start_ctl "$TMP/bob.json"
failed() {
	[ "$(q "SELECT delivery FROM check_outbox WHERE run_id = $run_a AND state = 'fail'")" = failed ]
}
wait_until "the 403" failed
row=$(q "SELECT id FROM check_outbox WHERE run_id = $run_a AND state = 'fail'")
[ "$(q "SELECT response_code || ' ' || attempts || ' ' || response FROM check_outbox WHERE id = $row")" = \
	'403 1 {"detail":"You do not have permission to perform this action."}' ] ||
	fail "the 403 is not recorded with its body: $(q "SELECT * FROM check_outbox WHERE id = $row")"
posts403() { checks; jq '.posts.by_status["403"] // 0' "$TMP/checks.json"; }
[ "$(posts403)" = 1 ] || fail "403 posted $(posts403) times"
# Three passes later it has not been tried again.
sleep 3
[ "$(posts403)" = 1 ] || fail "a 403 was retried by itself"
grep -Eq "error outbox: check $row .*HTTP 403.*not retried" "$TMP/ctl.log" ||
	fail "the 403 was not logged as an error"
expect_rc 0 $C outbox list --json
jq_is "$TMP/out" "[.[] | select(.kind == \"check\" and .id == $row)][0].delivery" failed
expect_rc 0 $C outbox list
expect_grep "^check +$row +failed +1 +- +$run_a +$CTX +fail patch 2 \(pw 102\) +\{\"detail\":\"You do not have permission" "$TMP/out"
cat "$TMP/out"
# An admin queues it again: one more try (no lookup: a 403 created
# nothing), again 403.
expect_rc 0 $C outbox retry check "$row"
retried() {
	[ "$(q "SELECT delivery || attempts FROM check_outbox WHERE id = $row")" = failed2 ]
}
wait_until "the retried 403" retried
[ "$(posts403)" = 2 ] || fail "an admin's retry did not post exactly once more"
expect_rc 1 $C outbox retry check 999999
expect_grep 'no check 999999 in the outbox' "$TMP/out"
sent_row=$(q "SELECT min(id) FROM check_outbox WHERE delivery = 'sent'")
expect_rc 1 $C outbox retry check "$sent_row"
expect_grep "was sent already" "$TMP/out"
stop_ctl

# ---- 6. report mails -----------------------------------------------------------------

start_smtp --reject-rcpt alice@example.com --fail-data "451 4.3.0 try later" --fail-count 1
conf "$TMP/m.json" "$TMP/token" ci "\"mail\": { \"enabled\": true, \"smtp_url\": \"smtp://127.0.0.1:$sport/lab.example.org\", \"starttls\": \"off\", \"from\": \"perfgate CI <perfgate@lab.example.org>\", \"timeout_s\": 10 }"
printf 'key  base  patched  delta\nfwd.rx_pps  1.0e7  0.9e7  -10.0%%\n' >"$TMP/table.txt"
expect_rc 0 "$OTOOL" queue-mail "$TMP/m.json" "$run_a" "$CTX" fail "Performance Testing FAIL" "$TMP/table.txt"
expect_grep '^queued 1$' "$TMP/out"
expect_rc 0 "$OTOOL" queue-mail "$TMP/m.json" "$run_a" "$CTX" fail "Performance Testing FAIL"
expect_grep '^queued 0$' "$TMP/out"
expect_rc 0 "$OTOOL" queue-mail "$TMP/m.json" "$run_b" "$CTX" success "Performance Testing PASS"
[ "$(q "SELECT cc_addrs FROM email_outbox WHERE run_id = $run_a")" = alice@example.com ] ||
	fail "the author is not copied on a FAILURE"
start_ctl "$TMP/m.json"
mails_sent() { [ "$(q "SELECT count(*) FROM email_outbox WHERE delivery = 'sent'")" = 2 ]; }
wait_until "two mails" mails_sent
ls "$TMP/spool" | grep -c '\.eml$' >"$TMP/n_eml"
[ "$(cat "$TMP/n_eml")" = 2 ] || { ls "$TMP/spool"; fail "expected 2 mails delivered"; }
[ "$(q "SELECT attempts || ' ' || cc_addrs || '|' FROM email_outbox WHERE run_id = $run_a")" = '2 |' ] ||
	fail "mail 1: $(q "SELECT attempts, cc_addrs, response FROM email_outbox WHERE run_id = $run_a")"
"$PY" - "$TMP/spool" "$run_a" "$run_b" <<'EOF_PY' || fail "the delivered mails are wrong"
import email, email.policy, glob, json, sys
spool, run_a, run_b = sys.argv[1:4]
got = {}
for path in sorted(glob.glob(spool + '/*.eml')):
    raw = open(path, 'rb').read()
    env = json.load(open(path[:-4] + '.json'))
    m = email.message_from_bytes(raw.replace(b'\r\n', b'\n'), policy=email.policy.default)
    got[m['Message-ID']] = (m, env)
fail_id = f'<perfgate.r{run_a}.perfgate-demo-Performance@lab.example.org>'
pass_id = f'<perfgate.r{run_b}.perfgate-demo-Performance@lab.example.org>'
assert set(got) == {fail_id, pass_id}, sorted(got)
m, env = got[fail_id]
assert m['Subject'] == '|FAILURE| pw102 [PATCH v2 2/2] lib: add bang', m['Subject']
assert m['Cc'] is None, m['Cc']
assert env['rcpt_tos'] == ['test-report@dpdk.org'], env
body = m.get_content().split('\n')
assert body[:5] == ['Test-Label: perfgate-demo-Performance', 'Test-Status: FAILURE',
                    'http://patches.dpdk.org/patch/102/', '', '_Performance Testing FAIL_'], body[:5]
assert 'fwd.rx_pps  1.0e7  0.9e7  -10.0%' in body, body
m, env = got[pass_id]
assert m['Subject'] == '|SUCCESS| pw203 [PATCH 3/3] net/three: add three', m['Subject']
assert env['rcpt_tos'] == ['test-report@dpdk.org'], env
EOF_PY
[ "$(q "SELECT count(*) FROM email_outbox WHERE response LIKE '250 2.0.0 Ok: queued as %'")" = 2 ] ||
	fail "mails not recorded with the server's reply"
grep -q "mail [0-9]*: .*alice@example.com.*: sending it again without the Cc to alice@example.com" "$TMP/ctl.log" ||
	fail "the dropped Cc was not logged"
# Every check target Patchwork received resolves to its series page.
checks
# shellcheck disable=SC2046
fetch_targets "$TMP/ctl.log" $(jq -r '[.checks[].target_url] | unique | .[]' "$TMP/checks.json")
stop_ctl

# ---- 7. Patchwork down, then back: no lookups after refused tries ------------------

pw_port=${base##*:}
kill "$pw"
wait "$pw" 2>/dev/null
pw=""
last_row=$(q "SELECT max(id) FROM check_outbox")
expect_rc 0 "$OTOOL" queue-check "$TMP/c.json" "$run_b" "$CTX" warning "Performance Testing WARNING"
expect_rc 0 "$OTOOL" queue-check "$TMP/c.json" "$run_s" "$CTX" fail "Performance Testing FAIL"
refused="id > $last_row"
start_ctl "$TMP/c.json"
refused_thrice() {
	[ "$(q "SELECT count(*) FROM check_outbox WHERE $refused AND delivery = 'queued'
		AND attempts >= 3 AND response LIKE '%onnect%'")" = 2 ]
}
wait_until "three refused tries of each check" refused_thrice
# Stopped while Patchwork is set up again (a POST to a patch it does not
# have yet would be a 404); what the tries left is in the store.
stop_ctl
[ "$(q "SELECT count(*) FROM check_outbox WHERE $refused")" = 2 ] || fail "not 2 rows queued"
[ "$(q "SELECT count(*) FROM check_outbox WHERE $refused AND maybe_posted = 0")" = 2 ] ||
	fail "a refused try was recorded as maybe posted"
# Back on the same port, as it was (the same patches; no checks yet).
"$PY" tests/fake_patchwork.py --port "$pw_port" --fixture "$TMP/fixture.json" --quiet \
	>"$TMP/pw2.out" 2>"$TMP/pw2.err" &
pw=$!
wait_until "the fake Patchwork again" grep -q '^listening on ' "$TMP/pw2.out"
fake series "{\"mails\": [{\"file\": \"$P/series-b/0001-net-one-add-one.patch\", \"id\": 201},
	{\"file\": \"$P/series-b/0002-net-two-add-two.patch\", \"id\": 202},
	{\"file\": \"$P/series-b/0003-net-three-add-three.patch\", \"id\": 203}]}"
fake series "{\"mails\": [{\"file\": \"$P/single/0001-lib-fix-hello.patch\", \"id\": 301}]}"
start_ctl "$TMP/c.json"
refused_sent() {
	[ "$(q "SELECT count(*) FROM check_outbox WHERE $refused AND delivery = 'sent'")" = 2 ]
}
wait_until "the refused checks after Patchwork came back" refused_sent
stop_ctl
checks
jq_is "$TMP/checks.json" '[.checks[] | [.patch, .state] | tostring] | sort | join(" ")' \
	'[203,"warning"] [301,"fail"]'
jq_is "$TMP/checks.json" '.posts.total' 2
curl -sS -f "$base/_fake/requests" >"$TMP/requests.json" || fail "GET /_fake/requests"
jq_is "$TMP/requests.json" '[.[] | select(.method == "GET" and (.path | test("/checks/$")))] | length' 0
attempts=$(q "SELECT group_concat(attempts) FROM check_outbox WHERE $refused")
echo "refused: attempts per check $attempts; Patchwork back: $(jq length "$TMP/requests.json")" \
	"requests, 0 lookups, 2 POSTs"
echo "checks: all cases hold"
