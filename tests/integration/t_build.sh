# The build end to end on the real DPDK 22.11 tree (scripts/dpdk-tree.sh),
# through build_dpdk() in the sandbox (tests/tools/pg_build) with the demo
# profile's release options for the tree's VERSION, as a job gets them:
# dpdk-test and dpdk-testpmd are built and run (in the sandbox too); a
# one-file change in lib/mempool rebuilds a few steps only; a patch that
# does not compile is an outcome with the compiler's error in the tail.
#
# The clone, its build directory and the ccache persist between runs in
# ${PG_CACHE:-/var/cache/perfgate}/e2e/build (~/.cache/perfgate when not
# root), the ccache in the end-to-end test's work directory, so a machine
# pays one cold build (about 9 minutes on 2 cores), and later runs an
# incremental one.
. "$PG_TOP/tests/integration/lib.sh"

PGB="$PG_BUILD/tests/tools/pg_build"
[ -x "$PGB" ] || fail "$PGB missing"
if [ -z "${PG_CACHE:-}" ]; then
	if [ "$(id -u)" -eq 0 ]; then PG_CACHE=/var/cache/perfgate; else PG_CACHE=$HOME/.cache/perfgate; fi
fi
export PG_CACHE
bare=$("$PG_TOP/scripts/dpdk-tree.sh") || fail "scripts/dpdk-tree.sh failed"
cache=$PG_CACHE/e2e/build
src=$cache/dpdk-22.11.11/src
bld=$cache/dpdk-22.11.11/build-release
# The end-to-end test's ccache (t_e2e_dpdk.sh: the agent's work directory):
# the relative paths meson gives the compiler are the same there (../src),
# so one cold build on a fresh machine warms both.
ccache=$PG_CACHE/e2e/agent-work/ccache/release
mkdir -p "$cache" || fail "mkdir $cache"
chmod 755 "$PG_CACHE" "$PG_CACHE/e2e" "$cache" "$TMP"

# The tree as the fixed commit, whatever a killed earlier run left; files
# that did not change keep their times, so the build stays incremental.
if [ ! -d "$src/.git" ]; then
	git clone -q "$bare" "$src" || fail "git clone $bare"
fi
git -C "$src" fetch -q origin || fail "git fetch"
git -C "$src" checkout -q -f -B main origin/main || fail "git checkout"
git -C "$src" clean -q -fdx || fail "git clean"
restore() {
	git -C "$src" checkout -q -f -- . 2>/dev/null
	return 0
}
cleanup_hooks="restore"

build() {	# build LOG [pg_build options]: result in $TMP/out
	log=$1
	shift
	expect_rc 0 "$PGB" --src "$src" --build "$bld" --log "$TMP/$log" \
		--profile "$PG_TOP/profiles/demo.json" --build-mode demo-release \
		--ccache "$ccache" --basedir "$cache" --timeout 3600 \
		--expect-version 22.11.11 --stream "$TMP/$log.stream" "$@"
	cp "$TMP/out" "$TMP/$log.json"
	cmp "$TMP/$log" "$TMP/$log.stream" || fail "$log: the streamed log differs from the file"
}

# 1. Build (cold on a fresh machine, else incremental).
build first.log
jq -c 'del(.tail)' "$TMP/first.log.json"
jq_is "$TMP/first.log.json" .ok true
jq_is "$TMP/first.log.json" .version 22.11.11
jq_is "$TMP/first.log.json" .version_mismatch false
expect_grep '^perfgate: sandbox: bwrap as ' "$TMP/first.log"
expect_grep "^perfgate: build DPDK 22.11.11 \\(release\\) from $src in $bld with meson " "$TMP/first.log"
[ -x "$bld/app/test/dpdk-test" ] || fail "no app/test/dpdk-test"
[ -x "$bld/app/dpdk-testpmd" ] || fail "no app/dpdk-testpmd"

# 2. The programs run, outside and inside the sandbox.
eal="--no-huge -m 256 --no-pci --file-prefix=pg-t-build-$$"
# shellcheck disable=SC2086  # EAL arguments are words
DPDK_TEST=errno_autotest "$bld/app/test/dpdk-test" $eal -l 0 >"$TMP/test.out" 2>&1 ||
	{ cat "$TMP/test.out"; fail "dpdk-test errno_autotest failed"; }
expect_grep '^Test OK' "$TMP/test.out"
# shellcheck disable=SC2086
expect_rc 0 "$PGB" --exec --ro "$bld" -- env DPDK_TEST=errno_autotest \
	"$bld/app/test/dpdk-test" $eal -l 0
expect_grep '^Test OK' "$TMP/out"
# shellcheck disable=SC2086
expect_rc 0 "$PGB" --exec --ro "$bld" -- sh -c "echo quit | $bld/app/dpdk-testpmd $eal -l 0,1 \
	--vdev net_null0 -- -i --total-num-mbufs=2048"
expect_grep '^Bye' "$TMP/out"

# 3. Nothing changed: no setup, nothing to do.
build again.log
jq_is "$TMP/again.log.json" .ok true
jq_is "$TMP/again.log.json" .setup none
jq_is "$TMP/again.log.json" .steps 0
expect_grep '^ninja: no work to do\.$' "$TMP/again.log"

# 4. One file changed in lib/mempool: it and the links that use it only.
printf '\nvoid pg_t_build_touch_%s(void);\nvoid pg_t_build_touch_%s(void) {}\n' $$ $$ \
	>>"$src/lib/mempool/rte_mempool.c"
build touch.log
jq -c 'del(.tail)' "$TMP/touch.log.json"
jq_is "$TMP/touch.log.json" .ok true
jq_is "$TMP/touch.log.json" .setup none
steps=$(jq .steps "$TMP/touch.log.json")
[ "$steps" -ge 3 ] && [ "$steps" -le 12 ] || fail "one-file change ran $steps ninja steps"
expect_grep '^\[1/[0-9]+\] Compiling C object lib/librte_mempool\.a\.p/mempool_rte_mempool\.c\.o$' "$TMP/touch.log"
expect_grep 'Linking target app/test/dpdk-test$' "$TMP/touch.log"
nm "$bld/lib/librte_mempool.a" | grep -q "pg_t_build_touch_$$" || fail "change not built in"

# 5. A patch that does not compile: an outcome, with the error in the tail.
restore
printf '\nint pg_t_build_broken(void) { return undeclared_%s; }\n' $$ \
	>>"$src/lib/mempool/rte_mempool.c"
build broken.log
jq_is "$TMP/broken.log.json" .ok false
jq_is "$TMP/broken.log.json" .failed_step "ninja: exited 1"
jq_is "$TMP/broken.log.json" .sandbox_failed false
jq -r .tail "$TMP/broken.log.json" >"$TMP/broken.tail"
expect_grep "rte_mempool\\.c:[0-9]+:[0-9]+: error: 'undeclared_$$' undeclared" "$TMP/broken.tail"
expect_grep '^FAILED: lib/librte_mempool\.a\.p/mempool_rte_mempool\.c\.o' "$TMP/broken.tail"
expect_grep '^perfgate: ninja: exited 1$' "$TMP/broken.tail"

# 6. Back to the tree as it was: built again.
restore
build restored.log
jq_is "$TMP/restored.log.json" .ok true
echo "t_build: ok"
