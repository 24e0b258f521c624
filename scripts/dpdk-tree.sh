#!/bin/sh
# Make (once) a git tree of Debian's DPDK 22.11 source package, the tree
# that the end-to-end tests, the apply corpus and the demo build from.
#
#   scripts/dpdk-tree.sh [DEST]      prints the path of the bare repository
#
# DEST defaults to $PG_CACHE/dpdk-22.11.git, PG_CACHE to /var/cache/perfgate
# (root) or ~/.cache/perfgate.  The repository has one branch, main, whose
# only commit is the upstream tarball of the source package (debian/ is
# Debian's packaging, not DPDK) with a fixed author, committer and date, so
# that its commit id is the same on every machine: patches made against it
# (tests/apply/) name blobs that exist.  The downloaded source package is
# kept beside it; nothing is fetched when DEST exists.
set -eu
DPDK_DEB_VERSION=${DPDK_DEB_VERSION:-22.11.11-0+deb12u1}
upstream=${DPDK_DEB_VERSION%%-*}
if [ -z "${PG_CACHE:-}" ]; then
	if [ "$(id -u)" -eq 0 ]; then PG_CACHE=/var/cache/perfgate; else PG_CACHE=$HOME/.cache/perfgate; fi
fi
dest=${1:-$PG_CACHE/dpdk-$upstream.git}
if [ -f "$dest/HEAD" ] && git --git-dir="$dest" rev-parse -q --verify main >/dev/null; then
	echo "$dest"
	exit 0
fi
src=$PG_CACHE/dpdk-src
mkdir -p "$src"
tarball=$src/dpdk_$upstream.orig.tar.xz
if [ ! -f "$tarball" ]; then
	# Source packages need deb-src entries; add Debian's own if missing.
	if ! apt-cache showsrc dpdk 2>/dev/null | grep -q "^Version: $DPDK_DEB_VERSION\$"; then
		list=/etc/apt/sources.list.d/perfgate-src.sources
		if [ ! -f "$list" ]; then
			[ "$(id -u)" -eq 0 ] || { echo "dpdk-tree: need root to add deb-src entries ($list)" >&2; exit 1; }
			cat >"$list" <<'LIST'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
LIST
		fi
		apt-get update -q >&2
	fi
	(cd "$src" && apt-get source --download-only -q "dpdk=$DPDK_DEB_VERSION" >&2)
	[ -f "$tarball" ] || { echo "dpdk-tree: $tarball missing after apt-get source" >&2; exit 1; }
fi
tmp=$(mktemp -d "$PG_CACHE/dpdk-tree.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tar -xJf "$tarball" -C "$tmp"
top=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -f "$top/VERSION" ] || { echo "dpdk-tree: no VERSION in $tarball" >&2; exit 1; }
export GIT_AUTHOR_NAME="perfgate" GIT_AUTHOR_EMAIL="perfgate@localhost" \
	GIT_COMMITTER_NAME="perfgate" GIT_COMMITTER_EMAIL="perfgate@localhost" \
	GIT_AUTHOR_DATE="2024-01-01T00:00:00Z" GIT_COMMITTER_DATE="2024-01-01T00:00:00Z"
git -C "$top" -c init.defaultBranch=main init -q
git -C "$top" -c core.autocrlf=false add -A -f
git -C "$top" -c commit.gpgsign=false commit -q -m "DPDK $(cat "$top/VERSION") from Debian's source package $DPDK_DEB_VERSION"
rm -rf "$dest.new"
git clone -q --bare "$top" "$dest.new"
rm -rf "$dest"
mv "$dest.new" "$dest"
echo "$dest"
