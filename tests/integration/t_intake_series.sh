# Intake and series assembly from an mbox of real `git format-patch` mails
# (tests/intake/make-corpus.sh): versions and supersession, a single patch,
# RFC, a stable tag, a patch arriving last, a series never completed,
# recheck requests (and a quoted one that must not count), a test report,
# Depends-on and base-commit, an unescaped From_ line, broken mails, a
# 10 MB mail; then the same mbox again changes nothing.
. "$PG_TOP/tests/integration/lib.sh"

sh tests/intake/make-corpus.sh "$TMP/corpus"
corpus_mbox "$TMP/corpus" "$TMP/corpus.mbox"
write_config "$TMP/c.json" '"intake": { "stale_after_s": 86400 }'
C="$CTL --config $TMP/c.json"

expect_rc 0 $C ingest --mbox "$TMP/corpus.mbox"
cp "$TMP/out" "$TMP/first"
expect_grep '^messages read: +31$' "$TMP/first"
expect_grep '^  accepted: +29$' "$TMP/first"
expect_grep '^  rejected: +2$' "$TMP/first"
expect_grep '^patches: +22$' "$TMP/first"
expect_grep '^cover letters: +2$' "$TMP/first"
expect_grep '^recheck requests: +1$' "$TMP/first"
expect_grep '^test reports: +1 \(ignored\)$' "$TMP/first"
expect_grep '^series created: +15$' "$TMP/first"
expect_grep '^series completed: +14$' "$TMP/first"
expect_grep '^series superseded: +3$' "$TMP/first"
expect_grep '^series stale: +1 ' "$TMP/first"
expect_grep '^rejected: 1 x no Message-ID header$' "$TMP/first"
expect_grep '^rejected: 1 x no header section$' "$TMP/first"

expect_rc 0 $C series list --json
cp "$TMP/out" "$TMP/list.json"
jq_is "$TMP/list.json" 'length' 15
by_title() { jq -r "[.[] | select(.title == \"$1\")] | $2" "$TMP/list.json"; }
[ "$(by_title 'mempool: speed up bulk get' 'map(.version|tostring) | join(",")')" = "1,2" ] ||
	fail "expected v1 and v2 of the mempool series"
v1=$(by_title 'mempool: speed up bulk get' '.[0].id')
v2=$(by_title 'mempool: speed up bulk get' '.[1].id')
jq_is "$TMP/list.json" ".[] | select(.id == $v1) | .state" superseded
jq_is "$TMP/list.json" ".[] | select(.id == $v1) | .superseded_by" "$v2"
jq_is "$TMP/list.json" ".[] | select(.id == $v2) | .state" complete
jq_is "$TMP/list.json" ".[] | select(.id == $v2) | .supersedes" "$v1"
jq_is "$TMP/list.json" ".[] | select(.id == $v2) | .cover_msgid | test(\"^cover\\\\.\")" true
# v2 was sent as `git send-email --in-reply-to` threads it: its cover
# answers the v1 cover, its patches carry the whole chain.
v1cover=$(sed -n 's/^Message-I[dD]: <\(.*\)>/\1/p' "$TMP/corpus/01-v1-cover.eml")
v2cover=$(sed -n 's/^Message-I[dD]: <\(.*\)>/\1/p' "$TMP/corpus/05-v2-cover.eml")
[ "$v1cover" != "$v2cover" ] || fail "v1 and v2 covers share a Message-ID"
grep -qx "In-Reply-To: <$v1cover>" "$TMP/corpus/05-v2-cover.eml" || fail "v2 cover not threaded onto v1"
sed -n '/^References:/,/^[^ 	]*:/p' "$TMP/corpus/06-v2-1.eml" | grep -q "<$v1cover>" &&
	sed -n '/^References:/,/^[^ 	]*:/p' "$TMP/corpus/06-v2-1.eml" | grep -q "<$v2cover>" ||
	fail "v2 patch References lack the chain"
# Either rule supersedes alone: a renamed v2 sent in reply to v1 (thread),
# and a v2 of the same title in a thread of its own (title).
thr1=$(by_title 'eal: check lcore id' '.[0].id')
thr2=$(by_title 'eal: reject lcore ids beyond the maximum' '.[0].id')
jq_is "$TMP/list.json" ".[] | select(.id == $thr1) | .state" superseded
jq_is "$TMP/list.json" ".[] | select(.id == $thr1) | .superseded_by" "$thr2"
jq_is "$TMP/list.json" ".[] | select(.id == $thr2) | .state" complete
[ "$(by_title 'ethdev: fix link status' 'map(.version|tostring) | join(",")')" = "1,2" ] ||
	fail "expected v1 and v2 of the ethdev patch"
ttl1=$(by_title 'ethdev: fix link status' '.[0].id')
ttl2=$(by_title 'ethdev: fix link status' '.[1].id')
jq_is "$TMP/list.json" ".[] | select(.id == $ttl1) | .state" superseded
jq_is "$TMP/list.json" ".[] | select(.id == $ttl1) | .superseded_by" "$ttl2"
jq_is "$TMP/list.json" "[.[] | select(.id == $ttl1 or .id == $ttl2) | .root_msgid] | unique | length" 2
[ "$(by_title 'net/null: fix tx burst' '.[0].total')" = 1 ] || fail "single patch is not a series of one"
[ "$(by_title 'mempool: rework cache' '.[0].rfc')" = true ] || fail "RFC not flagged"
[ "$(by_title 'mempool: rework cache' '.[0].state')" = complete ] || fail "RFC pair incomplete"
[ "$(by_title 'mempool: fix stats' '.[0].tags')" = 22.11 ] || fail "stable tag lost"
[ "$(by_title 'ring: one' '.[0].state')" = complete ] || fail "patch 2 arriving last did not complete"
[ "$(by_title 'ring: one' '.[0].received')" = 3 ] || fail "out-of-order series lacks patches"
[ "$(by_title 'hash: first of three' '.[0].state')" = incomplete ] || fail "partial series"
[ "$(by_title 'hash: first of three' '.[0].stale')" = true ] || fail "old partial series not stale"
[ "$(by_title 'mempool: explain' '.[0].received')" = 1 ] || fail "From_ line in a body split the mail"

# The filters of series list.
expect_rc 0 $C series list --state stale
[ "$(grep -c 'hash: first of three' "$TMP/out")" = 1 ] || fail "--state stale"
expect_rc 0 $C series list --state superseded --json
jq_is "$TMP/out" 'length' 3
expect_rc 2 $C series list --state bogus

# series show: dependencies, base-commit, the recheck request.
dep=$(by_title 'mempool: use the new helper' '.[0].id')
expect_rc 0 $C series show "$dep" --json
jq_is "$TMP/out" '.depends_on[0].kind + " " + .depends_on[0].ref' "series 100"
jq_is "$TMP/out" '.depends_on[0].series' null
jq_is "$TMP/out" '.patches[0].base_commit | length' 40
# No cover letter: the series' base-commit is the one its patch carries.
jq_is "$TMP/out" '.base_commit == .patches[0].base_commit' true
jq_is "$TMP/out" '.patches[0].files' lib/mempool/rte_mempool.c
expect_rc 0 $C series show "$dep"
expect_grep '^  base-commit: [0-9a-f]{40}$' "$TMP/out"
expect_rc 0 $C series show "$v2" --json
jq_is "$TMP/out" '.rechecks | length' 1
jq_is "$TMP/out" '.rechecks[0].contexts' perfgate-demo-Performance
jq_is "$TMP/out" '.rechecks[0].requester' bob@example.org
jq_is "$TMP/out" '.patches | map(.number) | join(",")' "1,2,3"
expect_rc 0 $C series show "$v2"
expect_grep '^  supersedes:  series '"$v1"'$' "$TMP/out"
expect_grep '^  recheck:     perfgate-demo-Performance \(mail, by bob@example.org, pending\)$' "$TMP/out"
expect_rc 1 $C series show 9999
expect_grep 'no series 9999' "$TMP/out"
expect_rc 2 $C series show abc

# The same mbox again: everything is a duplicate, nothing changes.
expect_rc 0 $C ingest --mbox "$TMP/corpus.mbox"
expect_grep '^  duplicates: +31$' "$TMP/out"
expect_grep '^series created: +0$' "$TMP/out"
expect_rc 0 $C series list --json
diff "$TMP/list.json" "$TMP/out" >/dev/null || fail "a second ingest changed the series"

# The same path rewritten with another mail (a script reusing one file):
# the new mail is taken, not dropped as the old file's first message.
cp "$TMP/corpus.mbox" "$TMP/corpus.keep"
corpus_dir="$TMP/onedir"
mkdir -p "$corpus_dir"
sed -e 's/^Message-I[dD]: <\(.*\)>/Message-ID: <rewritten.\1>/' \
	-e 's/^Subject: \(.*\)/Subject: \1 (rewritten)/' "$TMP/corpus/09-single.eml" >"$corpus_dir/01.eml"
corpus_mbox "$corpus_dir" "$TMP/corpus.mbox"
expect_rc 0 $C ingest --mbox "$TMP/corpus.mbox"
expect_grep '^  accepted: +1$' "$TMP/out"
expect_grep '^series created: +1$' "$TMP/out"
expect_rc 0 $C ingest --mbox "$TMP/corpus.mbox"
expect_grep '^  duplicates: +1$' "$TMP/out"
mv "$TMP/corpus.keep" "$TMP/corpus.mbox"

# A 10 MB mail: taken whole under the default bound, rejected over a
# smaller configured one, and never a crash.
{
	sed -n '1,/^---$/p' "$TMP/corpus/09-single.eml" | sed 's/^Message-I[dD]: <\(.*\)>/Message-ID: <big.\1>/'
	echo "diff --git a/big.txt b/big.txt"
	echo "new file mode 100644"
	echo "--- /dev/null"
	echo "+++ b/big.txt"
	echo "@@ -0,0 +1,160000 @@"
	yes '+0123456789012345678901234567890123456789012345678901234567890' | head -n 160000
} >"$TMP/big.eml"
[ "$(wc -c <"$TMP/big.eml")" -gt 10000000 ] || fail "big mail is not over 10 MB"
corpus_dir="$TMP/bigdir"
mkdir -p "$corpus_dir" && cp "$TMP/big.eml" "$corpus_dir/01-big.eml"
corpus_mbox "$corpus_dir" "$TMP/big.mbox"
expect_rc 0 $C ingest --mbox "$TMP/big.mbox"
expect_grep '^  accepted: +1$' "$TMP/out"
expect_grep '^series created: +1$' "$TMP/out"
write_config "$TMP/small.json" '"intake": { "max_message_bytes": 8388608 }'
sed -i "s|$TMP/state|$TMP/state2|g" "$TMP/small.json"
expect_rc 0 "$CTL" --config "$TMP/small.json" ingest --mbox "$TMP/big.mbox"
expect_grep '^  rejected: +1$' "$TMP/out"
expect_grep '^rejected: 1 x mail larger than 8388608 bytes$' "$TMP/out"

# Bad command lines.
expect_rc 2 $C ingest --bogus
expect_rc 1 $C ingest --mbox "$TMP/missing.mbox"
expect_grep "missing.mbox': No such file or directory" "$TMP/out"
expect_rc 1 $C ingest --source nope
expect_grep "no source named 'nope'" "$TMP/out"
expect_rc 1 $C ingest
expect_grep "no sources configured" "$TMP/out"
