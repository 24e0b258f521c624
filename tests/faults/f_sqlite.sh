# SQLite busy: a second process (the sqlite3 shell) holds the store's write
# lock (BEGIN IMMEDIATE, then nothing) twice a round, for 1 to 4 s (within
# the busy timeout) and for 6 to 9 s (past it), while
# seven agents (six jobs of 4 to 8 s, one agent idle) lease, heartbeat and
# post results.  The controller's writes wait for the busy timeout (5 s),
# then fail: the API answers 503 with Retry-After, the agents keep their
# results in their spools and retry; a daemon pass that cannot write logs
# the error and is retried (or, for intake and planning, stops the daemon,
# which systemd starts again: done here by hand, and counted).  After each
# round: every job final with exactly its one result, every check posted
# once, the store intact (integrity_check, db check), and no lease expired
# for it (lease_s 12: a lock of at most 9 s is shorter than a lease).
. "$PG_TOP/tests/faults/lib.sh"
. "$PG_TOP/tests/faults/faults_store_lib.sh"

NAGENTS=7
FS_LEASE_S=12
restarts=0
locks=0
long_locks=0

start_agents() {
	i=1
	while [ $i -le $NAGENTS ]; do
		fs_agent "a$i"
		i=$((i + 1))
	done
}
stop_agents() {
	for a in $fs_agents; do fs_agent_stop "${a%%:*}"; done
}
new_jobs() {	# new_jobs LO HI: six jobs of LO..HI s, run by every agent
	stop_agents
	fs_recheck
	fs_jobs_seconds "$1" "$2"
	start_agents
}
# The controller stopped on a store error (intake or planning): start it
# again, as systemd's Restart= does.
revive() {
	if [ -n "$ctl" ] && ! kill -0 "$ctl" 2>/dev/null; then
		wait "$ctl"
		rc=$?
		fs_serve_log
		echo "controller exited $rc: $(grep -E ' error ' "$TMP/serve.out" | tail -n 1)"
		restarts=$((restarts + 1))
		fs_serve
	fi
}
# hold SECONDS: the sqlite3 shell holds the write lock that long.
hold() {
	{
		echo ".timeout 30000"
		echo "BEGIN IMMEDIATE;"
		echo "SELECT 'locked';"
		sleep "$1"
		echo "ROLLBACK;"
	} | sqlite3 "$db" >"$TMP/hold.out" 2>&1 &
	holder=$!
	fs_wait 10 "the lock taken" grep -q locked "$TMP/hold.out"
	wait "$holder" || { cat "$TMP/hold.out"; fail "the sqlite3 shell failed"; }
	holder=""
	locks=$((locks + 1))
	[ "$1" -gt 5 ] && long_locks=$((long_locks + 1))
	echo "held the write lock for $1 s"
}
settled_reviving() { revive; fs_settled; }
holder=""
stop_holder() { [ -n "$holder" ] && kill "$holder" 2>/dev/null; return 0; }
cleanup_hooks="stop_holder $cleanup_hooks"

fs_setup
fs_serve
fs_wait 60 "the first jobs" is "SELECT count(*) FROM jobs" 6
fs_jobs_seconds 1 1
start_agents
fs_wait_settled
fs_mark
r=0
while [ $r -lt "$FAULT_REPS" ]; do
	r=$((r + 1))
	new_jobs 4 8
	# One lock within the busy timeout, one past it.
	for range in "1 4" "6 9"; do
		fs_rand 0 2
		sleep "$R"
		# shellcheck disable=SC2086
		fs_rand $range
		hold "$R"
		revive
	done
	fs_wait 120 "every job and check settled" settled_reviving
done
n503=$(cat "$TMP"/agent-*.log | grep -c ' 503' || true)
nlocked=$(cat "$TMP/ctl.log" "$TMP/serve.out" | grep -c 'database is locked' || true)
echo "$locks locks ($long_locks longer than the busy timeout); the controller logged" \
	"'database is locked' $nlocked times and stopped $restarts times; the agents saw $n503 503s"
fs_serve_log
grep -h 'database is locked' "$TMP/ctl.log" | sed 's/^[^ ]* //' | sort | uniq -c | head -n 5
cat "$TMP"/agent-*.log | grep ' 503' | sed 's/^[^ ]* [^ ]* //' | head -n 3
[ "$(q "SELECT count(*) FROM attempts WHERE job_id > $fs_job0 AND outcome = 'expired'")" = 0 ] ||
	fail "a lock shorter than a lease expired a lease"
fs_count sqlite-busy "$locks"
