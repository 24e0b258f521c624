# Load held when the disk is slow, and kill -9 of the controller under it.
# bench_api (bench/bench_api.c) drives simulated agents over the real API
# (leases, heartbeats, log chunks, results) with every fsync and
# fdatasync of the controller slowed by the LD_PRELOAD shim
# tests/preload/slowsync.c, kills the controller with SIGKILL at a random
# moment, and writes down every result it had an answer 200 for.  The
# controller then starts again on the same store and stops; every
# acknowledged result must be in the store, none twice.  p50/p99 per kind
# of request, as the bench measured them before the kill, are printed.
#
# The slow disk: a device-mapper `delay` target would slow the device
# itself, but this kernel (the shared VM's) has no device-mapper driver
# and no loadable modules: the shim delays the syncs, which is what
# stalls on a slow disk (the page cache takes the writes), and runs
# everywhere.  It does not slow writes or reads.  The reason is printed.
#
# "jobs" are the jobs the bench queued (most never leased before the
# kill), "completed" those done with their result in the store after the
# restart, "results lost" results answered 200 and missing there.
. "$PG_TOP/tests/faults/lib.sh"

BENCH="$PG_BUILD/bench/bench_api"
SHIM="$PG_BUILD/tests/preload/slowsync.so"
[ -x "$BENCH" ] || fail "$BENCH not built (make check-faults builds it)"
[ -f "$SHIM" ] || fail "$SHIM not built (make check-faults builds it)"
command -v sqlite3 >/dev/null || fail "sqlite3 is needed"

SYNC_MS=${FAULT_SLOWDISK_SYNC_MS:-10}
STALL_MS=${FAULT_SLOWDISK_STALL_MS:-150}
STALL_EVERY=${FAULT_SLOWDISK_STALL_EVERY:-50}
AGENTS=${FAULT_SLOWDISK_AGENTS:-300}
RATE=${FAULT_SLOWDISK_RATE:-3000}
if command -v dmsetup >/dev/null && dmsetup targets 2>/dev/null | grep -q '^delay '; then
	why="a dm-delay target could be made here, but the shim gives the same slow disk everywhere"
else
	why="no device-mapper delay target in this kernel (dmsetup targets fails or lists none)"
fi
echo "slow disk: LD_PRELOAD $SHIM: every fsync/fdatasync waits $SYNC_MS ms," \
	"every ${STALL_EVERY}th $STALL_MS ms ($why)"

reps=0 jobs=0 completed=0 lost=0 dups=0
bench_dirs=""
rm_bench_dirs() {
	for d in $bench_dirs; do rm -rf -- "$d"; done
	return 0
}
cleanup_hooks="$cleanup_hooks rm_bench_dirs"

while [ "$reps" -lt "$FAULT_REPS" ]; do
	reps=$((reps + 1))
	kill_after=$(rand_between 3 8)
	out="$TMP/bench.$reps"
	acked="$TMP/acked.$reps"
	LD_PRELOAD="$SHIM" PG_SLOWSYNC_MS=$SYNC_MS PG_SLOWSYNC_STALL_MS=$STALL_MS \
	PG_SLOWSYNC_STALL_EVERY=$STALL_EVERY PG_BUILD="$PG_BUILD" \
	PG_BENCH_AGENTS=$AGENTS PG_BENCH_RATE=$RATE PG_BENCH_SECONDS=$((kill_after + 5)) \
	PG_BENCH_KILL_AFTER_S=$kill_after PG_BENCH_RESULT_EVERY=6 PG_BENCH_LOG_EVERY=3 \
	PG_BENCH_ACKED="$acked" "$BENCH" >"$out" 2>"$out.err" ||
		{ cat "$out" "$out.err"; fail "rep $reps: bench_api failed"; }
	dir=$(sed -n 's/^bench api-killed: dir=\([^ ]*\) .*/\1/p' "$out")
	[ -n "$dir" ] && [ -d "$dir" ] || { cat "$out" "$out.err"; fail "rep $reps: no store kept"; }
	bench_dirs="$bench_dirs $dir"
	sed "s/^/rep $reps: /" "$out"
	n_jobs=$(sed -n 's/^bench api-killed: .* jobs=\([0-9]*\) .*/\1/p' "$out")
	n_acked=$(wc -l <"$acked")
	[ "$n_acked" -gt 0 ] || fail "rep $reps: no result was acknowledged before the kill"

	# The controller again, on the same store (it recovers the WAL), then
	# SIGTERM; and the store's own check.
	"$CTL" --config "$dir/c.json" serve >"$dir/restart.log" 2>&1 &
	pid=$!
	i=0
	until grep -q 'api: listening on ' "$dir/restart.log"; do
		kill -0 "$pid" 2>/dev/null || { cat "$dir/restart.log"; fail "rep $reps: no restart"; }
		i=$((i + 1))
		[ $i -le 600 ] || { kill -9 "$pid"; fail "rep $reps: restart not listening"; }
		sleep 0.1
	done
	kill "$pid"
	wait "$pid" || { cat "$dir/restart.log"; fail "rep $reps: the restarted controller failed"; }
	"$CTL" --config "$dir/c.json" db check >"$dir/check.out" 2>&1 ||
		{ cat "$dir/check.out"; fail "rep $reps: db check failed"; }

	db="$dir/state/perfgate.db"
	rep_lost=$(sqlite3 "$db" <<EOF
CREATE TEMP TABLE acked (job_id INTEGER, attempt INTEGER);
.separator " "
.import $acked acked
SELECT count(*) FROM acked a WHERE NOT EXISTS (SELECT 1 FROM results r
	WHERE r.job_id = a.job_id AND r.attempt = a.attempt AND r.detail = 'bench');
EOF
) || fail "rep $reps: cannot count lost results"
	# A (job, attempt) has one results row at most (its primary key): a
	# duplicate is a job with results of two attempts, or done twice.
	rep_dups=$(sqlite3 "$db" "SELECT coalesce(sum(n - 1), 0) FROM
		(SELECT count(*) AS n FROM results GROUP BY job_id HAVING n > 1)") ||
		fail "rep $reps: cannot count duplicated results"
	rep_done=$(sqlite3 "$db" "SELECT count(*) FROM jobs j WHERE state = 'done'
		AND EXISTS (SELECT 1 FROM results r WHERE r.job_id = j.id)")
	echo "rep $reps: SIGKILL after $kill_after s: $n_acked results acknowledged," \
		"$rep_done jobs done with their result in the store after the restart," \
		"$rep_lost acknowledged results missing, $rep_dups duplicated"
	[ "$rep_done" -ge "$n_acked" ] || echo "rep $reps: fewer jobs done than results acknowledged"
	jobs=$((jobs + n_jobs))
	completed=$((completed + rep_done))
	lost=$((lost + rep_lost))
	dups=$((dups + rep_dups))
	rm -rf -- "$dir"
done
fault_row "slow disk, controller kill -9 under load" "$reps" "$jobs" "$completed" "$lost" "$dups" 0 0
