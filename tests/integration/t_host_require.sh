# A host class whose `require` this host cannot meet, end to end: the
# real controller plans the demo profile with the demo class requiring a
# governor this VM does not have (no cpufreq here: the host check says
# "none"), a real agent with the DPDK runner leases a job and refuses it
# in its prepare stage, before any fetch or build: the result is an
# infra-error naming the fact, what the host has and what the class
# requires, with the host check in its fingerprint, and nothing was built
# (no build log, no build directory).  Fast: no DPDK is compiled.
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/dpdk_lib.sh"

dpdk_setup
# A work directory of its own: the refusal must not touch, nor need, the
# shared one's mirrors and builds.
work=$TMP/work
mkdir -p "$work"
dpdk_patch comment "$TMP/series.mbox" require-1@example.org
# What this host has, read as the host check reads it; the class asks for
# another governor, so that the test holds on a host with cpufreq too.
host_gov=none
for g in /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor; do
	[ -r "$g" ] && { host_gov=$(cat "$g"); break; }
done
req_gov=performance
[ "$host_gov" = performance ] && req_gov=powersave
dpdk_profile ".host_classes.demo.require = {\"governor\": \"$req_gov\"}"
dpdk_controller req-1
stop_ctl() { kill -9 "$ctl" 2>/dev/null; }
cleanup_hooks="stop_ctl"
dpdk_ingest_plan "$TMP/series.mbox"
q() { sqlite3 "$db" "$1" || fail "sqlite3: $1"; }
# The requirement reached the job's spec (the planner's side).
q "SELECT spec FROM jobs ORDER BY id LIMIT 1" >"$TMP/spec.json"
jq_is "$TMP/spec.json" '.host.require.governor' "$req_gov"
dpdk_agent_config req-1
start=$(date +%s)
"$AGENT" --config "$TMP/agent.json" --once >"$TMP/agent.log" 2>&1 ||
	{ tail -n 30 "$TMP/agent.log"; fail "agent --once failed"; }
echo "host_require: the refused job took $(( $(date +%s) - start )) s"
job=$(q "SELECT job_id FROM results LIMIT 1")
[ -n "$job" ] || { tail -n 30 "$TMP/agent.log"; fail "no result arrived"; }
[ "$(q "SELECT outcome FROM results WHERE job_id = $job")" = infra-error ] ||
	fail "outcome: $(q "SELECT outcome, detail FROM results WHERE job_id = $job")"
q "SELECT detail FROM results WHERE job_id = $job" >"$TMP/detail.txt"
expect_grep "^host does not meet host class demo: governor is $host_gov, the class requires $req_gov" \
	"$TMP/detail.txt"
q "SELECT fingerprint FROM results WHERE job_id = $job" >"$TMP/fp.json"
jq_is "$TMP/fp.json" '.host_check.governor' "$host_gov"
jq_is "$TMP/fp.json" '.builds | length' 0
# Refused before anything was fetched or built: no build stage, no
# mirror, no build directory in the agent's work directory.
[ "$(q "SELECT count(*) FROM logs WHERE job_id = $job AND stage = 'build'")" = 0 ] ||
	fail "a build stage ran"
[ -z "$(find "$work" -name build.ninja -print -quit)" ] || fail "something was configured"
[ ! -d "$work/mirrors" ] || [ -z "$(ls -A "$work/mirrors")" ] || fail "the tree was fetched"
q "SELECT path FROM logs WHERE job_id = $job AND stage = 'prepare'" >"$TMP/prep.txt"
[ -s "$TMP/prep.txt" ] || fail "no prepare log"
grep -qh "host does not meet host class demo" "$TMP/state/$(head -n 1 "$TMP/prep.txt")" ||
	fail "the prepare log does not say why"
echo "host_require: ok"
