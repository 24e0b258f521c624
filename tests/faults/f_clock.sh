# Clock jumps on the controller and on the agents (the machine's own clock
# is left alone): each daemon runs with tests/faults/clockshift.c preloaded,
# which shifts its wall clock by the seconds written in a file of its own,
# rewritten by the case while jobs run; the monotonic clock does not move,
# as with an NTP step.  Leases (lease_s 12, heartbeats every 4 s, swept
# every 5 s: a sweep mostly comes before every lease was renewed) must be
# neither lost nor doubled:
#   clock-ctl-wall   the controller's wall clock steps an hour forward, then
#                    back, while every job is leased, the agents silent for
#                    half a lease and an idle agent waits for work: no lease
#                    may expire for it (an expiry hands
#                    the job to the idle agent while its holder still runs
#                    it); then, the clock an hour back, an agent holding a
#                    job is killed: its lease must still expire (a step back
#                    must not keep a dead lease for an hour)
#   clock-agent-wall the agents' wall clocks step an hour forward and back
#   clock-ctl-pause  the controller frozen (SIGSTOP) for 15 s (1.25 leases)
#                    while jobs run, as a paused VM is: its monotonic clock
#                    jumps when it wakes; its agents could not renew
#                    meanwhile (stopped too: a paused host does not queue
#                    their heartbeats; back one by one after it wakes, the
#                    idle agent first), and must get a lease time to renew
#                    before any lease expires
# A job run twice at once shows in an agent's log as an attempt that ended
# "stale" (its job was leased again while it ran): counted as duplicated.
. "$PG_TOP/tests/faults/lib.sh"
. "$PG_TOP/tests/faults/faults_store_lib.sh"

NAGENTS=7		# six jobs a round, one agent idle
FS_LEASE_S=12
HOUR=3600
cc -shared -fPIC -O2 -o "$TMP/clockshift.so" "$PG_TOP/tests/faults/clockshift.c" ||
	fail "cannot build the clock shim"
echo 0 >"$TMP/shift-ctl"
echo 0 >"$TMP/shift-agents"
# shifted FILE: the environment that puts a daemon's wall clock on FILE
shifted() { echo "LD_PRELOAD=$TMP/clockshift.so CLOCKSHIFT_FILE=$1"; }
# step FILE SECONDS: the wall clock of FILE's daemons jumps SECONDS (+ or -)
step() {
	printf '%d\n' $(($(cat "$1") + $2)) >"$1.new"
	mv "$1.new" "$1"
	echo "step $(basename "$1") by $2 s: now $(cat "$1")"
}

stale_count() {
	cat "$TMP"/agent-*.log | grep -c 'ended without a result: .*stale' || true
}
start_agents() {
	i=1
	while [ $i -le $NAGENTS ]; do
		# shellcheck disable=SC2046
		fs_agent "a$i" -- $(shifted "$TMP/shift-agents")
		i=$((i + 1))
	done
}
stop_agents() {
	for a in $fs_agents; do fs_agent_stop "${a%%:*}"; done
}
all_leased() {
	is "SELECT count(*) FROM jobs WHERE state = 'running'" 6
}
# new_jobs LO HI: a recheck of every series, six jobs of LO..HI s each
# (the agents stopped meanwhile, so that none leases a job before its
# length is set), all of them running.
new_jobs() {
	stop_agents
	fs_recheck
	fs_jobs_seconds "$1" "$2"
	start_agents
	fs_wait 60 "six jobs running" all_leased
}
signal_agents() { for a in $fs_agents; do kill "-$1" "${a#*:}"; done; }
# A round: six jobs run with a step of FILE forward at a random point,
# then back.  For the controller's clock, the agents are silent (SIGSTOP)
# for 6 s (half a lease, longer than a sweep) around the step: a sweep
# then surely comes before their next heartbeats.
round() {
	new_jobs 12 14
	fs_rand 0 3
	sleep "$R"
	[ "$1" = "$TMP/shift-ctl" ] && signal_agents STOP
	step "$1" "$HOUR"
	sleep 6
	[ "$1" = "$TMP/shift-ctl" ] && signal_agents CONT
	sleep 2
	step "$1" "-$HOUR"
	fs_wait_settled
	echo "round: $(q "SELECT count(*) FROM attempts WHERE job_id > $fs_job0 AND outcome = 'expired'") leases expired, $(($(stale_count) - s0)) attempts ended stale"
}

fs_setup
# shellcheck disable=SC2046
fs_serve $(shifted "$TMP/shift-ctl")
fs_wait 60 "the first jobs" is "SELECT count(*) FROM jobs" 6
fs_jobs_seconds 1 1
start_agents
fs_wait_settled

# --- the controller's wall clock ---------------------------------------------
fs_mark
s0=$(stale_count)
r=0
while [ $r -lt "$FAULT_REPS" ]; do
	r=$((r + 1))
	round "$TMP/shift-ctl"
	# A step back, then an agent killed holding a job: its lease expires.
	new_jobs 6 10
	step "$TMP/shift-ctl" "-$HOUR"
	victim=$(q "SELECT a.name FROM jobs j JOIN agents a ON a.id = j.agent_id
		WHERE j.state = 'running' ORDER BY random() LIMIT 1")
	vjob=$(q "SELECT j.id FROM jobs j JOIN agents a ON a.id = j.agent_id WHERE a.name = '$victim'
		AND j.state = 'running'")
	p=$(fs_pid "$victim")
	kill -9 "$p"
	wait "$p" 2>/dev/null
	fs_agents=$(for a in $fs_agents; do [ "${a%%:*}" = "$victim" ] || printf '%s ' "$a"; done)
	echo "killed $victim holding job $vjob, the controller's clock an hour back"
	# The bound is five lease times: without a steady clock it is an hour.
	fs_wait 60 "job $vjob's lease expiring" \
		is "SELECT count(*) FROM attempts WHERE job_id = $vjob AND outcome = 'expired'" 1
	step "$TMP/shift-ctl" "$HOUR"
	# shellcheck disable=SC2046
	fs_agent "$victim" -- $(shifted "$TMP/shift-agents")
	fs_wait_settled
done
fs_extra_dups $(($(stale_count) - s0))
fs_count clock-ctl-wall "$((FAULT_REPS * 3))"

# --- the agents' wall clocks ---------------------------------------------------
fs_mark
s0=$(stale_count)
r=0
while [ $r -lt "$FAULT_REPS" ]; do
	r=$((r + 1))
	round "$TMP/shift-agents"
done
fs_extra_dups $(($(stale_count) - s0))
fs_count clock-agent-wall "$((FAULT_REPS * 2))"

# --- the controller frozen: a pause ------------------------------------------------
fs_mark
s0=$(stale_count)
r=0
while [ $r -lt "$FAULT_REPS" ]; do
	r=$((r + 1))
	new_jobs 14 16
	fs_rand 0 2
	sleep "$R"
	# The agents cannot reach a frozen host: their heartbeats come after
	# their backoff, not from the kernel's queue of a stopped process.
	kill -STOP "$ctl"
	signal_agents STOP
	busy=$(q "SELECT group_concat(a.name, ' ') FROM jobs j JOIN agents a ON a.id = j.agent_id
		WHERE j.state = 'running'")
	echo "controller (and the agents) stopped"
	# The fault itself, not a wait for a condition: frozen longer than a
	# lease (1.25 leases), which is what must not expire every lease.
	sleep $((FS_LEASE_S * 5 / 4))
	kill -CONT "$ctl"
	# The agents come back one by one: the idle one first.
	sleep 1
	for a in $fs_agents; do
		case " $busy " in *" ${a%%:*} "*) ;; *) kill -CONT "${a#*:}" ;; esac
	done
	sleep 2
	signal_agents CONT
	echo "controller continued; 1 s later the idle agent, 2 s after it the others"
	fs_wait_settled
done
fs_extra_dups $(($(stale_count) - s0))
fs_count clock-ctl-pause "$FAULT_REPS"
stop_agents
fs_serve_stop
