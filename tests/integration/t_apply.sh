# The apply corpus (tests/apply/): 35 real format-patch patches on the DPDK
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
for m in exact offset 3way; do
	awk -v m=$m '$2 == "applied" && $3 == m' "$TMP/results" | grep -q . || fail "no patch applied by $m"
done
awk '$2 == "failed"' "$TMP/results" | grep -q . || fail "no conflicting patch"
