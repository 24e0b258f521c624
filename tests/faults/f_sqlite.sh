# SQLite busy: a second process (the sqlite3 shell) holds the store's write
# lock (BEGIN IMMEDIATE, then nothing) twice a round, for 1 to 4 s (within
# the busy timeout) and for 6 to 9 s (past it), while
# seven agents (six jobs of 4 to 8 s, one agent idle) lease, heartbeat and
# post results.  The controller's writes wait for the busy timeout (5 s),
# then fail: the API answers 503 with Retry-After, the agents keep their
# results in their spools and retry; a daemon pass that cannot write logs
# the error and is retried (or, for intake and planning, stops the daemon,
# which systemd starts again: done here by hand, and counted).  After each
# round: every job final with exactly its one result, every check posted
# once, the store intact (integrity_check, db check), and no lease expired
# for it (lease_s 12: a lock of at most 9 s is shorter than a lease).
#
# SQLite I/O errors, then a read-only store: the state directory is an
# ext4 file system on a loop device whose backing file (sparse, on a small
# tmpfs) is made unable to grow while agents post results: the next write
# that needs a new block fails (EIO: SQLITE_IOERR, "disk I/O error"), ext4
# aborts its journal and turns read-only, and every write of the
# controller fails; the controller stops at the first failed write or
# sync of its store (store.h).  (A plain `mount -o remount,ro` is refused
# while the controller holds the store open for writing: EBUSY.)
# The device must fail honestly: a loop device completes a write that its
# backing file took only in part (a short write: tmpfs filled up in the
# middle of a request) as a success, and the rest of the request is lost
# without an error (seen: 3 KiB of the store's pages zero on the disk after
# a checkpoint whose sync had succeeded, a store that read back malformed
# at every second injection).  So the file system has 4 KiB blocks and the
# loop device takes requests of at most one page (max_sectors_kb 4): every
# write either lands whole or fails.  (Device-mapper's error target, the
# usual tool, is not in this kernel.)
# Recovery as an operator does it: the controller stopped (kill -9 if
# SIGTERM does not end it in 10 s, when it has not stopped on its own),
# room made, the file system unmounted, e2fsck, mounted again, the
# controller started.  The agents keep their results meanwhile.
# Then: every acknowledged result still in the store (a result lost here
# was acknowledged on a commit the disk did not keep), the store intact.
# FAULT_IOERR=0 leaves this part out.
. "$PG_TOP/tests/faults/lib.sh"
. "$PG_TOP/tests/faults/faults_store_lib.sh"

NAGENTS=7
FS_LEASE_S=12
restarts=0
locks=0
long_locks=0

start_agents() {
	i=1
	while [ $i -le $NAGENTS ]; do
		fs_agent "a$i"
		i=$((i + 1))
	done
}
stop_agents() {
	for a in $fs_agents; do fs_agent_stop "${a%%:*}"; done
}
new_jobs() {	# new_jobs LO HI: six jobs of LO..HI s, run by every agent
	stop_agents
	fs_recheck
	fs_jobs_seconds "$1" "$2"
	start_agents
}
# The controller stopped on a store error (intake or planning): start it
# again, as systemd's Restart= does.
revive() {
	if [ -n "$ctl" ] && ! kill -0 "$ctl" 2>/dev/null; then
		wait "$ctl"
		rc=$?
		fs_serve_log
		echo "controller exited $rc: $(grep -E ' error ' "$TMP/serve.out" | tail -n 1)"
		restarts=$((restarts + 1))
		fs_serve
	fi
}
# hold SECONDS: the sqlite3 shell holds the write lock that long (run
# directly, not through lib.sh's function, so that $holder is its pid).
hold() {
	{
		echo ".timeout 30000"
		echo "BEGIN IMMEDIATE;"
		echo "SELECT 'locked';"
		sleep "$1"
		echo "ROLLBACK;"
	} | command sqlite3 "$db" >"$TMP/hold.out" 2>&1 &
	holder=$!
	fs_wait 10 "the lock taken" grep -q locked "$TMP/hold.out"
	wait "$holder" || { cat "$TMP/hold.out"; fail "the sqlite3 shell failed"; }
	holder=""
	locks=$((locks + 1))
	[ "$1" -gt 5 ] && long_locks=$((long_locks + 1))
	echo "held the write lock for $1 s"
}
settled_reviving() { revive; fs_settled; }
holder=""
stop_holder() { [ -n "$holder" ] && kill "$holder" 2>/dev/null; return 0; }
cleanup_hooks="stop_holder $cleanup_hooks"
state_ro() { grep " $TMP/state " /proc/mounts | grep -qE ' (ro|[^ ]*emergency_ro)[, ]'; }

[ "$(id -u)" = 0 ] || fail "f_sqlite.sh mounts a loop device: run as root"
command -v e2fsck >/dev/null || fail "e2fsck is not installed"
mounts=""
loopdev=""
unmount_all() {
	for m in $mounts; do umount -l "$m" 2>/dev/null; done
	[ -z "$loopdev" ] || losetup -d "$loopdev" 2>/dev/null
	return 0
}
# Before the integration library's own hook, which removes $TMP.
cleanup_hooks="fs_stop_agents stop_services unmount_all $cleanup_hooks"
mkdir -p "$TMP/bk" "$TMP/state"
mount -t tmpfs -o size=48m tmpfs "$TMP/bk" || fail "mount tmpfs"
mounts="$TMP/bk"
truncate -s 40m "$TMP/bk/img"
mkfs.ext4 -q -F -b 4096 "$TMP/bk/img" || fail "mkfs.ext4"
loopdev=$(losetup -f --show "$TMP/bk/img") || fail "losetup"
echo 4 >"/sys/block/${loopdev#/dev/}/queue/max_sectors_kb" ||
	fail "cannot limit $loopdev to one-page requests"
mount_state() {
	mount -o errors=remount-ro "$loopdev" "$TMP/state" || fail "mount the loop file system"
	mounts="$TMP/state $mounts"
}
mount_state

fs_setup
fs_serve
fs_wait 60 "the first jobs" is "SELECT count(*) FROM jobs" 6
fs_jobs_seconds 1 1
start_agents
fs_wait_settled
fs_mark
r=0
while [ $r -lt "$FAULT_REPS" ]; do
	r=$((r + 1))
	new_jobs 4 8
	# One lock within the busy timeout, one past it.
	for range in "1 4" "6 9"; do
		fs_rand 0 2
		sleep "$R"
		# shellcheck disable=SC2086
		fs_rand $range
		hold "$R"
		revive
	done
	fs_wait 120 "every job and check settled" settled_reviving
done
n503=$(cat "$TMP"/agent-*.log | grep -c ' 503' || true)
fs_serve_log
nlocked=$(grep -c 'database is locked' "$TMP/ctl.log" || true)
echo "$locks locks ($long_locks longer than the busy timeout); the controller logged" \
	"'database is locked' $nlocked times and stopped $restarts times; the agents saw $n503 503s"
fs_serve_log
grep -h 'database is locked' "$TMP/ctl.log" | sed 's/^[^ ]* //' | sort | uniq -c | head -n 5
cat "$TMP"/agent-*.log | grep ' 503' | sed 's/^[^ ]* [^ ]* //' | head -n 3
[ "$(q "SELECT count(*) FROM attempts WHERE job_id > $fs_job0 AND outcome = 'expired'")" = 0 ] ||
	fail "a lock shorter than a lease expired a lease"
fs_count sqlite-busy "$locks"

# --- I/O errors, a read-only store -------------------------------------------------
# It found two defects of the controller, both repaired: a tree mirror
# left with a corrupt ref (controller/trees.c), and a controller that went
# on after a failed sync (store.h: it stops now).  The store that read back
# malformed at every second injection was the loop device's doing (see the
# top of this file).  FAULT_KEEP=DIR keeps, per injection, the store as the
# page cache held it when the controller stopped (pre-N), as the disk held
# it after e2fsck (post-N), the file system image before e2fsck (img-N),
# e2fsck's output and the kernel's last messages.
if [ "${FAULT_IOERR:-1}" = 1 ]; then
	fs_mark
	inj=0
	r=0
	while [ $r -lt "$FAULT_REPS" ]; do
		r=$((r + 1))
		new_jobs 3 6
		fs_rand 0 2
		sleep "$R"
		dd if=/dev/zero of="$TMP/bk/filler" bs=64k 2>/dev/null || true
		echo "the backing store is full"
		# The agents' next log chunks need new blocks; the bound is generous.
		i=0
		until state_ro || [ $i -ge 150 ]; do sleep 0.2; i=$((i + 1)); done
		if state_ro; then echo "the store's file system turned read-only"; else
			echo "the store's file system stayed writable (no write needed a block)"; fi
		sleep 2
		kill "$ctl" 2>/dev/null
		i=0
		while kill -0 "$ctl" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
		if kill -0 "$ctl" 2>/dev/null; then
			kill -9 "$ctl"
			echo "the controller did not stop on SIGTERM in 10 s: killed"
		fi
		wait "$ctl"
		echo "the controller exited $?"
		ctl=""
		fs_serve_log
		# Room first, as an operator fixes the device before the file
		# system: an unmount onto a device that still fails its writes
		# loses what the kernel still had to write back (ext4 logs "lost
		# async page write" and "Couldn't clean up the journal").
		if [ -n "${FAULT_KEEP:-}" ]; then
			mkdir -p "$FAULT_KEEP/pre-$inj"
			cp "$TMP"/state/perfgate.db* "$FAULT_KEEP/pre-$inj/"
			dmesg | tail -n 60 >"$FAULT_KEEP/dmesg-$inj"
		fi
		rm -f "$TMP/bk/filler"
		umount "$TMP/state" || umount -l "$TMP/state" || fail "umount the store's file system"
		if [ -n "${FAULT_KEEP:-}" ]; then
			cp --sparse=always "$TMP/bk/img" "$FAULT_KEEP/img-$inj"
		fi
		e2fsck -fy "$loopdev" >"$TMP/fsck.out" 2>&1
		echo "e2fsck exited $? ($(tail -n 1 "$TMP/fsck.out"))"
		mount_state
		if [ -n "${FAULT_KEEP:-}" ]; then
			mkdir -p "$FAULT_KEEP/post-$inj"
			cp "$TMP"/state/perfgate.db* "$FAULT_KEEP/post-$inj/"
			cp "$TMP/fsck.out" "$FAULT_KEEP/fsck-$inj"
			echo "post-$inj: $(sqlite3 -readonly "$FAULT_KEEP/post-$inj/perfgate.db" 'PRAGMA integrity_check' 2>&1 | head -n 3)"
		fi
		fs_serve
		inj=$((inj + 1))
		fs_wait 120 "every job and check settled" settled_reviving
	done
	fs_serve_log
	echo "the controller logged $(grep -c 'disk I/O error' "$TMP/ctl.log" || true) 'disk I/O error'" \
		"and $(grep -c 'readonly\|read-only' "$TMP/ctl.log" || true) read-only errors"
	grep -h 'disk I/O error\|readonly\|read-only\|locking protocol' "$TMP/ctl.log" | sed 's/^[^ ]* [^ ]* //' |
		cut -c1-160 | sort | uniq -c | sort -rn | head -n 6
	fs_count sqlite-ioerr "$inj"
	stop_agents
	fs_serve_stop
else
	stop_agents
	fs_serve_stop
fi
