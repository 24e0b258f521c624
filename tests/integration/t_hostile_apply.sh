# Hostile series against the real agent (DPDK runner, sandbox on, as root
# when run as root, as on a lab host), on the real DPDK 22.11 tree:
#   1. symlink-then-file: patch 1/2 adds a symbolic link to a directory
#      outside the workspace, patch 2/2 a file beneath it.  `git am -3`
#      refuses patch 2/2 on a scratch tree ("beyond a symbolic link"); the
#      agent must end the job as an apply failure that says so, and the
#      outside directory must stay as it was.
#   2. VERSION as a link to a secret file only root can read: the agent
#      must refuse to read it (a build failure naming VERSION), the
#      secret's content must appear in no log, no job detail and no API
#      answer, and the file must not have been read (its access time).
#   3. an expansion bomb: a binary patch of well under a megabyte that
#      expands to a 512 MiB file: an apply failure naming the limit
#      (apply.max_file_mb), refused before it is inflated; the peak
#      resident memory of the agent and all its children is printed.
# One build mode only (release): the apply failure builds nothing, the
# VERSION series builds the base side (warm when t_e2e_dpdk ran first: the
# work directory is shared with it) and stops before the patched build.
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/dpdk_lib.sh"

dpdk_setup
# Outside the workspace and outside the sandbox's view of the host.
if [ "$(id -u)" -eq 0 ]; then
	outside=/var/lib/pg-hostile.$$
	secret=/root/pg-hostile-secret.$$
else
	outside=$HOME/pg-hostile.$$
	secret=$HOME/pg-hostile-secret.$$
fi
rm_outside() { rm -rf "$outside" "$secret"; return 0; }
stop_ctl() { [ -n "${ctl:-}" ] && kill -9 "$ctl" 2>/dev/null; return 0; }
cleanup_hooks="stop_ctl rm_outside"
mkdir -p "$outside"
echo "keep me" >"$outside/keep"
token=pg-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
printf '%s\n' "$token" >"$secret"
chmod 600 "$secret"
# Access time well before the modification time: with relatime (or
# strictatime) any read of the file moves it.
touch -a -d '2001-01-01 00:00:00' "$secret"
atime0=$(stat -c %X "$secret")
find "$outside" -printf '%p %s %T@\n' | sort >"$TMP/outside.before"

gitc() { GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME="Mallory" GIT_AUTHOR_EMAIL=mallory@example.org \
	GIT_COMMITTER_NAME="Mallory" GIT_COMMITTER_EMAIL=mallory@example.org \
	GIT_AUTHOR_DATE="2026-11-02T10:00:00Z" GIT_COMMITTER_DATE="2026-11-02T10:00:00Z" git "$@"; }

# ---- series 1: a link, then a file beneath it ------------------------
rm -rf "$TMP/author"
gitc clone -q "$tree" "$TMP/author" || fail "clone"
ln -s "$outside" "$TMP/author/drivers/pg-link"
gitc -C "$TMP/author" add drivers/pg-link
gitc -C "$TMP/author" commit -q -m "drivers: add a link" -m "A link out of the tree." || fail "commit 1"
gitc -C "$TMP/author" format-patch -q --stdout -n -1 --base="$base" \
	--add-header="Message-Id: <hostile-link-1@example.org>" >"$TMP/p1" || fail "format-patch 1"
# git itself will not commit a file beneath a link: patch 2/2 is made on a
# tree where drivers/pg-link is a directory, then sent as the second patch.
gitc -C "$TMP/author" reset -q --hard "$base"
mkdir -p "$TMP/author/drivers/pg-link"
echo '* * * * * root touch /tmp/pg-pwned' >"$TMP/author/drivers/pg-link/evil.conf"
gitc -C "$TMP/author" add drivers/pg-link/evil.conf
gitc -C "$TMP/author" commit -q -m "drivers: a file beneath the link" -m "Written through it." ||
	fail "commit 2"
gitc -C "$TMP/author" format-patch -q --stdout -n -1 \
	--add-header="Message-Id: <hostile-link-2@example.org>" \
	--in-reply-to="hostile-link-1@example.org" >"$TMP/p2" || fail "format-patch 2"
sed -i 's/^Subject: \[PATCH 1\/1\]/Subject: [PATCH 1\/2]/' "$TMP/p1"
sed -i 's/^Subject: \[PATCH 1\/1\]/Subject: [PATCH 2\/2]/' "$TMP/p2"
cat "$TMP/p1" "$TMP/p2" >"$TMP/link.mbox"
grep -q '^Subject: \[PATCH 2/2\] drivers: a file beneath the link' "$TMP/link.mbox" ||
	fail "series 1 is not numbered"

# What git does with it: patch 2/2 refused by `git am` ("beyond a symbolic
# link") and by `git am -3` (a file/directory conflict), nothing written
# outside.
rm -rf "$TMP/scratch"
gitc clone -q "$tree" "$TMP/scratch" || fail "clone scratch"
for am in "am" "am -3"; do
	gitc -C "$TMP/scratch" am --abort >/dev/null 2>&1
	gitc -C "$TMP/scratch" checkout -q -f "$base"
	# shellcheck disable=SC2086
	if gitc -C "$TMP/scratch" $am "$TMP/link.mbox" >"$TMP/am.out" 2>&1; then
		cat "$TMP/am.out"; fail "git $am applied the symlink series"
	fi
	cat "$TMP/am.out"
	expect_grep 'Patch failed at 0002' "$TMP/am.out"
	[ "$am" = am ] && expect_grep "affected file 'drivers/pg-link/evil.conf' is beyond a symbolic link" "$TMP/am.out"
	[ -e "$outside/evil.conf" ] && fail "git $am wrote beneath the link (the test's premise is wrong)"
done

# ---- series 2: VERSION as a link to the secret ------------------------
gitc -C "$TMP/author" reset -q --hard "$base"
rm "$TMP/author/VERSION"
ln -s "$secret" "$TMP/author/VERSION"
gitc -C "$TMP/author" add -A VERSION
gitc -C "$TMP/author" commit -q -m "VERSION: point elsewhere" -m "Reads a file of the host." ||
	fail "commit VERSION"
gitc -C "$TMP/author" format-patch -q --stdout -1 --base="$base" \
	--add-header="Message-Id: <hostile-version@example.org>" >"$TMP/version.mbox" ||
	fail "format-patch VERSION"
expect_grep '^new file mode 120000' "$TMP/version.mbox"

# ---- series 3: a 512 MiB file in a small binary patch ------------------
gitc -C "$TMP/author" reset -q --hard "$base"
head -c 536870912 /dev/zero >"$TMP/author/pg-bomb.bin"
gitc -C "$TMP/author" add pg-bomb.bin
gitc -C "$TMP/author" commit -q -m "add a large file" -m "Zeros." || fail "commit bomb"
rm -f "$TMP/author/pg-bomb.bin"
gitc -C "$TMP/author" format-patch -q --stdout -1 --binary --base="$base" \
	--add-header="Message-Id: <hostile-bomb@example.org>" >"$TMP/bomb.mbox" ||
	fail "format-patch bomb"
gitc -C "$TMP/author" reset -q --hard "$base"
expect_grep '^literal 536870912' "$TMP/bomb.mbox"
echo "hostile: the bomb's mail is $(wc -c <"$TMP/bomb.mbox") bytes for a 536870912-byte file"

# ---- the controller and the agent ------------------------------------
dpdk_profile '.contexts["perfgate-demo-Performance"].build_modes = ["demo-release"]'
dpdk_controller hostile-1
dpdk_agent_config hostile-1
q() { sqlite3 "$db" "$1" || fail "sqlite3: $1"; }
# run_job MBOX NAME: ingest, plan, one agent --once; the peak resident
# memory of the agent and every child it waited for in $TMP/rss-NAME (KiB).
run_job() {
	dpdk_ingest_plan "$1"
	python3 - "$TMP/rss-$2" "$AGENT" --config "$TMP/agent.json" --once \
		>"$TMP/agent-$2.log" 2>&1 <<'PY'
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    f.write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)
PY
	rc=$?
	[ $rc -eq 0 ] || { tail -n 40 "$TMP/agent-$2.log"; fail "agent --once exited $rc ($2)"; }
}

run_job "$TMP/link.mbox" link
q "SELECT id, state, outcome, outcome_detail FROM jobs" >"$TMP/jobs1.txt"
cat "$TMP/jobs1.txt"
[ "$(q "SELECT count(*) FROM jobs")" = 1 ] || fail "expected one job for series 1"
[ "$(q "SELECT outcome FROM jobs WHERE id = 1")" = apply-failure ] ||
	fail "series 1 did not end as an apply failure"
q "SELECT outcome_detail FROM jobs WHERE id = 1" >"$TMP/detail1.txt"
expect_grep 'patch 2/2' "$TMP/detail1.txt"
expect_grep 'drivers/pg-link/evil.conf' "$TMP/detail1.txt"
expect_grep 'beyond a symbolic link' "$TMP/detail1.txt"
[ -e "$outside/evil.conf" ] && fail "the agent wrote beneath the link: $outside/evil.conf"
find "$outside" -printf '%p %s %T@\n' | sort >"$TMP/outside.after"
cmp -s "$TMP/outside.before" "$TMP/outside.after" ||
	{ diff "$TMP/outside.before" "$TMP/outside.after"; fail "$outside changed"; }
[ "$(cat "$outside/keep")" = "keep me" ] || fail "$outside/keep changed"
# The apply ran in the workspace child, behind the sandbox when root.
q "SELECT path FROM logs WHERE job_id = 1 AND stage = 'apply'" | while read -r p; do
	cat "$TMP/state/$p"; done >"$TMP/apply1.log"
expect_grep 'beyond a symbolic link' "$TMP/apply1.log"

run_job "$TMP/version.mbox" version
q "SELECT id, state, outcome, outcome_detail FROM jobs WHERE id = 2" >"$TMP/jobs2.txt"
cat "$TMP/jobs2.txt"
[ "$(q "SELECT outcome FROM jobs WHERE id = 2")" = patched-build-failure ] ||
	fail "series 2 did not end as a patched build failure"
q "SELECT outcome_detail FROM jobs WHERE id = 2" >"$TMP/detail2.txt"
expect_grep 'VERSION' "$TMP/detail2.txt"
expect_grep 'symbolic link' "$TMP/detail2.txt"

# The secret: not read, and nowhere perfgate keeps or serves text.
[ "$(stat -c %X "$secret")" = "$atime0" ] || fail "the secret file was read (its access time moved)"
for p in series series/1 series/2 runs/1 runs/2 jobs jobs/1 jobs/2; do
	curl -sS "$url/api/v1/$p" >>"$TMP/api.txt" || fail "GET /api/v1/$p"
done
for j in 1 2; do
	q "SELECT attempt || '/' || stage FROM logs WHERE job_id = $j" | while read -r l; do
		curl -sS "$url/api/v1/jobs/$j/logs/$l"; done >>"$TMP/api.txt"
done
[ -s "$TMP/api.txt" ] || fail "no API answers"
grep -q 'VERSION' "$TMP/api.txt" || fail "the API answers do not show the VERSION failure"
if grep -rqF "$token" "$TMP/api.txt" "$TMP/state" "$TMP"/agent-*.log "$TMP/serve.log" "$work/jobs" 2>/dev/null; then
	grep -rlF "$token" "$TMP/api.txt" "$TMP/state" "$TMP"/agent-*.log "$TMP/serve.log" "$work/jobs" 2>/dev/null
	fail "the secret's content leaked"
fi
echo "hostile: outside directory unchanged, the secret neither read nor shown"

run_job "$TMP/bomb.mbox" bomb
q "SELECT id, state, outcome, outcome_detail FROM jobs WHERE id = 3" >"$TMP/jobs3.txt"
cat "$TMP/jobs3.txt"
[ "$(q "SELECT outcome FROM jobs WHERE id = 3")" = apply-failure ] ||
	fail "the bomb did not end as an apply failure"
q "SELECT outcome_detail FROM jobs WHERE id = 3" >"$TMP/detail3.txt"
expect_grep 'pg-bomb.bin' "$TMP/detail3.txt"
expect_grep 'max_file_mb' "$TMP/detail3.txt"
rss=$(cat "$TMP/rss-bomb")
echo "hostile: bomb refused; peak resident memory of the agent and its children: $((rss / 1024)) MiB (link series: $(( $(cat "$TMP/rss-link") / 1024 )) MiB)"
