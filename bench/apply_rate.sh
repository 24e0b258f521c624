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

"$top/tests/apply/compare.sh" -o "$tmp/results" "$build" >"$tmp/table"
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
	"git_am_3way=$am_ok/$n ($(awk -v a="$am_ok" -v b="$n" 'BEGIN { printf "%.1f", 100 * a / b }')%)" \
	"same_commits=$(count '$8 == "yes"') median_ms_perfgate=$pg_ms median_ms_git_am=$am_ms"
