# The agent's workspace on the real DPDK 22.11 tree (the apply corpus'
# repository): a mirror made from it, the upstream commit checked out in a
# slot, two corpus patches applied there (one by offset, one by 3-way);
# then the next job's checkout of the same commit drops them and writes
# the two files they changed and nothing else: every other file keeps its
# modification time, so that ninja would rebuild only those.
. "$PG_TOP/tests/integration/lib.sh"

WS="$PG_BUILD/tests/tools/pg_workspace"
[ -x "$WS" ] || fail "pg_workspace not built"
sh tests/apply/make-repo.sh "$TMP/dpdk" >"$TMP/make.out" 2>&1 || { cat "$TMP/make.out"; fail "make-repo"; }
up=$(cat tests/apply/UPSTREAM)
work=$TMP/work
slot=$work/slots/dpdk/release-patched/src

expect_rc 0 "$WS" "$work" dpdk "$TMP/dpdk" "$up" release-patched \
	tests/apply/corpus/13-net-null-copy-tx-len.patch \
	tests/apply/corpus/23-net-ring-stats-atomic-read.patch
cat "$TMP/out"
expect_grep "^mirror $work/mirrors/dpdk.git ms=" "$TMP/out"
expect_grep "^checkout $slot ms=" "$TMP/out"
expect_grep '^13-net-null-copy-tx-len.patch 1/1 offset ' "$TMP/out"
expect_grep '^23-net-ring-stats-atomic-read.patch 1/1 3way ' "$TMP/out"
[ -z "$(git -C "$slot" status --porcelain)" ] || fail "slot not clean after apply"
[ "$(git -C "$slot" rev-parse HEAD~2)" = "$up" ] || fail "not two commits on the base"
# The slot borrows the mirror's objects instead of copying them.
grep -qx "$(cd "$work/mirrors/dpdk.git" && pwd -P)/objects" "$slot/.git/objects/info/alternates" ||
	fail "no alternates to the mirror"
[ "$(git -C "$slot" count-objects | cut -d' ' -f1)" -lt 50 ] || fail "objects copied into the slot"

# Every file's modification time, pushed back so that a rewrite shows.
find "$slot" -path "$slot/.git" -prune -o -type f -exec touch -d '2001-01-01 00:00:00' {} +
find "$slot" -path "$slot/.git" -prune -o -type f -printf '%T@ %P\n' | sort -k2 >"$TMP/before"
[ "$(wc -l <"$TMP/before")" -gt 5000 ] || fail "the slot holds too few files"

# The next job: same base, no patches (the mirror has the commit: no fetch).
mv "$TMP/dpdk" "$TMP/dpdk-gone"
expect_rc 0 "$WS" "$work" dpdk "$TMP/dpdk" "$up" release-patched
cat "$TMP/out"
[ "$(git -C "$slot" rev-parse HEAD)" = "$up" ] || fail "HEAD not back at the base"
[ -z "$(git -C "$slot" status --porcelain)" ] || fail "slot not clean after checkout"
find "$slot" -path "$slot/.git" -prune -o -type f -printf '%T@ %P\n' | sort -k2 >"$TMP/after"
join -1 2 -2 2 "$TMP/before" "$TMP/after" | awk '$2 != $3 { print $1 }' >"$TMP/rewritten"
cat "$TMP/rewritten"
printf '%s\n' drivers/net/null/rte_eth_null.c drivers/net/ring/rte_eth_ring.c >"$TMP/want"
cmp -s "$TMP/rewritten" "$TMP/want" || { diff "$TMP/want" "$TMP/rewritten"; fail "files other than the patched ones were rewritten"; }
[ "$(wc -l <"$TMP/before")" = "$(wc -l <"$TMP/after")" ] || fail "files appeared or vanished"

# The agent's workspace child (agent/ws_child.h), run directly as the
# runner runs it on a trusted, unsandboxed host: a slot that a sandboxed
# job left to the sandbox user is still checked out (libgit2's owner check
# is the agent's business here, not the slot's), and an apply reports its
# outcome, its limits and what it wrote in the result file.
A="$PG_BUILD/perfgate-agent"
io=$TMP/io
mkdir -p "$io"
mv "$TMP/dpdk-gone" "$TMP/dpdk"
if [ "$(id -u)" -eq 0 ]; then chown -R nobody "$work/slots"; fi
expect_rc 0 "$A" workspace-checkout --work "$work" --tree dpdk --slot release-patched \
	--mirror "$work/mirrors/dpdk.git" --commit "$up" --result "$io/checkout.json"
jq_is "$io/checkout.json" .rc 0
[ "$(git -c safe.directory="*" -C "$slot" rev-parse HEAD)" = "$up" ] || fail "the child did not check out the base"
patch=tests/apply/corpus/13-net-null-copy-tx-len.patch
expect_rc 1 "$A" workspace-apply --src "$slot" --mbox "$patch" --result "$io/apply.json" \
	--max-file-bytes 4096
jq_is "$io/apply.json" .rc 1
jq_is "$io/apply.json" .failed_file drivers/net/null/rte_eth_null.c
jq -r .reason "$io/apply.json" >"$TMP/reason"
expect_grep 'limit .*apply\.max_file_mb' "$TMP/reason"
[ "$(git -c safe.directory="*" -C "$slot" rev-parse HEAD)" = "$up" ] || fail "a refused patch moved HEAD"
[ -z "$(git -c safe.directory="*" -C "$slot" status --porcelain)" ] || fail "a refused patch left changes"
expect_rc 0 "$A" workspace-apply --src "$slot" --mbox "$patch" --result "$io/apply.json" \
	--used-files 7
jq_is "$io/apply.json" .rc 0
jq_is "$io/apply.json" .n_applied 1
jq_is "$io/apply.json" '.patches[0].method' offset
jq_is "$io/apply.json" .used_files 8
expect_rc 2 "$A" workspace-apply --src "$slot"
