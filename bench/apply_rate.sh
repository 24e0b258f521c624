#!/bin/sh
# Apply success rate: perfgate's patch application (exact, offset search,
# 3-way from the index lines' blobs) next to `git am -3` on the same
# corpus of real format-patch patches on the DPDK 22.11 tree
# (tests/apply/), each patch on a fresh checkout of a tree that moved on
# since it was written.  Also the median time per patch of each (one
# process per patch for both, checkout excluded).
set -eu
build=${PG_BUILD:?run through make bench}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-bench-apply.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

repeat=${REPEAT:-7}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null TZ=UTC LC_ALL=C
export GIT_COMMITTER_NAME=perfgate GIT_COMMITTER_EMAIL=perfgate@localhost
"$top/tests/apply/make-repo.sh" "$tmp/repo"
"$top/tests/apply/compare.sh" -r "$tmp/repo" -o "$tmp/results" "$build" >"$tmp/table"
n=$(wc -l <"$tmp/results")
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2];
		else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
count() { awk "$1" "$tmp/results" | wc -l; }
pg_ok=$(count '$2 == "applied"')
am_ok=$(count '$6 == "applied"')
pg_ms=$(awk '{ print $9 }' "$tmp/results" | median)
am_ms=$(awk '{ print $10 }' "$tmp/results" | median)
echo "bench apply: patches=$n perfgate=$pg_ok/$n" \
	"($(awk -v a="$pg_ok" -v b="$n" 'BEGIN { printf "%.1f", 100 * a / b }')%)" \
	"exact=$(count '$3 == "exact"') offset=$(count '$3 == "offset"') 3way=$(count '$3 == "3way"')" \
	"already=$(count '$3 == "already"')" \
	"git_am_3way=$am_ok/$n ($(awk -v a="$am_ok" -v b="$n" 'BEGIN { printf "%.1f", 100 * a / b }')%)" \
	"same_commits=$(count '$8 == "yes"') median_ms_perfgate=$pg_ms median_ms_git_am=$am_ms"

# The 3-way attempt on a file the tree lacks: one working tree, put back
# at upstream before each try (outside the timing).
lost=$top/tests/apply/corpus/37-usertools-telemetry-client-close.patch
w=$tmp/lost
git clone -q --no-checkout "$tmp/repo" "$w"
up=$(git -C "$tmp/repo" rev-parse upstream)
now_ms() { date +%s%3N; }
: >"$tmp/lost.pg"
: >"$tmp/lost.am"
i=0
while [ "$i" -lt "$repeat" ]; do
	i=$((i + 1))
	git -C "$w" am --quit >/dev/null 2>&1 || true
	git -C "$w" checkout -q -f --detach "$up"
	t0=$(now_ms)
	rc=0
	"$build/tests/tools/pg_apply" "$w" "$lost" >/dev/null 2>&1 || rc=$?
	echo $(( $(now_ms) - t0 )) >>"$tmp/lost.pg"
	[ "$rc" -eq 1 ] || { echo "bench apply: pg_apply on $lost: exit $rc, expected 1" >&2; exit 1; }
	git -C "$w" checkout -q -f --detach "$up"
	t0=$(now_ms)
	git -C "$w" am -3 "$lost" >/dev/null 2>&1 &&
		{ echo "bench apply: git am -3 applied $lost" >&2; exit 1; }
	echo $(( $(now_ms) - t0 )) >>"$tmp/lost.am"
done
lost_pg=$(median <"$tmp/lost.pg")
lost_am=$(median <"$tmp/lost.am")
echo "bench apply: 3way_on_a_file_the_tree_lacks repeat=$repeat median_ms_perfgate=$lost_pg" \
	"median_ms_git_am=$lost_am" \
	"perfgate_over_git_am=$(awk -v a="$lost_pg" -v b="$lost_am" 'BEGIN { printf "%.2f", b ? a / b : 0 }')"
