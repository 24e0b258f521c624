# The real controller and several real agents on loopback: three host
# classes (vendor=intel, amd, arm), one agent each; every job goes to an
# agent with matching labels and no agent holds two jobs at once; an agent
# killed with -9 mid-job: the lease expires, the job is leased again
# (attempt 2) by another agent and recorded once; the controller killed
# with -9 while agents run jobs, restarted on the same port: every spooled
# result arrives, once; a v2 superseding a v1 whose job is running: the
# job is cancelled and the agent learns it from its heartbeat reply.
. "$PG_TOP/tests/integration/lib.sh"

# The profile: demo.json's tree, build mode and benchmark, with three host
# classes told apart by their vendor label and one context per class.
demo_tree three.json '
	.host_classes.demo as $hc
	| .host_classes = ({} | .intel = ($hc | .labels = {vendor: "intel"})
			      | .amd = ($hc | .labels = {vendor: "amd"})
			      | .arm = ($hc | .labels = {vendor: "arm"}))
	| .build_modes = {"demo-release": .build_modes["demo-release"]}
	| .contexts["perfgate-demo-Performance"] as $ctx
	| .contexts = ({} | .["ctx-intel"] = ($ctx | .host_class = "intel" | .build_modes = ["demo-release"])
			  | .["ctx-amd"] = ($ctx | .host_class = "amd" | .build_modes = ["demo-release"])
			  | .["ctx-arm"] = ($ctx | .host_class = "arm" | .build_modes = ["demo-release"]))
	'

# 9 messages: three complete series (3 patches, 1 patch, 3 patches).
python3 tests/intake/gen-archive.py "$TMP/archive" 9 >/dev/null || fail "gen-archive failed"
echo "admin-token-0123456789abcdef" >"$TMP/admin-token"
write_ctl_config() {	# write_ctl_config LISTEN
	cat >"$TMP/c.json" <<EOF
{ "db": "$TMP/state/perfgate.db", "data_dir": "$TMP/state", "profiles_dir": "$TMP/profiles",
  "sources": [ { "name": "dev", "type": "public-inbox", "url": "$TMP/archive" } ],
  "intake": { "interval_s": 1 },
  "api": { "listen": "$1", "lease_s": 6, "admin_token_file": "$TMP/admin-token" } }
EOF
}
write_ctl_config 127.0.0.1:0
C="$CTL --config $TMP/c.json"
db="$TMP/state/perfgate.db"
q() { sqlite3 "$db" "$1" || fail "sqlite3: $1"; }
expect_rc 0 $C db migrate

ctl=""
agents=""	# "NAME:PID ..." of the running agents
stop_all() {
	for a in $agents; do kill -9 "${a#*:}" 2>/dev/null; done
	[ -n "$ctl" ] && kill -9 "$ctl" 2>/dev/null
	return 0
}
cleanup_hooks="stop_all"

dump_logs() {
	for f in "$TMP"/serve*.log "$TMP"/agent-*.log; do
		[ -f "$f" ] && { echo "--- $f" >&2; tail -n 40 "$f" >&2; }
	done
	return 0
}
# wait_until SECONDS DESCRIPTION CMD...: poll CMD every 0.1 s (the bounds are
# generous for a loaded machine: a wait ends as soon as its condition holds)
wait_until() {
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
is() { [ "$(q "$1")" = "$2" ]; }

start_ctl() {	# start_ctl LOG
	$C serve >"$1" 2>&1 &
	ctl=$!
	wait_until 30 "the API in $1" grep -q 'api: listening on http' "$1"
	url=$(sed -n 's/.*api: listening on \(http[^ ]*\).*/\1/p' "$1" | head -n 1)
}
start_ctl "$TMP/serve.log"
port=${url##*:}
echo "controller listening on $url"

new_agent() {	# new_agent NAME VENDOR: register it and start the daemon
	$C agent add "$1" --labels "vendor=$2,arch=$(uname -m)" >"$TMP/token-$1" 2>"$TMP/add.err" ||
		{ cat "$TMP/add.err"; fail "agent add $1"; }
	mkdir -p "$TMP/agent-$1"
	cat >"$TMP/agent-$1.json" <<EOF
{ "name": "$1", "controller_url": "$url", "token_file": "$TMP/token-$1",
  "labels": { "vendor": "$2", "arch": "$(uname -m)" },
  "work_dir": "$TMP/agent-$1/work", "spool_dir": "$TMP/agent-$1/spool", "runner": "builtin",
  "profiles_dir": "$TMP/profiles", "lease_wait_s": 2, "request_timeout_s": 5,
  "max_backoff_s": 1 }
EOF
	"$AGENT" --config "$TMP/agent-$1.json" >>"$TMP/agent-$1.log" 2>&1 &
	agents="$agents $1:$!"
}
pid_of() {
	for a in $agents; do [ "${a%%:*}" = "$1" ] && { echo "${a#*:}"; return 0; }; done
	return 1
}
kill9_agent() {
	p=$(pid_of "$1")
	kill -9 "$p"
	wait "$p" 2>/dev/null
	agents=$(for a in $agents; do [ "${a%%:*}" = "$1" ] || printf '%s ' "$a"; done)
}
agent_id() { q "SELECT id FROM agents WHERE name = '$1'"; }

# --check-config: the labels an agent registers and the classes they match
cat >"$TMP/check.json" <<EOF
{ "name": "check", "controller_url": "$url", "token_file": "$TMP/admin-token",
  "labels": { "vendor": "amd", "arch": "$(uname -m)" },
  "work_dir": "$TMP/check/work", "spool_dir": "$TMP/check/spool", "profiles_dir": "$TMP/profiles" }
EOF
"$AGENT" --config "$TMP/check.json" --check-config >"$TMP/check.out" 2>"$TMP/check.err" ||
	{ cat "$TMP/check.err"; fail "--check-config failed"; }
jq_is "$TMP/check.out" '.matches.host_classes | join(",")' amd
jq_is "$TMP/check.out" '.matches.contexts | join(",")' ctx-amd

# --- 1. Three classes, three agents: each job to a matching agent ----------
wait_until 45 "9 jobs planned" is "SELECT count(*) FROM jobs" 9
echo "planned: $(q "SELECT group_concat(n, ', ') FROM (SELECT host_class || '=' || count(*) AS n FROM jobs GROUP BY host_class ORDER BY host_class)")"
new_agent intel-1 intel
new_agent amd-1 amd
new_agent arm-1 arm
wait_until 75 "all 9 jobs done" is "SELECT count(*) FROM jobs WHERE state = 'done' AND outcome = 'ok'" 9
is "SELECT count(*) FROM results" 9 || fail "not 9 results: $(q 'SELECT count(*) FROM results')"
mismatch=$(q "SELECT j.id || ':' || j.host_class || '->' || a.name FROM jobs j
	JOIN attempts t ON t.job_id = j.id JOIN agents a ON a.id = t.agent_id
	WHERE json_extract(a.labels, '\$.vendor') IS NOT j.host_class")
[ -z "$mismatch" ] || fail "jobs ran on agents of another class: $mismatch"
overlap=$(q "SELECT x.job_id || '/' || y.job_id FROM attempts x JOIN attempts y
	ON x.agent_id = y.agent_id AND x.id < y.id
	WHERE x.started_at < coalesce(y.ended_at, 1e18) AND y.started_at < coalesce(x.ended_at, 1e18)")
[ -z "$overlap" ] || fail "an agent held two jobs at once: $overlap"
echo "part 1: $(q "SELECT group_concat(n, ', ') FROM (SELECT a.name || ' ran ' || count(*) AS n
	FROM attempts t JOIN agents a ON a.id = t.agent_id GROUP BY a.name ORDER BY a.name)")"

# recheck CONTEXTS_JSON: ask (admin API) for a recheck of the first planned series
recheck() {
	sid=$(q "SELECT series_id FROM runs ORDER BY id LIMIT 1")
	curl -sf -H "Authorization: Bearer $(cat "$TMP/admin-token")" -d "{\"contexts\": $1}" \
		"$url/api/v1/series/$sid/recheck" >"$TMP/recheck.json" || fail "recheck refused"
}

# --- 2. kill -9 an agent mid-job: re-leased after expiry, one result --------
njobs=$(q "SELECT count(*) FROM jobs")
recheck '["ctx-intel"]'
wait_until 30 "the recheck job" is "SELECT count(*) FROM jobs" $((njobs + 1))
job=$(q "SELECT max(id) FROM jobs")
a1=$(agent_id intel-1)
wait_until 30 "intel-1 holding job $job" \
	is "SELECT count(*) FROM jobs WHERE id = $job AND agent_id = $a1 AND state IN ('leased', 'running')" 1
kill9_agent intel-1
echo "part 2: killed intel-1 holding job $job ($(q "SELECT state FROM jobs WHERE id = $job"))"
new_agent intel-2 intel
a2=$(agent_id intel-2)
wait_until 60 "job $job done on attempt 2" is "SELECT state || ' ' || attempt FROM jobs WHERE id = $job" "done 2"
is "SELECT outcome FROM attempts WHERE job_id = $job AND attempt = 1" expired ||
	fail "attempt 1 ended $(q "SELECT outcome FROM attempts WHERE job_id = $job AND attempt = 1")"
is "SELECT agent_id || ' ' || outcome FROM attempts WHERE job_id = $job AND attempt = 2" "$a2 ok" ||
	fail "attempt 2: $(q "SELECT agent_id, outcome FROM attempts WHERE job_id = $job AND attempt = 2")"
is "SELECT count(*) || ' ' || max(attempt) FROM results WHERE job_id = $job" "1 2" ||
	fail "job $job results: $(q "SELECT attempt, outcome FROM results WHERE job_id = $job")"
echo "part 2: job $job attempt 1 expired on intel-1, attempt 2 done by intel-2, one result"

# --- 3. kill -9 the controller mid-run; spooled results all arrive ----------
njobs=$(q "SELECT count(*) FROM jobs")
recheck '["ctx-intel", "ctx-amd", "ctx-arm"]'
wait_until 30 "three recheck jobs" is "SELECT count(*) FROM jobs" $((njobs + 3))
wait_until 30 "the three jobs held" \
	is "SELECT count(*) FROM jobs WHERE id > $njobs AND state IN ('leased', 'running')" 3
kill -9 "$ctl"
wait "$ctl" 2>/dev/null
ctl=""
spooled() { ls "$TMP"/agent-*/spool/result-* 2>/dev/null | wc -l; }
spooled_ge() { [ "$(spooled)" -ge "$1" ]; }
wait_until 24 "results spooled while the controller is down" spooled_ge 3
echo "part 3: controller killed; $(spooled) results spooled: $(cd "$TMP" && ls agent-*/spool/result-* | tr '\n' ' ')"
write_ctl_config "127.0.0.1:$port"
start_ctl "$TMP/serve2.log"
[ "$url" = "http://127.0.0.1:$port" ] || fail "restarted on $url, not port $port"
spools_empty() { [ "$(spooled)" -eq 0 ]; }
wait_until 45 "the spools emptied" spools_empty
wait_until 15 "the three jobs done" is "SELECT count(*) FROM jobs WHERE id > $njobs AND state = 'done'" 3
dup=$(q "SELECT job_id FROM results GROUP BY job_id HAVING count(*) <> 1")
[ -z "$dup" ] || fail "jobs with more than one result: $dup"
is "SELECT count(*) FROM results" "$(q "SELECT count(*) FROM jobs WHERE state = 'done'")" ||
	fail "$(q 'SELECT count(*) FROM results') results for $(q "SELECT count(*) FROM jobs WHERE state = 'done'") done jobs"
nolost=$(q "SELECT id FROM jobs WHERE state = 'done' AND id NOT IN (SELECT job_id FROM results)")
[ -z "$nolost" ] || fail "done jobs without a result: $nolost"
echo "part 3: restarted on port $port; spools empty; $(q 'SELECT count(*) FROM results') results for $(q "SELECT count(*) FROM jobs WHERE state = 'done'") done jobs"

# --- 4. A v2 supersedes v1 while v1's job runs: cancelled by heartbeat ------
# The arm agent stops (SIGTERM, idle: exits 0) so that v1's arm job waits in
# the queue; the test makes that job long (builtin_seconds in its spec, the
# built-in runner's only knob) and starts an arm agent again to run it.
p=$(pid_of arm-1)
kill -TERM "$p"
wait "$p" || fail "arm-1 exited $? on SIGTERM"
agents=$(for a in $agents; do [ "${a%%:*}" = arm-1 ] || printf '%s ' "$a"; done)
mail() {	# mail VERSION_TAG MESSAGE_ID [IN_REPLY_TO]
	cat <<EOM
From 0000000000000000000000000000000000000001 Mon Sep 17 00:00:00 2001
From: Ada Lovelace <ada@example.org>
To: dev@dpdk.org
Date: Fri, 02 Jan 2026 10:00:00 +0000
Message-ID: <$2>
Subject: [PATCH$1] lib: speed up x
${3:+In-Reply-To: <$3>
References: <$3>
}MIME-Version: 1.0
Content-Type: text/plain; charset=UTF-8
Content-Transfer-Encoding: 8bit

Make x faster.

Signed-off-by: Ada Lovelace <ada@example.org>
---
 lib/ring/rte_ring.c | 1 +
 1 file changed, 1 insertion(+)

diff --git a/lib/ring/rte_ring.c b/lib/ring/rte_ring.c
index c2ce6f4..7311d8a 100644
--- a/lib/ring/rte_ring.c
+++ b/lib/ring/rte_ring.c
@@ -1,3 +1,4 @@
 	int v0 = 0;
+	int x = 1;
 	int v1 = 1;
 	int v2 = 2;
-- 
2.39.5

EOM
}
mail "" x.v1@example.org >"$TMP/v1.mbox"
mail " v2" x.v2@example.org x.v1@example.org >"$TMP/v2.mbox"
nseries=$(q "SELECT max(id) FROM series")
expect_rc 0 $C ingest --mbox "$TMP/v1.mbox"
wait_until 15 "v1 ingested" is "SELECT count(*) FROM series WHERE id > $nseries" 1
v1=$(q "SELECT max(id) FROM series")
arm_job() { q "SELECT j.id FROM jobs j JOIN runs r ON r.id = j.run_id WHERE r.series_id = $v1 AND j.host_class = 'arm'"; }
has_arm_job() { [ -n "$(arm_job)" ]; }
wait_until 30 "v1's arm job planned" has_arm_job
job=$(arm_job)
is "SELECT state FROM jobs WHERE id = $job" queued || fail "job $job is $(q "SELECT state FROM jobs WHERE id = $job") with no arm agent"
q "UPDATE jobs SET spec = json_set(spec, '\$.builtin_seconds', 30) WHERE id = $job"
new_agent arm-2 arm
a=$(agent_id arm-2)
wait_until 30 "arm-2 running job $job" \
	is "SELECT count(*) FROM jobs WHERE id = $job AND agent_id = $a AND state = 'running'" 1
expect_rc 0 $C ingest --mbox "$TMP/v2.mbox"
is "SELECT state FROM series WHERE id = $v1" superseded || fail "v1 is $(q "SELECT state FROM series WHERE id = $v1")"
wait_until 30 "job $job cancelled" is "SELECT state FROM jobs WHERE id = $job" cancelled
wait_until 15 "arm-2 stopping job $job" grep -q "job $job attempt 1: ended without a result: cancelled" "$TMP/agent-arm-2.log"
is "SELECT count(*) FROM results WHERE job_id = $job" 0 || fail "the cancelled job $job has a result"
is "SELECT outcome FROM attempts WHERE job_id = $job AND attempt = 1" cancelled ||
	fail "job $job attempt 1 ended $(q "SELECT outcome FROM attempts WHERE job_id = $job AND attempt = 1")"
kill -0 "$(pid_of arm-2)" || fail "arm-2 died after the cancel"
echo "part 4: v2 (series $(q "SELECT max(id) FROM series")) superseded v1 (series $v1); job $job cancelled on arm-2: $(grep -o "job $job attempt 1: ended without a result: .*" "$TMP/agent-arm-2.log")"
