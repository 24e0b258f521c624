# The daemon reads its configured sources every intake.interval_s: mails
# that arrive while it runs become series without a restart, and SIGTERM
# stops it cleanly between batches.
. "$PG_TOP/tests/integration/lib.sh"

python3 tests/intake/gen-archive.py "$TMP/archive" 40 >/dev/null || fail "gen-archive failed"
write_config "$TMP/c.json" "\"sources\": [ { \"name\": \"local\", \"type\": \"public-inbox\", \"url\": \"$TMP/archive\" } ], \"intake\": { \"interval_s\": 1 }"
"$CTL" --config "$TMP/c.json" serve >"$TMP/serve.log" 2>&1 &
pid=$!
stop_serve() { kill -9 "$pid" 2>/dev/null; }
cleanup_hooks="stop_serve"

wait_log() {	# wait_log PATTERN: until the daemon logged it (10 s at most)
	i=0
	until grep -Eq "$1" "$TMP/serve.log"; do
		i=$((i + 1))
		[ $i -lt 100 ] || { cat "$TMP/serve.log"; fail "daemon never logged /$1/"; }
		kill -0 $pid 2>/dev/null || { cat "$TMP/serve.log"; fail "daemon died"; }
		sleep 0.1
	done
}
wait_log 'intake: 40 messages'
"$CTL" --config "$TMP/c.json" series list --json >"$TMP/before.json" 2>/dev/null || fail "series list"
before=$(jq length "$TMP/before.json")
[ "$before" -gt 0 ] || fail "no series after the first pass"

# More mail arrives: a later archive of the same generator, appended.
python3 tests/intake/gen-archive.py "$TMP/more" 80 >/dev/null || fail "gen-archive failed"
git -C "$TMP/archive/git/0.git" fetch -q "$TMP/more/git/0.git" master:master ||
	fail "could not extend the archive"
# (the same generator and seed: the first 40 commits are the same ones)
i=0
while :; do
	"$CTL" --config "$TMP/c.json" series list --json >"$TMP/after.json" 2>/dev/null || fail "series list"
	[ "$(jq length "$TMP/after.json")" -gt "$before" ] && break
	i=$((i + 1))
	[ $i -lt 100 ] || fail "new mail never became series"
	sleep 0.1
done
kill -TERM $pid
wait $pid
rc=$?
cleanup_hooks=""
[ $rc -eq 0 ] || { cat "$TMP/serve.log"; fail "daemon exited $rc on SIGTERM"; }
expect_grep 'stopping on signal 15' "$TMP/serve.log"
expect_rc 0 "$CTL" --config "$TMP/c.json" db check
