# The public-inbox reader against real archives served over HTTP on
# loopback by public-inbox-httpd: mirror a v2 inbox with libgit2 and walk
# it, fetch again after more mail and see only the new messages, survive a
# purge (history rewritten: rescan, the purged message gone), follow a new
# epoch, mirror a v1 inbox, and fail clearly on a missing inbox and a dead
# server.  Archives are made at test time by tests/inbox/make-inbox.sh.
. "$PG_TOP/tests/integration/lib.sh"

IT="$PG_BUILD/tests/tools/inbox-tool"
MK="$PG_TOP/tests/inbox/make-inbox.sh"
[ -x "$IT" ] || fail "$IT is not built (make $IT)"
command -v public-inbox-httpd >/dev/null 2>&1 ||
	fail "public-inbox is not installed (apt-get install public-inbox, or make deps)"

pi="$TMP/pi"
mails="$TMP/mails"
mkdir -p "$pi"
sh "$MK" mails "$mails" >/dev/null || fail "making the mails"
id() { cat "$mails/$1.id"; }

sh "$MK" init "$pi" dev v2 >/dev/null || fail "init dev"
sh "$MK" init "$pi" old v1 >/dev/null || fail "init old"
sh "$MK" deliver "$pi" dev "$mails/01-cover.eml" "$mails/02-patch1.eml" \
	"$mails/03-patch2.eml" "$mails/04-patch3.eml" || fail "deliver to dev"
sh "$MK" deliver "$pi" old "$mails/01-cover.eml" "$mails/02-patch1.eml" || fail "deliver to old"

# public-inbox-httpd on a port the kernel picks (it prints it).
httpd=""
stop_httpd() {
	[ -n "$httpd" ] || return 0
	kill "$httpd" 2>/dev/null
	tries=0
	while kill -0 "$httpd" 2>/dev/null && [ "$tries" -lt 50 ]; do
		sleep 0.1
		tries=$((tries + 1))
	done
	kill -9 "$httpd" 2>/dev/null
	wait "$httpd" 2>/dev/null
	httpd=""
	return 0
}
cleanup_hooks="$cleanup_hooks stop_httpd"
sh "$MK" serve "$pi" "$TMP/httpd.log" &
httpd=$!
port=""
tries=0
while [ -z "$port" ]; do
	port=$(sed -n '1s|^# bound http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' "$TMP/httpd.log" 2>/dev/null)
	[ -n "$port" ] && break
	kill -0 "$httpd" 2>/dev/null || { cat "$TMP/httpd.log" >&2; fail "public-inbox-httpd died"; }
	tries=$((tries + 1))
	[ "$tries" -le 100 ] || { cat "$TMP/httpd.log" >&2; fail "public-inbox-httpd did not start"; }
	sleep 0.1
done
base="http://127.0.0.1:$port"

# walk OUT SOURCE MIRROR [CURSOR...]: run the tool, keep stdout in OUT and
# stderr in OUT.err, and the cursors to resume from in $cursors.
walk() {
	out=$1
	shift
	"$IT" walk -t 20000 "$@" >"$out" 2>"$out.err" || {
		cat "$out" "$out.err" >&2
		fail "inbox-tool walk $* failed"
	}
	cursors=$(sed -n 's/^cursor //p' "$out")
}

# expect_ids OUT NAME...: the message lines of OUT carry exactly these
# mails' Message-IDs, in this order.
expect_ids() {
	out=$1
	shift
	: >"$out.want"
	for n in "$@"; do id "$n" >>"$out.want"; done
	awk '$3 == "message" { print $4 }' "$out" >"$out.got"
	cmp -s "$out.want" "$out.got" || {
		echo "want:" >&2; cat "$out.want" >&2
		echo "got:" >&2; cat "$out" >&2
		fail "$out: wrong messages"
	}
}

# 1. First fetch into an empty mirror: v2 found, every message, oldest
#    first, with fetch progress in the log.
walk "$TMP/w1" "$base/dev/" "$TMP/mirror"
expect_ids "$TMP/w1" 01-cover 02-patch1 03-patch2 04-patch3
expect_grep '^end count=4 rewrites=0 stopped=0$' "$TMP/w1"
expect_grep "info inbox: fetch $base/dev/git/0.git: refs/heads/master \(new\) -> [0-9a-f]{40}" "$TMP/w1.err"
expect_grep "info inbox: fetched $base/dev/git/0.git into $TMP/mirror/git/0.git: [0-9]+ objects" "$TMP/w1.err"
expect_grep '^0 [0-9a-f]{40} message <' "$TMP/w1"
[ -d "$TMP/mirror/git/0.git" ] || fail "no mirror of epoch 0"
[ ! -e "$TMP/mirror/git/1.git" ] || fail "a mirror of an epoch that does not exist"
c1=$cursors

# The mirror is itself a v2 layout: read in place, the same messages.
walk "$TMP/w1l" "$TMP/mirror" -
cmp -s "$TMP/w1" "$TMP/w1l" || { diff "$TMP/w1" "$TMP/w1l" >&2; fail "mirror read locally differs"; }

# 2. More mail: the next fetch brings only the new messages.
sh "$MK" deliver "$pi" dev "$mails/05-single.eml" "$mails/06-reply.eml" || fail "deliver more"
# shellcheck disable=SC2086  # one argument per cursor
walk "$TMP/w2" "$base/dev" "$TMP/mirror" $c1
expect_ids "$TMP/w2" 05-single 06-reply
expect_grep '^end count=2 rewrites=0 stopped=0$' "$TMP/w2"
c2=$cursors
# Nothing new: nothing walked, the fetch says so.
# shellcheck disable=SC2086
walk "$TMP/w2b" "$base/dev" "$TMP/mirror" $c2
expect_grep '^end count=0 rewrites=0 stopped=0$' "$TMP/w2b"
expect_grep 'already up to date' "$TMP/w2b.err"

# Batches: stop after 2, resume from the cursor printed.
walk "$TMP/b1" -n 2 "$base/dev" "$TMP/mirror"
expect_grep '^end count=2 rewrites=0 stopped=1$' "$TMP/b1"
# shellcheck disable=SC2086
walk "$TMP/b2" "$base/dev" "$TMP/mirror" $cursors
expect_ids "$TMP/b2" 03-patch2 04-patch3 05-single 06-reply

# 3. A purge on the server rewrites history: the forced fetch moves the
#    mirror, the old cursor is no longer an ancestor, the epoch is
#    rescanned (flagged), and the purged message is not in it.
sh "$MK" purge "$pi" "$mails/02-patch1.eml" >/dev/null 2>&1 || fail "purge"
# shellcheck disable=SC2086
walk "$TMP/w3" "$base/dev" "$TMP/mirror" $c2
expect_ids "$TMP/w3" 01-cover 03-patch2 04-patch3 05-single 06-reply
expect_grep '^end count=6 rewrites=1 stopped=0$' "$TMP/w3"
expect_grep '^0 [0-9a-f]{40} none - rescan$' "$TMP/w3"
[ "$(grep -c ' rescan$' "$TMP/w3")" -eq 6 ] || fail "not every rescanned commit is flagged"
expect_grep 'info inbox: fetch .*refs/heads/master .*\(forced: history rewritten upstream\)' "$TMP/w3.err"
expect_grep 'warn inbox: .*history was rewritten' "$TMP/w3.err"
! grep -qF "$(id 02-patch1)" "$TMP/w3" || fail "the purged message is still there"
c3=$cursors

# 4. A new epoch on the server (what public-inbox does at ~1 GB): found
#    by the next fetch and walked from its first commit.
sh "$MK" epoch "$pi" dev 1 || fail "new epoch"
sh "$MK" deliver "$pi" dev "$mails/07-single-v2.eml" "$mails/08-reply2.eml" || fail "deliver to epoch 1"
# shellcheck disable=SC2086
walk "$TMP/w4" "$base/dev" "$TMP/mirror" $c3
expect_ids "$TMP/w4" 07-single-v2 08-reply2
expect_grep '^end count=2 rewrites=0 stopped=0$' "$TMP/w4"
[ "$(awk '$1 == 1' "$TMP/w4" | wc -l)" -eq 2 ] || fail "the new messages are not in epoch 1"
expect_grep "found epoch 1" "$TMP/w4.err"
"$IT" epochs "$base/dev" "$TMP/mirror" >"$TMP/epochs" 2>"$TMP/epochs.err" || fail "epochs"
printf 'format v2\nepoch 0\nepoch 1\n' | cmp -s - "$TMP/epochs" || { cat "$TMP/epochs" >&2; fail "epochs"; }

# 5. A v1 inbox is the URL itself.
walk "$TMP/v1a" "$base/old" "$TMP/mirror-old"
expect_ids "$TMP/v1a" 01-cover 02-patch1
[ -d "$TMP/mirror-old/v1.git" ] || fail "no v1 mirror"
sh "$MK" deliver "$pi" old "$mails/03-patch2.eml" || fail "deliver to old"
# shellcheck disable=SC2086
walk "$TMP/v1b" "$base/old" "$TMP/mirror-old" $cursors
expect_ids "$TMP/v1b" 03-patch2
expect_grep '^end count=1 rewrites=0 stopped=0$' "$TMP/v1b"

# 6. Errors: no inbox at the URL, a bad cursor, a missing local path, a
#    dead server.
expect_rc 1 "$IT" walk "$base/nope" "$TMP/mirror-nope"
expect_grep 'not-found: inbox .*nope.*: no public-inbox archive: .*404' "$TMP/out"
expect_rc 1 "$IT" walk "$TMP/mirror" - 0:not-a-commit
expect_grep "invalid: .*cursor 'not-a-commit' is not a 40-hex-digit commit id" "$TMP/out"
expect_rc 1 "$IT" walk "$TMP/no/such/inbox" -
expect_grep 'not-found: open inbox .*No such file or directory' "$TMP/out"
stop_httpd
expect_rc 1 "$IT" walk "$base/dev" "$TMP/mirror"
expect_grep "io: inbox '$base/dev': fetch $base/dev/git/0.git: connect: " "$TMP/out"
# The mirror still reads without the server.
# shellcheck disable=SC2086
walk "$TMP/w6" "$TMP/mirror" - $c3
expect_ids "$TMP/w6" 07-single-v2 08-reply2
exit 0
