# A series whose every patch is already in the tree it is tested on (a fix
# that landed, or was backported, since it was sent), against the real
# agent on the real DPDK 22.11 tree: series P adds a comment to the ring
# mempool driver; series S makes the very same change and says
# "Depends-on: <P's patch>", so its job applies P, then S, whose patch
# git am -3 calls "No changes -- Patch already applied."  The agent must
# make no commit for it, build and measure nothing (both sides would be
# the same tree), and end the job ok with a detail that says why; the
# verdict must say so in the check ("Performance Testing NOT TESTED"),
# as a warning, not as a pass nor as "no gated result".  P's own job is
# cancelled first (it would build DPDK): its check says NOT TESTED too.
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/dpdk_lib.sh"

dpdk_setup
stop_ctl() { [ -n "${ctl:-}" ] && kill -9 "$ctl" 2>/dev/null; return 0; }
cleanup_hooks="stop_ctl"

dpdk_patch comment "$TMP/p.mbox" already-prereq@example.org prerequisite
dpdk_patch comment "$TMP/s.mbox" already-same@example.org "sent again"
# S depends on P: a trailer in its commit message, above the "---".
python3 - "$TMP/s.mbox" <<'PY' || fail "Depends-on trailer"
import sys
p = sys.argv[1]
s = open(p).read()
i = s.index("\n---\n")
s = s[:i] + "\nDepends-on: <already-prereq@example.org>" + s[i:]
open(p, "w").write(s)
PY
expect_grep '^Depends-on: <already-prereq@example.org>' "$TMP/s.mbox"

# What git does with S on a tree that has P: no commit.
rm -rf "$TMP/scratch"
GIT_CONFIG_NOSYSTEM=1 git clone -q "$tree" "$TMP/scratch" || fail "clone scratch"
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
git -C "$TMP/scratch" checkout -q -f "$base"
git -C "$TMP/scratch" am -3 "$TMP/p.mbox" >/dev/null 2>&1 || fail "git am -3 of P"
head=$(git -C "$TMP/scratch" rev-parse HEAD)
git -C "$TMP/scratch" am -3 "$TMP/s.mbox" >"$TMP/am.out" 2>&1 || { cat "$TMP/am.out"; fail "git am -3 of S"; }
expect_grep 'No changes -- Patch already applied' "$TMP/am.out"
[ "$(git -C "$TMP/scratch" rev-parse HEAD)" = "$head" ] || fail "git am -3 made a commit for S"

dpdk_profile '.contexts["perfgate-demo-Performance"].build_modes = ["demo-release"]'
dpdk_controller already-1
dpdk_agent_config already-1
q() { sqlite3 "$db" "$1" || fail "sqlite3: $1"; }
admin="Authorization: Bearer $(cat "$TMP/admin")"

expect_rc 0 $C ingest --mbox "$TMP/p.mbox"
expect_rc 0 $C ingest --mbox "$TMP/s.mbox"
expect_rc 0 $C plan
q "SELECT j.id, s.title, j.state FROM jobs j JOIN runs r ON r.id = j.run_id
   JOIN series s ON s.id = r.series_id ORDER BY j.id" >"$TMP/jobs.txt"
cat "$TMP/jobs.txt"
[ "$(q "SELECT count(*) FROM jobs")" = 2 ] || fail "expected a job for each series"
pjob=$(q "SELECT j.id FROM jobs j JOIN runs r ON r.id = j.run_id JOIN series s
          ON s.id = r.series_id WHERE s.title LIKE '%(prerequisite)'")
sjob=$(q "SELECT j.id FROM jobs j JOIN runs r ON r.id = j.run_id JOIN series s
          ON s.id = r.series_id WHERE s.title LIKE '%(sent again)'")
[ -n "$pjob" ] && [ -n "$sjob" ] || fail "no job for P or for S"
# S's job applies P first.
q "SELECT spec FROM jobs WHERE id = $sjob" | jq -e '.depends_on | length == 1 and .[0].missing == false' >/dev/null ||
	{ q "SELECT spec FROM jobs WHERE id = $sjob"; fail "S's job does not carry P as a prerequisite"; }
code=$(curl -sS -o "$TMP/cancel.json" -w '%{http_code}' -X POST -H "$admin" \
	-H 'Content-Type: application/json' -d '{"reason": "not this one"}' \
	"$url/api/v1/jobs/$pjob/cancel") || fail "cancel P's job"
[ "$code" = 200 ] || { cat "$TMP/cancel.json"; fail "cancel P's job: HTTP $code"; }

"$AGENT" --config "$TMP/agent.json" --once >"$TMP/agent.log" 2>&1 ||
	{ tail -n 40 "$TMP/agent.log"; fail "agent --once"; }
q "SELECT id, state, outcome, outcome_detail FROM jobs WHERE id = $sjob" | tee "$TMP/s.txt"
[ "$(q "SELECT outcome FROM jobs WHERE id = $sjob")" = ok ] || fail "S's job did not end ok"
expect_grep 'every patch of the series is already applied' "$TMP/s.txt"
expect_grep 'nothing to measure' "$TMP/s.txt"
# Nothing built, nothing measured.
[ "$(q "SELECT count(*) FROM samples WHERE job_id = $sjob")" = 0 ] || fail "S's job has samples"
[ "$(q "SELECT count(*) FROM logs WHERE job_id = $sjob AND stage LIKE 'build%'")" = 0 ] ||
	fail "S's job built something"
q "SELECT fingerprint FROM results WHERE job_id = $sjob" >"$TMP/fp.json"
jq -e '.apply.all_already == true and .apply.already == 1 and .apply.applied == 1' "$TMP/fp.json" \
	>/dev/null || { jq .apply "$TMP/fp.json"; fail "the fingerprint's apply section"; }
q "SELECT path FROM logs WHERE job_id = $sjob AND stage = 'apply'" | while read -r p; do
	cat "$TMP/state/$p"; done >"$TMP/apply.log"
expect_grep '1 already applied' "$TMP/apply.log"

expect_rc 0 $C verdicts
q "SELECT state || ' ' || description FROM verdicts WHERE job_id IS NULL AND benchmark IS NULL
   ORDER BY run_id" | tee "$TMP/verdicts.txt"
q "SELECT c.state, c.description FROM check_outbox c JOIN runs r ON r.id = c.run_id
   JOIN jobs j ON j.run_id = r.id WHERE j.id = $sjob AND c.state <> 'pending'" | tee "$TMP/s-check.txt"
expect_grep '^warning|Performance Testing NOT TESTED: every patch is already applied' "$TMP/s-check.txt"
q "SELECT c.state, c.description FROM check_outbox c JOIN runs r ON r.id = c.run_id
   JOIN jobs j ON j.run_id = r.id WHERE j.id = $pjob AND c.state <> 'pending'" | tee "$TMP/p-check.txt"
expect_grep '^warning|Performance Testing NOT TESTED: not this one' "$TMP/p-check.txt"
curl -sS "$url/api/v1/jobs/$sjob" >"$TMP/job.json" || fail "GET the job"
grep -q 'already applied' "$TMP/job.json" || fail "the API does not show why S was not measured"
echo "already applied: no commit, nothing built or measured, check NOT TESTED"
