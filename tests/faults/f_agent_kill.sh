# An agent killed with kill -9 at random points of random jobs, and
# restarted: the real controller (series from the fake Patchwork, checks
# back to it, mails to the SMTP server), one real agent on the built-in
# runner, whose job is one stage "run" of 2 s between its lease and its
# result.  Three points, FAULT_REPS times each, on whatever job the agent
# leases next:
#   after lease    0-200 ms after the agent logs "leased"
#   during run     0.3-1.7 s into the run
#   during upload  the controller stopped (SIGSTOP) as the run ends, the
#                  agent killed 0-300 ms after it logs "result spooled"
#                  (its upload hangs), the controller continued after
# Where the kill landed is read afterwards from the agent's spool and log
# (a job file: after the lease or in the run, as aimed; a result file:
# before its upload was answered; "result delivered": after it), and each
# injection is counted in the row of where it landed.  Every job must end done with exactly one final result;
# the restarted agent reports the killed attempt as infra-error (or the
# lease expires) and the job runs again.  One row per point: the jobs hit,
# those completed, results lost or duplicated, and the checks of their
# series lost or duplicated (counted at the fake Patchwork).
. "$PG_TOP/tests/faults/lib.sh"
. "$PG_TOP/tests/faults/faults_lib.sh"

fl_start_patchwork
start_smtp
demo_tree
n_inj=$((3 * FAULT_REPS))
n_series=$((n_inj / 2 + 2))
fl_pw_series "$n_series"
fl_ctl_conf "$TMP/c.json" 127.0.0.1:0 "$(fl_mail_conf)"
expect_rc 0 "$CTL" --config "$TMP/c.json" db migrate
fl_start_ctl "$TMP/c.json"
planned() { [ "$(q "SELECT count(*) FROM jobs")" -ge $((2 * n_series)) ]; }
wait_until "$((2 * n_series)) jobs planned" planned
echo "controller on $url; $(q "SELECT count(*) FROM jobs") jobs of $n_series series"
fl_agent a1
log="$TMP/agent-a1.log"

hit_lease="" hit_run="" hit_upload="" hit_after=""
n=0
for rep in $(seq "$FAULT_REPS"); do
	for kind in lease run upload; do
		n=$((n + 1))
		from=$(fl_log_lines "$log")
		line=$(fl_wait_line "$log" "$from" 'job [0-9]+ attempt [0-9]+: leased')
		job=$(echo "$line" | sed -n 's/.*job \([0-9]*\) attempt \([0-9]*\): leased.*/\1/p')
		att=$(echo "$line" | sed -n 's/.*job \([0-9]*\) attempt \([0-9]*\): leased.*/\2/p')
		case $kind in
		lease)
			ms=$(rand_between 0 200)
			sleep "$(printf '0.%03d' "$ms")"
			;;
		run)
			ms=$(rand_between 300 1700)
			sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
			;;
		upload)
			sleep 1.5
			kill -STOP "$ctl"
			fl_wait_line "$log" "$from" "job $job attempt $att: outcome .*result spooled" >/dev/null
			ms=$(rand_between 0 300)
			sleep "$(printf '0.%03d' "$ms")"
			;;
		esac
		fl_kill9_agent a1
		[ "$kind" = upload ] && kill -CONT "$ctl"
		spool="$TMP/agent-a1/spool"
		if [ -e "$spool/result-$job-$att.json" ]; then
			at=upload
		elif [ -e "$spool/job-$job-$att.json" ]; then
			# The job file is written at the lease: the same state
			# after the lease and in the run; the aim tells them apart.
			at=run
			[ "$kind" = lease ] && at=lease
		elif grep -q "job $job attempt $att: result delivered" "$log"; then
			at=after
		else
			at=lease
		fi
		eval "hit_$at=\"\${hit_$at:+\$hit_$at,}$job\"; n_$at=\$((\${n_$at:-0} + 1))"
		echo "injection $n: kill -9 aimed '$kind' at job $job attempt $att (+${ms} ms): landed '$at'" \
			"(spool: $(ls "$spool" | tr '\n' ' '))"
		fl_agent a1
	done
done
fl_wait_settled
fl_stop_agents

# The rows: the jobs hit at each point (a job hit twice counts in both).
for at in lease run upload after; do
	eval "ids=\$hit_$at"
	[ -n "$ids" ] || continue
	ids=$(echo "$ids" | tr ',' '\n' | sort -un | paste -sd, -)
	set -- $(fl_results_counts "$ids")
	jobs=$1 completed=$2 rlost=$3 rdup=$4
	case $at in
	lease) name="agent kill -9: after lease" ;;
	run) name="agent kill -9: during run" ;;
	upload) name="agent kill -9: during upload" ;;
	after) name="agent kill -9: after upload" ;;
	esac
	eval "hits=\$n_$at"
	fault_row "$name" "$hits" "$jobs" "$completed" "$rlost" "$rdup" 0 0
	echo "$name: jobs $ids"
done
# Everything else must hold too: every job, check and mail of the run.
set -- $(fl_results_counts) $(fl_checks_counts)
echo "all jobs: $1 jobs, $2 completed, $3 results lost, $4 duplicated; checks: $5 lost, $6 duplicated"
# (repetitions 0: the injections are counted in the rows above)
fault_row "agent kill -9: all jobs and checks of the case" 0 "$@"
set -- $(fl_mails_counts "$TMP/spool")
echo "mails: $1 expected, $2 lost, $3 duplicated"
fault_row "agent kill -9: report mails (as checks)" 0 0 0 0 0 "$2" "$3"
