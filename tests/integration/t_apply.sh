# The apply corpus (tests/apply/): 37 real format-patch patches on the DPDK
# 22.11 tree, applied one by one with perfgate's code (pg_apply) and with
# `git am -3` on fresh checkouts of a tree that moved on since.  Every
# patch must end as tests/apply/expected.txt says (applied by the method
# named, or failed naming the file and the hunk), every patch both tools
# applied must give the same commit (tree, author, date, message), and
# perfgate must apply at least as many as git am -3.
. "$PG_TOP/tests/integration/lib.sh"

[ -x "$PG_BUILD/tests/tools/pg_apply" ] || fail "pg_apply not built"
sh tests/apply/compare.sh -o "$TMP/results" "$PG_BUILD" >"$TMP/table" 2>"$TMP/err" ||
	{ cat "$TMP/table" "$TMP/err" >&2; fail "compare.sh failed"; }
cat "$TMP/table"

n=0
while read -r patch outcome a b; do
	case $patch in '#'*|'') continue ;; esac
	n=$((n + 1))
	line=$(grep "^$patch " "$TMP/results") || fail "$patch: no result"
	set -- $line
	[ "$2" = "$outcome" ] || fail "$patch: perfgate $2, expected $outcome ($line)"
	if [ "$outcome" = applied ]; then
		[ "$3" = "$a" ] || fail "$patch: applied by $3, expected $a"
		[ "$6" = applied ] || fail "$patch: git am -3 failed where perfgate applied (fine, but the corpus says both apply)"
		[ "$8" = yes ] || fail "$patch: perfgate's commit differs from git am's"
	else
		[ "$4" = "$a" ] || fail "$patch: failure names file $4, expected $a"
		[ "$5" = "$b" ] || fail "$patch: failure names hunk $5, expected $b"
	fi
done <tests/apply/expected.txt
[ "$n" -ge 30 ] || fail "only $n patches in expected.txt"
[ "$(wc -l <"$TMP/results")" -eq "$n" ] || fail "expected.txt and the corpus differ in size"

pg_ok=$(awk '$2 == "applied"' "$TMP/results" | wc -l)
am_ok=$(awk '$6 == "applied"' "$TMP/results" | wc -l)
echo "perfgate applied $pg_ok, git am -3 applied $am_ok of $n"
[ "$pg_ok" -ge "$am_ok" ] || fail "perfgate applied fewer patches than git am -3"
# Each method is exercised.
for m in exact offset 3way already; do
	awk -v m=$m '$2 == "applied" && $3 == m' "$TMP/results" | grep -q . || fail "no patch applied by $m"
done
awk '$2 == "failed"' "$TMP/results" | grep -q . || fail "no conflicting patch"

# ---- hostile series (issue 12) --------------------------------------------
# Each must be refused as a patch failure (exit 1, not 3) naming the path
# and the rule, with nothing created or changed next to the repository
# (a sentinel directory "outside" sits beside it); git am -3 refuses the
# same series.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
H=$TMP/hostile
mkdir -p "$H"

# fresh NAME: $H/NAME/repo (README, dir/a.c) next to $H/NAME/outside/keep.
fresh() {
	rm -rf "${H:?}/$1"
	mkdir -p "$H/$1/outside" "$H/$1/repo/dir"
	echo keep >"$H/$1/outside/keep"
	git init -q "$H/$1/repo"
	echo hi >"$H/$1/repo/README"
	echo 'int a;' >"$H/$1/repo/dir/a.c"
	git -C "$H/$1/repo" add README dir/a.c
	git -C "$H/$1/repo" commit -q -m base
}

untouched() {
	[ "$(ls -A "$H/$1/outside")" = keep ] && [ "$(cat "$H/$1/outside/keep")" = keep ] &&
		[ "$(ls -A "$H/$1" | tr '\n' ' ')" = "outside repo " ] ||
		{ ls -laR "$H/$1" >&2; fail "$1: something was written outside the tree"; }
}

mail() {	# mail "1/2" SUBJECT: a format-patch mail header
	printf 'From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n'
	printf 'From: Mallory <mallory@example.org>\nDate: Fri, 1 Mar 2024 08:00:00 +0000\n'
	printf 'Subject: [PATCH %s] %s\n\n---\n' "$1" "$2"
}
new_link() {	# new_link PATH TARGET
	printf 'diff --git a/%s b/%s\nnew file mode 120000\nindex 0000000..1111111\n' "$1" "$1"
	printf -- '--- /dev/null\n+++ b/%s\n@@ -0,0 +1 @@\n+%s\n\\ No newline at end of file\n' "$1" "$2"
}
new_file() {	# new_file A_NAME B_NAME (with prefixes, quoted as in the header)
	printf 'diff --git %s %s\nnew file mode 100644\nindex 0000000..aa93b25\n' "$1" "$2"
	printf -- '--- /dev/null\n+++ %s\n@@ -0,0 +1 @@\n+pwned\n' "$2"
}
rename() {	# rename FROM TO
	printf 'diff --git a/%s b/%s\nsimilarity index 100%%\nrename from %s\nrename to %s\n' \
		"$1" "$2" "$1" "$2"
}
end_mail() { printf -- '-- \n2.39.5\n\n'; }

# pg NAME WANT_FILE WANT_REASON MBOX...: perfgate refuses, naming both.
pg() {
	name=$1 file=$2 reason=$3
	shift 3
	expect_rc 1 "$PG_BUILD/tests/tools/pg_apply" "$H/$name/repo" "$@"
	grep -F " failed $file 0 " "$TMP/out" | grep -qF ": $reason" ||
		{ cat "$TMP/out" >&2; fail "$name: not refused with '$file: $reason'"; }
	[ -z "$(git -C "$H/$name/repo" status --porcelain)" ] || fail "$name: tree left dirty"
	untouched "$name"
	echo "perfgate refuses $name: $(grep ' failed ' "$TMP/out")"
}

# am NAME MBOX: git am -3 refuses it on a fresh tree, writing nothing outside.
am() {
	fresh "$1"
	if git -C "$H/$1/repo" am -3 "$2" >"$TMP/am.out" 2>&1; then
		cat "$TMP/am.out" >&2
		fail "$1: git am -3 applied it"
	fi
	untouched "$1"
	echo "git am -3 refuses $1: $(grep -E 'error|CONFLICT' "$TMP/am.out" | head -1)"
}

# A link to outside/, then a file beneath it: two patches, two mboxes, one.
{ mail 1/2 "add a link"; new_link evil ../outside; end_mail; } >"$H/link.mbox"
{ mail 2/2 "write beneath it"; new_file a/evil/pwned b/evil/pwned; end_mail; } >"$H/file.mbox"
cat "$H/link.mbox" "$H/file.mbox" >"$H/series.mbox"
fresh series
pg series evil/pwned "path is beyond a symbolic link 'evil' (created by patch 1/2)" \
	"$H/series.mbox"
am series "$H/series.mbox"
# Without -3, git names the rule perfgate follows.
fresh series-plain
git -C "$H/series-plain/repo" am "$H/series.mbox" >"$TMP/am.out" 2>&1 &&
	fail "git am applied the symlink series"
expect_grep "affected file 'evil/pwned' is beyond a symbolic link" "$TMP/am.out"
untouched series-plain

fresh two-mboxes
pg two-mboxes evil/pwned "path is beyond a symbolic link 'evil' (in the tree)" \
	"$H/link.mbox" "$H/file.mbox"

{ mail 1/1 "link and file"; new_file a/evil/pwned b/evil/pwned; new_link evil ../outside
  end_mail; } >"$H/one.mbox"
fresh one
pg one evil/pwned "path is beyond a symbolic link 'evil' (created by this patch)" "$H/one.mbox"
am one "$H/one.mbox"

# git's path rules, checked on the names libgit2 decodes.
i=0
while IFS='|' read -r kind a b file reason; do
	i=$((i + 1))
	name=path$i
	file=$(printf '%b' "$file")	# the name as libgit2 decodes it
	{ mail 1/1 "hostile path $i"
	  case $kind in
	  new) new_file "$a" "$b" ;;
	  ren) rename "$a" "$b" ;;
	  esac
	  end_mail; } >"$H/$name.mbox"
	fresh "$name"
	pg "$name" "$file" "$reason" "$H/$name.mbox"
	# git itself writes control bytes in names (only Windows refuses).
	case $file in *"$(printf '\033')"*) ;; *) am "$name" "$H/$name.mbox" ;; esac
done <<'CASES'
new|a/../x|b/../x|../x|path has a '..' component
new|a/.GIT/config|b/.GIT/config|.GIT/config|path names .git
new|a/a/.git/hooks/x|b/a/.git/hooks/x|a/.git/hooks/x|path names .git
new|"a/x\033y"|"b/x\033y"|x\033y|path has a control character
ren|README|/tmp/perfgate-abs-outside|/tmp/perfgate-abs-outside|path is absolute
ren|README|.git/hooks/post-commit|.git/hooks/post-commit|path names .git
CASES
[ ! -e /tmp/perfgate-abs-outside ] || fail "an absolute path was written"

# A 512 MiB file in a binary literal of under 1 MB: refused before libgit2
# inflates it.  The peak RSS is printed, not asserted.
python3 tests/apply/gen-bomb.py $((512 << 20)) >"$H/bomb.mbox"
fresh bomb
echo "bomb: $(wc -c <"$H/bomb.mbox") byte mail, 512 MiB file"
if [ -x /usr/bin/time ]; then
	/usr/bin/time -v "$PG_BUILD/tests/tools/pg_apply" "$H/bomb/repo" "$H/bomb.mbox" \
		>"$TMP/out" 2>"$TMP/time"
	rc=$?
	echo "bomb: pg_apply $(grep -E 'Maximum resident' "$TMP/time" | sed 's/^[[:space:]]*//')"
else
	"$PG_BUILD/tests/tools/pg_apply" "$H/bomb/repo" "$H/bomb.mbox" >"$TMP/out" 2>&1
	rc=$?
fi
[ "$rc" -eq 1 ] || { cat "$TMP/out" >&2; fail "bomb: pg_apply exited $rc, expected 1"; }
expect_grep "failed zeros.bin 0 .*zeros.bin: writes a 512 MiB file \(limit 64 MiB, apply.max_file_mb\)" \
	"$TMP/out"
[ ! -e "$H/bomb/repo/zeros.bin" ] || fail "bomb: zeros.bin was written"
untouched bomb
