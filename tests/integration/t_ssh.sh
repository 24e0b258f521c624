# A lab host driven over SSH (controller/ssh_disp.h) through the real
# controller and a real OpenSSH server on loopback (ssh_lib.sh), the host
# running `perfgate-agent run-one` with the built-in runner:
#   1. jobs run end to end over SSH (the series mbox fetched through the
#      dispatcher), and their results, logs and verdicts equal those of
#      the same jobs (a recheck of the series) run by a daemon agent, field
#      by field;
#      the host's state in agent list, /api/v1/agents and /metrics;
#   2. the SSH session killed mid-job (sshd's per-connection processes):
#      the job is requeued, no process of its process group remains, and
#      the next attempt finishes it;
#   3. a job that finished while the connection hung is collected at the
#      reconnection, exactly once (one result, its first attempt);
#   4. the controller killed mid-job and restarted: nothing lost;
#   5. a changed or unknown host key is refused (host check, and serve
#      leases nothing for it), trust on first use adds it, a key file
#      readable by others stops serve at start;
#   6. two hosts and one connection slot take turns (never two connected),
#      and a host without the agent program gets this build's over SFTP.
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/ssh_lib.sh"

sshd_start
demo_tree
db="$TMP/state/perfgate.db"
q() { sqlite3 "$db" "$1" || fail "sqlite3: $1"; }
is() { [ "$(q "$1")" = "$2" ]; }
echo "admin-token-0123456789abcdef" >"$TMP/admin-token"
mkdir -p "$TMP/host"
cat >"$TMP/host/agent.json" <<EOF
{ "name": "ssh-1", "labels": { "pool": "demo" }, "runner": "builtin",
  "work_dir": "$TMP/host/work", "spool_dir": "$TMP/host/spool",
  "profiles_dir": "$TMP/profiles" }
EOF
# ctl_config FILE KNOWN_HOSTS [TOFU]: the controller with one SSH host
ctl_config() {
	cat >"$1" <<EOF
{ "db": "$db", "data_dir": "$TMP/state", "profiles_dir": "$TMP/profiles",
  "intake": { "interval_s": 1 },
  "api": { "listen": "127.0.0.1:${PORT:-0}", "lease_s": 30, "admin_token_file": "$TMP/admin-token" },
  "ssh": { "io_timeout_s": 60, "keepalive_s": 5, "max_backoff_s": 2, "connect_timeout_s": 10,
    "hosts": [ { "name": "ssh-1", "host": "127.0.0.1", "port": $SSHD_PORT, "user": "$(id -un)",
      "key_file": "$SSH_KEY", "known_hosts": "$2", "trust_on_first_use": ${3:-false},
      "labels": { "pool": "demo" }, "agent": "$AGENT", "agent_config": "$TMP/host/agent.json",
      "work_dir": "$TMP/host/work", "spool_dir": "$TMP/host/spool", "runner": "builtin" } ] } }
EOF
}
ctl_config "$TMP/c.json" "$SSH_KNOWN"
C="$CTL --config $TMP/c.json"

ctl=""
daemon=""
stop_all() {
	[ -n "$daemon" ] && kill -9 "$daemon" 2>/dev/null
	[ -n "$ctl" ] && kill -9 "$ctl" 2>/dev/null
	return 0
}
cleanup_hooks="$cleanup_hooks stop_all"
dump_logs() {
	for f in "$TMP"/serve*.log "$TMP"/daemon.log "$SSHD_DIR/sshd.log"; do
		[ -f "$f" ] && { echo "--- $f" >&2; tail -n 60 "$f" >&2; }
	done
	return 0
}
wait_until() {	# wait_until SECONDS DESCRIPTION CMD...
	limit=$(($1 * 10))
	what=$2
	shift 2
	i=0
	until "$@"; do
		i=$((i + 1))
		[ $i -lt $limit ] || { dump_logs; fail "timed out waiting for: $what"; }
		sleep 0.1
	done
}
start_ctl() {	# start_ctl LOG [CONFIG]
	$CTL --config "${2:-$TMP/c.json}" serve >"$1" 2>&1 &
	ctl=$!
	wait_until 30 "the API in $1" grep -q 'api: listening on http' "$1"
	url=$(sed -n 's/.*api: listening on \(http[^ ]*\).*/\1/p' "$1" | head -n 1)
}
stop_ctl() {
	kill "$ctl" 2>/dev/null
	wait "$ctl" 2>/dev/null
	ctl=""
}

# Two runs of two jobs (one per build mode), planned before the daemon
# starts: the single patch's for the SSH host, series-b's held for the
# daemon agent of part 1.
P=$PG_TOP/tests/patchwork
cat "$P"/single/*.patch "$P"/series-b/*.patch >"$TMP/all.mbox"
expect_rc 0 $C db migrate
expect_rc 0 $C ingest --mbox "$TMP/all.mbox"
expect_rc 0 $C plan
run_s=$(q "SELECT r.id FROM runs r JOIN series s ON s.id = r.series_id WHERE s.total = 1")
run_b=$(q "SELECT r.id FROM runs r JOIN series s ON s.id = r.series_id WHERE s.total = 3")
[ -n "$run_s" ] && [ -n "$run_b" ] || fail "runs not planned: $(q 'SELECT id, series_id FROM runs')"
q "UPDATE jobs SET priority = -1 WHERE run_id = $run_b"
sid_s=$(q "SELECT series_id FROM runs WHERE id = $run_s")

# --- 1. end to end over SSH, the same as a daemon ------------------------
start_ctl "$TMP/serve.log"
wait_until 60 "the single patch's jobs done over SSH" \
	is "SELECT count(*) FROM jobs WHERE run_id = $run_s AND state = 'done'" 2
ssh_id=$(q "SELECT id FROM agents WHERE name = 'ssh-1'")
is "SELECT transport FROM agents WHERE id = $ssh_id" ssh || fail "ssh-1 is not an SSH agent"
is "SELECT count(*) FROM attempts a JOIN jobs j ON j.id = a.job_id WHERE j.run_id = $run_s AND a.agent_id = $ssh_id" 2 ||
	fail "the jobs did not run on ssh-1: $(q "SELECT job_id, agent_id, outcome FROM attempts")"
expect_grep "host 'ssh-1': connected \(ssh-ed25519 SHA256:" "$TMP/serve.log"
# The host's state, where people look.
wait_until 20 "ssh-1 idle" is "SELECT state FROM ssh_hosts WHERE agent_id = $ssh_id" idle
expect_rc 0 $C agent list
expect_grep "^ssh-1 +online " "$TMP/out"
expect_grep "^  ssh .*@127.0.0.1:$SSHD_PORT idle, host key ssh-ed25519 SHA256:.*, perfgate-agent " "$TMP/out"
curl -sf "$url/api/v1/agents" >"$TMP/agents.json" || fail "GET /api/v1/agents"
jq_is "$TMP/agents.json" '.agents[] | select(.name == "ssh-1") | .ssh.state' idle
jq_is "$TMP/agents.json" '.agents[] | select(.name == "ssh-1") | .ssh.host_key | startswith("ssh-ed25519 SHA256:")' true
curl -sf "$url/metrics" >"$TMP/metrics" || fail "GET /metrics"
expect_grep '^perfgate_ssh_hosts\{state="idle"\} 1$' "$TMP/metrics"

# The daemon agent runs series-b's jobs; the SSH host is disabled for it.
expect_rc 0 $C agent disable ssh-1
T=$($C agent add d-1 --labels pool=demo 2>/dev/null) || fail "agent add d-1"
printf '%s\n' "$T" >"$TMP/d1-token"
cat >"$TMP/daemon.json" <<EOF
{ "name": "d-1", "controller_url": "$url", "token_file": "$TMP/d1-token",
  "labels": { "pool": "demo" }, "runner": "builtin",
  "work_dir": "$TMP/daemon/work", "spool_dir": "$TMP/daemon/spool",
  "profiles_dir": "$TMP/profiles", "lease_wait_s": 2, "request_timeout_s": 5, "max_backoff_s": 1 }
EOF
# The same series again (a recheck: the same spec, the same mbox) for the
# daemon; series-b's jobs too.
before=$(q "SELECT max(id) FROM runs")
curl -sf -H "Authorization: Bearer $(cat "$TMP/admin-token")" -d '{"contexts": ["perfgate-demo-Performance"]}' \
	"$url/api/v1/series/$sid_s/recheck" >/dev/null || fail "recheck refused"
wait_until 30 "the recheck planned" is "SELECT count(*) FROM jobs j JOIN runs r ON r.id = j.run_id WHERE r.id > $before" 2
run_d=$(q "SELECT max(id) FROM runs")
q "UPDATE jobs SET priority = 0 WHERE run_id = $run_b"
"$AGENT" --config "$TMP/daemon.json" >"$TMP/daemon.log" 2>&1 &
daemon=$!
wait_until 60 "the daemon's jobs done" \
	is "SELECT count(*) FROM jobs WHERE run_id IN ($run_b, $run_d) AND state = 'done'" 4
kill "$daemon"
wait "$daemon" 2>/dev/null
daemon=""
# Field by field, per build mode: the job, its result, its logs, its verdict.
for mode in demo-release demo-debugoptimized; do
	js=$(q "SELECT id FROM jobs WHERE run_id = $run_s AND build_mode = '$mode'")
	jb=$(q "SELECT id FROM jobs WHERE run_id = $run_d AND build_mode = '$mode'")
	for sql in \
		"SELECT state, outcome, attempt FROM jobs WHERE id = %s" \
		"SELECT attempt, outcome, detail FROM results WHERE job_id = %s" \
		"SELECT json_remove(fingerprint, '\$.hostname') FROM results WHERE job_id = %s" \
		"SELECT count(*) FROM samples WHERE job_id = %s" \
		"SELECT group_concat(stage || ':' || bytes, ',') FROM logs WHERE job_id = %s" \
		"SELECT outcome FROM attempts WHERE job_id = %s ORDER BY attempt"; do
		a=$(q "$(printf "$sql" "$js")")
		b=$(q "$(printf "$sql" "$jb")")
		[ "$a" = "$b" ] || fail "$mode: SSH and daemon differ on '$sql': '$a' against '$b'"
	done
	# The log's bytes, as stored.
	ls=$(q "SELECT path FROM logs WHERE job_id = $js ORDER BY stage")
	lb=$(q "SELECT path FROM logs WHERE job_id = $jb ORDER BY stage")
	[ -n "$ls" ] || fail "$mode: no log from the SSH host"
	grep -q "^series mbox: [0-9]* bytes, sha256 [0-9a-f]\{64\}" "$TMP/state/$ls" ||
		fail "$mode: the SSH host did not fetch the series mbox: $(cat "$TMP/state/$ls")"
	sed "s/job $js/job N/g" "$TMP/state/$ls" >"$TMP/log-ssh"
	sed "s/job $jb/job N/g" "$TMP/state/$lb" >"$TMP/log-daemon"
	cmp -s "$TMP/log-ssh" "$TMP/log-daemon" || { diff "$TMP/log-ssh" "$TMP/log-daemon" >&2; fail "$mode: logs differ"; }
done
verdict() { q "SELECT context || '=' || state || ': ' || description FROM verdicts WHERE run_id = $1 AND benchmark IS NULL" | sed 's/[0-9][0-9]*/N/g'; }
wait_until 30 "the SSH run decided" is "SELECT state FROM runs WHERE id = $run_s" done
wait_until 30 "the daemon run decided" is "SELECT state FROM runs WHERE id = $run_d" done
vs=$(verdict "$run_s")
vb=$(verdict "$run_d")
[ "$vs" = "$vb" ] || fail "verdicts differ: SSH '$vs', daemon '$vb'"
echo "part 1: SSH jobs equal the daemon's (results, fingerprints, logs, verdicts '$vs')"
expect_rc 0 $C agent enable ssh-1

# hold_recheck SECONDS SPAWN: a recheck of the single patch, its jobs held
# while their spec is made to run SECONDS (the sleep as a child when SPAWN
# is true), then released; sets $jobs to the new jobs' ids.
hold_recheck() {
	expect_rc 0 $C agent disable ssh-1
	before=$(q "SELECT max(id) FROM jobs")
	sid=$(q "SELECT series_id FROM runs WHERE id = $run_s")
	curl -sf -H "Authorization: Bearer $(cat "$TMP/admin-token")" \
		-d '{"contexts": ["perfgate-demo-Performance"]}' \
		"$url/api/v1/series/$sid/recheck" >/dev/null || fail "recheck refused"
	wait_until 30 "the recheck's jobs" is "SELECT count(*) > 0 FROM jobs WHERE id > $before" 1
	q "UPDATE jobs SET spec = json_set(spec, '\$.builtin_seconds', $1, '\$.builtin_spawn', json('$2')), priority = CASE build_mode WHEN 'demo-release' THEN 0 ELSE -1 END WHERE id > $before"
	job=$(q "SELECT id FROM jobs WHERE id > $before AND build_mode = 'demo-release'")
	expect_rc 0 $C agent enable ssh-1
}
running() { is "SELECT state FROM jobs WHERE id = $job" running; }

# --- 2. the SSH session killed mid-job ------------------------------------
hold_recheck 6 true
wait_until 60 "job $job running on ssh-1" running
wait_until 30 "the job's sleep" pgrep -f "^sleep 6" >/dev/null
spid=$(pgrep -f "^sleep 6" | head -n 1)
pgid=$(ps -o pgid= -p "$spid" | tr -d ' ')
for p in $(sshd_sessions); do kill -9 "$p" 2>/dev/null; done
gone() { ! pgrep -g "$pgid" >/dev/null; }
wait_until 20 "process group $pgid gone from the host" gone
wait_until 60 "job $job done on attempt 2" is "SELECT state || ' ' || attempt FROM jobs WHERE id = $job" "done 2"
a1=$(q "SELECT outcome || ': ' || detail FROM results WHERE job_id = $job AND attempt = 1")
case "$a1" in
infra-error:*connection*) ;;
*) fail "attempt 1 of job $job: '$a1', not an infra-error naming the connection" ;;
esac
is "SELECT count(*) FROM results WHERE job_id = $job" 2 || fail "job $job: results $(q "SELECT attempt, outcome FROM results WHERE job_id = $job")"
echo "part 2: session killed: process group $pgid gone, attempt 1 '$a1', attempt 2 done"

# --- 3. finished while the connection hung: collected once -----------------
# The sessions are stopped once the job sleeps: the built-in runner
# fetches the series' mbox through the connection first, and a fetch left
# unanswered would hold the job for AGENT_STREAM_FETCH_WAIT_S.
hold_recheck 3 true
wait_until 60 "job $job running on ssh-1" running
wait_until 30 "the job's sleep (its mbox fetched)" pgrep -x -f "sleep 3\.000" >/dev/null
sessions=$(sshd_sessions)
for p in $sessions; do kill -STOP "$p"; done
spooled() { ls "$TMP"/host/spool/result-*.json >/dev/null 2>&1; }
wait_until 30 "the result spooled on the host" spooled
for p in $sessions; do kill -9 "$p"; done
wait_until 60 "job $job done" is "SELECT state FROM jobs WHERE id = $job" done
is "SELECT attempt || ' ' || outcome FROM jobs WHERE id = $job" "1 ok" ||
	fail "job $job: $(q "SELECT attempt, outcome, outcome_detail FROM jobs WHERE id = $job")"
is "SELECT count(*) FROM results WHERE job_id = $job" 1 || fail "job $job: not one result"
nospool() { ! spooled; }
wait_until 20 "the host's spool empty" nospool
grep -q "spooled result(s) found, 1 delivered" "$TMP/serve.log" ||
	fail "the reconnection did not collect the result"
echo "part 3: a result spooled while the connection hung was collected once"

# --- 4. the controller killed mid-job and restarted ------------------------
hold_recheck 6 true
wait_until 60 "job $job running on ssh-1" running
PORT=${url##*:}
kill -9 "$ctl"
wait "$ctl" 2>/dev/null
ctl=""
ctl_config "$TMP/c.json" "$SSH_KNOWN"
start_ctl "$TMP/serve2.log"
wait_until 90 "job $job done after the restart" is "SELECT state FROM jobs WHERE id = $job" done
is "SELECT outcome FROM jobs WHERE id = $job" ok || fail "job $job: $(q "SELECT outcome, outcome_detail FROM jobs WHERE id = $job")"
dups=$(q "SELECT job_id || '/' || attempt FROM results GROUP BY job_id, attempt HAVING count(*) > 1")
[ -z "$dups" ] || fail "duplicated results: $dups"
echo "part 4: controller killed mid-job: job $job done ($(q "SELECT group_concat(attempt || '=' || outcome) FROM results WHERE job_id = $job"))"
stop_ctl

# --- 5. host keys and key files -------------------------------------------
ssh-keygen -q -t ed25519 -N '' -f "$TMP/other_key" || fail "ssh-keygen"
printf '[127.0.0.1]:%s %s\n' "$SSHD_PORT" "$(cut -d' ' -f1,2 "$TMP/other_key.pub")" >"$TMP/changed_known"
ctl_config "$TMP/changed.json" "$TMP/changed_known"
expect_rc 1 $CTL --config "$TMP/changed.json" host check ssh-1
expect_grep "host key CHANGED: it now presents ssh-ed25519 SHA256:" "$TMP/out"
: >"$TMP/empty_known"
ctl_config "$TMP/unknown.json" "$TMP/empty_known"
expect_rc 1 $CTL --config "$TMP/unknown.json" host check ssh-1
expect_grep "is not in .*empty_known; refused" "$TMP/out"
expect_rc 0 $C host check ssh-1
expect_grep "^agent: perfgate-agent " "$TMP/out"
expect_grep '^labels reported: .*"pool":"demo"' "$TMP/out"
# serve with the changed key: the host leases nothing, its state says why.
before=$(q "SELECT count(*) FROM attempts")
q "UPDATE jobs SET priority = 0 WHERE state = 'queued'"
start_ctl "$TMP/serve3.log" "$TMP/changed.json"
wait_until 30 "ssh-1 in error" is "SELECT state FROM ssh_hosts WHERE agent_id = $ssh_id" error
sleep 3
is "SELECT count(*) FROM attempts" "$before" || fail "a host with a changed key was leased a job"
expect_grep "CHANGED" "$TMP/serve3.log"
stop_ctl
ctl_config "$TMP/tofu.json" "$TMP/empty_known" true
expect_rc 0 $CTL --config "$TMP/tofu.json" host check ssh-1
expect_grep "trusted now, on first use" "$TMP/out"
grep -q "ssh-ed25519" "$TMP/empty_known" || fail "trust on first use did not add the key"
chmod 644 "$SSH_KEY"
expect_rc 1 $C serve
expect_grep "key_file .* has mode 0644: group or others may read it; refused" "$TMP/out"
chmod 600 "$SSH_KEY"
echo "part 5: changed and unknown host keys refused, trust on first use, key file modes"

# --- 6. two hosts, one slot; the agent copied over SFTP ---------------------
mkdir -p "$TMP/host2"
sed "s|$TMP/host/|$TMP/host2/|g; s|\"ssh-1\"|\"ssh-2\"|" "$TMP/host/agent.json" >"$TMP/host2/agent.json"
jq --arg h2 "$TMP/host2" '.ssh.max_connections = 1
	| .ssh.hosts += [.ssh.hosts[0] | .name = "ssh-2" | .agent = ($h2 + "/bin/perfgate-agent")
		| .install = "copy" | .agent_config = ($h2 + "/agent.json")
		| .work_dir = ($h2 + "/work") | .spool_dir = ($h2 + "/spool")]' \
	"$TMP/c.json" >"$TMP/two.json" || fail "jq two hosts"
start_ctl "$TMP/serve6.log" "$TMP/two.json"
# Some work for both: the held jobs, released.
q "UPDATE jobs SET priority = 0 WHERE state = 'queued'"
ssh2=""
connected() { q "SELECT count(*) FROM ssh_hosts WHERE state IN ('connecting', 'idle', 'running')"; }
both_served() {
	c=$(connected)
	[ "$c" -le 1 ] || { dump_logs; fail "$c hosts connected at once with max_connections 1"; }
	ssh2=$(q "SELECT id FROM agents WHERE name = 'ssh-2'")
	[ -n "$ssh2" ] && is "SELECT connects > 0 FROM ssh_hosts WHERE agent_id = $ssh2" 1 &&
		is "SELECT count(*) FROM jobs WHERE state = 'queued'" 0
}
wait_until 90 "both hosts connected in turn, the queue empty" both_served
[ -x "$TMP/host2/bin/perfgate-agent" ] || fail "the agent was not copied to ssh-2"
expect_grep "host 'ssh-2': .*perfgate-agent is missing or broken; copying this build's" "$TMP/serve6.log"
"$TMP/host2/bin/perfgate-agent" --version | grep -qx "perfgate-agent $("$AGENT" --version | cut -d' ' -f2)" ||
	fail "the copied agent is not this build's"
stop_ctl
echo "part 6: two hosts took turns on one connection slot; ssh-2 got this build's agent over SFTP"
