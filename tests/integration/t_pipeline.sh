# The pipeline as far as it goes, with the real daemons on loopback: the
# controller reads an archive of real patch mails, plans jobs on a real
# git tree, serves them over HTTP; a real agent registers, leases a job,
# heartbeats and delivers its (built-in, measurement-free) result, which
# the controller records once.
. "$PG_TOP/tests/integration/lib.sh"

demo_tree
python3 tests/intake/gen-archive.py "$TMP/archive" 12 >/dev/null || fail "gen-archive failed"
cat >"$TMP/c.json" <<EOF
{ "db": "$TMP/state/perfgate.db", "data_dir": "$TMP/state", "profiles_dir": "$TMP/profiles",
  "sources": [ { "name": "dev", "type": "public-inbox", "url": "$TMP/archive" } ],
  "intake": { "interval_s": 1 },
  "api": { "listen": "127.0.0.1:0", "lease_s": 30 } }
EOF
C="$CTL --config $TMP/c.json"
expect_rc 0 $C db migrate
$C agent add lab-1 --labels pool=demo >"$TMP/token" 2>"$TMP/add.err" || fail "agent add"
grep -Eq '^[0-9a-f]{64}$' "$TMP/token" || fail "agent add did not print a token"

$C serve >"$TMP/serve.log" 2>&1 &
ctl=$!
stop_ctl() { kill -9 "$ctl" 2>/dev/null; }
cleanup_hooks="stop_ctl"
i=0
until grep -q 'api: listening on http' "$TMP/serve.log"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { cat "$TMP/serve.log"; fail "the API did not start"; }
	sleep 0.1
done
url=$(sed -n 's/.*api: listening on \(http[^ ]*\).*/\1/p' "$TMP/serve.log" | head -n 1)
i=0
until [ "$(sqlite3 "$TMP/state/perfgate.db" "SELECT count(*) FROM jobs WHERE state = 'queued'")" -gt 0 ]; do
	i=$((i + 1))
	[ $i -lt 150 ] || { cat "$TMP/serve.log"; fail "no job was planned"; }
	sleep 0.1
done

cat >"$TMP/agent.json" <<EOF
{ "name": "lab-1", "controller_url": "$url", "token_file": "$TMP/token",
  "labels": { "pool": "demo" }, "work_dir": "$TMP/agent/work", "spool_dir": "$TMP/agent/spool", "runner": "builtin",
  "profiles_dir": "$TMP/profiles", "lease_wait_s": 5 }
EOF
expect_rc 0 "$AGENT" --config "$TMP/agent.json" --once
db="$TMP/state/perfgate.db"
[ "$(sqlite3 "$db" "SELECT count(*) FROM jobs WHERE state = 'done' AND outcome = 'ok'")" = 1 ] ||
	{ cat "$TMP/out"; fail "the job is not done"; }
[ "$(sqlite3 "$db" "SELECT count(*) FROM results")" = 1 ] || fail "not exactly one result"
[ "$(sqlite3 "$db" "SELECT count(*) FROM samples")" = 0 ] || fail "the built-in runner reported samples"
jq_is /dev/stdin '.agents[0].name' lab-1 <<EOF
$(curl -sf "$url/api/v1/agents")
EOF
curl -sf "$url/api/v1/agents" | jq -e '.agents[0].facts.cores > 0' >/dev/null ||
	fail "the agent's facts did not arrive"
curl -sf "$url/metrics" | grep -q '^perfgate_jobs{state="done"} 1$' || fail "metrics do not count the job"
ls "$TMP/agent/spool"/result-* >/dev/null 2>&1 && fail "a result was left in the agent's spool"

kill -TERM $ctl
wait $ctl
rc=$?
cleanup_hooks=""
[ $rc -eq 0 ] || { cat "$TMP/serve.log"; fail "controller exited $rc on SIGTERM"; }
