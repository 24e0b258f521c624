#!/bin/sh
# Re-vendor uPlot (the dashboard's charts) into web/assets/vendor/uplot/.
#
#   scripts/vendor-uplot.sh            # the pinned version below
#   scripts/vendor-uplot.sh 1.6.33     # another one (then update PINNED)
#
# The dashboard loads nothing from other origins (its CSP is 'self' only),
# so the library is kept in the tree: the IIFE build (window.uPlot, loaded
# with a classic <script> before the page's module), its CSS and its
# licence.  VERSION records the version and the tarball's sha512 integrity
# as the npm registry states it, checked here against the tarball itself,
# so that a later re-vendor shows in the diff whether the bytes changed.
set -eu
cd "$(dirname "$0")/.."

PINNED=1.6.32
version=${1:-$PINNED}
dest=web/assets/vendor/uplot

command -v npm >/dev/null || { echo "vendor-uplot: npm is needed" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# npm pack fetches the published tarball (it checks the registry's
# integrity while downloading); --json names the file and that integrity.
( cd "$tmp" && npm pack --silent --json "uplot@$version" >pack.json )
tarball=$(sed -n 's/^ *"filename": *"\([^"]*\)".*/\1/p' "$tmp/pack.json" | head -n 1)
integrity=$(sed -n 's/^ *"integrity": *"\([^"]*\)".*/\1/p' "$tmp/pack.json" | head -n 1)
[ -n "$tarball" ] && [ -f "$tmp/$tarball" ] || { echo "vendor-uplot: npm pack made no tarball" >&2; exit 1; }

# Our own hash of the bytes we unpack, in npm's notation.
ours="sha512-$(openssl dgst -sha512 -binary "$tmp/$tarball" | base64 | tr -d '\n')"
if [ -n "$integrity" ] && [ "$integrity" != "$ours" ]; then
	echo "vendor-uplot: integrity mismatch: registry $integrity, tarball $ours" >&2
	exit 1
fi

mkdir "$tmp/x"
tar -xzf "$tmp/$tarball" -C "$tmp/x" \
	package/dist/uPlot.iife.min.js package/dist/uPlot.min.css package/LICENSE
got=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$tmp/pack.json" | head -n 1)
[ "$got" = "$version" ] || { echo "vendor-uplot: asked for $version, got '$got'" >&2; exit 1; }

mkdir -p "$dest"
cp "$tmp/x/package/dist/uPlot.iife.min.js" "$tmp/x/package/dist/uPlot.min.css" "$dest/"
cp "$tmp/x/package/LICENSE" "$dest/LICENSE"
printf 'uplot %s\nintegrity %s\nfiles dist/uPlot.iife.min.js dist/uPlot.min.css LICENSE\nby scripts/vendor-uplot.sh\n' \
	"$version" "$ours" >"$dest/VERSION"
echo "vendor-uplot: uplot $version ($ours) in $dest"
