#!/bin/sh
# Apply every patch of the corpus with perfgate (build/tests/tools/pg_apply)
# and with `git am -3`, each on a fresh checkout of the corpus repository's
# "upstream" commit, and print a table and the two success rates.
#
#   tests/apply/compare.sh [-o RESULTS] [-r REPO] BUILD_DIR
#
# BUILD_DIR holds tests/tools/pg_apply.  REPO is a repository made by
# make-repo.sh (made in a temporary directory when not given).  RESULTS
# gets one line per patch, for t_apply.sh:
#   PATCH PG_OUTCOME PG_METHOD PG_FILE PG_HUNK AM_OUTCOME AM_METHOD SAME PG_MS AM_MS
# outcomes "applied" or "failed"; PG_METHOD exact/offset/3way/already ("-"
# when failed); AM_METHOD "plain", "3way" (git am said it fell back to a
# 3-way merge) or "already" (it said "No changes -- Patch already
# applied." and made no commit); SAME "yes" when both applied and made the same tree,
# author, author date and message, "no" when they differ, "-" otherwise;
# PG_MS and AM_MS the wall time of each run in milliseconds.
#
# A fresh checkout is `checkout -f --detach upstream` plus `clean -fdx` of
# one working tree per tool: only files that differ are rewritten.
set -eu
results=""
repo=""
while getopts o:r: opt; do
	case $opt in
	o) results=$OPTARG ;;
	r) repo=$OPTARG ;;
	*) echo "usage: compare.sh [-o RESULTS] [-r REPO] BUILD_DIR" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
build=$(cd "${1:?usage: compare.sh [-o RESULTS] [-r REPO] BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tool=$build/tests/tools/pg_apply
[ -x "$tool" ] || { echo "compare: $tool is not built (make $tool)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-apply-compare.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null TZ=UTC LC_ALL=C
export GIT_COMMITTER_NAME=perfgate GIT_COMMITTER_EMAIL=perfgate@localhost
if [ -z "$repo" ]; then
	repo=$tmp/repo
	"$here/make-repo.sh" "$repo"
fi
# One working tree per tool, sharing the objects.
pg=$tmp/pg
am=$tmp/am
git clone -q --no-checkout "$repo" "$pg"
git clone -q --no-checkout "$repo" "$am"
for w in "$pg" "$am"; do
	git -C "$w" checkout -q --detach "$(git -C "$repo" rev-parse upstream)"
done
upstream=$(git -C "$repo" rev-parse upstream)

fresh() {
	# --abort writes a reflog entry, so it needs the committer set above;
	# --quit drops a session it still refuses to end.
	git -C "$1" am --abort >/dev/null 2>&1 || git -C "$1" am --quit >/dev/null 2>&1 || true
	git -C "$1" checkout -q -f --detach "$upstream"
	git -C "$1" clean -q -f -d -x
}

now_ms() { date +%s%3N; }

# What both tools must agree on when both applied.
summary() {
	git -C "$1" log -1 --format='%T%n%an%n%ae%n%ad%n%B' --date=raw HEAD
}

: >"$tmp/results"
n=0
pg_ok=0
am_ok=0
same_n=0
printf '%-40s %-22s %-14s %s\n' patch perfgate "git am -3" same
for p in "$here"/corpus/*.patch; do
	name=$(basename "$p")
	n=$((n + 1))

	fresh "$pg"
	t0=$(now_ms)
	set +e
	"$tool" "$pg" "$p" >"$tmp/pg.out" 2>"$tmp/pg.err"
	rc=$?
	set -e
	pg_ms=$(( $(now_ms) - t0 ))
	# "NAME 1/1 METHOD COMMIT SUBJECT" or "NAME 1/1 failed FILE HUNK DESCRIPTION"
	read -r _ _ method f3 f4 _ <"$tmp/pg.out" || true
	case $rc in
	0) pg_out=applied pg_method=$method pg_file=- pg_hunk=0 pg_ok=$((pg_ok + 1)) ;;
	1) pg_out=failed pg_method=- pg_file=$f3 pg_hunk=$f4 ;;
	*) echo "compare: pg_apply $name: exit $rc" >&2; cat "$tmp/pg.err" >&2; exit 1 ;;
	esac

	fresh "$am"
	t0=$(now_ms)
	set +e
	GIT_COMMITTER_NAME=perfgate GIT_COMMITTER_EMAIL=perfgate@localhost \
		git -C "$am" am -3 "$p" >"$tmp/am.out" 2>&1
	rc=$?
	set -e
	am_ms=$(( $(now_ms) - t0 ))
	am_method=plain
	grep -q "Falling back to patching base and 3-way merge" "$tmp/am.out" && am_method=3way
	grep -q "No changes -- Patch already applied" "$tmp/am.out" && am_method=already
	if [ $rc -eq 0 ]; then
		am_out=applied
		am_ok=$((am_ok + 1))
	else
		am_out=failed
		am_method=-
	fi

	same=-
	if [ "$pg_out" = applied ] && [ "$am_out" = applied ]; then
		summary "$pg" >"$tmp/pg.sum"
		summary "$am" >"$tmp/am.sum"
		if cmp -s "$tmp/pg.sum" "$tmp/am.sum"; then
			same=yes
			same_n=$((same_n + 1))
		else
			same=no
			diff "$tmp/am.sum" "$tmp/pg.sum" | sed "s/^/  $name: /" >&2 || true
		fi
	fi
	pg_col=$pg_out
	[ "$pg_out" = applied ] && pg_col="applied ($pg_method)"
	[ "$pg_out" = failed ] && pg_col="failed (hunk $pg_hunk)"
	am_col=$am_out
	[ "$am_out" = applied ] && am_col="applied ($am_method)"
	printf '%-40s %-22s %-14s %s\n' "$name" "$pg_col" "$am_col" "$same"
	echo "$name $pg_out $pg_method $pg_file $pg_hunk $am_out $am_method $same $pg_ms $am_ms" \
		>>"$tmp/results"
done
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }
echo "perfgate: $pg_ok/$n applied ($(pct $pg_ok $n)%)  git am -3: $am_ok/$n applied ($(pct $am_ok $n)%)  identical commits: $same_n"
[ -z "$results" ] || cp "$tmp/results" "$results"
