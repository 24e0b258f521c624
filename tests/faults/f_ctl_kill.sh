# The controller killed with kill -9 at random points of the pipeline and
# restarted on the same port: series come from the fake Patchwork, two real
# agents (built-in runner, 2 s a job) lease and answer, checks go back to
# the fake, report mails to the SMTP server.  Each repetition adds two
# series to the fake and kills the controller once at each point, in the
# pipeline's order, each a random delay after its trigger:
#   ingest          the intake pass began ("intake: reading pw")  +0-80 ms
#   planning        an intake pass ended ("intake: N messages") with the
#                   new series in the store                        +0-30 ms
#   lease           the new jobs are queued                       +0-300 ms
#   result batch    an agent spooled a result ("result spooled")   +0-15 ms
#   verdict pass    the jobs of the series are done               +0-400 ms
#   check delivery  a final check is queued and its POST hangs 1.5 s at
#                   the fake (then served: the check is made, the answer
#                   comes after the kill, to nobody)              +0-1500 ms
#   mail delivery   a report mail is queued                       +0-100 ms
# Then, with the controller up: every job done with one final result, every
# (patch, context) with its final check, once per state, every mail once
# (by Message-ID in the SMTP spool).
. "$PG_TOP/tests/faults/lib.sh"
. "$PG_TOP/tests/faults/faults_lib.sh"

fl_start_patchwork
start_smtp
demo_tree
fl_ctl_conf "$TMP/c.json" 127.0.0.1:0 "$(fl_mail_conf)"
expect_rc 0 "$CTL" --config "$TMP/c.json" db migrate
fl_start_ctl "$TMP/c.json"
# Restarts listen on the same port, where the agents look for it.
fl_ctl_conf "$TMP/c.json" "127.0.0.1:$port" "$(fl_mail_conf)"
fl_agent a1
fl_agent a2

ms_sleep() { sleep "$(($1 / 1000)).$(printf '%03d' $(($1 % 1000)))"; }
n=0
kill_restart() {	# kill_restart POINT TRIGGER LO HI
	ms=$(rand_between "$3" "$4")
	ms_sleep "$ms"
	fl_kill9_ctl
	n=$((n + 1))
	echo "injection $n: kill -9 at '$1' ($2, +$ms ms)"
	fl_start_ctl "$TMP/c.json"
}
sql_ge() { [ "$(q "$1")" -ge "$2" ]; }

for rep in $(seq "$FAULT_REPS"); do
	series0=$(q "SELECT count(*) FROM series")
	jobs0=$(q "SELECT coalesce(max(id), 0) FROM jobs")
	checks0=$(q "SELECT coalesce(max(id), 0) FROM check_outbox")
	mails0=$(q "SELECT coalesce(max(id), 0) FROM email_outbox")
	from=$(fl_log_lines "$TMP/ctl.log")
	fl_pw_series 2
	fl_wait_line "$TMP/ctl.log" "$from" 'intake: reading pw' >/dev/null
	kill_restart ingest "an intake pass began" 0 80

	# The intake pass after the restart (planning follows it), once the
	# mails are in the store (read before or after the kill).
	from=$(fl_log_lines "$TMP/ctl.log")
	wait_until "the new series" sql_ge "SELECT count(*) FROM series" $((series0 + 2))
	fl_wait_line "$TMP/ctl.log" "$from" 'serve: intake: [0-9]+ messages' >/dev/null
	kill_restart planning "an intake pass ended with the series in" 0 30

	wait_until "the new jobs" sql_ge "SELECT count(*) FROM jobs WHERE id > $jobs0" 4
	kill_restart lease "the new jobs are planned" 0 300

	from1=$(fl_log_lines "$TMP/agent-a1.log")
	from2=$(fl_log_lines "$TMP/agent-a2.log")
	spooled() {
		fl_has_line "$TMP/agent-a1.log" "$from1" 'result spooled' ||
			fl_has_line "$TMP/agent-a2.log" "$from2" 'result spooled'
	}
	wait_until "a result spooled" spooled
	kill_restart "result batch" "an agent spooled a result" 0 15

	wait_until "the jobs done" sql_ge "SELECT count(*) FROM jobs WHERE id > $jobs0 AND state = 'done'" 4
	kill_restart "verdict pass" "the jobs are done" 0 400

	fake fail '{"count": 1, "hang": 1.5, "method": "POST", "path": "/api/"}'
	wait_until "a final check queued" sql_ge \
		"SELECT count(*) FROM check_outbox WHERE id > $checks0 AND state <> 'pending'" 1
	kill_restart "check delivery" "a final check is queued, its POST hangs" 0 1500

	wait_until "a mail queued" sql_ge "SELECT count(*) FROM email_outbox WHERE id > $mails0" 1
	kill_restart "mail delivery" "a report mail is queued" 0 100
done
fl_wait_settled
fl_stop_agents
set -- $(fl_results_counts) $(fl_checks_counts)
echo "jobs: $1, completed $2, results lost $3, duplicated $4; checks lost $5, duplicated $6"
fault_row "controller kill -9: 7 points" "$n" "$@"
[ "$3$4$5$6" = 0000 ] || fl_explain
set -- $(fl_mails_counts "$TMP/spool")
echo "mails: $1 expected, $2 lost, $3 duplicated"
fault_row "controller kill -9: report mails (as checks)" 0 0 0 0 0 "$2" "$3"
echo "lookups that found a check made before a kill: $(grep -c 'already on Patchwork as check' "$TMP/ctl.log")"
