#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make-corpus.sh DIR: write the intake test corpus into DIR, one mail per
# file (DIR/NN-name.eml, in delivery order), made with `git format-patch`
# from a throw-away repository, plus hand-written replies, a test report
# and the broken mails of tests/mail/.  Dates and Message-Ids are pinned so
# the corpus is the same on every run.
#
#   01-04  [PATCH 0/3]..[PATCH 3/3] "mempool: speed up bulk get" (v1)
#   05-08  [PATCH v2 0/3]..3/3, sent --in-reply-to the v1 cover (supersedes v1
#          by title and by thread: the v2 cover's In-Reply-To is the v1 cover)
#   09     [PATCH] net/null: fix tx burst            single patch, no counter
#   10-11  [RFC PATCH 1/2], [RFC PATCH 2/2]           RFC without a cover
#   12     [PATCH 22.11] mempool: fix stats           stable-branch tag
#   13,14,16  [PATCH 1/3],[PATCH 3/3],[PATCH 2/3]     patch 2 arrives last
#   15     [PATCH 1/3] of a series that never completes (old date: stale)
#   17     Re: v2 cover, "Recheck-request: perfgate-demo-Performance, other-lab"
#   18     Re: v2 1/3 quoting someone's Recheck-request (must be ignored)
#   19     |SUCCESS| pw100 [PATCH v2 1/3] ... a test report (ignored)
#   20     [PATCH] with Depends-on: series-100 and base-commit (format-patch --base)
#   21     a commit message with an unescaped "From the body ..." line
#   22-27  broken: bad MIME boundary, no Message-ID, binary junk, headers only,
#          an empty body (a valid mail, not a patch), an unterminated multipart
#   28-29  [PATCH] eal: check lcore id, then [PATCH v2] eal: reject lcore ids
#          beyond the maximum sent --in-reply-to it (supersedes by thread)
#   30-31  [PATCH] ethdev: fix link status, then [PATCH v2] of the same title
#          in a new thread (supersedes by title)
set -eu

out=${1:?usage: make-corpus.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/pg-corpus.XXXXXX")
trap 'rm -rf "$work"' EXIT

export GIT_CONFIG_NOSYSTEM=1 HOME="$work" TZ=UTC LC_ALL=C
git init -q "$work/r"
cd "$work/r"
git config user.name "Ada Lovelace"
git config user.email "ada@example.org"
git config format.signOff false

n=0
commit() {	# commit FILE LINE SUBJECT [BODY]
	n=$((n + 1))
	printf '%s\n' "$2" >>"$1"
	git add "$1"
	GIT_AUTHOR_DATE="2026-01-0${3%%:*}T10:00:0${n#${n%?}}" \
	GIT_COMMITTER_DATE="2026-01-0${3%%:*}T10:00:0${n#${n%?}}" \
		git commit -q -m "${3#*:}" -m "${4:-Signed-off-by: Ada Lovelace <ada@example.org>}"
}

# Pin format-patch's time-derived Message-Ids (<sha|cover>.TIME.git.email)
# per batch, so that v1 and v2 covers differ but runs do not.  Only the
# batch's own ids are rewritten, wherever the batch names them: a batch
# sent --in-reply-to an earlier one keeps that one's id in In-Reply-To and
# References, as `git send-email --in-reply-to` threads it.
pin() {	# pin STAMP FILE...
	stamp=$1
	shift
	script=
	for f in "$@"; do
		id=$(sed -n 's/^Message-I[dD]: <\(.*\)>$/\1/p' "$f")
		new=$(printf '%s\n' "$id" |
			sed "s/^\([0-9a-f]\{40\}\|cover\)\.[0-9]\{9,11\}\.git\./\1.$stamp.git./")
		old=$(printf '%s\n' "$id" | sed 's/[.]/\\./g')
		script="$script
s/<$old>/<$new>/g"
	done
	for f in "$@"; do
		sed -i -e "$script" -e "s/^Date: .*/Date: Fri, 2 Jan 2026 10:00:00 +0000/" "$f"
	done
}

mkdir -p lib/mempool drivers/net/null
printf 'int mempool;\n' >lib/mempool/rte_mempool.c
printf 'int null;\n' >drivers/net/null/rte_eth_null.c
git add . && GIT_AUTHOR_DATE=2026-01-01T00:00:00 GIT_COMMITTER_DATE=2026-01-01T00:00:00 \
	git commit -q -m "initial"
base=$(git rev-parse HEAD)

# v1: cover + 3
commit lib/mempool/rte_mempool.c "int a;" "1:mempool: add bulk helper"
commit lib/mempool/rte_mempool.c "int b;" "1:mempool: use bulk helper in get"
commit lib/mempool/rte_mempool.c "int c;" "1:mempool: document bulk get"
git format-patch -q --thread --cover-letter -3 -o "$work/v1"
sed -i 's/\*\*\* SUBJECT HERE \*\*\*/mempool: speed up bulk get/; s/\*\*\* BLURB HERE \*\*\*/Faster bulk get./' \
	"$work/v1/0000-cover-letter.patch"
pin 1767340801 "$work"/v1/*.patch
v1cover=$(sed -n 's/^Message-I[dD]: <\(.*\)>/\1/p' "$work/v1/0000-cover-letter.patch")

# v2 of the same three, rewritten (new commits), in reply to the v1 cover
git reset -q --hard "$base"
commit lib/mempool/rte_mempool.c "int a2;" "2:mempool: add bulk helper"
commit lib/mempool/rte_mempool.c "int b2;" "2:mempool: use bulk helper in get"
commit lib/mempool/rte_mempool.c "int c2;" "2:mempool: document bulk get"
git format-patch -q --thread --cover-letter -v2 -3 -o "$work/v2" --in-reply-to="$v1cover"
sed -i 's/\*\*\* SUBJECT HERE \*\*\*/mempool: speed up bulk get/; s/\*\*\* BLURB HERE \*\*\*/v2: review comments./' \
	"$work/v2/v2-0000-cover-letter.patch"
pin 1767340802 "$work"/v2/*.patch
v2cover=$(sed -n 's/^Message-I[dD]: <\(.*\)>/\1/p' "$work/v2/v2-0000-cover-letter.patch")
v2p1=$(sed -n 's/^Message-I[dD]: <\(.*\)>/\1/p' "$work/v2/v2-0001-"*.patch)

# A single patch, an RFC pair, a stable backport
git reset -q --hard "$base"
commit drivers/net/null/rte_eth_null.c "int tx;" "3:net/null: fix tx burst"
git format-patch -q --thread -1 -o "$work/single"
pin 1767340803 "$work"/single/*.patch
commit lib/mempool/rte_mempool.c "int r1;" "3:mempool: rework cache"
commit lib/mempool/rte_mempool.c "int r2;" "3:mempool: drop old cache"
git format-patch -q --thread --rfc -2 -o "$work/rfc"
pin 1767340804 "$work"/rfc/*.patch
commit lib/mempool/rte_mempool.c "int s;" "3:mempool: fix stats"
git format-patch -q --thread --subject-prefix="PATCH 22.11" -1 -o "$work/stable"
pin 1767340805 "$work"/stable/*.patch

# Out of order (2 last), and a series that never completes
git reset -q --hard "$base"
commit lib/mempool/rte_mempool.c "int o1;" "4:ring: one"
commit lib/mempool/rte_mempool.c "int o2;" "4:ring: two"
commit lib/mempool/rte_mempool.c "int o3;" "4:ring: three"
git format-patch -q --thread -3 -o "$work/ooo"
pin 1767340806 "$work"/ooo/*.patch
git reset -q --hard "$base"
commit lib/mempool/rte_mempool.c "int i1;" "5:hash: first of three"
commit lib/mempool/rte_mempool.c "int i2;" "5:hash: second of three"
commit lib/mempool/rte_mempool.c "int i3;" "5:hash: third of three"
git format-patch -q --thread -3 -o "$work/inc"
pin 1767340807 "$work"/inc/*.patch
sed -i "s/^Date: .*/Date: Mon, 1 Jan 2024 10:00:00 +0000/" "$work"/inc/*.patch

# Depends-on in the notes, base-commit after the diff
git reset -q --hard "$base"
commit lib/mempool/rte_mempool.c "int d;" "6:mempool: use the new helper"
git format-patch -q --thread -1 --base="$base" -o "$work/dep"
sed -i '0,/^---$/s//---\nDepends-on: series-100\n/' "$work"/dep/*.patch
pin 1767340808 "$work"/dep/*.patch

# Supersession by thread alone: v2 renamed, sent --in-reply-to v1; by
# title alone: v2 of the same title in a thread of its own.
git reset -q --hard "$base"
commit lib/mempool/rte_mempool.c "int l1;" "7:eal: check lcore id"
git format-patch -q --thread -1 -o "$work/thr1"
pin 1767340810 "$work"/thr1/*.patch
thr1=$(sed -n 's/^Message-I[dD]: <\(.*\)>/\1/p' "$work"/thr1/*.patch)
git reset -q --hard "$base"
commit lib/mempool/rte_mempool.c "int l2;" "7:eal: reject lcore ids beyond the maximum"
git format-patch -q --thread -1 -v2 --in-reply-to="$thr1" -o "$work/thr2"
pin 1767340811 "$work"/thr2/*.patch
git reset -q --hard "$base"
commit lib/mempool/rte_mempool.c "int e1;" "7:ethdev: fix link status"
git format-patch -q --thread -1 -o "$work/ttl1"
pin 1767340812 "$work"/ttl1/*.patch
git reset -q --hard "$base"
commit lib/mempool/rte_mempool.c "int e2;" "7:ethdev: fix link status"
git format-patch -q --thread -1 -v2 -o "$work/ttl2"
pin 1767340813 "$work"/ttl2/*.patch

# A commit message with an unescaped From_ line in its body
commit lib/mempool/rte_mempool.c "int f;" "6:mempool: explain" \
	"From the body of this message on, nothing should split.
From here too.

Signed-off-by: Ada Lovelace <ada@example.org>"
git format-patch -q --thread -1 -o "$work/from"
pin 1767340809 "$work"/from/*.patch

i=0
put() {	# put NAME FILE
	i=$((i + 1))
	cp "$2" "$out/$(printf '%02d' $i)-$1.eml"
}
put v1-cover "$work/v1/0000-cover-letter.patch"
j=1; for f in "$work"/v1/000[1-3]-*.patch; do put v1-$j "$f"; j=$((j + 1)); done
put v2-cover "$work/v2/v2-0000-cover-letter.patch"
j=1; for f in "$work"/v2/v2-000[1-3]-*.patch; do put v2-$j "$f"; j=$((j + 1)); done
put single "$work"/single/*.patch
j=1; for f in "$work"/rfc/*.patch; do put rfc-$j "$f"; j=$((j + 1)); done
put stable "$work"/stable/*.patch
put ooo-1 "$work"/ooo/0001-*.patch
put ooo-3 "$work"/ooo/0003-*.patch
put inc-1 "$work"/inc/0001-*.patch
put ooo-2 "$work"/ooo/0002-*.patch

i=16
reply() {	# reply NAME MSGID PARENT SUBJECT BODY
	i=$((i + 1))
	cat >"$out/$(printf '%02d' $i)-$1.eml" <<EOF
From $2 Fri Jan  2 12:00:00 2026
From: Bob Reviewer <bob@example.org>
To: dev@dpdk.org
Subject: $4
Date: Fri, 2 Jan 2026 12:00:00 +0000
Message-ID: <$2>
In-Reply-To: <$3>
References: <$v1cover> <$3>

$5
EOF
}
reply recheck "recheck.1@example.org" "$v2cover" "Re: [PATCH v2 0/3] mempool: speed up bulk get" \
"Recheck-request: perfgate-demo-Performance, other-lab-testing

Please run it again, the host was busy."
reply quoted "quoted.1@example.org" "$v2p1" "Re: [PATCH v2 1/3] mempool: add bulk helper" \
"On Fri, Bob wrote:
> Recheck-request: perfgate-demo-Performance

I do not think a recheck helps here."
i=$((i + 1))
cat >"$out/$(printf '%02d' $i)-report.eml" <<EOF
From ci@example.org Fri Jan  2 13:00:00 2026
From: dpdklab <ci@example.org>
To: test-report@dpdk.org
Subject: |SUCCESS| pw100 [PATCH v2 1/3] mempool: add bulk helper
Date: Fri, 2 Jan 2026 13:00:00 +0000
Message-ID: <report.1@example.org>

Test-Label: iol-unit-testing
Test-Status: SUCCESS
http://dpdk.org/patch/100

_Testing PASS_
EOF
put dep "$work"/dep/*.patch
put from "$work"/from/*.patch
for f in bad-boundary no-msgid binary-junk headers-only empty-body unterminated; do
	put "broken-$f" "$here/../mail/$f.eml"
done
put thread-v1 "$work"/thr1/*.patch
put thread-v2 "$work"/thr2/*.patch
put title-v1 "$work"/ttl1/*.patch
put title-v2 "$work"/ttl2/*.patch
ls "$out" | wc -l >/dev/null
