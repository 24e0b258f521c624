#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Re-create the git-derived mail fixtures in tests/mail/:
#
#   series-v2-{0,1,2,3}.eml  --cover-letter -v2 --thread, In-Reply-To a v1
#   series-v2.mbox           the same series with --stdout; patch 2 has an
#                            unescaped "From here on, ..." line
#   single.eml, crlf.eml     one patch, and the same with CRLF line ends
#   base-commit.eml          --base: "base-commit: <sha>" after the diff
#   rename.eml               a rename with a change (-M)
#   attach.eml, inline.eml   --attach and --inline (MIME text/x-patch)
#   nonascii-qp.eml          RFC 2047 From:/Subject:, quoted-printable body
#   git-mboxrd.mbox          --pretty=mboxrd: ">From" and ">>From" escapes
#
#   tests/mail/make-fixtures.sh [OUTDIR]
#
# Kept by hand (edited copies of the above or written out, see each one):
# dmarc.eml (Mailman's "Name via dev" From: with the author in Reply-To),
# nested-base64.eml (multipart/alternative inside multipart/mixed, latin-1
# QP text, the format-patch file as a base64 attachment), reply.eml (a
# reply with a quoted diff and a KOI8-R name), bad-boundary.eml,
# unterminated.eml, no-msgid.eml, binary-junk.eml, empty-body.eml,
# headers-only.eml, huge-header.eml (a 300 KB field), bad-header.eml,
# publicinbox.mbox (public-inbox's mboxrd), and every NAME.ok (the dump of
# tests/unit/test_mail.c; PG_UPDATE_GOLDEN=1 rewrites them, then check each
# by eye against its .eml).
#
# A throw-away repository with a small C "ring" library gets commits with
# fixed authors and dates; `git format-patch` turns them into mails.  Two
# things git makes non-reproducible are pinned afterwards: the Message-Id
# that --thread derives from the current time (the time is replaced by a
# fixed one) and the signature (pinned to "2.39.2" through
# format.signature, and the MIME boundary to the same).  The quoted-printable mail is re-encoded with perl's
# MIME::QuotedPrint, the module git send-email uses for
# --transfer-encoding=quoted-printable (git-email is not a build dependency).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

export GIT_CONFIG_NOSYSTEM=1 HOME="$tmp/home" TZ=UTC LC_ALL=C
mkdir -p "$HOME"
git config --global user.name "Alice Dev"
git config --global user.email alice@example.com
git config --global init.defaultBranch main
git config --global format.signature 2.39.2
git config --global core.abbrev 12

repo="$tmp/ring"
git init -q "$repo"
cd "$repo"

# commit "DATE" "MESSAGE" [author name] [author email]
commit() {
	GIT_AUTHOR_DATE="$1" GIT_COMMITTER_DATE="$1" \
	GIT_AUTHOR_NAME=${3:-Alice Dev} GIT_AUTHOR_EMAIL=${4:-alice@example.com} \
		git commit -q -a -m "$2"
}

# Pin the time part of format-patch's Message-Ids (sha.TIME.git.email).
pin_ids() {
	sed -e 's/\(<[0-9a-f]\{40\}\|<cover\)\.[0-9]\{9,11\}\.git\./\1.1704067200.git./g' "$@"
}

mkdir -p lib/ring app/test doc/guides/rel_notes
cat >lib/ring/rte_ring.h <<'EOF'
/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RTE_RING_H
#define RTE_RING_H

#include <stdint.h>

struct rte_ring {
	uint32_t size;
	uint32_t head;
	uint32_t tail;
	void *objs[];
};

int rte_ring_enqueue(struct rte_ring *r, void *obj);
int rte_ring_dequeue(struct rte_ring *r, void **obj);

#endif
EOF
cat >lib/ring/rte_ring.c <<'EOF'
/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>

#include "rte_ring.h"

int rte_ring_enqueue(struct rte_ring *r, void *obj)
{
	if (r->head - r->tail == r->size)
		return -ENOBUFS;
	r->objs[r->head++ & (r->size - 1)] = obj;
	return 0;
}

int rte_ring_dequeue(struct rte_ring *r, void **obj)
{
	if (r->head == r->tail)
		return -ENOENT;
	*obj = r->objs[r->tail++ & (r->size - 1)];
	return 0;
}
EOF
cat >lib/ring/rte_ring_utils.c <<'EOF'
/* SPDX-License-Identifier: BSD-3-Clause */
#include "rte_ring.h"

/* Number of objects in the ring. */
unsigned int rte_ring_count(const struct rte_ring *r)
{
	return r->head - r->tail;
}

/* Free slots left in the ring. */
unsigned int rte_ring_free_count(const struct rte_ring *r)
{
	return r->size - (r->head - r->tail);
}
EOF
cat >app/test/test_ring.c <<'EOF'
/* SPDX-License-Identifier: BSD-3-Clause */
#include <assert.h>
#include <stdlib.h>

#include "rte_ring.h"

int main(void)
{
	struct rte_ring *r = calloc(1, sizeof(*r) + 4 * sizeof(void *));
	void *obj;

	r->size = 4;
	assert(rte_ring_enqueue(r, r) == 0);
	assert(rte_ring_dequeue(r, &obj) == 0 && obj == r);
	free(r);
	return 0;
}
EOF
cat >doc/guides/rel_notes/release_24_03.rst <<'EOF'
DPDK Release 24.03
==================

New Features
------------

* **Added nothing yet.**
EOF
git add .
commit "2024-01-01T10:00:00Z" "ring: initial import"
base=$(git rev-parse HEAD)

# --- the series: three patches, sent as v2 with a cover letter -----------
git checkout -q -b bulk
perl -0pi -e 's/(int rte_ring_dequeue\(struct rte_ring \*r, void \*\*obj\);\n)/$1int rte_ring_enqueue_bulk(struct rte_ring *r, void * const *objs,\n\t\t\t   unsigned int n);\n/' lib/ring/rte_ring.h
cat >>lib/ring/rte_ring.c <<'EOF'

int rte_ring_enqueue_bulk(struct rte_ring *r, void * const *objs,
			   unsigned int n)
{
	unsigned int i;

	if (r->size - (r->head - r->tail) < n)
		return -ENOBUFS;
	for (i = 0; i < n; i++)
		r->objs[(r->head + i) & (r->size - 1)] = objs[i];
	r->head += n;
	return 0;
}
EOF
commit "2024-01-02T09:00:00Z" "ring: add bulk enqueue

Enqueue n objects at once or none of them, so that a caller
filling a burst does not have to undo a partial enqueue.

Signed-off-by: Alice Dev <alice@example.com>"

perl -0pi -e 's/(\tassert\(rte_ring_dequeue\(r, &obj\) == 0 && obj == r\);\n)/$1\tassert(rte_ring_enqueue_bulk(r, (void * const []){ r, r, r }, 3) == 0);\n\tassert(rte_ring_enqueue_bulk(r, (void * const []){ r, r }, 2) == -ENOBUFS);\n/' app/test/test_ring.c
perl -0pi -e 's/#include <assert.h>\n/#include <assert.h>\n#include <errno.h>\n/' app/test/test_ring.c
commit "2024-01-02T09:05:00Z" "test/ring: cover bulk enqueue

The all-or-nothing rule is the point of the helper, so test the
refusal as well as the success.

From here on, every new ring helper gets a test in this file.

Acked-by: Bob Reviewer <bob@example.org>
Signed-off-by: Alice Dev <alice@example.com>"

perl -0pi -e 's/\* \*\*Added nothing yet.\*\*/* **Added bulk enqueue to the ring library.**\n\n  \\\`\\\`rte_ring_enqueue_bulk()\\\`\\\` enqueues all objects or none./' doc/guides/rel_notes/release_24_03.rst
commit "2024-01-02T09:10:00Z" "doc: announce ring bulk enqueue

Signed-off-by: Alice Dev <alice@example.com>"

v1cover="<20231220093000.4711-1-alice@example.com>"
fp_series() {
	# the cover letter's Date: is the committer's "now"
	GIT_COMMITTER_DATE="2024-01-02T09:30:00Z" git format-patch -q --cover-letter -v2 --thread=shallow \
		--in-reply-to="$v1cover" --to=dev@dpdk.org \
		--add-header="List-Id: DPDK patches and discussions <dev.dpdk.org>" \
		"$@" "$base"..bulk
}
fill_cover() {
	perl -pi -e 's/\*\*\* SUBJECT HERE \*\*\*/ring: bulk enqueue/;
		s/\*\*\* BLURB HERE \*\*\*/Add an all-or-nothing bulk enqueue to the ring library,\nwith a test and a release note.\n\nv2:\n- test the refusal path too/' "$@"
}
rm -rf "$tmp/series"
fp_series -o "$tmp/series"
fill_cover "$tmp/series"/*.patch
n=0
for f in "$tmp/series"/*.patch; do
	pin_ids "$f" >"$out/series-v2-$n.eml"
	n=$((n + 1))
done
fp_series --stdout >"$tmp/series.mbox"
fill_cover "$tmp/series.mbox"
pin_ids "$tmp/series.mbox" >"$out/series-v2.mbox"

# --- single patches on main ----------------------------------------------
git checkout -q main
perl -pi -e 's/return -ENOENT;/return -EAGAIN;/' lib/ring/rte_ring.c
commit "2024-01-05T12:00:00Z" "ring: return EAGAIN on empty dequeue

Callers poll; ENOENT made them think the ring was gone.

Fixes: 0123456789ab (\"ring: initial import\")
Cc: stable@dpdk.org

Signed-off-by: Alice Dev <alice@example.com>"
git format-patch -q -1 --stdout --to=dev@dpdk.org \
	--add-header="Message-Id: <20240105120000.1234-1-alice@example.com>" \
	>"$out/single.eml"
# The same mail as a Windows mailer or an SMTP capture stores it.
sed 's/$/\r/' "$out/single.eml" >"$out/crlf.eml"

# --base: format-patch appends "base-commit: <sha>" after the diff.
git format-patch -q -1 --stdout --base="$base" \
	--add-header="Message-Id: <20240105120500.1300-1-alice@example.com>" \
	>"$out/base-commit.eml"

# A rename with a small change (similarity index below 100%).
git mv lib/ring/rte_ring_utils.c lib/ring/rte_ring_count.c
perl -pi -e 's/Free slots left in the ring./Free slots left in the ring (never negative)./' lib/ring/rte_ring_count.c
commit "2024-01-06T08:00:00Z" "ring: rename utils to count

The file only holds the count helpers.

Signed-off-by: Alice Dev <alice@example.com>"
git format-patch -q -1 -M --stdout \
	--add-header="Message-Id: <20240106080000.2001-1-alice@example.com>" \
	>"$out/rename.eml"

# The same kind of patch as a MIME attachment, and as an inline part.
perl -pi -e 's/^(\treturn r->head - r->tail;)$/\t\/* head and tail wrap together *\/\n$1/' lib/ring/rte_ring_count.c
commit "2024-01-07T08:00:00Z" "ring: document count wrap-around

Signed-off-by: Alice Dev <alice@example.com>"
git format-patch -q -1 --stdout --attach=2.39.2 \
	--add-header="Message-Id: <20240107080000.3001-1-alice@example.com>" \
	>"$out/attach.eml"
git format-patch -q -1 --stdout --inline=2.39.2 \
	--add-header="Message-Id: <20240107080000.3002-1-alice@example.com>" \
	>"$out/inline.eml"

# A non-ASCII author (RFC 2047 From: and Subject:) and a quoted-printable
# body, as git send-email --transfer-encoding=quoted-printable sends it.
perl -pi -e 's/^(int rte_ring_dequeue)/\/* Dequeue one object; -EAGAIN when empty (\x{c3}\x{a0} la Linux). *\/\n$1/' lib/ring/rte_ring.c
commit "2024-01-08T10:00:00Z" "ring: document dequeue return codes à la Linux, spelled out for every caller

Jürgen asked for the error codes to be spelled out; the comment says what each one means – no more guessing.

Signed-off-by: Morten Brørup <mb@smartsharesystems.com>" \
	"Morten Brørup" mb@smartsharesystems.com
git format-patch -q -1 --stdout \
	--add-header="Message-Id: <20240108100000.4001-1-mb@smartsharesystems.com>" \
	>"$tmp/utf8.eml"
perl -MMIME::QuotedPrint -0777 -ne '
	my ($h, $b) = split /\n\n/, $_, 2;
	$h =~ s/^Content-Transfer-Encoding: 8bit$/Content-Transfer-Encoding: quoted-printable/m;
	print $h, "\n\n", encode_qp($b, "\n");
' "$tmp/utf8.eml" >"$out/nonascii-qp.eml"

# mboxrd as git writes it: body lines matching ^>*From get one more '>'.
printf '%s\n' "ring: note the mbox quirks" "" \
	"From the body of a commit message, mbox writers escape lines." \
	">From here, quoted, this one gets two." "" \
	"Signed-off-by: Alice Dev <alice@example.com>" >"$tmp/msg"
echo "/* mbox */" >>lib/ring/rte_ring_count.c
GIT_AUTHOR_DATE="2024-01-09T10:00:00Z" GIT_COMMITTER_DATE="2024-01-09T10:00:00Z" \
	git commit -q -a -F "$tmp/msg"
echo "/* mbox 2 */" >>lib/ring/rte_ring_count.c
commit "2024-01-09T10:05:00Z" "ring: second mboxrd message

Signed-off-by: Alice Dev <alice@example.com>"
git format-patch -q -2 --stdout --pretty=mboxrd --thread=shallow >"$tmp/rd.mbox"
pin_ids "$tmp/rd.mbox" >"$out/git-mboxrd.mbox"

echo "fixtures written to $out"
