# From mails to jobs: the corpus of real format-patch mails is ingested,
# then `plan` turns every complete, current series into a run on the
# demo tree (a real git repository here, mirrored with libgit2) with one
# job per build mode of the demo context, a job spec that says everything
# an agent needs, and a pending check in the outbox; a second pass plans
# nothing; a recheck request older than the first run is answered by it, a
# later one becomes a recheck run; superseded and incomplete series get
# nothing.
. "$PG_TOP/tests/integration/lib.sh"

# The tree: a git repository shaped like DPDK 22.11 at the top.
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
git init -q -b main "$TMP/dpdk"
printf '22.11.0\n' >"$TMP/dpdk/VERSION"
mkdir -p "$TMP/dpdk/lib/mempool"
printf 'int mempool;\n' >"$TMP/dpdk/lib/mempool/rte_mempool.c"
git -C "$TMP/dpdk" add . && git -C "$TMP/dpdk" commit -q -m "version 22.11"
tip=$(git -C "$TMP/dpdk" rev-parse HEAD)

mkdir -p "$TMP/profiles"
jq --arg url "$TMP/dpdk" '.trees["dpdk-demo"].url = $url' profiles/demo.json \
	>"$TMP/profiles/demo.json"
cat >"$TMP/c.json" <<EOF
{ "db": "$TMP/state/perfgate.db", "data_dir": "$TMP/state",
  "profiles_dir": "$TMP/profiles", "intake": { "stale_after_s": 86400 } }
EOF
C="$CTL --config $TMP/c.json"
sh tests/intake/make-corpus.sh "$TMP/corpus"
corpus_mbox "$TMP/corpus" "$TMP/corpus.mbox"
expect_rc 0 $C ingest --mbox "$TMP/corpus.mbox"

expect_rc 0 $C plan
cp "$TMP/out" "$TMP/plan1"
db="$TMP/state/perfgate.db"
complete=$(sqlite3 "$db" "SELECT count(*) FROM series WHERE state = 'complete'")
[ "$complete" -ge 5 ] || fail "only $complete complete series"
# The series with "Depends-on: series-100" waits for a series never seen
# (up to the planner's dependency timeout); every other complete one runs.
expect_grep ' waiting=1 ' "$TMP/plan1"
[ "$(sqlite3 "$db" "SELECT count(*) FROM runs r JOIN series s ON s.id = r.series_id
	WHERE s.title = 'mempool: use the new helper'")" = 0 ] || fail "planned before its dependency"
runs=$(sqlite3 "$db" "SELECT count(*) FROM runs WHERE reason = 'new'")
[ "$runs" = $((complete - 1)) ] || fail "$runs runs for $complete complete series"
all=$(sqlite3 "$db" "SELECT count(*) FROM runs")
[ "$(sqlite3 "$db" "SELECT count(*) FROM runs r JOIN series s ON s.id = r.series_id
	WHERE s.state <> 'complete'")" = 0 ] || fail "a superseded or incomplete series got a run"
[ "$(sqlite3 "$db" "SELECT count(*) FROM jobs")" = $((all * 2)) ] ||
	fail "expected one job per build mode of the demo context"
[ "$(sqlite3 "$db" "SELECT count(DISTINCT base_commit) FROM runs")" = 1 ] || fail "base commits differ"
[ "$(sqlite3 "$db" "SELECT base_commit FROM runs LIMIT 1")" = "$tip" ] ||
	fail "the base is not the branch tip (the corpus' base-commit is not in this tree)"

# The spec of one job says everything the agent needs.
sqlite3 "$db" "SELECT spec FROM jobs ORDER BY id LIMIT 1" >"$TMP/spec.json"
jq_is "$TMP/spec.json" '.tree.url' "$TMP/dpdk"
jq_is "$TMP/spec.json" '.tree.branch' main
jq_is "$TMP/spec.json" '.tree.base_commit' "$tip"
jq_is "$TMP/spec.json" '.tree.version | startswith("22.11")' true
jq_is "$TMP/spec.json" '.context' perfgate-demo-Performance
jq_is "$TMP/spec.json" '.series.mbox_url | test("/api/v1/series/[0-9]+/mbox$")' true
jq_is "$TMP/spec.json" '.build.buildtype | test("^(release|debugoptimized)$")' true
jq_is "$TMP/spec.json" '.build.meson_options.enable_apps' test-pmd
jq_is "$TMP/spec.json" '.host.hugepages' false
jq_is "$TMP/spec.json" '.benchmarks | length > 0' true
jq_is "$TMP/spec.json" '.repetitions' 3

# A pending check per run on its last patch.
[ "$(sqlite3 "$db" "SELECT count(*) FROM check_outbox WHERE state = 'pending'")" = "$all" ] ||
	fail "expected one pending check per run"

# A second pass plans nothing new.
expect_rc 0 $C plan
[ "$(sqlite3 "$db" "SELECT count(*) FROM runs")" = "$all" ] || fail "a second pass planned again"

# The recheck request of the corpus (on the v2 series) came before the
# series' first run, which answers it: no recheck run, and no patch with two
# pending checks of one context.
[ "$(sqlite3 "$db" "SELECT count(*) FROM runs WHERE reason = 'recheck'")" = 0 ] ||
	{ sqlite3 "$db" "SELECT * FROM recheck_requests"; fail "a recheck run for an old request"; }
[ "$(sqlite3 "$db" "SELECT state || ':' || reason FROM recheck_requests")" = \
	"planned:answered by the series' first run (run $(sqlite3 "$db" "SELECT r.id FROM runs r
	JOIN recheck_requests q ON q.series_id = r.series_id"))" ] || fail "recheck not answered"
[ "$(sqlite3 "$db" "SELECT count(*) FROM (SELECT 1 FROM check_outbox WHERE state = 'pending'
	GROUP BY patch_id, context HAVING count(*) > 1)")" = 0 ] || fail "two pending checks of one context"
# A request after the first run gets a recheck run.
sed -e 's/^Message-I[dD]: <recheck\.1@/Message-ID: <recheck.2@/' -e 's/^From recheck\.1@/From recheck.2@/' \
	"$TMP/corpus/17-recheck.eml" >"$TMP/again.eml"
mkdir -p "$TMP/again" && mv "$TMP/again.eml" "$TMP/again/01.eml"
corpus_mbox "$TMP/again" "$TMP/again.mbox"
expect_rc 0 $C ingest --mbox "$TMP/again.mbox"
expect_grep '^recheck requests: +1$' "$TMP/out"
expect_rc 0 $C plan
expect_grep ' rechecks_planned=1 ' "$TMP/out"
[ "$(sqlite3 "$db" "SELECT count(*) FROM runs WHERE reason = 'recheck'")" = 1 ] || fail "no recheck run"

# A tree that cannot be reached: the series waits, counted, and the pass fails.
jq '.trees["dpdk-demo"].url = "/nonexistent/dpdk.git"' profiles/demo.json >"$TMP/profiles/demo.json"
sed -i "s|$TMP/state|$TMP/state2|g" "$TMP/c.json"
expect_rc 0 $C ingest --mbox "$TMP/corpus.mbox"
expect_rc 1 $C plan
[ "$(sqlite3 "$TMP/state2/perfgate.db" "SELECT count(*) FROM runs")" = 0 ] || fail "planned without a tree"
