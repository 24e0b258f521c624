# The agent daemon against a fake controller (tests/fake_controller.py):
# registration with host facts; lease, heartbeats at heartbeat_s, log and
# result uploads; results kept in the spool while the controller answers
# 503, across a kill -9 of the agent, delivered exactly once; a job killed
# mid-run reported as infra-error at restart; cancel and stale attempts
# through the heartbeat; SIGTERM idle and during a job, twice; a wrong
# token; dropped connections; --once.
. "$PG_TOP/tests/integration/lib.sh"

FC="python3 $PG_TOP/tests/fake_controller.py"
fc_pid=""
agent_pid=""
stop_all() {
	[ -n "$agent_pid" ] && kill -9 "$agent_pid" 2>/dev/null
	[ -n "$fc_pid" ] && kill "$fc_pid" 2>/dev/null
	return 0
}
cleanup_hooks="stop_all"

# The fake controller, for the whole script.
$FC --token good-token --agent-name lab-1 --quiet >"$TMP/fc.out" 2>"$TMP/fc.err" &
fc_pid=$!
i=0
until grep -q '^listening on' "$TMP/fc.out"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { cat "$TMP/fc.err"; fail "fake controller did not start"; }
	sleep 0.1
done
port=$(sed -n 's/^listening on //p' "$TMP/fc.out")
url="http://127.0.0.1:$port"

fc() {		# fc CONTROL JSON: POST /_fake/CONTROL
	curl -sf -X POST "$url/_fake/$1" -d "$2" >/dev/null || fail "fake control $1 failed"
}
fc_get() {	# fc_get requests|results
	curl -sf "$url/_fake/$1" || fail "fake control GET $1 failed"
}
# count FILTER: how many recorded requests match the jq FILTER
count() {
	fc_get requests | jq "[.[] | select($1)] | length"
}
# wait_until SECONDS DESCRIPTION CMD...: poll CMD every 0.1 s
wait_until() {
	limit=$(($1 * 10))
	what=$2
	shift 2
	i=0
	until "$@"; do
		i=$((i + 1))
		if [ $i -ge $limit ]; then
			[ -f "$TMP/agent.log" ] && cat "$TMP/agent.log" >&2
			fail "timed out waiting for: $what"
		fi
		sleep 0.1
	done
}
ge() { [ "$(count "$1")" -ge "$2" ]; }
recorded() {	# recorded ID/ATTEMPT
	[ "$(fc_get results | jq -r --arg k "$1" '.[$k].recorded != null')" = true ]
}

echo good-token >"$TMP/token"
spool="$TMP/spool"
# agent_config FILE [LEASE_WAIT_S [MAX_BACKOFF_S [URL]]]
agent_config() {
	cat >"$1" <<EOC
{ "name": "lab-1", "controller_url": "${4:-$url}", "token_file": "$TMP/token",
  "labels": { "pool": "demo" }, "work_dir": "$TMP/work", "spool_dir": "$spool", "runner": "builtin",
  "profiles_dir": "$PG_TOP/profiles", "profiles": ["demo.json"],
  "lease_wait_s": ${2:-30}, "request_timeout_s": 5, "max_backoff_s": ${3:-1} }
EOC
}
agent_config "$TMP/agent.json"

start_agent() {	# start_agent [OPTIONS...]: the daemon, logging to $TMP/agent.log
	"$AGENT" --config "$TMP/agent.json" "$@" >>"$TMP/agent.log" 2>&1 &
	agent_pid=$!
}
# stop_agent SIGNAL MAX_SECONDS: signal it, expect exit 0 within the time
stop_agent() {
	kill "-$1" "$agent_pid"
	i=0
	while kill -0 "$agent_pid" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le $(($2 * 10)) ] || { cat "$TMP/agent.log"; fail "agent still running $2 s after SIG$1"; }
		sleep 0.1
	done
	wait "$agent_pid"
	rc=$?
	agent_pid=""
	[ $rc -eq 0 ] || { cat "$TMP/agent.log"; fail "agent exited $rc after SIG$1"; }
}
kill9_agent() {
	kill -9 "$agent_pid"
	wait "$agent_pid" 2>/dev/null
	agent_pid=""
}
spool_empty() {
	left=$(cd "$spool" && ls | grep -E '^(job|result)-' || true)
	[ -z "$left" ] || fail "spool not empty: $left"
}
result_field() {	# result_field ID/ATTEMPT JQ
	fc_get results | jq -r --arg k "$1" ".[\$k]$2"
}

# --- 1. Registration, a job end to end, SIGTERM while idle -----------------
: >"$TMP/agent.log"
start_agent
wait_until 5 "registration" ge '.path == "/api/v1/agents/register" and .status == 200' 1
fc_get requests | jq '[.[] | select(.path == "/api/v1/agents/register")][0]' >"$TMP/reg.json"
jq_is "$TMP/reg.json" .auth "Bearer good-token"
jq -r .body "$TMP/reg.json" >"$TMP/reg-body.json"
case $(grep -m1 '^vendor_id' /proc/cpuinfo | sed 's/.*: //') in
GenuineIntel) vendor=intel ;;
AuthenticAMD) vendor=amd ;;
*) vendor=unknown ;;
esac
jq_is "$TMP/reg-body.json" .labels.pool demo
jq_is "$TMP/reg-body.json" .labels.vendor "$vendor"
jq_is "$TMP/reg-body.json" .labels.arch "$(uname -m)"
jq_is "$TMP/reg-body.json" .facts.vendor "$vendor"
jq_is "$TMP/reg-body.json" .facts.arch "$(uname -m)"
jq_is "$TMP/reg-body.json" .facts.kernel "$(uname -r)"
jq_is "$TMP/reg-body.json" .facts.hostname "$(hostname)"
jq_is "$TMP/reg-body.json" .facts.cores "$(getconf _NPROCESSORS_ONLN)"
jq_is "$TMP/reg-body.json" .facts.memory_kb "$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)"
jq_is "$TMP/reg-body.json" .facts.model \
	"$(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //; s/  */ /g; s/ *$//')"
[ "$(jq .facts.numa_nodes "$TMP/reg-body.json")" -ge 1 ] || fail "numa_nodes < 1"

fc jobs '{"id": 1, "builtin_seconds": 3, "heartbeat_s": 1, "tree": "dpdk"}'
wait_until 15 "result of job 1" recorded 1/1
[ "$(result_field 1/1 .posts)" = 1 ] || fail "job 1: result posted $(result_field 1/1 .posts) times"
[ "$(result_field 1/1 .recorded.outcome)" = ok ] || fail "job 1: outcome not ok"
[ "$(result_field 1/1 '.recorded.samples | length')" = 0 ] || fail "job 1: the built-in runner sent samples"
[ "$(result_field 1/1 .recorded.detail)" = "built-in runner: nothing was built or measured (the DPDK runner comes with the agent's execution capability)" ] ||
	fail "job 1: wrong detail"
[ "$(result_field 1/1 .recorded.attempt)" = 1 ] || fail "job 1: wrong attempt"
# Heartbeats: the first at once, then every heartbeat_s (1 s) for ~3 s.
fc_get requests | jq '[.[] | select(.path == "/api/v1/jobs/1/heartbeat")]' >"$TMP/hb.json"
n=$(jq length "$TMP/hb.json")
[ "$n" -ge 3 ] && [ "$n" -le 5 ] || fail "job 1: $n heartbeats in 3 s at heartbeat_s 1"
jq -e '[.[].t] as $t | [range(1; $t | length) | $t[.] - $t[. - 1]] |
	all(. > 0.7 and . < 1.6)' "$TMP/hb.json" >/dev/null ||
	fail "job 1: heartbeats not 1 s apart: $(jq -c '[.[].t]' "$TMP/hb.json")"
jq -e '[.[].body | fromjson | .attempt == 1 and (.stage | length > 0) and
	(.progress >= 0 and .progress <= 100)] | all' "$TMP/hb.json" >/dev/null ||
	fail "job 1: malformed heartbeat bodies"
[ "$(count '.path == "/api/v1/jobs/1/logs" and .query == "attempt=1&stage=run&offset=0" and .status == 200')" = 1 ] ||
	fail "job 1: expected one log chunk of stage run"
spool_empty
# Idle in a 30-second long-poll: SIGTERM must end it within 2 s.
sleep 1
t0=$(date +%s%N)
stop_agent TERM 2
ms=$((($(date +%s%N) - t0) / 1000000))
echo "idle SIGTERM: exited in $ms ms"
expect_grep 'stopping on signal 15' "$TMP/agent.log"

# --- 2. SIGTERM during a job: finish it, upload, exit 0, lease no more ------
: >"$TMP/agent.log"
start_agent
fc jobs '{"id": 2, "builtin_seconds": 3}'
wait_until 10 "job 2 running" ge '.path == "/api/v1/jobs/2/heartbeat"' 1
t_kill=$(date +%s.%N)
stop_agent TERM 15
recorded 2/1 || fail "job 2: no result after SIGTERM during the job"
[ "$(result_field 2/1 .posts)" = 1 ] || fail "job 2: result posted more than once"
[ "$(result_field 2/1 .recorded.outcome)" = ok ] || fail "job 2: outcome not ok"
[ "$(count ".path == \"/api/v1/lease\" and .t > $t_kill")" = 0 ] ||
	fail "job 2: the agent leased after SIGTERM"
spool_empty

# --- 3. The controller answers 503 to the result: spooled, then delivered once
: >"$TMP/agent.log"
fc faults '[{"match": "/result$", "action": "status", "status": 503, "count": -1}]'
regs=$(count '.path == "/api/v1/agents/register" and .status == 200')
start_agent
fc jobs '{"id": 3, "builtin_seconds": 1}'
wait_until 15 "two refused uploads of job 3" ge '.path == "/api/v1/jobs/3/result" and .status == 503' 2
[ -f "$spool/result-3-1.json" ] || fail "job 3: result not in the spool while the controller is down"
[ ! -e "$spool/job-3-1.json" ] || fail "job 3: job file kept after its result was spooled"
fc_get requests | jq -j '[.[] | select(.path == "/api/v1/jobs/3/result")][0].body' >"$TMP/sent3"
cmp -s "$TMP/sent3" "$spool/result-3-1.json" || fail "job 3: uploaded bytes differ from the spooled file"
fc faults '[]'
wait_until 10 "result of job 3" recorded 3/1
[ "$(result_field 3/1 .posts)" = 1 ] || fail "job 3: result recorded from $(result_field 3/1 .posts) posts"
wait_until 5 "spool emptied" sh -c "! ls '$spool' | grep -q '^result-'"
# A 503 is a reconnect: the agent registered again before going on.
[ "$(count '.path == "/api/v1/agents/register" and .status == 200')" -ge $((regs + 2)) ] ||
	fail "job 3: no new registration after the controller came back"
stop_agent TERM 2

# --- 4. kill -9 between spooling the result and its upload -------------------
: >"$TMP/agent.log"
fc faults '[{"match": "/result$", "action": "status", "status": 503, "count": -1}]'
start_agent
fc jobs '{"id": 4, "builtin_seconds": 1}'
wait_until 15 "a refused upload of job 4" ge '.path == "/api/v1/jobs/4/result" and .status == 503' 1
kill9_agent
[ -f "$spool/result-4-1.json" ] || fail "job 4: result not in the spool after kill -9"
cp "$spool/result-4-1.json" "$TMP/spooled4"
# What a crash in the middle of an atomic write leaves: a temporary.
printf '{"attempt": 1, "outcome": "ok", "det' >"$spool/result-99-1.json.tmp.12345"
fc faults '[]'
start_agent
wait_until 10 "result of job 4 after the restart" recorded 4/1
[ "$(result_field 4/1 .posts)" = 1 ] || fail "job 4: result recorded from $(result_field 4/1 .posts) posts"
fc_get requests | jq -j '[.[] | select(.path == "/api/v1/jobs/4/result" and .status == 200)][0].body' >"$TMP/sent4"
cmp -s "$TMP/sent4" "$TMP/spooled4" || fail "job 4: re-uploaded bytes differ from the spooled file"
[ ! -e "$spool/result-99-1.json.tmp.12345" ] || fail "leftover temporary not removed"
[ "$(count '.path == "/api/v1/jobs/99/result"')" = 0 ] || fail "a partial result was uploaded"
expect_grep 'removed 1 partly written file' "$TMP/agent.log"
wait_until 5 "spool emptied" sh -c "! ls '$spool' | grep -q '^result-'"

# --- 5. kill -9 mid-job: the restart reports the attempt as infra-error -----
fc jobs '{"id": 5, "builtin_seconds": 30}'
wait_until 10 "job 5 running" ge '.path == "/api/v1/jobs/5/heartbeat"' 1
kill9_agent
[ -f "$spool/job-5-1.json" ] || fail "job 5: no job file in the spool while it ran"
jq_is "$spool/job-5-1.json" .id 5
start_agent
wait_until 10 "infra-error of job 5" recorded 5/1
[ "$(result_field 5/1 .recorded.outcome)" = infra-error ] || fail "job 5: outcome not infra-error"
result_field 5/1 .recorded.detail | grep -q 'stopped' || fail "job 5: detail does not say why"
wait_until 5 "spool emptied" sh -c "! ls '$spool' | grep -qE '^(job|result)-'"

# --- 6. Cancel, and a stale attempt, through the heartbeat -----------------
: >"$TMP/agent.log"
fc jobs '{"id": 6, "builtin_seconds": 30}'
wait_until 10 "job 6 running" ge '.path == "/api/v1/jobs/6/heartbeat"' 1
fc cancel/6 ''
wait_until 4 "job 6 cancelled" grep -q 'job 6 attempt 1: ended without a result: cancelled' "$TMP/agent.log"
fc jobs '{"id": 7, "builtin_seconds": 30}'
wait_until 10 "job 7 running" ge '.path == "/api/v1/jobs/7/heartbeat"' 1
fc requeue/7 ''
wait_until 4 "job 7 stale" grep -q 'job 7 attempt 1: ended without a result: .*stale' "$TMP/agent.log"
[ "$(count '.path == "/api/v1/jobs/6/result" or .path == "/api/v1/jobs/7/result"')" = 0 ] ||
	fail "a cancelled or stale job sent a result"
spool_empty
kill -0 "$agent_pid" || fail "agent died after a cancel"

# --- 7. A second SIGTERM abandons the job; its infra-error comes at restart -
: >"$TMP/agent.log"
fc jobs '{"id": 8, "builtin_seconds": 30}'
wait_until 10 "job 8 running" ge '.path == "/api/v1/jobs/8/heartbeat"' 1
kill -TERM "$agent_pid"
sleep 0.3
stop_agent TERM 3
[ -f "$spool/result-8-1.json" ] || fail "job 8: no result spooled when abandoned"
jq_is "$spool/result-8-1.json" .outcome infra-error
[ ! -e "$spool/job-8-1.json" ] || fail "job 8: job file kept"
[ "$(count '.path == "/api/v1/jobs/8/result"')" = 0 ] || fail "job 8: uploaded while abandoning"
start_agent
wait_until 10 "result of job 8 after the restart" recorded 8/1
stop_agent TERM 2
spool_empty

# --- 8. A wrong token: a clear error, backoff, and the fixed file is read ---
: >"$TMP/agent.log"
echo bad-token >"$TMP/token"
agent_config "$TMP/agent.json" 30 2
n0=$(count '.status == 401')
start_agent
sleep 5
n=$(($(count '.status == 401') - n0))
[ "$n" -ge 2 ] && [ "$n" -le 4 ] || fail "wrong token: $n requests in 5 s (expected 2 to 4: backoff)"
expect_grep "error agent: POST /api/v1/agents/register: HTTP 401: missing or invalid agent token: the controller refuses this agent" "$TMP/agent.log"
expect_grep "check token_file '$TMP/token'" "$TMP/agent.log"
echo good-token >"$TMP/token"
wait_until 6 "registration with the fixed token" grep -q 'registered with' "$TMP/agent.log"
expect_grep "token_file '$TMP/token' changed" "$TMP/agent.log"
stop_agent TERM 2
agent_config "$TMP/agent.json"

# --- 9. Dropped connections: retried, and a registration after each --------
# (libcurl itself retries a request once when a reused connection dies, so
# one failed exchange may show as two drops.)
: >"$TMP/agent.log"
fc faults '[{"match": "/lease$", "action": "drop", "count": 4}]'
start_agent
fc jobs '{"id": 9, "builtin_seconds": 0.5}'
wait_until 15 "result of job 9" recorded 9/1
[ "$(count '.path == "/api/v1/lease" and .status == "drop"')" = 4 ] || fail "faults not applied"
n_fail=$(grep -c 'warn agent: POST .*/api/v1/lease: .*next try' "$TMP/agent.log")
n_reg=$(grep -c 'registered with' "$TMP/agent.log")
[ "$n_fail" -ge 1 ] || fail "dropped connections not reported"
[ "$n_reg" -ge $((n_fail + 1)) ] || fail "$n_reg registrations for $n_fail reconnects"
stop_agent TERM 2
fc faults '[]'

# --- 10. --once ------------------------------------------------------------
agent_config "$TMP/once.json" 1
t0=$(date +%s)
expect_rc 3 "$AGENT" --config "$TMP/once.json" --once
[ $(($(date +%s) - t0)) -le 4 ] || fail "--once waited too long for nothing"
fc jobs '{"id": 10, "builtin_seconds": 0.2}'
expect_rc 0 "$AGENT" --config "$TMP/once.json" --once
recorded 10/1 || fail "--once: no result for job 10"
spool_empty
# Nobody listening: give up after lease_wait_s, exit 1.
agent_config "$TMP/nowhere.json" 2 1 http://127.0.0.1:1
expect_rc 1 "$AGENT" --config "$TMP/nowhere.json" --once
expect_grep 'giving up' "$TMP/out"
