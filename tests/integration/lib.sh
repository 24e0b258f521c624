# Sourced by every integration test.  Gives:
#   $CTL, $AGENT       the binaries under test
#   $TOOL              tests/tools/test-tool (internals a script needs)
#   $TMP               a scratch directory, removed on exit
#   fail MSG           print and exit 1
#   expect_rc N CMD..  run CMD, fail unless it exits with N; output in $TMP/out
#   expect_grep PATTERN FILE   fail unless FILE matches (grep -E)
#   sqlite3 ...        the sqlite3 shell with a 30 s busy timeout
#   demo_tree [FILE [JQ]]   $TMP/dpdk, a git tree at VERSION 22.11.0, and
#                      $TMP/profiles/FILE (demo.json), the demo profile on it
#                      edited by the jq filter JQ
set -u
: "${PG_BUILD:?PG_BUILD not set (run through tests/integration/run.sh)}"
: "${PG_TOP:?PG_TOP not set}"
CTL="$PG_BUILD/perfgate-controller"
AGENT="$PG_BUILD/perfgate-agent"
TOOL="$PG_BUILD/tests/tools/test-tool"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pg-it.XXXXXX")
cleanup_hooks=""
on_exit() {
	for h in $cleanup_hooks; do "$h" || true; done
	rm -rf "$TMP"
}
trap on_exit EXIT
cd "$PG_TOP" || exit 1

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# Every sqlite3 shell a test runs waits up to 30 s for a lock.  The
# controller under test writes the same store at any moment (its writer
# thread, its maintenance); without a busy timeout the shell's own write,
# or a read that meets a checkpoint, fails at once with "database is
# locked" and the test then asserts on a change that never happened.
sqlite3() {
	command sqlite3 -cmd '.timeout 30000' "$@"
}

expect_rc() {
	want=$1
	shift
	"$@" >"$TMP/out" 2>&1
	got=$?
	if [ "$got" -ne "$want" ]; then
		cat "$TMP/out" >&2
		fail "'$*' exited $got, expected $want"
	fi
}

expect_grep() {
	grep -Eq -- "$1" "$2" || { cat "$2" >&2; fail "'$2' does not match /$1/"; }
}

# corpus_mbox DIR OUT: concatenate DIR/*.eml into an mbox, adding a From_
# separator where a mail has none and a newline where one is missing.
corpus_mbox() {
	: >"$2"
	for f in "$1"/*.eml; do
		head -c5 "$f" | grep -q '^From ' ||
			echo "From corpus@example.org Thu Jan  1 00:00:00 1970" >>"$2"
		cat "$f" >>"$2"
		[ "$(tail -c1 "$f" | od -An -c | tr -d ' ')" = '\n' ] || echo >>"$2"
	done
}

# write_config FILE [EXTRA_JSON_MEMBERS]: a controller configuration with
# its store and data under $TMP/state and the demo profile.
write_config() {
	cat >"$1" <<EOC
{ "db": "$TMP/state/perfgate.db", "data_dir": "$TMP/state",
  "profiles_dir": "$PG_TOP/profiles", "profiles": ["demo.json"]${2:+, $2} }
EOC
}

# demo_tree [FILE [JQ]]: the tree and profile the controller tests plan
# on: profiles/demo.json on the tree, edited by the jq filter JQ, written to
# $TMP/profiles/FILE (default demo.json).
demo_tree() {
	export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org \
		GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
	git init -q -b main "$TMP/dpdk"
	printf '22.11.0\n' >"$TMP/dpdk/VERSION"
	git -C "$TMP/dpdk" add . && git -C "$TMP/dpdk" commit -q -m "version 22.11"
	mkdir -p "$TMP/profiles"
	jq --arg url "$TMP/dpdk" ".trees[\"dpdk-demo\"].url = \$url${2:+ | $2}" profiles/demo.json \
		>"$TMP/profiles/${1:-demo.json}" || fail "jq on the demo profile"
}

# jq_is FILE FILTER EXPECTED: fail unless jq -r FILTER FILE prints EXPECTED.
jq_is() {
	got=$(jq -r "$2" "$1") || fail "jq '$2' failed on $1"
	[ "$got" = "$3" ] || fail "jq '$2' on $1: got '$got', expected '$3'"
}

# fetch_targets LOG URL...: every check target URL (PUBLIC_URL/series/ID)
# answers 200 with the dashboard's series page, fetched from the controller
# whose log is LOG (its last "api: listening on" line), whatever host the
# URL names.
fetch_targets() {
	_log=$1
	shift
	_api=$(sed -n 's/.* api: listening on //p' "$_log" | tail -n 1)
	[ -n "$_api" ] || fail "no 'api: listening on' line in $_log"
	[ $# -gt 0 ] || fail "no check target URL to fetch"
	for _u in "$@"; do
		_path=$(printf '%s\n' "$_u" | sed -n 's|^https*://[^/]*\(/series/[1-9][0-9]*\)$|\1|p')
		[ -n "$_path" ] || fail "check target URL '$_u' is not PUBLIC_URL/series/ID"
		_code=$(curl -sS -o "$TMP/target.html" -w '%{http_code}' "$_api$_path") ||
			fail "GET $_api$_path"
		[ "$_code" = 200 ] || fail "check target $_u ($_api$_path) answered $_code"
		grep -q 'src="/assets/series.js"' "$TMP/target.html" ||
			fail "check target $_u is not the series page"
		_code=$(curl -sS -o /dev/null -w '%{http_code}' "$_api/api/v1${_path}") || fail "GET series"
		[ "$_code" = 200 ] || fail "the series of check target $_u answers $_code"
	done
}
