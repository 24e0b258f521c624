# perfgate-agent run-one (lib/runone.h), driven through its stdin and
# stdout by tests/integration/runone_drive.py as the controller's SSH
# dispatcher would, with the builtin runner and no sandbox:
#   1. a job: hello, heartbeats, a log line (base64 of the runner's chunk),
#      the result line, ack -> exit 0, spool empty;
#   2. cancel mid-job -> exit 0, no result;
#   3. stdin closed mid-job (builtin_spawn) -> exit 3, the sleep child's
#      process group gone, an infra-error result spooled; --collect hands
#      it over (count 1), the ack empties the spool, a second --collect
#      counts 0;
#   4. EOF instead of the ack -> exit 3, the result stays spooled and
#      --collect sends the same body bytes;
#   5. --facts; a first line that is not a job.
# Not here: a fetch (the builtin runner never fetches an mbox);
# tests/unit/test_agent_stream.c covers the fetch's waiting.
. "$PG_TOP/tests/integration/lib.sh"

DRIVE="python3 $PG_TOP/tests/integration/runone_drive.py"
spool="$TMP/spool"
cat >"$TMP/agent.json" <<EOC
{ "name": "ssh-1", "labels": { "pool": "demo" }, "runner": "builtin",
  "work_dir": "$TMP/work", "spool_dir": "$spool",
  "sandbox": { "enabled": false, "allow_unsandboxed": true } }
EOC
RUNONE="$AGENT run-one --config $TMP/agent.json"

# drive NAME STEP...: run run-one through the driver; $TMP/NAME.{lines,err,rc}
drive() {
	name=$1
	shift
	$DRIVE "$TMP/$name" "$@" -- $RUNONE ||
		{ cat "$TMP/$name.err" >&2; fail "$name: the driver failed"; }
	[ -f "$TMP/$name.rc" ] || { cat "$TMP/$name.err" >&2; fail "$name: no exit status"; }
}
rc_of() { cat "$TMP/$1.rc"; }
expect_exit() {	# expect_exit NAME STATUS
	[ "$(rc_of "$1")" = "$2" ] ||
		{ cat "$TMP/$1.err" "$TMP/$1.lines" >&2; fail "$1: exit $(rc_of "$1"), expected $2"; }
}
# Every line on stdout is a protocol line: nothing else writes there.
all_lines_typed() {
	jq -e -s 'all(.[]; (.type | type) == "string")' "$TMP/$1.lines" >/dev/null ||
		{ cat "$TMP/$1.lines" >&2; fail "$1: stdout holds a line that is not a message"; }
}
lines_of() {	# lines_of NAME TYPE: the lines of that type
	jq -c --arg t "$2" 'select(.type == $t)' "$TMP/$1.lines"
}
spooled() { ls "$spool" | grep -E '^(job|result)-' || true; }

# 1. A job to its acknowledged end.
drive r1 'send:{"job": {"id": 1, "attempt": 1, "heartbeat_s": 1, "builtin_seconds": 2.5}}' \
	expect:hello expect:log expect:heartbeat expect:result \
	'send:{"type":"ack","job":1,"attempt":1,"status":"recorded"}' wait
expect_exit r1 0
all_lines_typed r1
head -n 1 "$TMP/r1.lines" | jq -e '.type == "hello" and (.pid | type) == "number" and
	(.pgid | type) == "number"' >/dev/null || fail "r1: the first line is not the hello"
[ "$(lines_of r1 heartbeat | wc -l)" -ge 2 ] || fail "r1: fewer than 2 heartbeats"
lines_of r1 heartbeat | jq -e 'select(.job == 1 and .attempt == 1 and .stage == "run")' \
	>/dev/null || fail "r1: no heartbeat of stage run"
lines_of r1 log | jq -r '.data' | base64 -d >"$TMP/r1.log"
expect_grep '^job 1 attempt 1: nothing is built or measured; waiting 2.5 s' "$TMP/r1.log"
expect_grep 'built-in runner on ' "$TMP/r1.log"
lines_of r1 result | jq -r '.body' | jq -e '.outcome == "ok" and .attempt == 1' >/dev/null ||
	fail "r1: the result body is not JSON with outcome ok"
lines_of r1 end | jq -e '.exit == 0' >/dev/null || fail "r1: no end line with exit 0"
[ -z "$(spooled)" ] || fail "r1: the spool still holds $(spooled)"

# 2. Cancelled mid-job: no result.
drive r2 'send:{"id": 2, "attempt": 1, "heartbeat_s": 1, "builtin_seconds": 30}' \
	expect:heartbeat 'send:{"type":"cancel","reason":"superseded"}' wait
expect_exit r2 0
all_lines_typed r2
[ -z "$(lines_of r2 result)" ] || fail "r2: a cancelled job sent a result"
lines_of r2 end | jq -e '.exit == 0' >/dev/null || fail "r2: no end line"
[ -z "$(spooled)" ] || fail "r2: the spool holds $(spooled)"
expect_grep 'cancelled the job: superseded' "$TMP/r2.err"

# 3. The connection drops while a child runs.
drive r3 'send:{"job": {"id": 3, "attempt": 2, "heartbeat_s": 1, "builtin_seconds": 60, "builtin_spawn": true}}' \
	expect:hello child close wait
expect_exit r3 3
read -r child_pid child_pgid <"$TMP/r3.child"
[ "$child_pid" = "$child_pgid" ] || fail "r3: the sleep child is not its own process group"
if pgrep -g "$child_pgid" >/dev/null || ps -e -o pgid= | grep -qx " *$child_pgid"; then
	fail "r3: process group $child_pgid still has processes"
fi
[ "$(spooled)" = "result-3-2.json" ] || fail "r3: the spool holds '$(spooled)'"
jq -e '.outcome == "infra-error" and .attempt == 2 and
	(.detail | test("connection to the controller dropped"))' "$spool/result-3-2.json" \
	>/dev/null || { cat "$spool/result-3-2.json" >&2; fail "r3: not the dropped-connection result"; }
cp "$spool/result-3-2.json" "$TMP/r3.spooled"

RUNONE="$AGENT run-one --collect --config $TMP/agent.json"
drive c1 expect:collected 'send:{"type":"ack","job":3,"attempt":2,"status":"recorded"}' \
	'send:{"type":"done"}' wait
expect_exit c1 0
all_lines_typed c1
lines_of c1 collected | jq -e '.count == 1' >/dev/null || fail "c1: not a count of 1"
[ "$(lines_of c1 result | jq -r '"\(.job)/\(.attempt)"')" = "3/2" ] ||
	fail "c1: not the result of job 3 attempt 2"
lines_of c1 result | jq -j '.body' | cmp -s - "$TMP/r3.spooled" ||
	fail "c1: the collected body differs from the spooled file"
[ -z "$(spooled)" ] || fail "c1: the spool still holds $(spooled)"
drive c2 expect:collected close wait
expect_exit c2 0
lines_of c2 collected | jq -e '.count == 0' >/dev/null || fail "c2: not a count of 0"

# 4. The result line goes out, then EOF instead of the ack.
RUNONE="$AGENT run-one --config $TMP/agent.json"
drive r4 'send:{"job": {"id": 4, "attempt": 1, "builtin_seconds": 0.2}}' expect:result close wait
expect_exit r4 3
[ "$(spooled)" = "result-4-1.json" ] || fail "r4: the spool holds '$(spooled)'"
lines_of r4 result | jq -j '.body' >"$TMP/r4.body"
cmp -s "$TMP/r4.body" "$spool/result-4-1.json" || fail "r4: the result line is not the spooled bytes"
RUNONE="$AGENT run-one --collect --config $TMP/agent.json"
drive c3 expect:collected 'send:{"type":"ack","job":4,"attempt":1,"status":"duplicate"}' close wait
expect_exit c3 0
lines_of c3 result | jq -j '.body' | cmp -s - "$TMP/r4.body" ||
	fail "c3: the collected body is not the body of the result line"
[ -z "$(spooled)" ] || fail "c3: the spool still holds $(spooled)"

# 5. --facts, and a first line that is not a job.
$AGENT run-one --facts --config "$TMP/agent.json" >"$TMP/facts" 2>"$TMP/facts.err" ||
	{ cat "$TMP/facts.err" >&2; fail "--facts failed"; }
[ "$(wc -l <"$TMP/facts")" -eq 1 ] || fail "--facts: not one line"
jq -e --arg arch "$(uname -m)" '.type == "facts" and .labels.arch == $arch and
	.labels.pool == "demo" and .facts.arch == $arch and (.agent_version | length) > 0' \
	"$TMP/facts" >/dev/null || { cat "$TMP/facts" >&2; fail "--facts: wrong line"; }
echo 'not a job' | $AGENT run-one --config "$TMP/agent.json" >"$TMP/bad" 2>"$TMP/bad.err"
rc=$?
[ "$rc" -eq 1 ] || fail "a first line that is not a job: exit $rc, expected 1"
expect_grep 'the job line' "$TMP/bad.err"
head -n 1 "$TMP/bad" | jq -e '.type == "hello"' >/dev/null || fail "no hello before the bad line"
tail -n 1 "$TMP/bad" | jq -e '.type == "end" and .exit == 1' >/dev/null ||
	fail "no end line with exit 1"
expect_rc 2 $AGENT run-one --facts --collect
echo "t_runone: ok"
