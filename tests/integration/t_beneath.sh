# Links a patch or the sandboxed build may plant, through the real
# build_dpdk() in the sandbox (tests/tools/pg_build) on a tiny meson tree:
#   - VERSION a link to a file only root can read (whose first line looks
#     like a version): the build is refused as an outcome naming the link,
#     and the file's content appears nowhere (result, log, stream);
#   - the sandboxed code replaces build.ninja by a link to a root-only
#     file: the next build sets the directory up afresh rather than
#     reusing it, and the link's target is untouched.
# Both fail on the code before lib/fsbeneath.h: the secret became the
# version, and the linked build.ninja was reused (ninja then failed).
. "$PG_TOP/tests/integration/lib.sh"

PGB="$PG_BUILD/tests/tools/pg_build"
[ -x "$PGB" ] || fail "$PGB missing (make $PGB)"

# mktemp -d is 0700: the sandbox user must be able to pass through.
chmod 755 "$TMP"
secret_dir=$TMP/root-only
mkdir -m 700 "$secret_dir"
printf '99.9.9-rootonly\nline two\n' >"$secret_dir/secret"
printf 'rule decoy\n' >"$secret_dir/decoy.ninja"
chmod 600 "$secret_dir/secret" "$secret_dir/decoy.ninja"
decoy_sum=$(sha256sum <"$secret_dir/decoy.ninja")

src=$TMP/ws/src
bld=$TMP/ws/build
mkdir -p "$src" "$TMP/ws/out"
cat >"$src/meson.build" <<'EOF'
project('tiny', 'c')
executable('hello', 'hello.c')
EOF
printf '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n' >"$src/hello.c"
ln -s "$secret_dir/secret" "$src/VERSION"
chmod -R a+rX "$TMP/ws"

pgb() {	# pgb LOG: a sandboxed build, result in $TMP/out
	expect_rc 0 "$PGB" --src "$src" --build "$bld" --log "$TMP/ws/out/$1" \
		--buildtype release --timeout 300 --stream "$TMP/ws/out/$1.stream"
}
no_secret() {	# no_secret FILE...
	for f in "$@"; do
		! grep -q rootonly "$f" || { cat "$f" >&2; fail "the secret is in $f"; }
	done
}

# 1. VERSION a link: refused as the build's outcome, nothing run.
pgb link.log
cat "$TMP/out"
jq_is "$TMP/out" .ok false
jq_is "$TMP/out" .failed_step "VERSION: '$src/VERSION' is a symbolic link: refused"
jq_is "$TMP/out" .setup_ran false
jq_is "$TMP/out" '.version // "none"' none
expect_grep "^perfgate: VERSION: '$src/VERSION' is a symbolic link: refused$" "$TMP/ws/out/link.log"
no_secret "$TMP/out" "$TMP/ws/out/link.log" "$TMP/ws/out/link.log.stream"

# 2. A regular VERSION: built (the test can tell the difference).
rm "$src/VERSION"
printf '1.0.0\n' >"$src/VERSION"
chmod a+r "$src/VERSION"
pgb ok.log
jq_is "$TMP/out" .ok true
jq_is "$TMP/out" .setup fresh
jq_is "$TMP/out" .version 1.0.0

# 3. The sandboxed code (as the sandbox user) swaps build.ninja for a link.
expect_rc 0 "$PGB" --exec --rw "$bld" --chdir "$bld" -- \
	sh -c "mv build.ninja real.ninja && ln -s '$secret_dir/decoy.ninja' build.ninja"
[ -L "$bld/build.ninja" ] || fail "the sandboxed command did not plant the link"
pgb again.log
cat "$TMP/ws/out/again.log"
jq_is "$TMP/out" .ok true
jq_is "$TMP/out" .setup fresh
[ -f "$bld/build.ninja" ] && [ ! -L "$bld/build.ninja" ] || fail "build.ninja is still a link"
[ "$(sha256sum <"$secret_dir/decoy.ninja")" = "$decoy_sum" ] || fail "the link's target changed"
[ "$(stat -c %u:%a "$secret_dir/decoy.ninja")" = "0:600" ] || [ "$(id -u)" -ne 0 ] ||
	fail "the link's target changed owner or mode"
