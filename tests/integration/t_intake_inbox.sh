# Intake from real public-inbox archives made with Debian's public-inbox
# tools: a v2 inbox read in two passes (the second sees only what was
# delivered since), the same inbox fetched over HTTP from
# public-inbox-httpd on loopback, a purge that rewrites history (rescan,
# nothing duplicated), and a v1 inbox.  Grouping must equal what the same
# mails give from an mbox.
. "$PG_TOP/tests/integration/lib.sh"

command -v public-inbox-mda >/dev/null || fail "public-inbox is not installed (make deps)"
MI="sh $PG_TOP/tests/inbox/make-inbox.sh"
W="$TMP/pi"
mkdir -p "$W"
sh tests/intake/make-corpus.sh "$TMP/corpus"
first=$(ls "$TMP"/corpus/*.eml | head -n 16)
rest=$(ls "$TMP"/corpus/*.eml | tail -n +17)

$MI init "$W" dev v2 >/dev/null 2>&1 || fail "public-inbox-init failed"
# shellcheck disable=SC2086
$MI deliver "$W" dev $first >/dev/null 2>&1 || fail "delivery failed"
write_config "$TMP/c.json" '"intake": { "stale_after_s": 86400, "batch": 4 }'
C="$CTL --config $TMP/c.json"

expect_rc 0 $C ingest --inbox "$W/dev"
expect_grep '^messages read: +16$' "$TMP/out"
expect_grep '^series completed: +6$' "$TMP/out"
# shellcheck disable=SC2086
$MI deliver "$W" dev $rest >/dev/null 2>&1 || fail "second delivery failed"
expect_rc 0 $C ingest --inbox "$W/dev"
expect_grep '^messages read: +15$' "$TMP/out"
expect_grep '^  duplicates: +0$' "$TMP/out"
expect_grep '^recheck requests: +1$' "$TMP/out"
expect_rc 0 $C ingest --inbox "$W/dev"
expect_grep '^messages read: +0$' "$TMP/out"
expect_rc 0 $C series list --json
cp "$TMP/out" "$TMP/local.json"
jq_is "$TMP/local.json" '[.[] | select(.state == "superseded")] | length' 3
jq_is "$TMP/local.json" '[.[] | select(.title == "ring: one")][0].received' 3
expect_rc 0 $C db check

# The same series from an mbox of the same mails (public-inbox keeps the
# mails it accepts as they are; it adds a Message-ID where one is missing,
# so compare the series of well-formed mails only).
corpus_mbox "$TMP/corpus" "$TMP/corpus.mbox"
write_config "$TMP/m.json"
sed -i "s|$TMP/state|$TMP/mstate|g" "$TMP/m.json"
expect_rc 0 "$CTL" --config "$TMP/m.json" ingest --mbox "$TMP/corpus.mbox"
expect_rc 0 "$CTL" --config "$TMP/m.json" series list --json
shape='[.[] | select(.submitter == "ada@example.org") | [.title, .version, .state, .received, .total]]'
jq -c "$shape" "$TMP/out" >"$TMP/shape.mbox"
jq -c "$shape" "$TMP/local.json" >"$TMP/shape.inbox"
diff "$TMP/shape.mbox" "$TMP/shape.inbox" || fail "archive and mbox grouped differently"

# Remote: public-inbox-httpd on loopback, mirrored with libgit2.
$MI serve "$W" "$TMP/httpd.log" >/dev/null 2>&1 &
httpd=$!
stop_httpd() { kill "$httpd" 2>/dev/null; wait "$httpd" 2>/dev/null; }
cleanup_hooks="stop_httpd"
i=0
until grep -q '^# bound http' "$TMP/httpd.log" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "public-inbox-httpd did not start"
	sleep 0.1
done
url=$(sed -n 's/^# bound \(http[^ ]*\).*/\1/p' "$TMP/httpd.log" | head -n 1)/dev
write_config "$TMP/r.json" "\"sources\": [ { \"name\": \"dev-remote\", \"type\": \"public-inbox\", \"url\": \"$url\" } ], \"intake\": { \"stale_after_s\": 86400 }"
sed -i "s|$TMP/state|$TMP/rstate|g" "$TMP/r.json"
expect_rc 0 "$CTL" --config "$TMP/r.json" ingest
expect_grep '^messages read: +31$' "$TMP/out"
[ -d "$TMP/rstate/mirrors/dev-remote/git/0.git" ] || fail "no mirror of the remote epoch"
expect_rc 0 "$CTL" --config "$TMP/r.json" series list --json
jq -c "$shape" "$TMP/out" >"$TMP/shape.remote"
diff "$TMP/shape.remote" "$TMP/shape.inbox" || fail "remote grouping differs"
# A new mail upstream: the next fetch brings only it.
$MI mails "$TMP/extra" >/dev/null 2>&1 || fail "make-inbox.sh mails failed"
$MI deliver "$W" dev "$TMP/extra/05-single.eml" >/dev/null 2>&1 || fail "delivery failed"
expect_rc 0 "$CTL" --config "$TMP/r.json" ingest
expect_grep '^messages read: +1$' "$TMP/out"
stop_httpd
cleanup_hooks=""

# A purge rewrites history: the reader rescans the epoch, the store keeps
# one copy of each message, and nothing new is assembled twice.
expect_rc 0 $C ingest --inbox "$W/dev"
expect_grep '^messages read: +1$' "$TMP/out"
$MI purge "$W" "$TMP/corpus/09-single.eml" >/dev/null 2>&1 || fail "public-inbox-purge failed"
expect_rc 0 $C ingest --inbox "$W/dev"
expect_grep 'rewritten \(purge\): rescanned' "$TMP/out"
expect_grep '^series created: +0$' "$TMP/out"
expect_grep '^  accepted: +0$' "$TMP/out"
expect_rc 0 $C series list --json
jq_is "$TMP/out" 'length' "$(($(jq length "$TMP/local.json") + 1))"

# v1 inbox
$MI init "$W" old v1 >/dev/null 2>&1 || fail "public-inbox-init -V1 failed"
# shellcheck disable=SC2086
$MI deliver "$W" old $first >/dev/null 2>&1 || fail "v1 delivery failed"
write_config "$TMP/v1.json"
sed -i "s|$TMP/state|$TMP/v1state|g" "$TMP/v1.json"
expect_rc 0 "$CTL" --config "$TMP/v1.json" ingest --inbox "$W/old"
expect_grep '^messages read: +16$' "$TMP/out"
expect_grep '^series completed: +6$' "$TMP/out"

# A missing archive is a clear, failed pass.
expect_rc 1 $C ingest --inbox "$TMP/nowhere"
expect_grep "nowhere" "$TMP/out"
