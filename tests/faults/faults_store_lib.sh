# Sourced by the fault cases that run the real controller, real agents with
# the built-in runner and the fake Patchwork (f_disk.sh, f_sqlite.sh,
# f_clock.sh), after tests/faults/lib.sh.  Gives what
# tests/integration/delivery_lib.sh gives ($db, q, fake, checks, ...) and:
#   fs_setup [API_JSON]  the fake Patchwork knowing the three fixture series
#                        of tests/patchwork, the demo tree and profile, a
#                        controller configuration in $TMP/c.json (checks to
#                        the fake, the API with lease_s $FS_LEASE_S (6) and an admin
#                        token, API_JSON more members of "api"), the series
#                        ingested; $C the controller command
#   fs_serve [ENV=VAL...] start `serve` (under env with its arguments, e.g.
#                        an LD_PRELOAD), wait for its API: $url, $ctl
#   fs_serve_log         append what serve printed since to $TMP/ctl.log
#   fs_serve_stop        SIGTERM it, expect exit 0
#   fs_agent NAME [WORK_DIR [SPOOL_DIR]] [-- ENV=VAL...]  register agent NAME
#                        and start its daemon (built-in runner, lease_wait_s
#                        2), logging to $TMP/agent-NAME.log
#   fs_agent_stop NAME   SIGTERM it (it finishes its job first)
#   fs_recheck           ask for a recheck of every series: new runs, jobs
#   fs_jobs_seconds LO HI  give every queued job a built-in run of LO..HI s
#   fs_wait_settled      wait until every job and every check settled
#   fs_count CASE REPS   count from the store and the fake Patchwork and
#                        report the row (fault_row); fails on a store that
#                        does not pass its checks
#   fs_rand LO HI        a number in [LO, HI] into $R (seeded by FAULT_SEED)
#   fs_mark              count only what comes after in the next fs_count
#   fs_extra_dups N      add N to the duplicated results of fs_count (what a
#                        case saw in the agents' logs: a job run twice)
. "$PG_TOP/tests/integration/delivery_lib.sh"

# The cases' own reads and writes wait for the controller's transactions
# (lib.sh's sqlite3 waits 30 s for a lock).  As before, a failed one does
# not end the case by itself: the checks on its output do.
q() { sqlite3 "$db" "$1"; }

CTX=perfgate-demo-Performance
CI_TOKEN=04b5b8ffb66a2d9ba9ad32d0ba95a2b120a60b9a
fs_agents=""		# "NAME:PID ..."
fs_dups=0
fs_stop_agents() {
	for a in $fs_agents; do kill -9 "${a#*:}" 2>/dev/null; done
	return 0
}
cleanup_hooks="fs_stop_agents $cleanup_hooks"

fs_dump() {
	for f in "$TMP"/ctl.log "$TMP"/serve.out "$TMP"/agent-*.log; do
		[ -f "$f" ] && { echo "--- $f" >&2; tail -n 30 "$f" >&2; }
	done
	return 0
}

# fs_wait SECONDS WHAT CMD...: poll CMD every 0.2 s; the bound is against
# hanging, not a measurement.
fs_wait() {
	_lim=$(($1 * 5))
	_what=$2
	shift 2
	_i=0
	until "$@"; do
		_i=$((_i + 1))
		[ $_i -le $_lim ] || { fs_dump; fail "timed out waiting for $_what"; }
		sleep 0.2
	done
}
is() { [ "$(q "$1")" = "$2" ]; }

fs_setup() {
	cat >"$TMP/fixture.json" <<EOF
{ "users": [ { "id": 1, "username": "ci", "email": "ci@example.org", "token": "$CI_TOKEN",
      "maintainer_of": ["dpdk"] } ] }
EOF
	start_patchwork "$TMP/fixture.json"
	_P=$PG_TOP/tests/patchwork
	fake series "{\"mails\": [{\"file\": \"$_P/series-a/v2-0000-cover-letter.patch\", \"id\": 1001},
		{\"file\": \"$_P/series-a/v2-0001-lib-add-world.patch\", \"id\": 101},
		{\"file\": \"$_P/series-a/v2-0002-lib-add-bang.patch\", \"id\": 102}]}"
	fake series "{\"mails\": [{\"file\": \"$_P/series-b/0001-net-one-add-one.patch\", \"id\": 201},
		{\"file\": \"$_P/series-b/0002-net-two-add-two.patch\", \"id\": 202},
		{\"file\": \"$_P/series-b/0003-net-three-add-three.patch\", \"id\": 203}]}"
	fake series "{\"mails\": [{\"file\": \"$_P/single/0001-lib-fix-hello.patch\", \"id\": 301}]}"
	demo_tree
	printf '%s\n' "$CI_TOKEN" >"$TMP/token"
	echo "admin-token-0123456789abcdef" >"$TMP/admin-token"
	chmod 600 "$TMP/token" "$TMP/admin-token"
	cat >"$TMP/c.json" <<EOF
{ "db": "$db", "data_dir": "$TMP/state", "profiles_dir": "$TMP/profiles",
  "api": { "listen": "127.0.0.1:0", "public_url": "https://perfgate.example.org/",
           "lease_s": ${FS_LEASE_S:-6}, "admin_token_file": "$TMP/admin-token"${1:+, $1} },
  "intake": { "interval_s": 1 },
  "checks": { "enabled": true, "patchwork_url": "$base/api/1.3", "token_file": "$TMP/token",
              "username": "ci", "timeout_s": 5, "max_backoff_s": 2 } }
EOF
	C="$CTL --config $TMP/c.json"
	cat "$_P"/series-a/*.patch "$_P"/series-b/*.patch "$_P"/single/*.patch >"$TMP/all.mbox"
	expect_rc 0 $C ingest --mbox "$TMP/all.mbox"
}

fs_copied=0
fs_serve() {
	: >"$TMP/serve.out"
	fs_copied=0
	env "$@" $C serve >"$TMP/serve.out" 2>&1 &
	ctl=$!
	fs_wait 60 "the API" grep -q 'api: listening on http' "$TMP/serve.out"
	url=$(sed -n 's/.*api: listening on \(http[^ ]*\).*/\1/p' "$TMP/serve.out" | head -n 1)
	# Reconfigure on the same port next time, for the agents' sake.
	sed -i "s|\"listen\": \"127.0.0.1:[0-9]*\"|\"listen\": \"127.0.0.1:${url##*:}\"|" "$TMP/c.json"
}
# The controller's output goes to ctl.log too, for fs_dump.
fs_serve_log() {
	tail -n "+$((fs_copied + 1))" "$TMP/serve.out" >>"$TMP/ctl.log"
	fs_copied=$(wc -l <"$TMP/serve.out")
}
fs_serve_stop() {
	kill "$ctl"
	wait "$ctl"
	_s=$?
	ctl=""
	fs_serve_log
	[ "$_s" -eq 0 ] || { tail -n 20 "$TMP/serve.out"; fail "controller exited $_s on SIGTERM"; }
}

fs_agent() {
	_name=$1
	shift
	_work=$TMP/agent-$_name/work
	_spool=$TMP/agent-$_name/spool
	if [ $# -gt 0 ] && [ "$1" != -- ]; then _work=$1; shift; fi
	if [ $# -gt 0 ] && [ "$1" != -- ]; then _spool=$1; shift; fi
	[ "${1:-}" = -- ] && shift
	if [ ! -s "$TMP/token-$_name" ]; then
		$C agent add "$_name" --labels pool=demo >"$TMP/token-$_name" 2>"$TMP/add.err" ||
			{ cat "$TMP/add.err"; fail "agent add $_name"; }
	fi
	mkdir -p "$TMP/agent-$_name"
	cat >"$TMP/agent-$_name.json" <<EOF
{ "name": "$_name", "controller_url": "$url", "token_file": "$TMP/token-$_name",
  "labels": { "pool": "demo" }, "work_dir": "$_work", "spool_dir": "$_spool",
  "runner": "builtin", "profiles_dir": "$TMP/profiles", "lease_wait_s": 2,
  "request_timeout_s": 5, "max_backoff_s": 1 }
EOF
	env "$@" "$AGENT" --config "$TMP/agent-$_name.json" >>"$TMP/agent-$_name.log" 2>&1 &
	fs_agents="$fs_agents $_name:$!"
}
fs_pid() {
	for a in $fs_agents; do [ "${a%%:*}" = "$1" ] && { echo "${a#*:}"; return 0; }; done
	return 1
}
fs_agent_stop() {
	_p=$(fs_pid "$1") || fail "no agent $1"
	kill -TERM "$_p"
	wait "$_p" || { tail -n 20 "$TMP/agent-$1.log"; fail "agent $1 exited $? on SIGTERM"; }
	fs_agents=$(for a in $fs_agents; do [ "${a%%:*}" = "$1" ] || printf '%s ' "$a"; done)
}

fs_recheck() {
	_n=$(q "SELECT count(*) FROM jobs")
	_ns=0
	for _sid in $(q "SELECT id FROM series ORDER BY id"); do
		_ns=$((_ns + 1))
		curl -sf -H "Authorization: Bearer $(cat "$TMP/admin-token")" \
			-d "{\"contexts\": [\"$CTX\"]}" "$url/api/v1/series/$_sid/recheck" \
			>"$TMP/recheck.json" || fail "recheck of series $_sid refused"
	done
	# Two build modes per run.
	fs_wait 60 "the recheck jobs" is "SELECT count(*) FROM jobs" $((_n + 2 * _ns))
}

# fs_rand LO HI: rand_between's number into $R, in this shell (rand_between
# in a command substitution runs in a subshell, whose step of the
# generator is lost: every call would give the same number).
fs_rand() {
	fault_rng_state=$(( (fault_rng_state * 1103515245 + 12345) % 2147483648 ))
	R=$(( $1 + fault_rng_state / 65536 % ($2 - $1 + 1) ))
}

fs_jobs_seconds() {
	for _j in $(q "SELECT id FROM jobs WHERE state = 'queued'"); do
		fs_rand "$1" "$2"
		q "UPDATE jobs SET spec = json_set(spec, '\$.builtin_seconds', $R)
		   WHERE id = $_j AND state = 'queued'" >/dev/null
	done
}

# Every job final, every run's checks final and posted.
fs_settled() {
	is "SELECT count(*) FROM jobs WHERE state NOT IN ('done', 'cancelled', 'infra-error')" 0 &&
		is "SELECT count(*) FROM check_outbox WHERE delivery NOT IN ('sent', 'cancelled')" 0 &&
		is "SELECT count(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM check_outbox c
		    WHERE c.run_id = r.id AND c.state <> 'pending')" 0
}
fs_wait_settled() { fs_wait "${1:-120}" "every job and check settled" fs_settled; }

fs_extra_dups() { fs_dups=$((fs_dups + $1)); }

# fs_mark: the next fs_count counts only what comes after (jobs and runs
# created since, checks posted since).
fs_job0=0
fs_run0=0
fs_clost0=0
fs_cdup0=0
fs_mark() {
	fs_job0=$(q "SELECT coalesce(max(id), 0) FROM jobs")
	fs_run0=$(q "SELECT coalesce(max(id), 0) FROM runs")
	fs_check_counts
	fs_clost0=$clost
	fs_cdup0=$cdup
	fs_dups=0
}

# Per (patch, context, state): the checks the store sent against the posts
# the fake received, in $clost and $cdup (since the store began).
fs_check_counts() {
	checks
	q "SELECT p.pw_patch_id || '/' || c.context || '/' || c.state, count(*) FROM check_outbox c
	   JOIN patches p ON p.id = c.patch_id WHERE c.delivery = 'sent' GROUP BY 1 ORDER BY 1" |
		tr '|' ' ' >"$TMP/sent.txt"
	jq -r '[.checks[] | "\(.patch)/\(.context)/\(.state)"] | group_by(.) | .[]
		| "\(.[0]) \(length)"' "$TMP/checks.json" | sort >"$TMP/posted.txt"
	clost=$(join -a1 -e0 -o 0,1.2,2.2 "$TMP/sent.txt" "$TMP/posted.txt" |
		awk '{ if ($2 > $3) n += $2 - $3 } END { print n + 0 }')
	cdup=$(join -a2 -e0 -o 0,1.2,2.2 "$TMP/sent.txt" "$TMP/posted.txt" |
		awk '{ if ($3 > $2) n += $3 - $2 } END { print n + 0 }')
}

fs_count() {
	expect_rc 0 sqlite3 "$db" "PRAGMA integrity_check"
	expect_grep '^ok$' "$TMP/out"
	expect_rc 0 $C db check
	jobs=$(q "SELECT count(*) FROM jobs WHERE id > $fs_job0")
	completed=$(q "SELECT count(*) FROM jobs j WHERE j.id > $fs_job0 AND j.state = 'done'
		AND EXISTS (SELECT 1 FROM results r WHERE r.job_id = j.id AND r.attempt = j.attempt)")
	# Lost: not final, done without its result, or given up (infra-error
	# with no result of any attempt: the work never counted).
	rlost=$(q "SELECT count(*) FROM jobs j WHERE j.id > $fs_job0 AND (j.state NOT IN ('done', 'cancelled')
		OR NOT EXISTS (SELECT 1 FROM results r WHERE r.job_id = j.id AND r.attempt = j.attempt)
		AND j.state = 'done')")
	rdup=$(q "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM results
		WHERE job_id > $fs_job0 GROUP BY job_id, attempt)")
	# A job done twice: two results of a job that are not infra-errors
	# (an infra-error requeues the job: the next attempt is no duplicate).
	rdup2=$(q "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM results
		WHERE outcome <> 'infra-error' AND job_id > $fs_job0 GROUP BY job_id HAVING n > 1)")
	rdup=$((rdup + rdup2 + fs_dups))
	fs_check_counts
	clost=$((clost - fs_clost0))
	cdup=$((cdup - fs_cdup0))
	echo "$1: jobs=$jobs completed=$completed lost=$rlost dup=$rdup checks lost=$clost dup=$cdup;" \
		"attempts: $(q "SELECT group_concat(o || '=' || n, ' ') FROM (SELECT coalesce(outcome, 'open') AS o,
		count(*) AS n FROM attempts WHERE job_id > $fs_job0 GROUP BY 1)")"
	fault_row "$1" "$2" "$jobs" "$completed" "$rlost" "$rdup" "$clost" "$cdup"
}
