#!/bin/sh
# Make the demo's patch mails, patches/samples/demo/: eight mbox files, in
# the order a mailing list would receive them, made with `git format-patch`
# against the DPDK 22.11 tree of scripts/dpdk-tree.sh (its main commit, the
# same id on every machine), the README that says what each is and what
# verdict the demo expects, and `expected`, the same for make demo.
#
#   scripts/demo-series.sh [OUTDIR]      default patches/samples/demo
#
# Everything that git would take from the clock, the machine or the user
# is fixed: authors, author and committer dates, Message-IDs (format-patch
# makes them from the clock with --thread; they are rewritten here to the
# fixed ones below), the signature, the abbreviation length; git runs with
# GIT_CONFIG_NOSYSTEM=1, HOME in a temporary directory and no GIT_*
# variable from outside, so that no configuration leaks in.  Two runs give
# the same bytes (tests/integration/t_demo_series.sh compares a fresh run
# with the committed files).  OUTDIR's *.mbox, README.md and expected (what
# `make demo` checks each series against) are replaced.
# KEEP=1 keeps the temporary directory (the author's clone) to look at.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/patches/samples/demo}

die() {
	echo "demo-series.sh: $*" >&2
	exit 1
}

# The tree's main commit (scripts/dpdk-tree.sh fixes author, committer and
# date): every mail names it in base-commit:, and the README names it too.
want_base=a358448428201a795050f6d3242f0c614f1f0058

# The tree, found (or made, once) before HOME changes: dpdk-tree.sh keeps it
# under ~/.cache/perfgate when not run as root.
tree=$("$top/scripts/dpdk-tree.sh") || die "no DPDK tree (scripts/dpdk-tree.sh)"
base=$(git --git-dir="$tree" rev-parse main) || die "no main in $tree"
[ "$base" = "$want_base" ] ||
	die "main of $tree is $base, not $want_base: not the tree these mails are for"

# Nothing from the caller's git environment.
for v in $(env | sed -n 's/^\(GIT_[A-Z_0-9]*\)=.*/\1/p'); do unset "$v"; done
unset XDG_CONFIG_HOME EMAIL
tmp=$(mktemp -d "${TMPDIR:-/tmp}/demo-series.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME="$tmp/home" TZ=UTC LC_ALL=C
mkdir -p "$HOME"
git config --global core.abbrev 12
git config --global init.defaultBranch main
git config --global commit.gpgsign false

git clone -q "$tree" "$tmp/dpdk" || die "clone of $tree"
cd "$tmp/dpdk"

# The people.  Fictional, on the reserved example domains.
INES="Ines Moreau <ines.moreau@example.org>"
TOMAS="Tomas Lindqvist <tomas.lindqvist@example.com>"
PRIYA="Priya Raman <priya.raman@example.net>"
KENJI="Kenji Watanabe <kenji.watanabe@example.org>"
OLGA="Olga Petrenko <olga.petrenko@example.com>"
MARCO="Marco Bianchi <marco.bianchi@example.net>"
LENA="Lena Fischer <lena.fischer@example.org>"

# The Message-IDs, shaped as git send-email makes them
# (<date.pid-N-user@host>, N 0 for a cover letter).
ID_HARMLESS=20261102090000.2101-1-ines.moreau@example.org
ID_SLOWDOWN=20261102113000.2202-1-tomas.lindqvist@example.com
ID_V1_COVER=20261103100000.2303-0-priya.raman@example.net
ID_V1_1=20261103100000.2303-1-priya.raman@example.net
ID_V1_2=20261103100000.2303-2-priya.raman@example.net
ID_NOAPPLY=20261103150000.2404-1-kenji.watanabe@example.org
ID_BREAK=20261104090000.2505-1-olga.petrenko@example.com
ID_DEPENDS=20261104140000.2606-1-marco.bianchi@example.net
ID_V2_COVER=20261105100000.2707-0-priya.raman@example.net
ID_V2_1=20261105100000.2707-1-priya.raman@example.net
ID_V2_2=20261105100000.2707-2-priya.raman@example.net
ID_RECHECK=20261105160000.GA2808@lena.example.org

# as "Name <email>" DATE: author and committer of the commits and mails
# that follow (a cover letter's Date: is the committer date).
as() {
	GIT_AUTHOR_NAME=${1% <*}
	GIT_AUTHOR_EMAIL=${1##*<}
	GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL%>}
	GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
	GIT_AUTHOR_DATE=$2 GIT_COMMITTER_DATE=$2
	export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL \
		GIT_AUTHOR_DATE GIT_COMMITTER_DATE
}

# replace FILE <<EOF: OLD lines, a line "=>", NEW lines; OLD must occur
# exactly once in FILE (so an edit never lands somewhere unexpected).
replace() {
	python3 -c '
import sys
path = sys.argv[1]
lines = sys.stdin.read().split("\n")
if lines and lines[-1] == "":
    lines.pop()
k = lines.index("=>")
old = "\n".join(lines[:k]) + "\n"
new = "\n".join(lines[k + 1:]) + "\n" if lines[k + 1:] else ""
s = open(path).read()
if s.count(old) != 1:
    sys.exit("%s: the text to replace occurs %d times:\n%s" % (path, s.count(old), old))
open(path, "w").write(s.replace(old, new))
' "$1" || die "edit of $1 failed"
}

# commit SUBJECT BODY: commit every change, signed off by the author.
commit() {
	printf '%s\n\n%s\n\nSigned-off-by: %s <%s>\n' "$1" "$2" \
		"$GIT_AUTHOR_NAME" "$GIT_AUTHOR_EMAIL" >"$tmp/msg"
	git diff --quiet && die "nothing to commit for '$1'"
	git commit -q -a -F "$tmp/msg" || die "commit of '$1'"
}

# The options every mail is made with: the list's address, the base, a
# fixed signature (the git that made the committed files), no numbering
# of a single patch.
FP="--base=$base --to=dev@dpdk.org --signature=2.39.5"

# single OUT MSGID [FORMAT-PATCH ARGS]: the last commit as a one-patch
# series with a fixed Message-ID.
single() {
	o=$1 id=$2
	shift 2
	# shellcheck disable=SC2086
	git format-patch -q --stdout $FP --add-header="Message-Id: <$id>" "$@" -1 >"$o" ||
		die "format-patch for $o"
}

# series OUT SUBJECT BLURB COVER_ID PATCH_ID... -- [FORMAT-PATCH ARGS]:
# main..HEAD with a cover letter, threaded as git send-email threads it
# (every patch In-Reply-To the cover), format-patch's Message-IDs replaced
# by the fixed ones, the cover letter's placeholders by SUBJECT and BLURB.
series() {
	o=$1 subject=$2 blurb=$3
	shift 3
	ids=""
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		ids="$ids $1"
		shift
	done
	[ $# -gt 0 ] && shift
	rm -rf "$tmp/series"
	# shellcheck disable=SC2086
	git format-patch -q $FP --thread=shallow --cover-letter -o "$tmp/series" "$@" main..HEAD ||
		die "format-patch for $o"
	: >"$tmp/ids.sed"
	# shellcheck disable=SC2086
	set -- $ids
	for f in "$tmp"/series/*.patch; do
		[ $# -gt 0 ] || die "$o: more mails than Message-IDs"
		gen=$(sed -n '/^$/q;s/^Message-I[dD]: *<\(.*\)>$/\1/p' "$f")
		[ -n "$gen" ] || die "$f: no Message-ID"
		printf 's|<%s>|<%s>|g\n' "$(printf '%s' "$gen" | sed 's/[].*[^$\\|]/\\&/g')" "$1" \
			>>"$tmp/ids.sed"
		shift
	done
	[ $# -eq 0 ] || die "$o: fewer mails than Message-IDs"
	printf '%s\n' "$blurb" >"$tmp/blurb"
	for f in "$tmp"/series/*.patch; do
		sed -f "$tmp/ids.sed" \
		    -e "s|\*\*\* SUBJECT HERE \*\*\*|$subject|" \
		    -e "/\*\*\* BLURB HERE \*\*\*/{r $tmp/blurb
d;}" "$f"
	done >"$o"
	! grep -q '\*\*\* .* HERE \*\*\*' "$o" || die "$o: a cover letter placeholder is left"
}

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/*.mbox
mb=$tmp/mbox
mkdir -p "$mb"

# ---- 01 harmless: a comment, the same code on both sides ----------------
as "$INES" 2026-11-02T09:00:00Z
git checkout -q -b harmless main
replace lib/mempool/rte_mempool.c <<'EOF'
/* create the mempool */
struct rte_mempool *
rte_mempool_create(const char *name, unsigned n, unsigned elt_size,
=>
/* create the mempool, populate it and initialise its objects */
struct rte_mempool *
rte_mempool_create(const char *name, unsigned n, unsigned elt_size,
EOF
commit "mempool: say what rte_mempool_create does" \
"The comment above rte_mempool_create() said only that it creates the
mempool; it also populates it and runs the object initialisers.
A comment only: the code compiled is the same."
single "$mb/01-harmless.mbox" "$ID_HARMLESS"
harmless=$(git rev-parse HEAD)

# ---- 02 slowdown: the mempool fast path spins ---------------------------
# dpdk_lib.sh's slowdown spins n/4 per call (about 30 % on the cached
# 32-object path on the demo VM); n/2 here, about twice that, so that the
# demo's few interleaved pairs find it on a noisy VM.
as "$TOMAS" 2026-11-02T11:30:00Z
git checkout -q -b slowdown main
replace lib/mempool/rte_mempool.h <<'EOF'
			   unsigned int n, struct rte_mempool_cache *cache)
{
	void **cache_objs;

	/* No cache provided */
	if (unlikely(cache == NULL))
		goto driver_enqueue;
=>
			   unsigned int n, struct rte_mempool_cache *cache)
{
	void **cache_objs;

	/* Let the producer settle: a short wait per two objects. */
	{
		volatile unsigned int spin;

		for (spin = 0; spin < n / 2; spin++)
			;
	}

	/* No cache provided */
	if (unlikely(cache == NULL))
		goto driver_enqueue;
EOF
replace lib/mempool/rte_mempool.h <<'EOF'
	uint32_t index, len;
	void **cache_objs;

	/* No cache provided */
	if (unlikely(cache == NULL))
		goto driver_dequeue;
=>
	uint32_t index, len;
	void **cache_objs;

	/* Let the consumer settle: a short wait per two objects. */
	{
		volatile unsigned int spin;

		for (spin = 0; spin < n / 2; spin++)
			;
	}

	/* No cache provided */
	if (unlikely(cache == NULL))
		goto driver_dequeue;
EOF
commit "mempool: wait a little in every get and put" \
"Spin n/2 iterations of a volatile loop at the start of
rte_mempool_do_generic_put() and rte_mempool_do_generic_get(), with or
without a cache: a deliberate slowdown of the mempool fast path for the
performance gate to catch (the cached 32-object path about 60 % slower
on the demo VM)."
single "$mb/02-slowdown.mbox" "$ID_SLOWDOWN"

# ---- 03 a two-patch series with a cover letter, v1 ----------------------
as "$PRIYA" 2026-11-03T10:00:01Z
git checkout -q -b docs-v1 main
replace drivers/mempool/ring/rte_mempool_ring.c <<'EOF'
static int
common_ring_mp_enqueue(struct rte_mempool *mp, void * const *obj_table,
=>
/* Multi-producer enqueue: the default ops. */
static int
common_ring_mp_enqueue(struct rte_mempool *mp, void * const *obj_table,
EOF
replace drivers/mempool/ring/rte_mempool_ring.c <<'EOF'
static int
common_ring_mc_dequeue(struct rte_mempool *mp, void **obj_table, unsigned n)
=>
/* Multi-consumer dequeue: the default ops. */
static int
common_ring_mc_dequeue(struct rte_mempool *mp, void **obj_table, unsigned n)
EOF
commit "mempool/ring: document the default enqueue and dequeue" \
"Say which enqueue and dequeue the default mempool ops use."
as "$PRIYA" 2026-11-03T10:00:02Z
replace lib/mempool/rte_mempool_ops.c <<'EOF'
/* add a new ops struct in rte_mempool_ops_table, return its index. */
=>
/*
 * Add a new ops struct in rte_mempool_ops_table, return its index:
 * at most RTE_MEMPOOL_MAX_OPS_IDX ops can be registered.
 */
EOF
commit "mempool: document the ops registration limit" \
"Say in the comment of rte_mempool_register_ops() how many ops the
table holds."
as "$PRIYA" 2026-11-03T10:00:00Z
series "$mb/03-docs-v1.mbox" "mempool: document the default ops" \
"Two comments for readers of the mempool ops: the enqueue and dequeue of
the ring driver's default ops, and how many ops can be registered.
Comments only." \
	"$ID_V1_COVER" "$ID_V1_1" "$ID_V1_2" --

# ---- 04 does not apply: made on a copy the author had edited ------------
# Kenji's tree carries a change of his own (never sent) to the very lines
# the patch edits: its context and its '-' lines are not in the tree, and
# the blob its index line names is not either, so that neither a plain nor
# a 3-way apply can take it.  format-patch names that commit in a
# prerequisite-patch-id: line, as it does for any commit between the base
# and the patch.
as "$KENJI" 2026-11-03T14:00:00Z
git checkout -q -b noapply main
replace lib/mempool/rte_mempool.c <<'EOF'
	/* asked for zero items */
=>
	/* zero objects requested */
EOF
replace lib/mempool/rte_mempool.c <<'EOF'
	/* asked cache too big */
=>
	/* cache requested too big */
EOF
commit "mempool: reword two comments of create_empty" "A local change, never sent."
as "$KENJI" 2026-11-03T15:00:00Z
replace lib/mempool/rte_mempool.c <<'EOF'
	/* zero objects requested */
=>
	/* zero objects requested: nothing to create */
EOF
replace lib/mempool/rte_mempool.c <<'EOF'
	/* cache requested too big */
=>
	/* cache requested too big, or its flush threshold above n */
EOF
commit "mempool: explain the argument checks of create_empty" \
"Say why rte_mempool_create_empty() refuses zero objects and a cache
whose flush threshold is above the number of objects."
single "$mb/04-does-not-apply.mbox" "$ID_NOAPPLY"
noapply_blob=$(git rev-parse HEAD^:lib/mempool/rte_mempool.c)

# ---- 05 build break: an undeclared identifier in a compiled file --------
as "$OLGA" 2026-11-04T09:00:00Z
git checkout -q -b buildbreak main
replace lib/mempool/rte_mempool.c <<'EOF'
	fprintf(f, "    cache_size=%"PRIu32"\n", mp->cache_size);
=>
	fprintf(f, "    cache_size=%"PRIu32"\n", mp->cache_size);
	fprintf(f, "    cache_flushthresh=%"PRIu32"\n",
		CALC_CACHE_FLUSHTHRESH(cache_size));
EOF
commit "mempool: show the cache flush threshold in dumps" \
"rte_mempool_dump() shows the cache size; show the flush threshold that
goes with it too."
single "$mb/05-build-break.mbox" "$ID_BREAK"

# ---- 06 depends on 01: rewrites the comment 01 wrote --------------------
as "$MARCO" 2026-11-04T14:00:00Z
git checkout -q -b depends "$harmless"
replace lib/mempool/rte_mempool.c <<'EOF'
/* create the mempool, populate it and initialise its objects */
=>
/*
 * Create the mempool, populate it and initialise its objects:
 * rte_mempool_create_empty(), rte_mempool_populate_default(), then
 * obj_init on every object.
 */
EOF
commit "mempool: name the steps of rte_mempool_create" \
"Name the functions rte_mempool_create() calls, in the comment that the
patch this one depends on wrote.

Depends-on: <$ID_HARMLESS> (\"mempool: say what rte_mempool_create does\")"
# Made against the tree's main, with the patch it depends on applied:
# base-commit: main, and git's prerequisite-patch-id: of that patch.
single "$mb/06-depends-on.mbox" "$ID_DEPENDS"

# ---- 07 the series of 03, v2, sent in reply to v1's cover letter --------
as "$PRIYA" 2026-11-05T10:00:01Z
git checkout -q -b docs-v2 main
replace drivers/mempool/ring/rte_mempool_ring.c <<'EOF'
static int
common_ring_mp_enqueue(struct rte_mempool *mp, void * const *obj_table,
=>
/* Multi-producer enqueue: the default ops, "ring_mp_mc", use it. */
static int
common_ring_mp_enqueue(struct rte_mempool *mp, void * const *obj_table,
EOF
replace drivers/mempool/ring/rte_mempool_ring.c <<'EOF'
static int
common_ring_mc_dequeue(struct rte_mempool *mp, void **obj_table, unsigned n)
=>
/* Multi-consumer dequeue: the default ops, "ring_mp_mc", use it. */
static int
common_ring_mc_dequeue(struct rte_mempool *mp, void **obj_table, unsigned n)
EOF
commit "mempool/ring: document the default enqueue and dequeue" \
"Say which enqueue and dequeue the default mempool ops use."
as "$PRIYA" 2026-11-05T10:00:02Z
replace lib/mempool/rte_mempool_ops.c <<'EOF'
/* add a new ops struct in rte_mempool_ops_table, return its index. */
=>
/*
 * Add a new ops struct in rte_mempool_ops_table, return its index,
 * or -ENOSPC once RTE_MEMPOOL_MAX_OPS_IDX ops are registered.
 */
EOF
commit "mempool: document the ops registration limit" \
"Say in the comment of rte_mempool_register_ops() how many ops the
table holds, and what registering one more returns."
as "$PRIYA" 2026-11-05T10:00:00Z
series "$mb/07-docs-v2.mbox" "mempool: document the default ops" \
"Two comments for readers of the mempool ops: the enqueue and dequeue of
the ring driver's default ops, and how many ops can be registered.
Comments only.

v2:
- patch 1: name the default ops, \"ring_mp_mc\"
- patch 2: say what registering one ops too many returns (-ENOSPC)" \
	"$ID_V2_COVER" "$ID_V2_1" "$ID_V2_2" -- -v2 --in-reply-to="<$ID_V1_COVER>"

# ---- 08 a recheck request: a reply to 01 --------------------------------
cat >"$mb/08-recheck.mbox" <<EOF
From lena.fischer@example.org Thu Nov  5 16:00:00 2026
From: $LENA
To: $INES
Cc: dev@dpdk.org
Subject: Re: [PATCH] mempool: say what rte_mempool_create does
Date: Thu, 5 Nov 2026 16:00:00 +0000
Message-ID: <$ID_RECHECK>
In-Reply-To: <$ID_HARMLESS>
References: <$ID_HARMLESS>
MIME-Version: 1.0
Content-Type: text/plain; charset=UTF-8
Content-Transfer-Encoding: 8bit

On Mon, Nov 02, 2026 at 09:00:00AM +0000, Ines Moreau wrote:
> The comment above rte_mempool_create() said only that it creates the
> mempool; it also populates it and runs the object initialisers.
> A comment only: the code compiled is the same.

The lab was busy while this ran; please measure it again.

Recheck-request: perfgate-demo-Performance

Lena
EOF

# Sanity: every mail has its Message-ID, every patch names the base.
for f in "$mb"/*.mbox; do
	grep -q "^Message-I[dD]: <" "$f" || die "$f: no Message-ID"
	case $f in *recheck*) continue ;; esac
	grep -q "^base-commit: $base\$" "$f" || die "$f: no base-commit: $base"
done
grep -q "^index ${noapply_blob%"${noapply_blob#????????????}"}" "$mb/04-does-not-apply.mbox" ||
	die "04-does-not-apply.mbox does not name the edited blob"
git --git-dir="$tree" cat-file -e "$noapply_blob" 2>/dev/null &&
	die "the edited blob of 04-does-not-apply.mbox is in the tree: a 3-way apply would take it"
cp "$mb"/*.mbox "$out"/

# The README: what each file is and what the demo expects of it.
ids_of() { sed -n 's/^Message-I[dD]: *//p' "$out/$1.mbox" | sed 's/.*/`&`/' | paste -sd' ' | sed 's/ /, /g'; }
subjects_of() { sed -n 's/^Subject: //p' "$out/$1.mbox" | sed 's/.*/- `&`/'; }
entry() {
	printf '## %s.mbox\n\n%s\n\n' "$1" "$2"
	subjects_of "$1"
	printf '\nMessage-ID: %s\n\nExpected: %s\n\n' "$(ids_of "$1")" "$3"
}
{
	cat <<EOF
# The demo's patch series

Made by \`scripts/demo-series.sh\`: do not edit these files, run the
script again (it makes the same bytes every time; tests/integration/
t_demo_series.sh checks that they are what it makes).  The patches are
\`git format-patch\` output against the DPDK 22.11 tree of
\`scripts/dpdk-tree.sh\`, whose only commit, main, is the same on every
machine: every patch mail names it, \`base-commit: $base\`.
The authors are fictional.  One mbox file per series, plus the recheck
request, in the order a list would receive them: deliver them in file
name order.  The verdicts are those of the demo's context,
perfgate-demo-Performance (profiles/demo.json).

EOF
	entry 01-harmless "Ines Moreau, 2 Nov 2026.  A comment in lib/mempool/rte_mempool.c
(above rte_mempool_create()): both sides build the same code." \
"**success** (Performance Testing PASS); on a noisy VM possibly a
warning that the host was too noisy to tell."
	entry 02-slowdown "Tomas Lindqvist, 2 Nov 2026.  A volatile spin of n/2 iterations at the
start of rte_mempool_do_generic_put() and rte_mempool_do_generic_get()
(lib/mempool/rte_mempool.h), cached or not: twice the spin of
tests/integration/dpdk_lib.sh's slowdown (n/4, about 30 % on the cached
32-object path on the demo VM), so about 60 % there." \
"**fail**: a regression on the gated mempool keys
(mempool.cache.cores1.*, and the uncached ones)."
	entry 03-docs-v1 "Priya Raman, 3 Nov 2026.  Two patches and a cover letter: comments in
drivers/mempool/ring/rte_mempool_ring.c and lib/mempool/rte_mempool_ops.c." \
"**no verdict**: superseded by 07-docs-v2.  Ingested together with 07
before a plan it is never planned; planned before 07 arrives, its jobs
are cancelled (\"superseded by series N\") at the next plan."
	entry 04-does-not-apply "Kenji Watanabe, 3 Nov 2026.  Made on a copy of lib/mempool/rte_mempool.c
that the author had changed in a commit of his own, never sent (git
names it in the prerequisite-patch-id: line): the lines the hunk removes
are not in the tree, and neither is the blob its index line names, so
that \`git am -3\` and perfgate's apply refuse it, with no 3-way
fallback." \
"**warning**: the series does not apply."
	entry 05-build-break "Olga Petrenko, 4 Nov 2026.  Prints the cache flush threshold in
rte_mempool_dump_cache() with an identifier that is not declared there
(\`cache_size\`), in lib/mempool/rte_mempool.c, which the demo builds
compile.  It applies." \
"**fail**: the build of the patched side fails."
	entry 06-depends-on "Marco Bianchi, 4 Nov 2026.  Rewrites the comment that 01-harmless wrote,
so that it applies only on top of it; its commit message says so with
a Message-ID:

    Depends-on: <$ID_HARMLESS> (\"mempool: say what rte_mempool_create does\")

Intake resolves it to 01's series (it is already there; were it not,
the planner would look for it again at every pass, for up to a day)." \
"**success**, with 01-harmless applied first (listed in the jobs'
depends_on)."
	entry 07-docs-v2 "Priya Raman, 5 Nov 2026.  Version 2 of 03-docs-v1, the same title, sent
as \`git send-email --in-reply-to='<$ID_V1_COVER>'\`
would: its cover letter is In-Reply-To and References v1's cover, its
patches are In-Reply-To its cover with References to both.  So both of
intake's rules make it supersede v1: same submitter and title, and in
reply to the old thread." \
"**success**; 03-docs-v1 superseded."
	entry 08-recheck "Lena Fischer, 5 Nov 2026.  Not a patch: a reply to 01-harmless
(In-Reply-To and References \`<$ID_HARMLESS>\`) whose
body has, unquoted, in column 0, the line

    Recheck-request: perfgate-demo-Performance" \
"a second run of 01-harmless, reason recheck, on the base of its first
run: **success** again."
	cat <<EOF
## After a fresh ingest

All eight files ingested in order into an empty store (\`ingest --mbox\`
for each, or delivered to a public-inbox archive and \`ingest --inbox\`)
give these series ids:

| id | file | state |
| --- | --- | --- |
| 1 | 01-harmless | complete, with the recheck request (pending) |
| 2 | 02-slowdown | complete |
| 3 | 03-docs-v1 | superseded by 7 |
| 4 | 04-does-not-apply | complete |
| 5 | 05-build-break | complete |
| 6 | 06-depends-on | complete, depends on 1 (msgid) |
| 7 | 07-docs-v2 | complete, supersedes 3 |

One \`plan\` then makes six runs of two jobs each (demo-release and
demo-debugoptimized), all on base $base: one
(reason new) for each of 1, 2, 4, 5, 6 and 7.  The recheck request (08)
is older than 1's first run, so that run answers it: a request asks for
a run after the ones it has seen.  Delivered once 1's first run is
planned, 08 gets a run of its own (reason recheck, on the base of 1's
first run).

For the demo's orchestration: the scheduler leases a recheck's jobs
before those of a new series.  To show the recheck after 1's first
verdict, deliver 08 once that run has its verdict; to show v1's jobs
cancelled rather than never planned, plan after 03 and deliver 07
later.  04 ends at the apply and 05 at the patched build: no benchmark
runs for either.
EOF
} >"$out/README.md"

# What the demo expects of each series, for scripts/demo_watch.py (the
# README above says the same for people).
cat >"$out/expected" <<'EOF'
# What the demo expects of each of its series (scripts/demo_watch.py reads
# this; make demo exits 1 naming any series that gets something else):
#   MESSAGE-ID   STATES   LABEL
# STATES: the check states it may end in, "|" between them, each
# optionally ":WHY" (the job verdict's reason: regression, build-failure,
# apply-failure, noisy...), or "superseded".  On this shared VM a series
# may stay undecided at the cap of its repetitions: a pass needs the 95 %
# interval to exclude -10 %, a fail the interval below 0, and the host's
# speed can jump 2x between runs.  The verdict then says so (noisy host,
# or inconclusive with the interval and what the host resolves) instead of
# guessing; it never passes the slowdown.
<20261102090000.2101-1-ines.moreau@example.org>     success|warning:noisy|warning:inconclusive   01 harmless: a comment only
<20261102113000.2202-1-tomas.lindqvist@example.com> fail:regression|warning:noisy|warning:inconclusive 02 slowdown of the mempool fast path
<20261103100000.2303-0-priya.raman@example.net>     superseded              03 v1 of a series, superseded by 07
<20261103150000.2404-1-kenji.watanabe@example.org>  warning:apply-failure   04 does not apply
<20261104090000.2505-1-olga.petrenko@example.com>   fail:build-failure      05 breaks the build
<20261104140000.2606-1-marco.bianchi@example.net>   success|warning:noisy|warning:inconclusive   06 depends on 01
<20261105100000.2707-0-priya.raman@example.net>     success|warning:noisy|warning:inconclusive   07 v2 of 03
# 08 is a reply to 01 asking for a recheck: 01 then has two runs.
recheck <20261102090000.2101-1-ines.moreau@example.org> 2
EOF
echo "$out"
