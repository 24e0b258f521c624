# The demo's patch mails (patches/samples/demo/, made by
# scripts/demo-series.sh against the DPDK 22.11 tree of
# scripts/dpdk-tree.sh), checked without building DPDK:
#  - the committed files are what the script makes, byte for byte, even
#    with a hostile git configuration and environment around it;
#  - each patch applies with `git am -3` and with perfgate's apply
#    (pg_apply) on a clone of the tree, the depends-on one only after the
#    harmless one, the does-not-apply one with neither (no 3-way fallback
#    either: its preimage blob is not in the tree), the build-break one
#    applies;
#  - the controller makes of the mbox files, delivered in order, the
#    series the demo expects: v1 superseded by v2, the Depends-on resolved
#    to the harmless series, the recheck request on it; `plan` makes one
#    run of two jobs (demo-release, demo-debugoptimized) per current
#    series, the recheck answered by the first run (a recheck run when the
#    request comes after that run is planned); the mboxes the API serves for the agents
#    apply (or not) as the mails do;
#  - the same mails delivered to a public-inbox archive give the same
#    series.
. "$PG_TOP/tests/integration/lib.sh"

D=$PG_TOP/patches/samples/demo
PG_APPLY=$PG_BUILD/tests/tools/pg_apply
[ -x "$PG_APPLY" ] || fail "pg_apply not built (make $PG_APPLY)"
command -v public-inbox-mda >/dev/null || fail "public-inbox is not installed (make deps)"
# The tree's cache, named here since the script runs below with another HOME.
if [ -z "${PG_CACHE:-}" ]; then
	if [ "$(id -u)" -eq 0 ]; then PG_CACHE=/var/cache/perfgate; else PG_CACHE=$HOME/.cache/perfgate; fi
fi
export PG_CACHE
tree=$(scripts/dpdk-tree.sh) || fail "could not make the DPDK tree"
base=$(git --git-dir="$tree" rev-parse main) || fail "no main in $tree"

FILES="01-harmless 02-slowdown 03-docs-v1 04-does-not-apply 05-build-break 06-depends-on 07-docs-v2 08-recheck"
ID_HARMLESS=20261102090000.2101-1-ines.moreau@example.org
ID_V1_COVER=20261103100000.2303-0-priya.raman@example.net
ID_V2_COVER=20261105100000.2707-0-priya.raman@example.net
ID_RECHECK=20261105160000.GA2808@lena.example.org
CTX=perfgate-demo-Performance

# ---- the files are what the script makes -----------------------------------
# A configuration and an environment that would change format-patch's
# output if they leaked in.
mkdir -p "$TMP/home"
cat >"$TMP/home/.gitconfig" <<'EOF'
[user]
	name = Leaked User
	email = leak@example.com
[core]
	abbrev = 7
[format]
	signature = leaked
	numbered = always
	thread = deep
	coverLetter = true
	suffix = .txt
	signOff = true
	headers = X-Leaked: yes
[diff]
	noprefix = true
	algorithm = patience
	context = 5
EOF
HOME=$TMP/home GIT_AUTHOR_NAME=Leak GIT_COMMITTER_DATE=2001-01-01T00:00:00Z TZ=Asia/Tokyo \
	scripts/demo-series.sh "$TMP/gen" >"$TMP/gen.out" 2>&1 || { cat "$TMP/gen.out"; fail "demo-series.sh failed"; }
diff -r "$D" "$TMP/gen" >"$TMP/gen.diff" ||
	{ head -n 40 "$TMP/gen.diff"; fail "patches/samples/demo is not what scripts/demo-series.sh makes (run it and commit)"; }
want=$(for f in $FILES; do echo "$f.mbox"; done; echo README.md; echo expected)
[ "$(ls "$D" | sort)" = "$(echo "$want" | sort)" ] || fail "patches/samples/demo holds other files: $(ls "$D")"
for f in $FILES; do
	[ "$f" = 08-recheck ] && continue
	grep -q "^base-commit: $base\$" "$D/$f.mbox" || fail "$f.mbox: no base-commit: $base"
done

# ---- git am -3 and pg_apply on clones of the tree ---------------------------
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null TZ=UTC LC_ALL=C
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
git clone -q "$tree" "$TMP/am" || fail "clone of $tree"
git clone -q "$tree" "$TMP/pg" || fail "clone of $tree"
fresh() {
	git -C "$1" am --abort >/dev/null 2>&1 || true
	git -C "$1" checkout -q -f --detach "$base"
	git -C "$1" clean -q -f -d -x
}
# am_applies N FILE...: git am -3 applies them all (cover letters dropped),
# N commits on the base.
am_applies() {
	n=$1
	shift
	fresh "$TMP/am"
	git -C "$TMP/am" am -q -3 --empty=drop "$@" >"$TMP/am.out" 2>&1 ||
		{ cat "$TMP/am.out"; fail "git am -3 refused $*"; }
	[ "$(git -C "$TMP/am" rev-list --count "$base..HEAD")" = "$n" ] || fail "git am -3 of $*: not $n commits"
}
# am_refuses FILE: neither git am nor git am -3 applies it.
am_refuses() {
	for three in "" -3; do
		fresh "$TMP/am"
		if git -C "$TMP/am" am -q $three "$1" >"$TMP/am.out" 2>&1; then
			fail "git am $three applied $1"
		fi
	done
}
# pg_applies N FILE...: perfgate's apply takes them, N patch lines.
pg_applies() {
	n=$1
	shift
	fresh "$TMP/pg"
	"$PG_APPLY" "$TMP/pg" "$@" >"$TMP/pg.out" 2>"$TMP/pg.err" ||
		{ cat "$TMP/pg.out" "$TMP/pg.err"; fail "pg_apply refused $*"; }
	[ "$(wc -l <"$TMP/pg.out")" = "$n" ] || { cat "$TMP/pg.out"; fail "pg_apply of $*: not $n patches"; }
}
pg_refuses() {
	fresh "$TMP/pg"
	expect_rc 1 "$PG_APPLY" "$TMP/pg" "$1"
	expect_grep ' 1/1 failed lib/mempool/rte_mempool.c 1 ' "$TMP/out"
}

# Before anything puts the harmless patch's blobs in a clone: the two that
# must not apply on the tree.
am_refuses "$D/06-depends-on.mbox"
pg_refuses "$D/06-depends-on.mbox"
expect_grep 'preimage blob [0-9a-f]+ is not in the repository' "$TMP/out"
am_refuses "$D/04-does-not-apply.mbox"
expect_grep 'sha1 information is lacking or useless' "$TMP/am.out"
pg_refuses "$D/04-does-not-apply.mbox"
expect_grep 'preimage blob [0-9a-f]+ is not in the repository' "$TMP/out"
blob=$(sed -n 's/^index \([0-9a-f]*\)\.\..*/\1/p' "$D/04-does-not-apply.mbox")
[ -n "$blob" ] || fail "04-does-not-apply.mbox has no index line"
git --git-dir="$tree" cat-file -e "$blob" 2>/dev/null && fail "the preimage blob $blob of 04 is in the tree"

for f in 01-harmless 02-slowdown 05-build-break; do
	am_applies 1 "$D/$f.mbox"
	pg_applies 1 "$D/$f.mbox"
done
for f in 03-docs-v1 07-docs-v2; do
	am_applies 2 "$D/$f.mbox"
	pg_applies 2 "$D/$f.mbox"
done
am_applies 2 "$D/01-harmless.mbox" "$D/06-depends-on.mbox"
pg_applies 2 "$D/01-harmless.mbox" "$D/06-depends-on.mbox"
# The build break is in code the demo builds compile (lib/mempool).
grep -q '^+.*CALC_CACHE_FLUSHTHRESH(cache_size)' "$D/05-build-break.mbox" || fail "05 lost its break"
jq -e '.build_modes["demo-release"].meson_options_by_version[0].options.disable_libs | split(",") | index("mempool") == null' \
	profiles/demo.json >/dev/null || fail "the demo builds do not compile lib/mempool"

# ---- intake from the mbox files, in order -----------------------------------
mkdir -p "$TMP/profiles"
jq --arg url "$tree" '.trees["dpdk-demo"].url = $url' profiles/demo.json >"$TMP/profiles/demo.json" ||
	fail "jq on the demo profile"
cat >"$TMP/c.json" <<EOF
{ "db": "$TMP/state/perfgate.db", "data_dir": "$TMP/state", "profiles_dir": "$TMP/profiles",
  "api": { "listen": "127.0.0.1:0" } }
EOF
C="$CTL --config $TMP/c.json"
db=$TMP/state/perfgate.db
expect_rc 0 $C db migrate
for f in $FILES; do
	expect_rc 0 $C ingest --mbox "$D/$f.mbox"
	expect_grep '^  rejected: +0$' "$TMP/out"
done
expect_rc 0 $C series list --json
cp "$TMP/out" "$TMP/list.json"
jq_is "$TMP/list.json" 'length' 7
jq_is "$TMP/list.json" '[.[] | [.id, .state, .version, .received, .total, .submitter] | join(" ")] | join(", ")' \
	"1 complete 1 1 1 ines.moreau@example.org, 2 complete 1 1 1 tomas.lindqvist@example.com, 3 superseded 1 2 2 priya.raman@example.net, 4 complete 1 1 1 kenji.watanabe@example.org, 5 complete 1 1 1 olga.petrenko@example.com, 6 complete 1 1 1 marco.bianchi@example.net, 7 complete 2 2 2 priya.raman@example.net"
for i in 1 2 3 4 5 6 7; do
	expect_rc 0 $C series show $i --json
	cp "$TMP/out" "$TMP/show$i.json"
	# The cover letter's base-commit:, else the patch's (as the planner takes it).
	jq_is "$TMP/show$i.json" '.base_commit // .patches[0].base_commit' "$base"
done
# v2 supersedes v1: same submitter and title, and threaded on v1's cover.
jq_is "$TMP/show3.json" '.superseded_by' 7
jq_is "$TMP/show7.json" '.supersedes' 3
jq_is "$TMP/show3.json" '.title' "$(jq -r .title "$TMP/show7.json")"
jq_is "$TMP/show3.json" '.cover_msgid' "$ID_V1_COVER"
jq_is "$TMP/show7.json" '.cover_msgid' "$ID_V2_COVER"
grep -q "^In-Reply-To: <$ID_V1_COVER>" "$D/07-docs-v2.mbox" || fail "v2's cover is not In-Reply-To v1's"
jq_is "$TMP/show7.json" '.base_commit' "$base"
# The dependency, by Message-ID, resolved to the harmless series.
jq_is "$TMP/show6.json" '.depends_on | map([.kind, .ref, .series | tostring] | join(" ")) | join(",")' \
	"msgid $ID_HARMLESS 1"
jq_is "$TMP/show1.json" '.patches[0].msgid' "$ID_HARMLESS"
# The recheck request, on the harmless series.
jq_is "$TMP/show1.json" '.rechecks | map([.origin, .msgid, .contexts, .state] | join(" ")) | join(",")' \
	"mail $ID_RECHECK $CTX pending"
for i in 2 3 4 5 6 7; do jq_is "$TMP/show$i.json" '.rechecks | length' 0; done

# ---- plan ---------------------------------------------------------------------
# Every mail at once: the recheck request is older than series 1's first
# run, which answers it (no second run, no second pending check).
expect_rc 0 $C plan
expect_grep 'series=6 runs=6 jobs=12 .*rechecks_planned=0 .*errors=0' "$TMP/out"
runs=$(sqlite3 "$db" "SELECT group_concat(series_id || ':' || reason, ' ') FROM (SELECT series_id, reason FROM runs ORDER BY series_id, reason)")
[ "$runs" = "1:new 2:new 4:new 5:new 6:new 7:new" ] || fail "runs: $runs"
# Each run: two jobs, one per build mode of the demo context.
two=$(sqlite3 "$db" "SELECT count(*) FROM runs r WHERE (SELECT count(*) FROM jobs WHERE run_id = r.id) = 2
	AND EXISTS (SELECT 1 FROM jobs WHERE run_id = r.id AND json_extract(spec, '\$.build_mode') = 'demo-release')
	AND EXISTS (SELECT 1 FROM jobs WHERE run_id = r.id AND json_extract(spec, '\$.build_mode') = 'demo-debugoptimized')")
[ "$two" = 6 ] || fail "only $two of 6 runs have a demo-release and a demo-debugoptimized job"
[ "$(sqlite3 "$db" "SELECT count(DISTINCT base_commit) || ' ' || max(base_commit) FROM runs")" = "1 $base" ] ||
	fail "runs are not all on $base"
[ "$(sqlite3 "$db" "SELECT state || ': ' || reason FROM recheck_requests")" = "planned: answered by the series' first run (run 1)" ] ||
	fail "the recheck was not answered by the first run: $(sqlite3 "$db" "SELECT state, reason FROM recheck_requests")"
# As make demo delivers it: 08 after series 1's first run is planned gets
# a run of its own, on the base of that first run.
R="$CTL --config $TMP/r.json"
sed "s|$TMP/state|$TMP/rstate|g" "$TMP/c.json" >"$TMP/r.json"
expect_rc 0 $R db migrate
for f in $FILES; do
	[ "$f" = 08-recheck ] && continue
	expect_rc 0 $R ingest --mbox "$D/$f.mbox"
done
expect_rc 0 $R plan
expect_grep 'series=6 runs=6 jobs=12 .*rechecks_planned=0 .*errors=0' "$TMP/out"
expect_rc 0 $R ingest --mbox "$D/08-recheck.mbox"
expect_rc 0 $R plan
expect_grep 'runs=1 jobs=2 .*rechecks_planned=1 .*errors=0' "$TMP/out"
[ "$(sqlite3 "$TMP/rstate/perfgate.db" "SELECT state FROM recheck_requests")" = planned ] || fail "the recheck was not planned"
sqlite3 "$TMP/rstate/perfgate.db" "SELECT spec FROM jobs j JOIN runs r ON r.id = j.run_id WHERE r.reason = 'recheck' LIMIT 1" >"$TMP/spec.json"
jq_is "$TMP/spec.json" '[.reason, .series.id, .tree.base_source] | map(tostring) | join(" ")' "recheck 1 previous-run"
sqlite3 "$db" "SELECT spec FROM jobs j JOIN runs r ON r.id = j.run_id WHERE r.series_id = 6 LIMIT 1" >"$TMP/spec.json"
jq_is "$TMP/spec.json" '.depends_on | map([.series, .missing] | map(tostring) | join(" ")) | join(",")' "1 false"
jq_is "$TMP/spec.json" '.tree.base_source' base-commit
expect_rc 0 $C plan
expect_grep 'series=0 runs=0 jobs=0 ' "$TMP/out"

# ---- the mboxes the API serves to the agents ----------------------------------
$C serve >"$TMP/serve.log" 2>&1 &
ctl=$!
stop_ctl() { kill "$ctl" 2>/dev/null; wait "$ctl" 2>/dev/null; }
cleanup_hooks="stop_ctl"
i=0
until grep -q 'api: listening on http' "$TMP/serve.log"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { cat "$TMP/serve.log"; fail "the API did not start"; }
	sleep 0.1
done
url=$(sed -n 's/.*api: listening on \(http[^ ]*\).*/\1/p' "$TMP/serve.log" | head -n 1)
for i in 1 2 4 5 6 7; do
	curl -sf -o "$TMP/api$i.mbox" "$url/api/v1/series/$i/mbox" || fail "GET series $i mbox"
done
stop_ctl
cleanup_hooks=""
for i in 1 2 5 7; do
	fresh "$TMP/pg"
	"$PG_APPLY" -r "$TMP/pg" "$TMP/api$i.mbox" >"$TMP/pg.out" 2>&1 ||
		{ cat "$TMP/pg.out"; fail "the API's mbox of series $i does not apply"; }
done
fresh "$TMP/pg"
expect_rc 0 "$PG_APPLY" -r "$TMP/pg" "$TMP/api1.mbox" "$TMP/api6.mbox"
fresh "$TMP/pg"
expect_rc 1 "$PG_APPLY" -r "$TMP/pg" "$TMP/api4.mbox"

# ---- the same mails through a public-inbox archive ----------------------------
mkdir -p "$TMP/eml" "$TMP/split" "$TMP/pi"
n=0
for f in $FILES; do
	mkdir -p "$TMP/split/$f"
	git mailsplit -o"$TMP/split/$f" "$D/$f.mbox" >/dev/null || fail "git mailsplit $f.mbox"
	for m in "$TMP/split/$f"/*; do
		n=$((n + 1))
		cp "$m" "$TMP/eml/$(printf %02d $n)-$f.eml"
	done
done
[ $n = 12 ] || fail "$n mails in the mbox files, expected 12"
MI="sh $PG_TOP/tests/inbox/make-inbox.sh"
$MI init "$TMP/pi" dev v2 >"$TMP/init.out" 2>&1 || { cat "$TMP/init.out"; fail "public-inbox-init failed"; }
$MI deliver "$TMP/pi" dev "$TMP"/eml/*.eml >"$TMP/deliver.out" 2>&1 || { cat "$TMP/deliver.out"; fail "delivery failed"; }
sed "s|$TMP/state|$TMP/istate|g" "$TMP/c.json" >"$TMP/i.json"
I="$CTL --config $TMP/i.json"
expect_rc 0 $I db migrate
expect_rc 0 $I ingest --inbox "$TMP/pi/dev"
expect_grep '^messages read: +12$' "$TMP/out"
expect_grep '^  rejected: +0$' "$TMP/out"
expect_grep '^recheck requests: +1$' "$TMP/out"
expect_rc 0 $I series list --json
diff "$TMP/list.json" "$TMP/out" || fail "the archive gave other series than the mbox files"
for i in 1 2 3 4 5 6 7; do
	expect_rc 0 $I series show $i --json
	diff "$TMP/show$i.json" "$TMP/out" || fail "series $i differs between the archive and the mbox files"
done
echo "demo series: 7 series, 7 runs, 14 jobs; mbox files and archive agree"
