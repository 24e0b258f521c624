# The controller's HTTP API over loopback, driven with curl: agent tokens
# (only a hash stored), the agent protocol (register, lease with long
# polling, heartbeat, logs, result), bad input of every kind, the admin
# endpoints with and without the admin token, the read endpoints and
# /metrics, a kill -9 with a job leased (the agent's late heartbeat and
# result still count), and SIGTERM with a lease waiting.  Every change is
# checked in the store with sqlite3, every refusal by the store not
# changing.
. "$PG_TOP/tests/integration/lib.sh"

for tool in curl jq sqlite3 sha256sum; do
	command -v $tool >/dev/null || fail "$tool is needed"
done
DB="$TMP/state/perfgate.db"
CTX=perfgate-demo-Performance

q() { sqlite3 "$DB" "$1" || fail "sqlite3: $1"; }

# q_is SQL EXPECTED
q_is() {
	got=$(q "$1") || fail "sqlite3 '$1' failed"
	[ "$got" = "$2" ] || fail "store: '$1' gave '$got', expected '$2'"
}

now_ms() { date +%s%3N; }

# call METHOD PATH TOKEN [DATA]: print the status; body in $TMP/body,
# headers in $TMP/hdr.  TOKEN "-" sends no Authorization; DATA @FILE reads
# a file.
call() {
	_auth="Authorization: Bearer $3"
	[ "$3" = - ] && _auth="X-No-Auth: 1"
	if [ $# -ge 4 ]; then
		curl -sS -m 70 -o "$TMP/body" -D "$TMP/hdr" -w '%{http_code}' -X "$1" \
			-H "$_auth" -H 'Content-Type: application/json' --data-binary "$4" "$URL$2"
	else
		curl -sS -m 70 -o "$TMP/body" -D "$TMP/hdr" -w '%{http_code}' -X "$1" \
			-H "$_auth" "$URL$2"
	fi
}

# expect STATUS METHOD PATH TOKEN [DATA]
expect() {
	_want=$1
	shift
	_got=$(call "$@") || fail "curl $1 $2 failed"
	[ "$_got" = "$_want" ] || { cat "$TMP/hdr" "$TMP/body" >&2; fail "$1 $2: got $_got, expected $_want"; }
}

# expect_error STATUS MESSAGE METHOD PATH TOKEN [DATA]
expect_error() {
	_msg=$2
	_st=$1
	shift 2
	expect "$_st" "$@"
	jq_is "$TMP/body" .error "$_msg"
	grep -qi '^content-type: application/json' "$TMP/hdr" || fail "$1 $2: error not JSON"
}

start_ctl() {	# start_ctl CONFIG LOG
	log=$2
	"$CTL" --config "$1" -l info,api=debug serve >"$log" 2>&1 &
	pid=$!
	i=0
	until grep -q 'api: listening on http://' "$log"; do
		i=$((i + 1))
		[ $i -lt 100 ] || { cat "$log"; fail "the API never listened"; }
		kill -0 $pid 2>/dev/null || { cat "$log"; fail "the controller died"; }
		sleep 0.1
	done
	URL=$(sed -n 's/.*api: listening on \(http:[^ ]*\).*/\1/p' "$log" | tail -n 1)
	case $URL in
	http://127.0.0.1:[1-9]*) ;;
	*) fail "no port in '$URL'" ;;
	esac
}
stop_ctl() { [ -n "${pid:-}" ] && kill -9 "$pid" 2>/dev/null; return 0; }
cleanup_hooks="stop_ctl"

wait_log() {	# wait_log PATTERN (10 s at most)
	i=0
	until grep -Eq "$1" "$log"; do
		i=$((i + 1))
		[ $i -lt 100 ] || { cat "$log"; fail "never logged /$1/"; }
		sleep 0.1
	done
}

# ---- Configurations --------------------------------------------------------

printf 'admin-0123456789-abcdef\n' >"$TMP/admin"
chmod 600 "$TMP/admin"
API='"listen": "127.0.0.1:0", "lease_s": 8, "max_attempts": 3, "max_body_bytes": 65536, "threads": 2'
write_config "$TMP/noapi.json"
write_config "$TMP/noadmin.json" "\"api\": { $API }"
write_config "$TMP/c.json" "\"api\": { $API, \"admin_token_file\": \"$TMP/admin\" }"
expect_rc 0 "$CTL" --config "$TMP/c.json" --check-config
jq_is "$TMP/out" .config.api.lease_s 8
jq_is "$TMP/out" .config.api.public_url "http://127.0.0.1:0"
expect_rc 0 "$CTL" --config "$TMP/noapi.json" --check-config
jq_is "$TMP/out" .config.api null

# ---- Agents: a token printed once, only its hash stored --------------------

expect_rc 0 "$CTL" --config "$TMP/c.json" db migrate
"$CTL" --config "$TMP/c.json" agent add a1 --labels pool=demo,arch=x86_64 \
	>"$TMP/tok1" 2>"$TMP/err1" || { cat "$TMP/err1"; fail "agent add a1"; }
[ "$(wc -l <"$TMP/tok1")" -eq 1 ] || fail "agent add printed more than the token"
T1=$(cat "$TMP/tok1")
echo "$T1" | grep -Eq '^[0-9a-f]{64}$' || fail "token '$T1' is not 64 hex digits"
expect_grep 'agent a1 added .*shown only this once' "$TMP/err1"
q_is "SELECT token_hash FROM agents WHERE name = 'a1'" \
	"$(printf %s "$T1" | sha256sum | cut -d' ' -f1)"
q_is "SELECT labels FROM agents WHERE name = 'a1'" '{"pool":"demo","arch":"x86_64"}'
sqlite3 "$DB" .dump | grep -q "$T1" && fail "the token is in the store"
cat "$DB"* | grep -aq "$T1" && fail "the token is in the store's files"
T2=$("$CTL" --config "$TMP/c.json" agent add a2 --labels pool=elsewhere 2>/dev/null) ||
	fail "agent add a2"
T3=$("$CTL" --config "$TMP/c.json" agent add a3 2>/dev/null) || fail "agent add a3"
[ "$T1" != "$T2" ] && [ "$T2" != "$T3" ] || fail "tokens repeat"
expect_rc 1 "$CTL" --config "$TMP/c.json" agent add a1
expect_grep 'agent add a1: .*' "$TMP/out"
expect_rc 2 "$CTL" --config "$TMP/c.json" agent add a4 --labels novalue
q_is "SELECT count(*) FROM agents" 3
expect_rc 0 "$CTL" --config "$TMP/c.json" agent disable a3
q_is "SELECT enabled FROM agents WHERE name = 'a3'" 0
expect_rc 1 "$CTL" --config "$TMP/c.json" agent disable nobody
expect_rc 0 "$CTL" --config "$TMP/c.json" agent list
expect_grep '^a1 +offline +never +- +pool=demo,arch=x86_64$' "$TMP/out"
expect_grep '^a3 +disabled ' "$TMP/out"

# ---- The store: a series of two patches and a cover, runs, held jobs --------

sqlite3 "$DB" <<'EOF' || fail "seeding the store"
INSERT INTO sources (id, name, kind, location, project, created_at)
	VALUES (1, 'test', 'mbox', '/dev/null', 'dpdk', 1);
INSERT INTO messages (id, source_id, position, msgid, subject, kind, raw_size, raw, state,
		received_at) VALUES
	(1, 1, '1', 'p1@x', '[PATCH 1/2] mempool: a', 'patch', 0, CAST('From: A <a@x>
Subject: [PATCH 1/2] mempool: a

From here on
>From there
---
 lib/mempool/x.c | 1 +
' AS BLOB), 'accepted', 1),
	(2, 1, '2', 'p2@x', '[PATCH 2/2] mempool: b', 'patch', 0, CAST('From: A <a@x>
Subject: [PATCH 2/2] mempool: b

second' AS BLOB), 'accepted', 1),
	(3, 1, '3', 'c0@x', '[PATCH 0/2] mempool', 'cover', 0, CAST('From: A <a@x>
Subject: [PATCH 0/2] mempool

cover' AS BLOB), 'accepted', 1);
INSERT INTO series (id, project, root_msgid, total, title, submitter_addr, state, received_at,
		completed_at, cover_message_id)
	VALUES (1, 'dpdk', 'c0@x', 2, 'mempool', 'a@x', 'complete', 1, 1, 3);
INSERT INTO patches (series_id, number, message_id, subject) VALUES (1, 2, 2, 'b'), (1, 1, 1, 'a');
INSERT INTO runs (id, series_id, reason, tree, branch, base_commit, created_at) VALUES
	(1, 1, 'new', 'dpdk-demo', 'main', '0123456789abcdef0123456789abcdef01234567', 1),
	(2, 1, 'recheck', 'dpdk-demo', 'main', '0123456789abcdef0123456789abcdef01234567', 2);
INSERT INTO jobs (id, run_id, context, host_class, build_mode, spec, priority, created_at) VALUES
	(1, 1, 'perfgate-demo-Performance', 'demo', 'demo-release',
	 '{"format":1,"run":1,"repetitions":3,"series":{"id":1,"title":"mempool","patches":2}}',
	 -1, 1),
	(2, 1, 'perfgate-demo-Performance', 'demo', 'demo-debugoptimized', '{"format":1}', -1, 2),
	(3, 2, 'perfgate-demo-Performance', 'demo', 'demo-release', '{"format":1}', -1, 3);
EOF

# ---- Without an "api" section nothing listens ----------------------------------

log="$TMP/noapi.log"
"$CTL" --config "$TMP/noapi.json" serve >"$log" 2>&1 &
pid=$!
wait_log 'api: not configured .*not serving HTTP'
kill -TERM $pid
wait $pid || fail "the controller without API exited $?"

# ---- Phase 1: no admin token; leases wait and end; SIGTERM -------------------

start_ctl "$TMP/noadmin.json" "$TMP/noadmin.log"
expect 200 POST /api/v1/agents/register "$T1" \
	'{"labels": {"pool": "demo", "arch": "x86_64"}, "facts": {"cores": 2, "kernel": "6.1"}}'
jq_is "$TMP/body" .agent a1
jq_is "$TMP/body" .labels.pool demo
q_is "SELECT json_extract(facts, '\$.cores') || ' ' || (last_seen > 0) FROM agents WHERE name = 'a1'" "2 1"

# Every job is held: a lease waits wait_s, then 204, and nothing changes.
t0=$(now_ms)
expect 204 POST /api/v1/lease "$T1" '{"wait_s": 2}'
el=$(( $(now_ms) - t0 ))
[ $el -ge 1800 ] && [ $el -lt 4000 ] || fail "a 2 s long poll took $el ms"
[ -s "$TMP/body" ] && fail "a 204 with a body"
q_is "SELECT count(*) FROM jobs WHERE state = 'queued' AND agent_id IS NULL" 3

expect_error 403 "no admin token configured (api.admin_token_file)" \
	POST /api/v1/series/1/recheck "admin-0123456789-abcdef" '{}'
expect_error 403 "no admin token configured (api.admin_token_file)" \
	POST /api/v1/jobs/1/cancel - '{}'
q_is "SELECT count(*) FROM recheck_requests" 0

# SIGTERM while a lease waits: the lease gets 503 at once, the daemon ends.
curl -sS -m 30 -o "$TMP/lp.body" -w '%{http_code}' -H "Authorization: Bearer $T1" \
	--data-binary '{"wait_s": 30}' "$URL/api/v1/lease" >"$TMP/lp.code" &
lp=$!
wait_log 'POST /api/v1/agents/register 200'
sleep 0.5
curl -sS "$URL/metrics" | grep -q '^perfgate_leases_waiting 1$' || fail "the lease is not waiting"
t0=$(now_ms)
kill -TERM $pid
wait $pid || fail "the controller exited $? on SIGTERM"
wait $lp
[ "$(cat "$TMP/lp.code")" = 503 ] || fail "a waiting lease got $(cat "$TMP/lp.code") on SIGTERM"
jq_is "$TMP/lp.body" .error "the controller is shutting down"
[ $(( $(now_ms) - t0 )) -lt 5000 ] || fail "SIGTERM took too long"
expect_grep 'api: stopping' "$log"
expect_grep 'api: stopped after' "$log"
expect_grep 'stopping on signal 15' "$log"
q_is "SELECT count(*) FROM jobs WHERE state = 'queued'" 3

# ---- Phase 2: the protocol ------------------------------------------------------

start_ctl "$TMP/c.json" "$TMP/serve.log"

# A waiting lease gets the job released while it waits (the store changed).
curl -sS -m 30 -o "$TMP/lp.body" -w '%{http_code}' -H "Authorization: Bearer $T1" \
	--data-binary '{"wait_s": 20}' "$URL/api/v1/lease" >"$TMP/lp.code" &
lp=$!
sleep 1
t0=$(now_ms)
q "UPDATE jobs SET priority = 0 WHERE id = 1"
wait $lp
el=$(( $(now_ms) - t0 ))
[ "$(cat "$TMP/lp.code")" = 200 ] || { cat "$TMP/lp.body"; fail "the waiting lease got $(cat "$TMP/lp.code")"; }
[ $el -lt 3500 ] || fail "the waiting lease took $el ms to see the job"
B="$TMP/lp.body"
jq_is "$B" .job.id 1
jq_is "$B" .job.attempt 1
jq_is "$B" .job.lease_s 8
jq_is "$B" .job.heartbeat_s 2
jq_is "$B" .job.context "$CTX"
jq_is "$B" .job.host_class demo
jq_is "$B" .job.build_mode demo-release
jq_is "$B" .job.run 1
jq_is "$B" .job.repetitions 3
jq_is "$B" .job.format 1
jq_is "$B" .job.series.title mempool
jq_is "$B" .job.series.mbox_url "$URL/api/v1/series/1/mbox"
jq_is "$B" '.job.lease_expires - now | (. > 5 and . < 10)' true
q_is "SELECT j.state, j.attempt, a.name FROM jobs j JOIN agents a ON a.id = j.agent_id WHERE j.id = 1" \
	"leased|1|a1"
q_is "SELECT count(*) FROM attempts WHERE job_id = 1 AND attempt = 1 AND ended_at IS NULL" 1

# One job per host: a second lease while holding one is 204, and says which.
q "UPDATE jobs SET priority = 0 WHERE id = 2"
expect 204 POST /api/v1/lease "$T1" '{"wait_s": 0}'
grep -qi '^X-Perfgate-Held-Job: 1' "$TMP/hdr" || fail "no X-Perfgate-Held-Job"
q_is "SELECT state FROM jobs WHERE id = 2" queued
# An agent whose labels match no host class gets nothing.
expect 204 POST /api/v1/lease "$T2" '{"wait_s": 1}'
q_is "SELECT count(*) FROM jobs WHERE agent_id = (SELECT id FROM agents WHERE name = 'a2')" 0
q "UPDATE jobs SET priority = -1 WHERE id = 2"

# Heartbeats.
expect 200 POST /api/v1/jobs/1/heartbeat "$T1" '{"attempt": 1, "stage": "build", "progress": 40}'
jq_is "$TMP/body" .cancel false
jq_is "$TMP/body" '.lease_expires - now | (. > 5 and . < 10)' true
q_is "SELECT state || ' ' || stage || ' ' || progress FROM jobs WHERE id = 1" "running build 40"
expect 409 POST /api/v1/jobs/1/heartbeat "$T1" '{"attempt": 2, "stage": "bench", "progress": 90}'
jq '.error' "$TMP/body" | grep -q 'attempt' || fail "a stale attempt's 409 does not say why"
expect 409 POST /api/v1/jobs/1/heartbeat "$T2" '{"attempt": 1, "stage": "bench"}'
expect 404 POST /api/v1/jobs/999/heartbeat "$T1" '{"attempt": 1}'
expect 404 POST /api/v1/jobs/999/result "$T1" '{"attempt": 1, "outcome": "ok"}'
q_is "SELECT state || ' ' || stage || ' ' || progress FROM jobs WHERE id = 1" "running build 40"

# Tokens: missing, wrong, disabled.  Nothing changes.
expect_error 401 "missing token: send Authorization: Bearer <agent token>" \
	POST /api/v1/jobs/1/heartbeat - '{"attempt": 1, "stage": "x"}'
grep -qi '^WWW-Authenticate: Bearer' "$TMP/hdr" || fail "no WWW-Authenticate"
expect_error 401 "unknown token" POST /api/v1/jobs/1/heartbeat "${T1}x" '{"attempt": 1, "stage": "x"}'
expect_error 401 "unknown token" POST /api/v1/jobs/1/result \
	"$(printf %s "$T1" | tr 0-9a-f a-f0-9)" '{"attempt": 1, "outcome": "ok"}'
expect_error 401 "malformed Authorization header: expected Bearer <token>" \
	POST /api/v1/lease "a b" '{}'
expect_error 403 "agent a3 is disabled" POST /api/v1/lease "$T3" '{}'
q_is "SELECT state || ' ' || stage || ' ' || progress FROM jobs WHERE id = 1" "running build 40"
q_is "SELECT count(*) FROM results" 0
q_is "SELECT count(*) FROM jobs WHERE agent_id = (SELECT id FROM agents WHERE name = 'a3')" 0

# Bad input: 400 naming the problem or the field, 413 for too much.
expect_error 400 "request body: invalid JSON at line 1, column 12" \
	POST /api/v1/jobs/1/heartbeat "$T1" '{"attempt": '
expect_error 400 "field 'attempt': expected an integer, got a string" \
	POST /api/v1/jobs/1/heartbeat "$T1" '{"attempt": "1", "stage": "x"}'
expect_error 400 "field 'progress': 101 is out of range [0, 100]" \
	POST /api/v1/jobs/1/heartbeat "$T1" '{"attempt": 1, "progress": 101}'
expect_error 400 "request body: expected a JSON object, got an array" \
	POST /api/v1/jobs/1/result "$T1" '[]'
expect_error 400 "field 'samples[0]': field 'value': expected a number, got a string" \
	POST /api/v1/jobs/1/result "$T1" '{"attempt": 1, "outcome": "ok", "samples":
	[{"side": "base", "benchmark": "b", "metric": "m", "repetition": 0, "value": "x"}]}'
expect_error 400 "field 'labels.pool': expected a string, got a number" \
	POST /api/v1/agents/register "$T1" '{"labels": {"pool": 1}}'
expect_error 400 "query parameter 'stage': missing" POST "/api/v1/jobs/1/logs?attempt=1" "$T1" 'x'
head -c 70000 /dev/zero | tr '\0' ' ' >"$TMP/big"
expect_error 413 "request body of 70000 bytes is over the limit of 65536 bytes" \
	POST /api/v1/jobs/1/result "$T1" "@$TMP/big"
expect 413 POST /api/v1/jobs/1/heartbeat "$T1" "@$TMP/big"
# Without a Content-Length (chunked): read up to the limit, then refused.
code=$(curl -sS -m 30 -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $T1" \
	-H 'Transfer-Encoding: chunked' --data-binary "@$TMP/big" "$URL/api/v1/jobs/1/heartbeat")
[ "$code" = 413 ] || fail "a chunked upload over the limit got $code"
q_is "SELECT state || ' ' || stage || ' ' || progress FROM jobs WHERE id = 1" "running build 40"
q_is "SELECT labels FROM agents WHERE name = 'a1'" '{"pool":"demo","arch":"x86_64"}'
q_is "SELECT count(*) FROM results" 0

# Logs: chunks appended, a retried chunk not twice, a gap refused.
expect 200 POST "/api/v1/jobs/1/logs?attempt=1&stage=build" "$T1" 'configure
'
jq_is "$TMP/body" .bytes 10
expect 200 POST "/api/v1/jobs/1/logs?attempt=1&stage=build&offset=10" "$T1" 'ninja
'
jq_is "$TMP/body" .bytes 16
expect 200 POST "/api/v1/jobs/1/logs?attempt=1&stage=build&offset=10" "$T1" 'ninja
'
jq_is "$TMP/body" .bytes 16
# The append of a chunk whose batch was then lost (a full disk at COMMIT):
# the file holds it, its row does not; the retry records the size.
q "UPDATE logs SET bytes = 10 WHERE job_id = 1 AND attempt = 1 AND stage = 'build'"
expect 200 POST "/api/v1/jobs/1/logs?attempt=1&stage=build&offset=10" "$T1" 'ninja
'
jq_is "$TMP/body" .bytes 16
q_is "SELECT bytes FROM logs WHERE job_id = 1 AND attempt = 1 AND stage = 'build'" 16
expect 409 POST "/api/v1/jobs/1/logs?attempt=1&stage=build&offset=99" "$T1" 'gap'
expect 409 POST "/api/v1/jobs/1/logs?attempt=2&stage=build" "$T1" 'no such attempt'
expect 409 POST "/api/v1/jobs/1/logs?attempt=1&stage=build" "$T2" 'not yours'
expect 404 POST "/api/v1/jobs/999/logs?attempt=1&stage=build" "$T1" 'no job'
printf 'configure\nninja\n' | cmp -s - "$TMP/state/logs/1/1/build.log" || fail "log file content"
# A log's tail (the dashboard shows long logs end first): from a line
# start, with the whole size in a header.
expect 200 GET "/api/v1/jobs/1/logs/1/build?tail=8" -
printf 'ninja\n' | cmp -s - "$TMP/body" || fail "tail=8 of the log: $(cat "$TMP/body")"
grep -qi '^x-perfgate-log-size: 16' "$TMP/hdr" || fail "no X-Perfgate-Log-Size: 16"
grep -qi '^x-content-type-options: nosniff' "$TMP/hdr" || fail "a log without nosniff"
expect 200 GET "/api/v1/jobs/1/logs/1/build?tail=100" -
printf 'configure\nninja\n' | cmp -s - "$TMP/body" || fail "tail=100 is the whole log"
expect_error 400 "query parameter 'tail': 'x' is not an integer in [1, 268435456]" \
	GET "/api/v1/jobs/1/logs/1/build?tail=x" -
q_is "SELECT path || ' ' || bytes FROM logs WHERE job_id = 1" "logs/1/1/build.log 16"
expect 200 GET /api/v1/jobs/1/logs/1/build -
printf 'configure\nninja\n' | cmp -s - "$TMP/body" || fail "GET log content"
grep -qi '^content-type: text/plain' "$TMP/hdr" || fail "a log is not text/plain"
expect 404 GET /api/v1/jobs/1/logs/1/bench -
# A log is what sandboxed code printed: kept as received, served through
# the sanitiser (an "é" split between two chunks stays whole).
printf 'ok \303' >"$TMP/l1"
printf '\251 \033[2J\007 lone\rcr \302\233 \342\200\256rtl \377 crlf\r\nend\n' >"$TMP/l2"
expect 200 POST "/api/v1/jobs/1/logs?attempt=1&stage=bench" "$T1" "@$TMP/l1"
expect 200 POST "/api/v1/jobs/1/logs?attempt=1&stage=bench&offset=4" "$T1" "@$TMP/l2"
cat "$TMP/l1" "$TMP/l2" | cmp -s - "$TMP/state/logs/1/1/bench.log" || fail "hostile log not kept as received"
expect 200 GET /api/v1/jobs/1/logs/1/bench -
python3 - "$TMP/body" <<'PY' || fail "hostile log served raw"
import sys
b = open(sys.argv[1], "rb").read()
t = b.decode("utf-8")                      # valid UTF-8, or this raises
want = "ok \u00e9 \\x1b[2J\\x07 lone\\x0dcr \\u009b \\u202ertl \ufffd crlf\r\nend\n"
assert t == want, (t, want)
PY
# The same where the controller's reads split the file (every 64 KiB): an
# "é" across the first boundary, a CR LF across the second.
python3 - "$TMP" <<'PY'
import sys
d = sys.argv[1]
open(d + "/m1", "wb").write(b"a" * 65535 + b"\xc3")
open(d + "/m2", "wb").write(b"\xa9" + b"b" * 65534 + b"\r")
open(d + "/m3", "wb").write(b"\nend\x1b\n")
PY
expect 200 POST "/api/v1/jobs/1/logs?attempt=1&stage=apply" "$T1" "@$TMP/m1"
expect 200 POST "/api/v1/jobs/1/logs?attempt=1&stage=apply&offset=65536" "$T1" "@$TMP/m2"
expect 200 POST "/api/v1/jobs/1/logs?attempt=1&stage=apply&offset=131072" "$T1" "@$TMP/m3"
expect 200 GET /api/v1/jobs/1/logs/1/apply -
python3 - "$TMP/body" <<'PY' || fail "a log split by reads served wrong"
import sys
t = open(sys.argv[1], "rb").read().decode("utf-8")
want = "a" * 65535 + "\u00e9" + "b" * 65534 + "\r\nend\\x1b\n"
assert t == want, (len(t), len(want), t[-20:], want[-20:])
PY
# A chunk whose file write is stuck holds up no other request: log files
# are written by the appender thread, beside the writer (api_logs.c).
# Stuck here for certain: the log is a FIFO that no one reads, so the
# append's open() waits (in the kernel's wait_for_partner).  When the
# writer did the append inside its batch, the heartbeat below waited too.
mkfifo "$TMP/state/logs/1/1/stall.log"
call POST "/api/v1/jobs/1/logs?attempt=1&stage=stall" "$T1" 'stall
' >"$TMP/stall.code" 2>&1 &
stall=$!
# Where the kernel hides wchan (it reads 0), 5 s is ample for the chunk to
# get there.
i=0
until grep -qs wait_for_partner /proc/"$pid"/task/*/wchan; do
	i=$((i + 1))
	[ $i -le 50 ] || break
	sleep 0.1
done
_got=$(curl -sS -m 10 -o "$TMP/hb.body" -w '%{http_code}' -H "Authorization: Bearer $T1" \
	--data-binary '{"attempt": 1, "stage": "bench", "progress": 60}' \
	"$URL/api/v1/jobs/1/heartbeat") || fail "a heartbeat waited behind a stuck log write"
[ "$_got" = 200 ] || fail "heartbeat beside a stuck log write: got $_got"
cat "$TMP/state/logs/1/1/stall.log" >"$TMP/stall.out" &
reader=$!
wait "$stall" || fail "the stuck chunk's POST failed: $(cat "$TMP/stall.code")"
[ "$(cat "$TMP/stall.code")" = 200 ] || fail "the stuck chunk: got $(cat "$TMP/stall.code")"
wait "$reader"
printf 'stall\n' | cmp -s - "$TMP/stall.out" || fail "the stuck chunk did not reach its file"
q_is "SELECT bytes FROM logs WHERE job_id = 1 AND attempt = 1 AND stage = 'stall'" 6
rm "$TMP/state/logs/1/1/stall.log"
printf 'stall\n' >"$TMP/state/logs/1/1/stall.log"

# The result: recorded once, a retry is a duplicate, another body a conflict.
cat >"$TMP/result.json" <<'EOF'
{"attempt": 1, "outcome": "ok", "detail": "fine", "fingerprint": {"cpu": "demo"},
 "samples": [
  {"side": "base", "benchmark": "mempool_perf", "metric": "rate", "repetition": 0, "value": 1.5e9, "unit": "obj/s"},
  {"side": "patched", "benchmark": "mempool_perf", "metric": "rate", "repetition": 0, "value": 1.4e9, "unit": "obj/s"}]}
EOF
# A body whose length two headers tell differently (a proxy in front may
# read the other one: request smuggling) is refused, not recorded.  Sent
# over raw sockets (curl does not send such framing), all three in one
# python3: a line "FRAMING STATUS ERROR" each.
python3 - "$URL" "$T1" "$TMP/result.json" >"$TMP/framing.out" <<'PY' || fail "framing: no answer"
import json, socket, sys, urllib.parse
url, token, path_body = sys.argv[1:4]
u = urllib.parse.urlsplit(url)
body = open(path_body, 'rb').read()
n = len(body)
chunked = b'%x\r\n' % n + body + b'\r\n0\r\n\r\n'
cases = [('cl+te', [f'Content-Length: {n}', 'Transfer-Encoding: chunked'], chunked),
         ('te+cl', ['Transfer-Encoding: chunked', f'Content-Length: {len(chunked)}'], chunked),
         ('cl+cl', [f'Content-Length: {n}', f'Content-Length: {n - 1}'], body)]
for name, framing, data in cases:
    head = ['POST /api/v1/jobs/1/result HTTP/1.1', f'Host: {u.netloc}',
            f'Authorization: Bearer {token}', 'Content-Type: application/json'] + framing
    s = socket.create_connection((u.hostname, u.port), timeout=30)
    s.sendall(('\r\n'.join(head) + '\r\n\r\n').encode() + data)
    got = b''
    while True:
        try:
            part = s.recv(65536)
        except ConnectionResetError:
            break
        if not part:
            break
        got += part
        hdr, sep, rest = got.partition(b'\r\n\r\n')
        lens = [l.split(b':', 1)[1] for l in hdr.split(b'\r\n')
                if l.lower().startswith(b'content-length:')]
        if sep and lens and len(rest) >= int(lens[0]):
            break
    s.close()
    hdr, _, rest = got.partition(b'\r\n\r\n')
    status = hdr.split(b' ', 2)[1].decode() if hdr else '000'
    try:
        error = json.loads(rest).get('error', '')
    except ValueError:
        error = rest.decode('utf-8', 'replace')
    print(name, status, error)
PY
cat >"$TMP/framing.want" <<'EOF'
cl+te 400 both Content-Length and Transfer-Encoding: the body's length is ambiguous; send one of them
te+cl 400 both Content-Length and Transfer-Encoding: the body's length is ambiguous; send one of them
cl+cl 400 two Content-Length headers that differ: the body's length is ambiguous; send one
EOF
diff -u "$TMP/framing.want" "$TMP/framing.out" || fail "ambiguous framing was not refused"
q_is "SELECT count(*) FROM results" 0
q_is "SELECT count(*) FROM samples" 0

expect 200 POST /api/v1/jobs/1/result "$T1" "@$TMP/result.json"
jq_is "$TMP/body" .status recorded
q_is "SELECT state || ' ' || outcome FROM jobs WHERE id = 1" "done ok"
q_is "SELECT count(*) FROM samples WHERE job_id = 1" 2
q_is "SELECT digest FROM results WHERE job_id = 1" "$(sha256sum <"$TMP/result.json" | cut -d' ' -f1)"
expect 200 POST /api/v1/jobs/1/result "$T1" "@$TMP/result.json"
jq_is "$TMP/body" .status duplicate
sed 's/"fine"/"other"/' "$TMP/result.json" >"$TMP/result2.json"
expect 409 POST /api/v1/jobs/1/result "$T1" "@$TMP/result2.json"
q_is "SELECT count(*) || ' ' || detail FROM results WHERE job_id = 1" "1 fine"
q_is "SELECT count(*) FROM samples WHERE job_id = 1" 2
# The job is done: its heartbeat is stale now.
expect 409 POST /api/v1/jobs/1/heartbeat "$T1" '{"attempt": 1}'

# ---- Admin: recheck and cancel --------------------------------------------------

expect_error 401 "missing token: send Authorization: Bearer <admin token>" \
	POST /api/v1/series/1/recheck - '{}'
expect_error 401 "wrong admin token" POST /api/v1/series/1/recheck "$T1" '{}'
q_is "SELECT count(*) FROM recheck_requests" 0
A=admin-0123456789-abcdef
expect 202 POST /api/v1/series/1/recheck "$A" '{}'
R=$(jq -r .recheck "$TMP/body")
q_is "SELECT series_id, origin, contexts, coalesce(rebase_branch, '-'), state FROM recheck_requests WHERE id = $R" \
	"1|api|$CTX|-|pending"
expect 202 POST /api/v1/series/1/recheck "$A" "{\"contexts\": [\"$CTX\"], \"rebase\": \"main\"}"
q_is "SELECT contexts || ' ' || rebase_branch FROM recheck_requests WHERE id = $(jq -r .recheck "$TMP/body")" \
	"$CTX main"
expect_error 400 "field 'contexts[0]': 'perfgate-nope' is not a context of this controller" \
	POST /api/v1/series/1/recheck "$A" '{"contexts": ["perfgate-nope"]}'
expect_error 404 "no series 99" POST /api/v1/series/99/recheck "$A" '{}'
q_is "SELECT count(*) FROM recheck_requests" 2

# Cancel a running job: its next heartbeat says cancel, its result is
# acknowledged and the job stays cancelled.
q "UPDATE jobs SET priority = 0 WHERE id = 2"
[ ! -e "$TMP/state/logs/2" ] || fail "job 2 has a log directory before its lease"
expect 200 POST /api/v1/lease "$T1" '{"wait_s": 5}'
jq_is "$TMP/body" .job.id 2
# The lease has its attempt's log directory made ahead of its first chunk
# (api_logs.c: half a second later, by a log appender; 10 s is ample).
i=0
until [ -d "$TMP/state/logs/2/1" ]; do
	i=$((i + 1))
	[ $i -le 100 ] || fail "the lease of job 2 got no log directory ahead"
	sleep 0.1
done
[ -z "$(ls -A "$TMP/state/logs/2/1")" ] || fail "the log directory made ahead is not empty"
expect 200 POST /api/v1/jobs/2/heartbeat "$T1" '{"attempt": 1, "stage": "bench"}'
expect 401 POST /api/v1/jobs/2/cancel "$T1" '{"reason": "an agent may not"}'
q_is "SELECT state FROM jobs WHERE id = 2" running
expect 200 POST /api/v1/jobs/2/cancel "$A" '{"reason": "wrong base"}'
jq_is "$TMP/body" .cancelled true
jq_is "$TMP/body" .active true
q_is "SELECT state || ' ' || outcome_detail FROM jobs WHERE id = 2" "cancelled wrong base"
q_is "SELECT outcome FROM attempts WHERE job_id = 2 AND attempt = 1" cancelled
expect 200 POST /api/v1/jobs/2/heartbeat "$T1" '{"attempt": 1, "stage": "bench"}'
jq_is "$TMP/body" .cancel true
expect 200 POST /api/v1/jobs/2/result "$T1" '{"attempt": 1, "outcome": "ok"}'
jq_is "$TMP/body" .status acknowledged
q_is "SELECT state FROM jobs WHERE id = 2" cancelled
expect 200 POST /api/v1/jobs/2/cancel "$A" '{}'
jq_is "$TMP/body" .cancelled false
expect 404 POST /api/v1/jobs/999/cancel "$A" '{}'

# ---- Read endpoints -------------------------------------------------------------------

expect 200 GET /api/v1/series -
jq_is "$TMP/body" '.total' 1
jq_is "$TMP/body" '.series[0].title' mempool
"$CTL" --config "$TMP/c.json" series show 1 --json >"$TMP/show.json" 2>/dev/null || fail "series show"
expect 200 GET /api/v1/series/1 -
# The same series, plus what the dashboard's page adds (runs, versions,
# checks, each patch's links).
jq -S 'del(.runs, .versions, .checks) | .patches |= map(del(.archive_url, .patchwork_url))' \
	"$TMP/body" >"$TMP/api.json"
jq -S . "$TMP/show.json" | diff -u - "$TMP/api.json" || fail "the API's series differs from series show"
jq_is "$TMP/body" '.patches | map("\(.archive_url)/\(.patchwork_url)") | join(",")' null/null,null/null
jq_is "$TMP/body" '.versions | map("\(.id):v\(.version)") | join(",")' 1:v1
jq_is "$TMP/body" '[.runs[].id] | join(",")' 1,2
jq_is "$TMP/body" '.runs[0].jobs | map("\(.id):\(.state)") | join(",")' 1:done,2:cancelled
jq_is "$TMP/body" '.rechecks | length' 2
expect 200 GET "/api/v1/series?state=superseded" -
jq_is "$TMP/body" '.series | length' 0
expect_error 400 "query parameter 'state': 'bogus' is not one of incomplete, complete, superseded, stale" \
	GET "/api/v1/series?state=bogus" -
expect_error 400 "query parameter 'limit': '0' is not an integer in [1, 1000]" \
	GET "/api/v1/series?limit=0" -
expect 200 GET /api/v1/runs/1 -
jq_is "$TMP/body" '.reason + " " + .branch + " " + (.jobs | length | tostring)' "new main 2"
expect 200 GET "/api/v1/jobs?state=done" -
jq_is "$TMP/body" '[.jobs[].id] | join(",")' 1
expect 200 GET /api/v1/jobs/1 -
jq_is "$TMP/body" '.attempts[0].agent + " " + .attempts[0].outcome' "a1 ok"
jq_is "$TMP/body" '.logs[0].url' "$URL/api/v1/jobs/1/logs/1/build"
jq_is "$TMP/body" '.spec.repetitions' 3
expect 200 GET /api/v1/agents -
jq_is "$TMP/body" '.agents | map(.name) | join(",")' a1,a2,a3
jq_is "$TMP/body" '.agents[0].facts.kernel' 6.1
jq_is "$TMP/body" '.agents[0].online' true
jq_is "$TMP/body" '.agents[0].job' null
jq_is "$TMP/body" '.agents[2].enabled' false
expect 200 GET /api/v1/series/1/mbox -
grep -qi '^content-type: application/mbox' "$TMP/hdr" || fail "the mbox is not application/mbox"
cat >"$TMP/want.mbox" <<'EOF'
From perfgate Thu Jan  1 00:00:00 1970
From: A <a@x>
Subject: [PATCH 1/2] mempool: a

>From here on
>>From there
---
 lib/mempool/x.c | 1 +

From perfgate Thu Jan  1 00:00:00 1970
From: A <a@x>
Subject: [PATCH 2/2] mempool: b

second

EOF
diff -u "$TMP/want.mbox" "$TMP/body" || fail "the series mbox"
expect_error 404 "no series 99" GET /api/v1/series/99/mbox -
expect_error 404 "no series 99" GET /api/v1/series/99 -
expect_error 404 "no run 99" GET /api/v1/runs/99 -
expect_error 404 "no job 99" GET /api/v1/jobs/99 -
expect_error 404 "no such endpoint: /api/v1/nothing" GET /api/v1/nothing -
expect_error 405 "GET is not allowed on /api/v1/lease (allowed: POST)" GET /api/v1/lease "$T1"
grep -qi '^Allow: POST' "$TMP/hdr" || fail "405 without Allow"
expect_error 405 "POST is not allowed on /api/v1/jobs (allowed: GET, HEAD)" POST /api/v1/jobs - '{}'
"$CTL" --config "$TMP/c.json" agent list >"$TMP/out" 2>&1 || fail "agent list"
expect_grep '^a1 +online +[0-9]{4}-' "$TMP/out"

# /metrics: queue gauges from the store, counters since start.
expect 200 GET /metrics -
M="$TMP/body"
grep -qi '^content-type: text/plain; version=0.0.4' "$TMP/hdr" || fail "metrics content type"
expect_grep '^perfgate_jobs\{state="done"\} 1$' "$M"
expect_grep '^perfgate_jobs\{state="cancelled"\} 1$' "$M"
expect_grep '^perfgate_jobs\{state="queued"\} 1$' "$M"
expect_grep '^perfgate_jobs\{state="held"\} 1$' "$M"
expect_grep '^perfgate_agents 3$' "$M"
expect_grep '^perfgate_agents_online 2$' "$M"
expect_grep '^perfgate_leases_total 2$' "$M"
expect_grep '^perfgate_results_total\{status="recorded"\} 1$' "$M"
expect_grep '^perfgate_results_total\{status="duplicate"\} 1$' "$M"
expect_grep '^perfgate_results_total\{status="conflict"\} 1$' "$M"
expect_grep '^perfgate_http_requests_total\{code="401"\} [0-9]+$' "$M"
expect_grep '^perfgate_http_requests_total\{code="413"\} 3$' "$M"
expect_grep '^perfgate_http_request_duration_seconds_bucket\{route="heartbeat",le="\+Inf"\} [1-9][0-9]*$' "$M"
expect_grep '^perfgate_http_request_duration_seconds_count\{route="lease"\} [1-9][0-9]*$' "$M"
expect_grep 'debug api: POST /api/v1/jobs/1/result 200 agent=a1 [0-9.]+ ms' "$log"
# Where the writer's requests spent their time: every lease given and
# result recorded waited in each stage, and each WAL sync was timed.
metric() { awk -v k="$1" '$1 == k { print $2 }' "$M"; }
for st in writer sync send; do
	n=$(metric "perfgate_api_stage_duration_seconds_count{stage=\"$st\"}")
	[ -n "$n" ] && [ "$n" -ge 3 ] || fail "stage $st counted ${n:-nothing}, expected at least 3"
	[ "$(metric "perfgate_api_stage_duration_seconds_bucket{stage=\"$st\",le=\"+Inf\"}")" = "$n" ] ||
		fail "stage $st: +Inf bucket is not the count"
done
n=$(metric perfgate_store_wal_sync_duration_seconds_count)
[ -n "$n" ] && [ "$n" -ge 1 ] || fail "WAL syncs counted: ${n:-nothing}"

# ---- kill -9 with a job leased; the lease expires while the controller is down ---

q "UPDATE jobs SET priority = 0 WHERE id = 3"
expect 200 POST /api/v1/lease "$T1" '{"wait_s": 5}'
jq_is "$TMP/body" .job.id 3
expect 200 POST /api/v1/jobs/3/heartbeat "$T1" '{"attempt": 1, "stage": "build", "progress": 10}'
kill -9 $pid
wait $pid 2>/dev/null
q_is "SELECT state || ' ' || attempt FROM jobs WHERE id = 3" "running 1"
# The agent kept working while the controller was away, longer than a lease.
q "UPDATE jobs SET lease_expires = lease_expires - 60 WHERE id = 3"
expect_rc 0 "$CTL" --config "$TMP/c.json" db check
start_ctl "$TMP/c.json" "$TMP/restart.log"
wait_log 'leases expired: 1 jobs back in the queue'
q_is "SELECT state || ' ' || attempt FROM jobs WHERE id = 3" "queued 1"
q_is "SELECT outcome FROM attempts WHERE job_id = 3 AND attempt = 1" expired
# Its heartbeat takes the lease back (nobody leased the job since) ...
expect 200 POST /api/v1/jobs/3/heartbeat "$T1" '{"attempt": 1, "stage": "bench", "progress": 80}'
jq_is "$TMP/body" .cancel false
q_is "SELECT state || ' ' || attempt || ' ' || stage FROM jobs WHERE id = 3" "running 1 bench"
q_is "SELECT count(*) FROM attempts WHERE job_id = 3" 1
# ... and its result counts, once.
expect 200 POST /api/v1/jobs/3/result "$T1" '{"attempt": 1, "outcome": "ok", "samples": [
	{"side": "base", "benchmark": "b", "metric": "m", "repetition": 0, "value": 1}]}'
jq_is "$TMP/body" .status recorded
q_is "SELECT state || ' ' || outcome FROM jobs WHERE id = 3" "done ok"
q_is "SELECT count(*) FROM results WHERE job_id = 3" 1
expect 200 POST /api/v1/jobs/3/result "$T1" '{"attempt": 1, "outcome": "ok", "samples": [
	{"side": "base", "benchmark": "b", "metric": "m", "repetition": 0, "value": 1}]}'
jq_is "$TMP/body" .status duplicate

# ---- An admin cancel that leaves a context without a job settles its check ---

# Run 1 still has job 1 (done) beside the cancelled job 2: its verdict
# decides it, not the cancel.
q_is "SELECT count(*) FROM check_outbox WHERE run_id = 1 AND description LIKE '%NOT TESTED%'" 0
# A run whose only job is cancelled: its pending check (posted) gets the
# final warning with the reason, in the same call, where the pending went.
q "INSERT INTO runs (id, series_id, reason, tree, branch, base_commit, created_at) VALUES
	(3, 1, 'recheck', 'dpdk-demo', 'main', '0123456789abcdef0123456789abcdef01234567', 3);
INSERT INTO jobs (id, run_id, context, host_class, build_mode, spec, priority, created_at)
	VALUES (4, 3, '$CTX', 'demo', 'demo-release', '{\"format\":1}', -1, 4);
INSERT INTO check_outbox (series_id, run_id, patch_id, context, state, description, target_url,
	delivery, next_try, created_at, sent_at) SELECT 1, 3, id, '$CTX', 'pending',
	'Performance Testing pending', 'http://ci.test/series/1', 'sent', 3, 3, 3
	FROM patches WHERE series_id = 1 AND number = 2"
expect 200 POST /api/v1/jobs/4/cancel "$A" '{"reason": "the lab host was re-imaged"}'
jq_is "$TMP/body" .cancelled true
q_is "SELECT state || '|' || description || '|' || target_url || '|' || delivery || '|' ||
	(SELECT number FROM patches p WHERE p.id = c.patch_id) FROM check_outbox c
	WHERE run_id = 3 AND state <> 'pending'" \
	"warning|Performance Testing NOT TESTED: the lab host was re-imaged|http://ci.test/series/1|queued|2"
expect 200 POST /api/v1/jobs/4/cancel "$A" '{}'
jq_is "$TMP/body" .cancelled false
q_is "SELECT count(*) FROM check_outbox WHERE run_id = 3" 2

kill -TERM $pid
wait $pid || fail "the controller exited $? on SIGTERM"
pid=
expect_rc 0 "$CTL" --config "$TMP/c.json" db check
