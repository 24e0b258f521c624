#!/bin/sh
# Incremental-build reuse: what a job's build costs the agent, on the real
# DPDK 22.11 tree with the demo profile's options, through build_dpdk() in
# the sandbox (tests/tools/pg_build), per build mode:
#   cold_s      a new build directory, ccache disabled (CCACHE_DISABLE)
#   warm_s      a new build directory, warm ccache (a wiped directory, a
#               new worktree)
#   incr_s      the persistent build directory after a one-file change in
#               lib/mempool (what a patched side costs), and its ratio to
#               cold_s: the goal is under 0.05
# The tree, the persistent build directories and the ccache are those of
# tests/integration/t_build.sh under ${PG_CACHE:-/var/cache/perfgate}/e2e/build.
# PG_BENCH_BUILD_MODES (default "release"; "release debugoptimized" for
# both) picks the modes: each costs two cold builds on a fresh machine
# (about 9 minutes each on 2 cores), one on a machine that ran t_build.
set -eu
build=${PG_BUILD:?run through make bench}
top=$(cd "$(dirname "$0")/.." && pwd)
pgb=$build/tests/tools/pg_build
[ -x "$pgb" ] || { echo "build_incremental: $pgb missing (make $pgb)" >&2; exit 1; }
modes=${PG_BENCH_BUILD_MODES:-release}
if [ -z "${PG_CACHE:-}" ]; then
	if [ "$(id -u)" -eq 0 ]; then PG_CACHE=/var/cache/perfgate; else PG_CACHE=$HOME/.cache/perfgate; fi
fi
export PG_CACHE
bare=$("$top/scripts/dpdk-tree.sh")
cache=$PG_CACHE/e2e/build
src=$cache/dpdk-22.11.11/src
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-bench-build.XXXXXX")
mkdir -p "$cache"
chmod 755 "$PG_CACHE" "$PG_CACHE/e2e" "$cache" "$tmp"
restore() { git -C "$src" checkout -q -f -- . 2>/dev/null || true; }
# Removes the bench's directories and their setup stamps.
trap 'restore; rm -rf "$tmp" "$cache"/dpdk-22.11.11/bench-*' EXIT

[ -d "$src/.git" ] || git clone -q "$bare" "$src"
git -C "$src" fetch -q origin
git -C "$src" checkout -q -f -B main origin/main
git -C "$src" clean -q -fdx

# run NAME DIR [options]: build, check it built, print the JSON result's
# seconds; the result stays in $tmp/NAME.json.
run() {
	name=$1 dir=$2
	shift 2
	"$pgb" --src "$src" --build "$dir" --log "$tmp/$name.log" \
		--profile "$top/profiles/demo.json" --build-mode "demo-$mode" \
		--basedir "$cache" --timeout 7200 "$@" >"$tmp/$name.json" ||
		{ tail -20 "$tmp/$name.log" >&2; exit 1; }
	[ "$(jq -r .ok "$tmp/$name.json")" = true ] ||
		{ jq -r .tail "$tmp/$name.json" >&2; echo "build_incremental: $name failed" >&2; exit 1; }
	jq -r '.duration_ms / 1000' "$tmp/$name.json"
}

for mode in $modes; do
	persistent=$cache/dpdk-22.11.11/build-$mode
	ccache_dir=$cache/ccache/$mode
	# The persistent directory up to date (and the ccache warm): not timed.
	run prepare "$persistent" --ccache "$ccache_dir" >/dev/null
	rm -rf "$cache"/dpdk-22.11.11/bench-*
	cold=$(run cold "$cache/dpdk-22.11.11/bench-cold")
	steps=$(jq .steps "$tmp/cold.json")
	warm=$(run warm "$cache/dpdk-22.11.11/bench-warm" --ccache "$ccache_dir")
	rm -rf "$cache"/dpdk-22.11.11/bench-*
	printf '\nvoid pg_bench_touch_%s(void);\nvoid pg_bench_touch_%s(void) {}\n' $$ $$ \
		>>"$src/lib/mempool/rte_mempool.c"
	incr=$(run incr "$persistent" --ccache "$ccache_dir")
	incr_steps=$(jq .steps "$tmp/incr.json")
	restore
	run restore "$persistent" --ccache "$ccache_dir" >/dev/null
	echo "$mode $cold $warm $incr $steps $incr_steps" | awk '{
		printf "bench build_incremental: mode=%s cold_s=%.1f cold_steps=%d warm_s=%.1f " \
		       "warm_ratio=%.3f incr_s=%.1f incr_steps=%d incr_ratio=%.3f goal_incr_ratio=0.05 " \
		       "goal_met=%s\n", $1, $2, $5, $3, $3 / $2, $4, $6, $4 / $2, \
		       ($4 / $2 < 0.05) ? "yes" : "no" }'
done
