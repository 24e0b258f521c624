# What waits for the disk: the controller under the LD_PRELOAD shim
# tests/preload/slowsync.c with its syncs held (PG_SLOWSYNC_HOLD: while
# the file exists, no fsync or fdatasync returns).  A result is committed
# but not answered while the sync is held; a heartbeat and a log chunk of
# the same job are answered meanwhile (their answers do not wait for the
# sync: api_worker.c); once the disk answers, the result gets its 200.
# No timing: the result cannot be answered while the hold file exists.
. "$PG_TOP/tests/integration/lib.sh"

SHIM="$PG_BUILD/tests/preload/slowsync.so"
[ -f "$SHIM" ] || fail "$SHIM not built (make integration builds it)"
for tool in curl jq sqlite3; do
	command -v $tool >/dev/null || fail "$tool is needed"
done
DB="$TMP/state/perfgate.db"
q() { sqlite3 "$DB" "$1" || fail "sqlite3: $1"; }
HOLD="$TMP/hold"

write_config "$TMP/c.json" '"api": { "listen": "127.0.0.1:0", "lease_s": 60, "threads": 2 }'
expect_rc 0 "$CTL" --config "$TMP/c.json" db migrate
T1=$("$CTL" --config "$TMP/c.json" agent add a1 --labels pool=demo 2>/dev/null) || fail "agent add a1"
T2=$("$CTL" --config "$TMP/c.json" agent add a2 --labels pool=demo 2>/dev/null) || fail "agent add a2"
sqlite3 "$DB" <<'EOF' || fail "seeding the store"
INSERT INTO series (id, project, root_msgid, total, title, submitter_addr, state, received_at,
		completed_at) VALUES (1, 'dpdk', 's@x', 1, 'sync', 'a@x', 'complete', 1, 1);
INSERT INTO runs (id, series_id, reason, tree, branch, base_commit, created_at) VALUES
	(1, 1, 'new', 'dpdk-demo', 'main', '0123456789abcdef0123456789abcdef01234567', 1);
INSERT INTO jobs (id, run_id, context, host_class, build_mode, spec, created_at) VALUES
	(1, 1, 'perfgate-demo-Performance', 'demo', 'demo-release', '{"format":1}', 1),
	(2, 1, 'perfgate-demo-Performance', 'demo', 'demo-debugoptimized', '{"format":1}', 2);
EOF

log="$TMP/serve.log"
LD_PRELOAD="$SHIM" PG_SLOWSYNC_MS=0 PG_SLOWSYNC_HOLD="$HOLD" \
	"$CTL" --config "$TMP/c.json" serve >"$log" 2>&1 &
pid=$!
stop_ctl() {
	[ -n "${pid:-}" ] && kill -9 "$pid" 2>/dev/null
	[ -n "${res:-}" ] && kill "$res" 2>/dev/null
	[ -n "${reader:-}" ] && kill "$reader" 2>/dev/null
	return 0
}
cleanup_hooks="stop_ctl"
i=0
until grep -q 'api: listening on http://' "$log"; do
	i=$((i + 1))
	[ $i -lt 300 ] || { cat "$log"; fail "the API never listened"; }
	kill -0 $pid 2>/dev/null || { cat "$log"; fail "the controller died"; }
	sleep 0.1
done
URL=$(sed -n 's/.*api: listening on \(http:[^ ]*\).*/\1/p' "$log" | tail -n 1)

# post TOKEN PATH DATA OUT: the status of an agent's POST (body in OUT).
post() {
	curl -sS -m 60 -o "$4" -w '%{http_code}' -H "Authorization: Bearer $1" \
		-H 'Content-Type: application/json' --data-binary "$3" "$URL$2"
}

# A reader's open snapshot, taken before the leases, keeps the WAL from
# being restarted from then on: the first commit into a restarted WAL
# syncs its new header (SQLite does, in the writer's commit), which the
# held disk would stop too; only the syncer's wait is under test here.
# (On a snapshot of the database file, the reader keeps the checkpointer
# from copying frames back, so the WAL is never all copied again; on a
# snapshot in the WAL, it keeps a writer from restarting it.)  The shell
# is run directly, not through lib.sh's function, so that $reader is its
# own pid.
mkfifo "$TMP/reader.in"
command sqlite3 -cmd ".timeout 30000" "$DB" <"$TMP/reader.in" >"$TMP/reader.out" 2>&1 &
reader=$!
exec 3>"$TMP/reader.in"
printf 'BEGIN;\nSELECT count(*) FROM jobs;\n' >&3
i=0
until [ -s "$TMP/reader.out" ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "the reader did not start"
	sleep 0.1
done

[ "$(post "$T1" /api/v1/lease '{"wait_s": 0}' "$TMP/lease1")" = 200 ] || fail "lease 1"
jq_is "$TMP/lease1" .job.id 1
[ "$(post "$T2" /api/v1/lease '{"wait_s": 0}' "$TMP/lease2")" = 200 ] || fail "lease 2"
jq_is "$TMP/lease2" .job.id 2

# The disk stops answering.  The result commits, and waits.
: >"$HOLD"
post "$T1" /api/v1/jobs/1/result '{"attempt": 1, "outcome": "ok", "detail": "held"}' \
	"$TMP/result" >"$TMP/result.code" &
res=$!
i=0
until [ "$(q "SELECT count(*) FROM results WHERE job_id = 1")" = 1 ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || { cat "$log"; fail "the result was never committed"; }
	sleep 0.1
done
# Meanwhile the other agent's heartbeat renews its lease and its log
# chunk is kept: both answered, their changes committed, no sync.
[ "$(post "$T2" /api/v1/jobs/2/heartbeat '{"attempt": 1, "stage": "bench", "progress": 50}' \
	"$TMP/hb")" = 200 ] || fail "heartbeat: $(cat "$TMP/hb")"
jq_is "$TMP/hb" .cancel false
[ "$(q "SELECT state || ' ' || stage || ' ' || progress FROM jobs WHERE id = 2")" = \
	"running bench 50" ] || fail "the heartbeat's change is not in the store"
[ "$(post "$T2" '/api/v1/jobs/2/logs?attempt=1&stage=bench&offset=0' 'bench done
' "$TMP/logs")" = 200 ] || fail "log chunk: $(cat "$TMP/logs")"
jq_is "$TMP/logs" .bytes 11
kill -0 "$res" 2>/dev/null || fail "the result was answered before its commit was on disk: $(cat "$TMP/result.code")"
[ -s "$TMP/result.code" ] && fail "the result was answered while the disk held its sync"

# The disk answers: the result gets its 200.
rm -f "$HOLD"
exec 3>&-
wait "$reader" || fail "the reader failed: $(cat "$TMP/reader.out")"
reader=""
wait "$res" || fail "the result's request failed"
res=""
[ "$(cat "$TMP/result.code")" = 200 ] || fail "result: $(cat "$TMP/result")"
jq_is "$TMP/result" .status recorded
kill "$pid"
wait "$pid" || { cat "$log"; fail "the controller did not stop cleanly"; }
pid=""
echo "api sync: a result waited for its sync; a heartbeat and a log chunk did not"
