#!/bin/sh
# Regenerate tests/browser/fixture/, the store the dashboard's browser tests
# load, from a real end-to-end run: tests/integration/t_e2e_dpdk.sh with
# PG_E2E_KEEP (the test copies its state directory -- the store
# perfgate.db and logs/ -- and series.mbox there at its end).
#
# Usage: scripts/web-fixture.sh [--from KEPT_DIR] [--out DIR] [BUILD_DIR]
#   --from KEPT_DIR  use a run kept already (PG_E2E_KEEP=KEPT_DIR) instead
#                    of running t_e2e_dpdk.sh (real DPDK builds: minutes
#                    with a warm cache, most of an hour cold)
#   --out DIR        write the fixture there (default tests/browser/fixture)
#   BUILD_DIR        the binaries for that run (default build)
#
# Writes:
#   store.sql  `sqlite3 .dump` of the store after a WAL checkpoint, with
#              its application_id and user_version (which .dump leaves out)
#   logs/      the log files the logs table names, at their paths relative
#              to data_dir; whole, unless one is over 1 MiB: then its last
#              1 MiB from a line start, its logs.bytes set to that and the
#              README saying so
#   README     how and when it was made, what it holds
# The old fixture is replaced only when the new one is complete.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
from=""
out="$top/tests/browser/fixture"
build="$top/build"
while [ $# -gt 0 ]; do
	case $1 in
	--from) [ $# -ge 2 ] || { echo "web-fixture: --from needs a directory" >&2; exit 2; }
		from=$2; shift 2 ;;
	--from=*) from=${1#--from=}; shift ;;
	--out) [ $# -ge 2 ] || { echo "web-fixture: --out needs a directory" >&2; exit 2; }
		out=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -eu/p' "$0" | sed -e '/^set -eu/d' -e 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "web-fixture: unknown option $1" >&2; exit 2 ;;
	*) build=$1; shift ;;
	esac
done
die() { echo "web-fixture: $*" >&2; exit 1; }
for tool in sqlite3 sha256sum; do
	command -v $tool >/dev/null || die "$tool is needed (make deps)"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-web-fixture.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
how="scripts/web-fixture.sh --from $from"

if [ -z "$from" ]; then
	build=$(cd "$build" && pwd) || die "no build directory $build"
	from="$tmp/kept"
	how="scripts/web-fixture.sh (PG_E2E_KEEP=DIR tests/integration/run.sh BUILD tests/integration/t_e2e_dpdk.sh)"
	echo "web-fixture: running t_e2e_dpdk.sh (real DPDK builds) to keep its store"
	PG_E2E_KEEP="$from" "$top/tests/integration/run.sh" "$build" "$top/tests/integration/t_e2e_dpdk.sh" ||
		die "t_e2e_dpdk.sh failed: no fixture made"
fi
[ -f "$from/perfgate.db" ] || die "$from/perfgate.db: no store there (was it kept with PG_E2E_KEEP?)"

# A copy of the store (with its WAL, if the run left one), checkpointed
# into the main file: the kept directory is not changed.
mkdir "$tmp/db" "$tmp/new" "$tmp/new/logs"
for f in "$from"/perfgate.db "$from"/perfgate.db-wal "$from"/perfgate.db-shm; do
	[ -e "$f" ] && cp "$f" "$tmp/db/"
done
db="$tmp/db/perfgate.db"
q() { sqlite3 -bail "$db" "$1"; }
ck=$(q "PRAGMA wal_checkpoint(TRUNCATE)") || die "wal_checkpoint failed"
[ "${ck%%|*}" = 0 ] || die "wal_checkpoint(TRUNCATE) was busy: $ck"
[ "$(q "PRAGMA integrity_check")" = ok ] || die "the kept store fails its integrity check"
[ -z "$(q "PRAGMA foreign_key_check")" ] || die "the kept store has dangling foreign keys"
version=$(q "PRAGMA user_version")
appid=$(q "PRAGMA application_id")	# 0x50474154, "PGAT"
[ "$appid" = 1346847060 ] || die "$db is not a perfgate store (application_id $appid)"
[ "$(q "SELECT count(*) FROM series")" -ge 1 ] || die "the kept store holds no series"

# The logs the store names.  The controller writes paths relative to its
# data_dir (logs/JOB/ATTEMPT/STAGE.log); an absolute one is mapped to the
# part from its logs/ on, when the kept directory has that file.
notes=""
q "SELECT id || ' ' || path FROM logs ORDER BY path" >"$tmp/logs.txt"
while read -r id p; do
	case $p in
	*\'*|*..*) die "log $id: unexpected path '$p'" ;;
	/*)
		rel="logs/${p##*/logs/}"
		[ -f "$from/$rel" ] || die "log $id: absolute path $p, and no $from/$rel"
		q "UPDATE logs SET path = '$rel' WHERE id = $id"
		notes="$notes
- log $id: the store said $p, now $rel (relative to data_dir)"
		p=$rel ;;
	esac
	[ -f "$from/$p" ] || die "log $id: $from/$p is missing"
	mkdir -p "$tmp/new/$(dirname "$p")"
	size=$(wc -c <"$from/$p")
	if [ "$size" -gt 1048576 ]; then
		# The last MiB from a line start: what a reader of a long log
		# looks at first.
		tail -c 1048576 "$from/$p" | sed '1d' >"$tmp/new/$p"
		kept=$(wc -c <"$tmp/new/$p")
		q "UPDATE logs SET bytes = $kept WHERE id = $id"
		notes="$notes
- $p: $size bytes, only its last $kept kept (from a line start); logs.bytes says $kept"
		echo "web-fixture: $p is $size bytes: keeping its last $kept"
	else
		cp "$from/$p" "$tmp/new/$p"
	fi
done <"$tmp/logs.txt"

{
	sqlite3 -bail "$db" .dump
	echo "PRAGMA application_id = $appid;"
	echo "PRAGMA user_version = $version;"
} >"$tmp/new/store.sql"
# The dump loads into a store that the controller and its checks accept.
sqlite3 -bail "$tmp/check.db" <"$tmp/new/store.sql" || die "store.sql does not load"
[ "$(sqlite3 "$tmp/check.db" "PRAGMA integrity_check")" = ok ] || die "store.sql loads damaged"
[ "$(sqlite3 "$tmp/check.db" "PRAGMA user_version")" = "$version" ] || die "store.sql lost user_version"

counts=$(q "SELECT (SELECT count(*) FROM series) || ' series, ' || (SELECT count(*) FROM runs) || ' runs, ' ||
	(SELECT count(*) FROM jobs) || ' jobs, ' || (SELECT count(*) FROM results) || ' results, ' ||
	(SELECT count(*) FROM samples) || ' samples, ' || (SELECT count(*) FROM verdicts) || ' verdicts, ' ||
	(SELECT count(*) FROM history) || ' history points, ' || (SELECT count(*) FROM logs) || ' logs, ' ||
	(SELECT count(*) FROM agents) || ' agents'")
cat >"$tmp/new/README" <<EOF
Made by $how on $(date -u +%Y-%m-%dT%H:%M:%SZ) from commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown): the store of a real t_e2e_dpdk.sh run (sqlite3 .dump) and its logs.

Store schema version $version: $counts.
tests/browser/lib.mjs loadFixture() loads it: sqlite3 NEWDB < store.sql, logs/ copied into the data_dir.${notes:+
$notes}
EOF

rm -rf "$out.old"
[ -d "$out" ] && mv "$out" "$out.old"
mv "$tmp/new" "$out"
rm -rf "$out.old"
echo "web-fixture: $out: $counts"
