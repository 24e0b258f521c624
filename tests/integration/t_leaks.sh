# Both daemons under valgrind's memcheck for a whole integration run: the
# controller's `serve` reads its series from the fake Patchwork
# (tests/fake_patchwork.py), plans them, serves the real agent (built-in
# runner) that does every job, decides the verdicts, and delivers the
# checks to the fake and the report mails to a real SMTP server on
# loopback, and answers each dashboard page and read endpoint once; then
# SIGTERM ends both.  Each must exit 0 with no memory error
# and no definitely or indirectly lost block (still-reachable blocks are
# the libraries' process-lifetime caches: not counted).  From the normal
# build: valgrind needs no build of its own (make deps installs it).
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/delivery_lib.sh"

command -v valgrind >/dev/null 2>&1 || fail "valgrind is not installed (make deps)"
# --error-exitcode: any error, or a definite or indirect leak, is exit 99.
VG="valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect
	--errors-for-leak-kinds=definite,indirect --track-origins=yes --num-callers=30"

start_patchwork "$PG_TOP/tests/patchwork/fixture.json"
start_smtp
demo_tree
CI_TOKEN=04b5b8ffb66a2d9ba9ad32d0ba95a2b120a60b9a
printf '%s\n' "$CI_TOKEN" >"$TMP/token"
chmod 600 "$TMP/token"
conf "$TMP/c.json" "$TMP/token" ci "\"mail\": { \"enabled\": true,
  \"smtp_url\": \"smtp://127.0.0.1:$sport/lab.example.org\", \"starttls\": \"off\",
  \"from\": \"perfgate CI <perfgate@lab.example.org>\", \"timeout_s\": 10 },
  \"sources\": [ { \"name\": \"pw\", \"type\": \"patchwork\", \"url\": \"$base/api/1.3\",
                   \"project\": \"dpdk\" } ],
  \"intake\": { \"interval_s\": 1, \"since\": \"2026-11-29T00:00:00\" }"
C="$CTL --config $TMP/c.json"
expect_rc 0 $C db migrate
$C agent add lab-1 --labels pool=demo >"$TMP/agent-token" 2>"$TMP/add.err" || fail "agent add"
FAKE=$($C agent add fake-1 --labels pool=demo 2>/dev/null) || fail "agent add fake-1"

# The controller under valgrind ($ctl, valgrind's pid, is the daemon's:
# valgrind runs the program in its own process, so SIGTERM reaches it).
$VG --log-file="$TMP/vg-ctl.txt" $C serve >>"$TMP/ctl.log" 2>&1 &
ctl=$!
wait_until "the API" grep -q 'api: listening on http://' "$TMP/ctl.log"
URL=$(sed -n 's/.*api: listening on \(http:[^ ]*\).*/\1/p' "$TMP/ctl.log" | tail -n 1)
planned() { [ "$(q "SELECT count(*) FROM jobs")" -ge 1 ]; }
wait_until "jobs planned from Patchwork's series" planned

# A fake agent (curl) does the first job with samples, 8 runs a side of
# each benchmark key, so that the verdict's statistics, tables and mail
# run too; the real agent does the rest.
lease "$FAKE" "$TMP/lease.json"
fjob=$(jq -r .job.id "$TMP/lease.json")
jq -c '.job.attempt as $a | {attempt: $a, outcome: "ok", detail: "fake agent",
	fingerprint: {runner: "fake"}, samples: [
	(["mempool_perf_demo", "mempool.nocache.cores1.keep128.get32.put32.const0", 10.0e6],
	 ["mempool_perf_demo", "mempool.cache.cores1.keep128.get32.put32.const0", 20.0e6],
	 ["testpmd_io_demo", "fwd.rx_pps", 5.0e6]) as [$b, $m, $v] |
	("base", "patched") as $side | range(8) as $i |
	{side: $side, benchmark: $b, metric: $m, repetition: $i, unit: "u",
	 value: ($v * (1 + (($i * 7 + ($side | length)) % 5 - 2) / 1000))}]}' \
	"$TMP/lease.json" >"$TMP/result.json" || fail "jq: the fake result"
code=$(curl -sS -o "$TMP/result.out" -w '%{http_code}' -H "Authorization: Bearer $FAKE" \
	-H 'Content-Type: application/json' --data-binary "@$TMP/result.json" \
	"$URL/api/v1/jobs/$fjob/result") || fail "result: curl failed"
[ "$code" = 200 ] || { cat "$TMP/result.out"; fail "result of job $fjob: HTTP $code"; }
jq_is "$TMP/result.out" .status recorded

cat >"$TMP/agent.json" <<EOF
{ "name": "lab-1", "controller_url": "$URL", "token_file": "$TMP/agent-token",
  "labels": { "pool": "demo" }, "work_dir": "$TMP/agent/work", "spool_dir": "$TMP/agent/spool",
  "runner": "builtin", "profiles_dir": "$TMP/profiles", "lease_wait_s": 2 }
EOF
$VG --log-file="$TMP/vg-agent.txt" "$AGENT" --config "$TMP/agent.json" >"$TMP/agent.log" 2>&1 &
agent=$!
stop_agent() { [ -n "$agent" ] && kill -9 "$agent" 2>/dev/null; return 0; }
cleanup_hooks="$cleanup_hooks stop_agent"

# Every job done, every final check on Patchwork and every mail sent.
all_done() {
	[ "$(q "SELECT count(*) FROM jobs WHERE state NOT IN ('done', 'failed', 'cancelled')")" = 0 ] &&
	[ "$(q "SELECT count(*) FROM runs WHERE state <> 'done'")" = 0 ] &&
	[ "$(q "SELECT count(*) FROM check_outbox WHERE state <> 'pending' AND delivery = 'sent'")" -ge 1 ] &&
	[ "$(q "SELECT count(*) FROM check_outbox WHERE delivery = 'queued'")" = 0 ] &&
	[ "$(q "SELECT count(*) FROM email_outbox WHERE delivery <> 'sent'")" = 0 ] &&
	[ "$(q "SELECT count(*) FROM email_outbox")" -ge 1 ]
}
wait_until "every job, check and mail" all_done
[ "$(q "SELECT count(*) FROM verdicts WHERE job_id = $fjob AND p IS NOT NULL")" -ge 3 ] ||
	fail "no verdict with statistics for the fake agent's job $fjob"
jobs=$(q "SELECT count(*) FROM jobs")
results=$(q "SELECT count(*) FROM results")
# The dashboard's reads too (each page and endpoint once, on real rows):
# answered, not refused as a server error.
job=$(q "SELECT min(id) FROM jobs")
run=$(q "SELECT min(id) FROM runs")
series=$(q "SELECT min(id) FROM series")
for path in / /trends /agents /queue /changes "/series/$series" /assets/series.js /metrics \
	/api/v1/meta /api/v1/queue /api/v1/trends /api/v1/change-points /api/v1/history \
	/api/v1/agents /api/v1/hosts/lab-1/noise /api/v1/series "/api/v1/series/$series" \
	"/api/v1/series/$series/mbox" "/api/v1/runs/$run" /api/v1/jobs "/api/v1/jobs/$job" \
	"/api/v1/jobs/$job/logs?stage=run" "/api/v1/jobs/$job/verdict" "/api/v1/jobs/$job/samples"; do
	code=$(curl -sS -o "$TMP/page" -w '%{http_code}' "$URL$path") || fail "GET $path"
	case $code in
	2??|4??) ;;
	*) cat "$TMP/page"; fail "GET $path answered $code" ;;
	esac
done

# SIGTERM: each exits 0 (valgrind's 99 for an error or a leak).
kill "$agent"
wait "$agent"
rc=$?
agent=""
kill "$ctl"
wait "$ctl"
crc=$?
ctl=""
# Valgrind's findings (its own notes, "--PID--" lines such as a syscall
# it does not know, left out: openat2 is answered ENOSYS and the daemons
# fall back).
for f in "$TMP/vg-agent.txt" "$TMP/vg-ctl.txt"; do
	grep -q '^==' "$f" && { echo "== $f"; grep '^==' "$f"; }
done
[ $rc -eq 0 ] || { tail -n 20 "$TMP/agent.log"; fail "the agent exited $rc under valgrind"; }
[ $crc -eq 0 ] || { tail -n 20 "$TMP/ctl.log"; fail "the controller exited $crc under valgrind"; }
echo "leaks: controller and agent clean under valgrind after $jobs jobs, $results results," \
	"$(q "SELECT count(*) FROM check_outbox WHERE delivery = 'sent'") checks" \
	"and $(q "SELECT count(*) FROM email_outbox") mails"
