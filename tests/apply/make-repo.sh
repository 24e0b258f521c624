#!/bin/sh
# Make the repository the apply corpus is tested on:
#
#   tests/apply/make-repo.sh DEST
#
# DEST becomes a clone of the DPDK 22.11 tree (scripts/dpdk-tree.sh) with
# branch "upstream" = the base commit plus the "upstream moved on" commits
# of tests/apply/upstream/, applied with git am under a fixed committer
# and dates, so that branch's commit id is the same everywhere (checked
# against tests/apply/UPSTREAM).  "upstream" is checked out, detached.
# The objects of the base commit's history are all there (the 3-way
# fallback reads preimage blobs from them); the private commit that some
# corpus patches were made on is not, on purpose.
set -eu
dest=${1:?usage: make-repo.sh DEST}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
base=a358448428201a795050f6d3242f0c614f1f0058
want=$(cat "$here/UPSTREAM")

src=$("$top/scripts/dpdk-tree.sh")
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null TZ=UTC LC_ALL=C
git clone -q --no-checkout "$src" "$dest"
git -C "$dest" checkout -q -b upstream "$base"
GIT_COMMITTER_NAME="DPDK upstream" GIT_COMMITTER_EMAIL="dev@dpdk.org" \
	git -C "$dest" am -q --committer-date-is-author-date "$here"/upstream/*.patch
got=$(git -C "$dest" rev-parse HEAD)
if [ "$got" != "$want" ]; then
	echo "make-repo: upstream is $got, expected $want (tests/apply/UPSTREAM)" >&2
	exit 1
fi
git -C "$dest" checkout -q --detach upstream
git -C "$dest" branch -q base "$base"
