# Disk full, on small tmpfs mounts made by the case (it runs as root):
#   disk-agent  agent d1's work and spool directories on a 1 MiB mount,
#               filled (a filler file, written until ENOSPC) twice a round:
#               before d1 leases a job (the job file it spools before any
#               work cannot be written) and while it runs one (its result
#               cannot be spooled, hence not uploaded).  The built-in
#               runner writes nothing else: the spool is what an agent
#               writes during a job.  d1 stops on the error, naming it
#               ("No space left on device"); it is started again (as
#               systemd's Restart= would) once the filler is gone, after
#               1 to 3 s; its job's lease expires or its restart reports
#               the attempt as infra-error, and the job runs again.
#   disk-ctl    the controller's state directory (store, WAL, data_dir)
#               on a 16 MiB mount, filled while agents post results: the
#               writes that need space fail (SQLITE_FULL), the API answers
#               5xx and the agents retry; a daemon pass that cannot write
#               logs it or stops the daemon (started again here); after
#               1 to 3 s the filler goes.
# After each: every job final with its one result, every check posted
# once, the store intact (integrity_check, db check), no partly written
# file in a spool, every job log file with its row and size in the store.
. "$PG_TOP/tests/faults/lib.sh"
. "$PG_TOP/tests/faults/faults_store_lib.sh"

mounts=""
unmount_all() {
	for m in $mounts; do
		umount -l "$m" 2>/dev/null
	done
	return 0
}
# Before the integration library's own hook, which removes $TMP.
cleanup_hooks="fs_stop_agents stop_services unmount_all $cleanup_hooks"
[ "$(id -u)" = 0 ] || fail "f_disk.sh mounts tmpfs: run as root"
small_mount() {	# small_mount DIR SIZE
	mkdir -p "$1"
	mount -t tmpfs -o "size=$2,mode=0750" tmpfs "$1" || fail "mount tmpfs on $1"
	mounts="$1 $mounts"
}
fill() {	# fill DIR: write DIR/filler until the mount is full
	dd if=/dev/zero of="$1/filler" bs=16k 2>/dev/null || true
	echo "filled $1: $(df --output=avail -k "$1" | tail -n 1 | tr -d ' ') KiB left"
}
unfill() { rm -f "$1/filler"; echo "emptied $1"; }

stop_agent_any() {	# SIGTERM an agent if it runs; it may have exited
	p=$(fs_pid "$1") || return 0
	kill -TERM "$p" 2>/dev/null
	wait "$p"
	fs_agents=$(for a in $fs_agents; do [ "${a%%:*}" = "$1" ] || printf '%s ' "$a"; done)
}
start_agents() {
	fs_agent d1 "$TMP/d1fs/work" "$TMP/d1fs/spool"
	fs_agent a2
	fs_agent a3
}
stop_agents() { for a in d1 a2 a3; do stop_agent_any "$a"; done; }
new_jobs() {	# new_jobs LO HI
	stop_agents
	fs_recheck
	fs_jobs_seconds "$1" "$2"
	start_agents
}
dead() { p=$(fs_pid "$1") && ! kill -0 "$p" 2>/dev/null; }
agent_exits=0
# d1 stopped: note how, start it again.
revive_d1() {
	p=$(fs_pid d1) || fail "no d1"
	wait "$p"
	rc=$?
	fs_agents=$(for a in $fs_agents; do [ "${a%%:*}" = d1 ] || printf '%s ' "$a"; done)
	agent_exits=$((agent_exits + 1))
	echo "d1 exited $rc: $(grep -E ' error ' "$TMP/agent-d1.log" | tail -n 1 | sed 's/^[^ ]* //')"
	fs_agent d1 "$TMP/d1fs/work" "$TMP/d1fs/spool"
}
has_job_file() { ls "$TMP/d1fs/spool" 2>/dev/null | grep -q '^job-'; }
d1_dead() { dead d1; }
spool_whole() {	# every spooled file whole: no temporary, each one JSON
	for f in "$TMP"/d1fs/spool/*.json "$TMP"/d1fs/spool/rejected/*.json; do
		[ -e "$f" ] || continue
		jq -e . "$f" >/dev/null 2>&1 || fail "spool file $f is not whole JSON"
	done
	! ls "$TMP/d1fs/spool" | grep -q '\.tmp\.' || fail "a temporary left in d1's spool"
}

small_mount "$TMP/state" 16m
small_mount "$TMP/d1fs" 1m
fs_setup
fs_serve
fs_wait 60 "the first jobs" is "SELECT count(*) FROM jobs" 6
fs_jobs_seconds 1 1
start_agents
fs_wait_settled
echo "store: $(du -sk "$TMP/state" | cut -f1) KiB in $TMP/state"

# --- the agent's spool and work directory ---------------------------------------
fs_mark
inj=0
r=0
while [ $r -lt "$FAULT_REPS" ]; do
	r=$((r + 1))
	# (1) Full before the lease: the job file cannot be spooled.
	stop_agents
	fill "$TMP/d1fs"
	fs_recheck
	fs_jobs_seconds 2 4
	start_agents
	fs_wait 30 "d1 stopping on the full disk" d1_dead
	fs_rand 1 3
	sleep "$R"
	unfill "$TMP/d1fs"
	revive_d1
	inj=$((inj + 1))
	fs_wait_settled
	spool_whole
	# (2) Full while d1 runs a job: its result cannot be spooled.
	new_jobs 3 5
	fs_wait 30 "d1 running a job" has_job_file
	fill "$TMP/d1fs"
	fs_wait 30 "d1 stopping on the full disk" d1_dead
	fs_rand 1 3
	sleep "$R"
	unfill "$TMP/d1fs"
	revive_d1
	inj=$((inj + 1))
	fs_wait_settled
	spool_whole
done
grep -c 'No space left on device' "$TMP/agent-d1.log" >/dev/null ||
	fail "d1's log does not name the full disk"
echo "d1 stopped $agent_exits times; its log names the full disk" \
	"$(grep -c 'No space left on device' "$TMP/agent-d1.log") times"
fs_count disk-agent "$inj"

# --- the controller's state directory ---------------------------------------------
ctl_exits=0
# The controller stopped on a store error: start it again (systemd would).
revive_ctl() {
	if [ -n "$ctl" ] && ! kill -0 "$ctl" 2>/dev/null; then
		wait "$ctl"
		rc=$?
		fs_serve_log
		ctl_exits=$((ctl_exits + 1))
		echo "controller exited $rc: $(grep -E ' error ' "$TMP/serve.out" | tail -n 1 | sed 's/^[^ ]* //')"
		sleep 1
		fs_serve
	fi
	return 0
}
settled_reviving() { revive_ctl; fs_settled; }
# Every job log the controller wrote has its row in the store, with the
# file's size (an append is outside the store's transaction).
logs_whole() {
	q "SELECT path || ' ' || bytes FROM logs" | sort >"$TMP/log-rows"
	(cd "$TMP/state" && find logs -name '*.log' -printf '%p %s\n') | sort >"$TMP/log-files"
	diff "$TMP/log-rows" "$TMP/log-files" >"$TMP/log-diff" ||
		{ cat "$TMP/log-diff"; fail "job logs and their rows differ"; }
	echo "job logs: $(wc -l <"$TMP/log-files") files, each with its row and size"
}
fs_mark
inj=0
r=0
while [ $r -lt "$FAULT_REPS" ]; do
	r=$((r + 1))
	new_jobs 1 3
	fs_rand 0 2
	sleep "$R"
	fill "$TMP/state"
	fs_rand 1 3
	sleep "$R"
	sleep 2
	unfill "$TMP/state"
	inj=$((inj + 1))
	fs_wait 120 "every job and check settled" settled_reviving
	logs_whole
done
fs_serve_log
nfull=$(grep -c 'database or disk is full\|No space left' "$TMP/ctl.log" || true)
grep -h 'database or disk is full\|No space left' "$TMP/ctl.log" | sed 's/^[^ ]* //' | cut -c1-200 | sort | uniq -c | head -n 6
echo "the controller logged the full disk $nfull times and stopped $ctl_exits times;" \
	"the agents saw $(cat "$TMP"/agent-*.log | grep -c ' 50[03]' || true) 5xx answers"
fs_count disk-ctl "$inj"
stop_agents
fs_serve_stop
