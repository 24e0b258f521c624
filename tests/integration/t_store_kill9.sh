# kill -9 a store writer in the middle of its transactions, five rounds
# over the same store: after each kill the store opens (recovering the WAL
# the writer left), passes its check, holds every transaction the writer
# reported as committed, and no part of any transaction it did not finish.
. "$PG_TOP/tests/integration/lib.sh"

db="$TMP/store.db"
writer=""
stop_writer() {
	if [ -n "$writer" ]; then
		kill -9 "$writer" 2>/dev/null
		wait "$writer" 2>/dev/null
	fi
	return 0
}
cleanup_hooks="$cleanup_hooks stop_writer"

# Wait until file $1 holds at least $2 lines (commits), for at most ~10 s.
wait_commits() {
	tries=0
	while [ "$(wc -l <"$1")" -lt "$2" ]; do
		if ! kill -0 "$writer" 2>/dev/null; then
			cat "$TMP/loop.err" >&2
			fail "the writer exited before it was killed"
		fi
		tries=$((tries + 1))
		[ "$tries" -le 200 ] || fail "the writer made no progress: $(wc -l <"$1") of $2 commits"
		sleep 0.05
	done
}

seen=0
round=0
# Each round waits for a few commits, then a different delay, so the kills
# land at different points of different transactions (K = 1..30 patches).
for delay in 0 0.03 0.11 0.2 0.37; do
	round=$((round + 1))
	log="$TMP/loop.$round"
	: >"$log"
	"$TOOL" store-write-loop "$db" >"$log" 2>"$TMP/loop.err" &
	writer=$!
	wait_commits "$log" $((2 * round))
	sleep "$delay"
	kill -9 "$writer"
	wait "$writer"
	rc=$?
	writer=""
	[ "$rc" -eq 137 ] || fail "round $round: the writer exited $rc, not by SIGKILL"
	[ -s "$db-wal" ] || fail "round $round: the killed writer left no WAL to recover"

	n=$(grep -c '^committed series=[0-9]* patches=[0-9]*$' "$log")
	seen=$((seen + n))
	expect_rc 0 "$TOOL" store-verify "$db"
	expect_grep '^integrity_check=ok$' "$TMP/out"
	expect_grep '^foreign_key_check=ok$' "$TMP/out"
	expect_grep '^status=ok$' "$TMP/out"
	series=$(sed -n 's/^verify: series=\([0-9]*\) .*/\1/p' "$TMP/out")
	[ -n "$series" ] || { cat "$TMP/out" >&2; fail "store-verify printed no series count"; }
	echo "round $round: killed ${delay}s after $((2 * round)) commits;" \
		"$n commits reported, $seen in all; the store holds $series series"
	# Nothing reported as committed was lost...
	[ "$series" -ge "$seen" ] ||
		fail "round $round: $seen commits reported but only $series series stored"
	# ...and at most one transaction per round committed without its line.
	[ "$series" -le $((seen + round)) ] ||
		fail "round $round: $series series stored for $seen commits in $round rounds"
done
grep '^verify:' "$TMP/out"
