# kill -9 the controller during ingest, again and again, restart it each
# time, and show that the store ends equal to a clean single pass over the
# same archive: nothing lost, nothing twice.
. "$PG_TOP/tests/integration/lib.sh"

python3 tests/intake/gen-archive.py "$TMP/archive" 12000 >/dev/null || fail "gen-archive failed"

# The reference: one clean pass.
write_config "$TMP/clean.json" '"intake": { "batch": 64 }'
sed -i "s|$TMP/state|$TMP/clean|g" "$TMP/clean.json"
t0=$(date +%s%N)
expect_rc 0 "$CTL" --config "$TMP/clean.json" ingest --inbox "$TMP/archive"
# How long a whole pass takes here, in ms: the kills below land at
# fractions of it, so that they fall before, during and after the first
# batches on a fast machine as on a slow one.
pass_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
expect_grep '^messages read: +12000$' "$TMP/out"

# The victim: killed at varying moments until a pass runs to its end.
write_config "$TMP/kill.json" '"intake": { "batch": 64 }'
kills=0
round=0
while :; do
	round=$((round + 1))
	[ $round -le 40 ] || fail "ingest never finished in 40 rounds"
	"$CTL" --config "$TMP/kill.json" ingest --inbox "$TMP/archive" >"$TMP/round.out" 2>&1 &
	pid=$!
	# 1 % to 30 % of a clean pass's time (a restarted pass has less left).
	ms=$(( pass_ms * ((round * 37) % 60 + 2) / 200 ))
	sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
	if kill -9 $pid 2>/dev/null; then
		wait $pid 2>/dev/null
		kills=$((kills + 1))
		[ $kills -lt 12 ] && continue
		# Enough kills: let the next pass finish.
		expect_rc 0 "$CTL" --config "$TMP/kill.json" ingest --inbox "$TMP/archive"
		break
	fi
	wait $pid || { cat "$TMP/round.out"; fail "an unkilled pass failed"; }
	break
done
echo "killed $kills times in $round rounds"
[ $kills -ge 3 ] || fail "only $kills kills landed: the archive is too small to test this"

# Same series, same messages, no duplicates; a healthy store.
for c in clean kill; do
	"$CTL" --config "$TMP/$c.json" series list --json >"$TMP/$c.series" 2>/dev/null ||
		fail "series list ($c)"
	sqlite3 "$(jq -r .db "$TMP/$c.json")" \
		"SELECT count(*), count(DISTINCT msgid) FROM messages;
		 SELECT count(*) FROM patches; SELECT count(*) FROM series_refs;
		 SELECT count(*) FROM recheck_requests;" >"$TMP/$c.counts"
done
diff "$TMP/clean.series" "$TMP/kill.series" >/dev/null || {
	diff "$TMP/clean.series" "$TMP/kill.series" | head -20
	fail "the killed store holds other series than a clean pass"
}
diff "$TMP/clean.counts" "$TMP/kill.counts" || fail "row counts differ"
expect_grep '^12000\|12000$' "$TMP/kill.counts"
expect_rc 0 "$CTL" --config "$TMP/kill.json" db check
expect_grep '^status=ok$' "$TMP/out"
