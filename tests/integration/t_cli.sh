# The command lines of both daemons: help, version, usage errors, and the
# controller's serve loop starting, migrating its store and stopping on
# SIGTERM.
. "$PG_TOP/tests/integration/lib.sh"

for bin in "$CTL" "$AGENT"; do
	name=$(basename "$bin")
	expect_rc 0 "$bin" --help
	expect_grep "^usage: $name " "$TMP/out"
	expect_grep "--check-config" "$TMP/out"
	expect_rc 0 "$bin" --version
	expect_grep "^$name [0-9]+\.[0-9]+\.[0-9]+$" "$TMP/out"
	expect_rc 2 "$bin" --no-such-option
	expect_grep "^usage: $name " "$TMP/out"
done
expect_rc 2 "$CTL" --config etc/controller.json frobnicate
expect_grep "unknown command 'frobnicate'" "$TMP/out"
expect_rc 2 "$CTL" --config etc/controller.json db
expect_grep "usage: perfgate-controller \[--db FILE\] db check\|migrate" "$TMP/out"
expect_rc 2 "$AGENT" --config etc/agent.json extra
expect_grep "unexpected argument 'extra'" "$TMP/out"
expect_rc 2 "$CTL" --config etc/controller.json --log-level loud --check-config
expect_grep "'loud' is not LEVEL" "$TMP/out"
expect_rc 1 "$CTL" --config "$TMP/missing.json" --check-config
expect_grep "missing.json': No such file or directory" "$TMP/out"

# serve: opens (creating) the store given by --db, logs that it is ready,
# and exits 0 on SIGTERM.
"$CTL" --config etc/controller.json --db "$TMP/state/serve.db" serve >"$TMP/serve.log" 2>&1 &
pid=$!
i=0
until grep -q "ready: store" "$TMP/serve.log"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { cat "$TMP/serve.log"; kill -9 $pid; fail "serve did not get ready"; }
	kill -0 $pid 2>/dev/null || { cat "$TMP/serve.log"; fail "serve exited early"; }
	sleep 0.1
done
expect_grep "ready: store $TMP/state/serve.db \(schema [0-9]+\), [0-9]+ contexts" "$TMP/serve.log"
kill -TERM $pid
wait $pid
rc=$?
[ "$rc" -eq 0 ] || { cat "$TMP/serve.log"; fail "serve exited $rc on SIGTERM"; }
expect_grep "stopping on signal 15" "$TMP/serve.log"
expect_rc 0 "$CTL" --config etc/controller.json --db "$TMP/state/serve.db" db check
expect_grep "ok" "$TMP/out"

# db check never creates a store; db migrate does, with its directory.
expect_rc 1 "$CTL" --config etc/controller.json --db "$TMP/none/x.db" db check
expect_grep "x.db: No such file or directory" "$TMP/out"
[ ! -e "$TMP/none/x.db" ] || fail "db check created a store"
expect_rc 0 "$CTL" --config etc/controller.json --db "$TMP/new/dir/x.db" db migrate
expect_grep "schema version [0-9]+" "$TMP/out"
expect_rc 0 "$CTL" --config etc/controller.json --db "$TMP/new/dir/x.db" db check
expect_grep "^status=ok$" "$TMP/out"
