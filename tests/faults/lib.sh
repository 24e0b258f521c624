# Sourced by every tests/faults/f_*.sh, after tests/integration/lib.sh
# (which it sources): everything an integration test has, and
#   $FAULT_REPS        how many injections of each kind (1 in make check)
#   fault_row CASE REPS JOBS COMPLETED RESULTS_LOST DUP_RESULTS CHECKS_LOST DUP_CHECKS
#                      one row of the table run.sh prints.  Count from the
#                      store and from the fake Patchwork, never from what the
#                      test meant to do: "jobs" are the jobs the case queued,
#                      "completed" those that reached a final state with their
#                      result, "results lost" jobs whose result an agent had
#                      (or that never reached a final state), "duplicated
#                      results" extra results of one (job, attempt) or a job
#                      done twice, "checks lost" (patch, context) pairs with
#                      no final check, "duplicated checks" checks posted more
#                      than once with the same state for one (patch, context)
#                      and run.  A case with no Patchwork side puts 0 in both.
#   rand_between LO HI an integer in [LO, HI] (seeded by FAULT_SEED, printed)
. "$PG_TOP/tests/integration/lib.sh"
: "${FAULT_REPS:=1}"
: "${PG_FAULT_ROWS:?PG_FAULT_ROWS not set (run through tests/faults/run.sh)}"
: "${FAULT_SEED:=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
echo "fault seed: FAULT_SEED=$FAULT_SEED"

fault_row() {
	[ $# -eq 8 ] || fail "fault_row: 8 fields, got $#"
	for v in "$2" "$3" "$4" "$5" "$6" "$7" "$8"; do
		case $v in '' | *[!0-9]*) fail "fault_row $1: '$v' is not a count" ;; esac
	done
	printf '%s|%s|%s|%s|%s|%s|%s|%s\n' "$@" >>"$PG_FAULT_ROWS"
}

# A small LCG so that a failing run can be repeated with its FAULT_SEED.
# Its state lives in a file, so that $(rand_between ...), which runs in a
# subshell, still advances it.
fault_rng_file="$TMP/.fault_rng"
echo "$FAULT_SEED" >"$fault_rng_file"
rand_between() {
	fault_rng_state=$(cat "$fault_rng_file")
	fault_rng_state=$(( (fault_rng_state * 1103515245 + 12345) % 2147483648 ))
	echo "$fault_rng_state" >"$fault_rng_file"
	echo $(( $1 + (fault_rng_state / 65536) % ($2 - $1 + 1) ))
}
