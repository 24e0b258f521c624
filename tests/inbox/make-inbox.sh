#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Build public-inbox archives for the inbox reader's tests with Debian's
# public-inbox tools (package public-inbox), from mails that `git
# format-patch` writes out of a throw-away repository.
#
#   make-inbox.sh mails DIR             write the mails below into DIR
#   make-inbox.sh init WORK NAME v1|v2  public-inbox-init WORK/NAME
#   make-inbox.sh deliver WORK NAME MAIL...   public-inbox-mda, in order
#   make-inbox.sh rm WORK MAIL...       public-inbox-learn rm (a "d" commit)
#   make-inbox.sh purge WORK MAIL...    public-inbox-purge (rewrites history)
#   make-inbox.sh epoch WORK NAME N     start epoch N the way public-inbox
#                                       does when an epoch is full (~1 GB):
#                                       the next delivery goes there
#   make-inbox.sh serve WORK LOG        run public-inbox-httpd in the
#                                       foreground on 127.0.0.1, on a port
#                                       the kernel picks; the first line of
#                                       LOG is "# bound http://127.0.0.1:P"
#   make-inbox.sh mkepoch REPO MAIL...  append one v2-shaped commit (tree:
#                                       blob "m") per mail to REPO's master
#                                       with plain git plumbing, as loose
#                                       objects, so that a test can delete
#                                       one (public-inbox writes packs)
#
# WORK holds the public-inbox configuration (WORK/home, never the real
# $HOME) and the inboxes; an inbox NAME has the address NAME@example.com.
#
# The mails (DIR/NN-name.eml), in delivery order:
#   01-cover 02-patch1 03-patch2 04-patch3   [PATCH 0/3]..[PATCH 3/3] series
#   05-single                                [PATCH] a single patch
#   06-reply                                 a reply to 03-patch2
#   07-single-v2                             [PATCH v2], In-Reply-To 05
#   08-reply2                                a reply to 07-single-v2
# Everything git makes time-dependent is pinned: author and committer
# dates, the cover letter's date, and the time part of the Message-Ids
# that --thread derives from the clock.  Each mail's Message-ID is also
# in DIR/NN-name.id, for the tests to compare with.
set -eu

die() {
	echo "make-inbox.sh: $*" >&2
	exit 1
}

pi_env() {
	work=$(cd "$1" && pwd)
	export HOME="$work/home" PI_CONFIG="$work/home/.public-inbox/config"
	export GIT_CONFIG_NOSYSTEM=1 TZ=UTC LC_ALL=C
	mkdir -p "$HOME"
}

# Pin the clock part of format-patch's Message-Ids (<sha|cover>.TIME.git.email).
pin_ids() {
	sed -e 's/\(<[0-9a-f]\{40\}\|<cover\)\.[0-9]\{9,11\}\.git\./\1.1704067200.git./g'
}

mails() {
	out=$1
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
	git init -q "$tmp/repo"
	cd "$tmp/repo"
	d=2024-01-01T00:00:00Z
	export GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d
	printf 'int ring_size(void);\n' >ring.h
	printf '#include "ring.h"\n\nint ring_size(void)\n{\n\treturn 0;\n}\n' >ring.c
	git add ring.h ring.c
	git commit -q -m "ring: initial"
	base=$(git rev-parse HEAD)
	for i in 1 2 3; do
		d=2024-01-0${i}T10:00:00Z
		printf 'int ring_op%d(void);\n' "$i" >>ring.h
		printf '\nint ring_op%d(void)\n{\n\treturn %d;\n}\n' "$i" "$i" >>ring.c
		GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d \
			git commit -q -a -m "ring: add operation $i" \
			-m "Operation $i is needed by the next step." -m "Signed-off-by: Alice Dev <alice@example.com>"
	done
	d=2024-01-04T10:00:00Z
	GIT_COMMITTER_DATE=$d git format-patch -q --thread --cover-letter \
		--base="$base" -o "$tmp/series" "$base..HEAD"
	sed -e 's/\*\*\* SUBJECT HERE \*\*\*/ring: add three operations/' \
	    -e 's/\*\*\* BLURB HERE \*\*\*/Three small operations for the ring./' \
	    "$tmp/series/0000-cover-letter.patch" | pin_ids >"$out/01-cover.eml"
	pin_ids <"$tmp/series/0001-ring-add-operation-1.patch" >"$out/02-patch1.eml"
	pin_ids <"$tmp/series/0002-ring-add-operation-2.patch" >"$out/03-patch2.eml"
	pin_ids <"$tmp/series/0003-ring-add-operation-3.patch" >"$out/04-patch3.eml"

	d=2024-01-05T10:00:00Z
	git checkout -q -b single "$base"
	printf '/* ring buffer */\n' >>ring.h
	GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d GIT_AUTHOR_NAME="Bob Dev" \
		GIT_AUTHOR_EMAIL=bob@example.com git commit -q -a -m "ring: document the header" \
		-m "Signed-off-by: Bob Dev <bob@example.com>"
	GIT_COMMITTER_DATE=$d git format-patch -q --thread -1 --stdout | pin_ids >"$out/05-single.eml"

	patch2=$(sed -n 's/^Message-I[dD]: *//p' "$out/03-patch2.eml")
	cat >"$out/06-reply.eml" <<EOF
From: Carol Reviewer <carol@example.com>
To: dev@example.com
Subject: Re: [PATCH 2/3] ring: add operation 2
Date: Sat, 06 Jan 2024 09:00:00 +0000
Message-ID: <reply-1.carol@example.com>
In-Reply-To: $patch2
References: $patch2
MIME-Version: 1.0
Content-Type: text/plain; charset=UTF-8

On Tue, Jan 02, 2024 at 10:00:00AM +0000, Alice Dev wrote:
> Operation 2 is needed by the next step.

Reviewed-by: Carol Reviewer <carol@example.com>
EOF

	single=$(sed -n 's/^Message-I[dD]: *//p' "$out/05-single.eml")
	d=2024-01-07T10:00:00Z
	printf '/* a ring buffer of pointers */\n' >ring.h.new
	sed '$d' ring.h >>ring.h.new
	mv ring.h.new ring.h
	GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d GIT_AUTHOR_NAME="Bob Dev" \
		GIT_AUTHOR_EMAIL=bob@example.com git commit -q -a --amend -m "ring: document the header" \
		-m "Signed-off-by: Bob Dev <bob@example.com>"
	GIT_COMMITTER_DATE=$d git format-patch -q --thread -v2 --in-reply-to="$single" -1 --stdout |
		pin_ids >"$out/07-single-v2.eml"

	v2=$(sed -n 's/^Message-I[dD]: *//p' "$out/07-single-v2.eml")
	cat >"$out/08-reply2.eml" <<EOF
From: Carol Reviewer <carol@example.com>
To: dev@example.com
Subject: Re: [PATCH v2] ring: document the header
Date: Mon, 08 Jan 2024 09:00:00 +0000
Message-ID: <reply-2.carol@example.com>
In-Reply-To: $v2
References: $single $v2
MIME-Version: 1.0
Content-Type: text/plain; charset=UTF-8

Acked-by: Carol Reviewer <carol@example.com>
EOF
	for f in "$out"/*.eml; do
		sed -n '/^$/q;s/^Message-I[dD]: *//p' "$f" >"${f%.eml}.id"
		[ -s "${f%.eml}.id" ] || die "no Message-ID in $f"
	done
}

init() {
	pi_env "$1"
	name=$2
	case $3 in
	v1) ver=-V1 ;;
	v2) ver=-V2 ;;
	*) die "init: format must be v1 or v2, not '$3'" ;;
	esac
	# -L basic: no Xapian full-text index, only what the reader needs
	# (the over.sqlite3 index public-inbox itself requires).
	public-inbox-init "$ver" -L basic "$name" "$work/$name" \
		"http://127.0.0.1/$name" "$name@example.com"
	# Without this the mda pipes every mail through spamc, which is not
	# installed: it fails and the mail lands in ~/.public-inbox/emergency.
	git config -f "$PI_CONFIG" publicinboxmda.spamcheck none
}

deliver() {
	pi_env "$1"
	name=$2
	shift 2
	for m in "$@"; do
		# --no-precheck: the mails are not addressed to the inbox.
		ORIGINAL_RECIPIENT="$name@example.com" public-inbox-mda --no-precheck <"$m" ||
			die "public-inbox-mda failed on $m"
	done
}

learn_rm() {
	pi_env "$1"
	shift
	for m in "$@"; do
		# --all: otherwise only inboxes named in To:/Cc: are searched.
		public-inbox-learn --all rm <"$m" || die "public-inbox-learn rm failed on $m"
	done
}

purge() {
	pi_env "$1"
	shift
	for m in "$@"; do
		public-inbox-purge --all <"$m" || die "public-inbox-purge failed on $m"
	done
}

epoch() {
	pi_env "$1"
	# PublicInbox::MultiGit::add_epoch is what V2Writable calls when the
	# current epoch passes its rollover size (1 GB, not configurable):
	# a bare git/N.git including all.git's config, listed in all.git's
	# alternates.  V2Writable then imports into the newest epoch.
	perl -MPublicInbox::MultiGit -e \
		'PublicInbox::MultiGit->new($ARGV[0], "all.git", "git")->add_epoch($ARGV[1])' \
		"$work/$2" "$3"
	[ -d "$work/$2/git/$3.git" ] || die "epoch $3 was not created"
}

serve() {
	pi_env "$1"
	# Port 0: the kernel picks a free one and httpd prints it in LOG.
	# -W0: one process, no workers, so that killing its pid ends it all.
	exec public-inbox-httpd -W0 -l http://127.0.0.1:0 >"$2" 2>&1
}

# After the reference's mkepoch.sh, with hash-object/mktree/commit-tree
# instead of fast-import so that every object is a file of its own.
mkepoch() {
	repo=$1
	shift
	export GIT_CONFIG_NOSYSTEM=1 TZ=UTC LC_ALL=C GIT_DIR="$repo"
	[ -d "$repo" ] || git init -q --bare "$repo"
	t=1704067200
	for f in "$@"; do
		blob=$(sed '1{/^From /d}' "$f" | git hash-object -w --stdin)
		tree=$(printf '100644 blob %s\tm\n' "$blob" | git mktree)
		subj=$(sed -n '/^$/q;s/^Subject: //p' "$f" | head -n 1)
		parent=$(git rev-parse -q --verify refs/heads/master || true)
		t=$((t + 60))
		commit=$(printf '%s\n' "$subj" |
			GIT_AUTHOR_NAME="Alice Dev" GIT_AUTHOR_EMAIL=alice@example.com \
			GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_NAME=test \
			GIT_COMMITTER_EMAIL=test@example.com GIT_COMMITTER_DATE="@$t +0000" \
			git commit-tree "$tree" ${parent:+-p "$parent"})
		git update-ref refs/heads/master "$commit"
	done
}

[ $# -ge 1 ] || die "usage: make-inbox.sh mails|init|deliver|rm|purge|epoch|serve|mkepoch ..."
cmd=$1
shift
case $cmd in
mails) [ $# -eq 1 ] || die "usage: mails DIR"; mails "$1" ;;
init) [ $# -eq 3 ] || die "usage: init WORK NAME v1|v2"; init "$@" ;;
deliver) [ $# -ge 3 ] || die "usage: deliver WORK NAME MAIL..."; deliver "$@" ;;
rm) [ $# -ge 2 ] || die "usage: rm WORK MAIL..."; learn_rm "$@" ;;
purge) [ $# -ge 2 ] || die "usage: purge WORK MAIL..."; purge "$@" ;;
epoch) [ $# -eq 3 ] || die "usage: epoch WORK NAME N"; epoch "$@" ;;
serve) [ $# -eq 2 ] || die "usage: serve WORK LOG"; serve "$@" ;;
mkepoch) [ $# -ge 2 ] || die "usage: mkepoch REPO MAIL..."; mkepoch "$@" ;;
*) die "unknown command '$cmd'" ;;
esac
