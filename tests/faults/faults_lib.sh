# Sourced by the fault cases that run the whole pipeline (f_agent_kill.sh,
# f_ctl_kill.sh, f_patchwork.sh, f_archive.sh), after tests/faults/lib.sh.
# Every name here starts with fl_ so that other cases may source this file
# too.  Gives (besides tests/integration/delivery_lib.sh, which it sources:
# $PY, $db, q, wait_until, start_patchwork, fake, checks, start_smtp):
#   fl_mail ID SUBJECT       a one-patch mail with Message-ID <ID>, on stdout
#   fl_pw_series N           N one-patch series added to the fake Patchwork
#   fl_ctl_conf FILE LISTEN [EXTRA]  the controller's configuration: the
#                            fake Patchwork as source (intake every 1 s) and
#                            check target, the API on LISTEN (lease_s 4,
#                            max_attempts 20, an admin token), EXTRA more
#                            JSON members (e.g. "mail"); checks go to
#                            $FL_CHECKS_URL when set
#   fl_mail_conf             the "mail" member for the SMTP server on $sport
#   fl_start_ctl CONFIG      the daemon ($ctl; log $TMP/ctl.log), waiting for
#                            its API: $url, $port
#   fl_kill9_ctl             kill -9 it and reap it
#   fl_agent NAME            register an agent (built-in runner) and start it
#                            (log $TMP/agent-NAME.log, spool
#                            $TMP/agent-NAME/spool); fl_agent_pid NAME
#   fl_kill9_agent NAME      kill -9 it and reap it
#   fl_stop_agents           SIGTERM every agent, reap them
#   fl_log_lines FILE        the number of lines of FILE (0 when missing)
#   fl_wait_line FILE FROM ERE  wait (bounded) for a line matching ERE after
#                            line FROM of FILE; prints it
#   fl_results_counts [IDS]  "JOBS COMPLETED LOST DUP" (of the jobs IDS, a
#                            comma-separated list, or all) from the store and the
#                            agents' spools and logs (see below)
#   fl_checks_counts [SERIES] "LOST DUP" of checks (of the store's series
#                            SERIES, a comma-separated list, or all), from
#                            the fake's record
#   fl_mails_counts [SERIES] DIR...  "EXPECTED LOST DUP" of report mails
#                            (of the series SERIES or all) in the SMTP
#                            spools DIR..., against the store's verdicts
. "$PG_TOP/tests/integration/delivery_lib.sh"

FL_CTX=perfgate-demo-Performance
FL_TOKEN=04b5b8ffb66a2d9ba9ad32d0ba95a2b120a60b9a
fl_agents=""	# "NAME:PID ..." of the running agents
fl_stop_all() {
	for a in $fl_agents; do kill -9 "${a#*:}" 2>/dev/null; done
	return 0
}
cleanup_hooks="fl_stop_all $cleanup_hooks"

fl_log_lines() {
	if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi
}

# fl_wait_line FILE FROM ERE: the first line after line FROM of FILE that
# matches ERE, waited for (bounded against hanging by wait_until).
fl_line_after() { tail -n "+$(($2 + 1))" "$1" 2>/dev/null | grep -E -m1 -- "$3"; }
fl_has_line() { fl_line_after "$@" >/dev/null; }
fl_wait_line() {
	wait_until "/$3/ in $1" fl_has_line "$1" "$2" "$3"
	fl_line_after "$1" "$2" "$3"
}

fl_mail() {
	cat <<EOM
From: Ada Lovelace <ada@example.org>
To: dev@dpdk.org
Date: Fri, 02 Jan 2026 10:00:00 +0000
Message-ID: <$1>
Subject: [PATCH] $2
MIME-Version: 1.0
Content-Type: text/plain; charset=UTF-8
Content-Transfer-Encoding: 8bit

Make $2 faster.

Signed-off-by: Ada Lovelace <ada@example.org>
---
 lib/ring/rte_ring.c | 1 +
 1 file changed, 1 insertion(+)

diff --git a/lib/ring/rte_ring.c b/lib/ring/rte_ring.c
index c2ce6f4..7311d8a 100644
--- a/lib/ring/rte_ring.c
+++ b/lib/ring/rte_ring.c
@@ -1,3 +1,4 @@
 	int v0 = 0;
+	int x = 1;
 	int v1 = 1;
 	int v2 = 2;
-- 
2.39.5
EOM
}

fl_series_n=0
fl_pw_series() {
	_n=$1
	while [ "$_n" -gt 0 ]; do
		fl_series_n=$((fl_series_n + 1))
		fl_mail "fault.$fl_series_n.$$@example.org" "lib: speed up x$fl_series_n" \
			>"$TMP/mail-$fl_series_n.eml"
		fake series "{\"mails\": [{\"file\": \"$TMP/mail-$fl_series_n.eml\"}]}"
		_n=$((_n - 1))
	done
}

fl_mail_conf() {
	printf '"mail": { "enabled": true, "smtp_url": "smtp://127.0.0.1:%s/lab.example.org", "starttls": "off", "from": "perfgate CI <perfgate@lab.example.org>", "timeout_s": 3 }' "$sport"
}

fl_ctl_conf() {
	printf '%s\n' "$FL_TOKEN" >"$TMP/pw-token"
	echo "admin-token-0123456789abcdef" >"$TMP/admin-token"
	chmod 600 "$TMP/pw-token" "$TMP/admin-token"
	cat >"$1" <<EOF
{ "db": "$db", "data_dir": "$TMP/state", "profiles_dir": "$TMP/profiles",
  "sources": [ { "name": "pw", "type": "patchwork", "url": "$base/api/1.3", "project": "dpdk" } ],
  "intake": { "interval_s": 1, "since": "2026-01-01T00:00:00" },
  "api": { "listen": "$2", "public_url": "https://perfgate.example.org/",
           "web_dir": "$PG_TOP/web", "lease_s": 4, "max_attempts": 20,
           "admin_token_file": "$TMP/admin-token" },
  "checks": { "enabled": true, "patchwork_url": "${FL_CHECKS_URL:-$base/api/1.3}", "token_file": "$TMP/pw-token",
              "username": "ci", "timeout_s": 3, "max_backoff_s": 2 }${3:+, $3} }
EOF
}

# The fake Patchwork with user ci, maintainer of dpdk (as t_checks.sh).
fl_start_patchwork() {
	cat >"$TMP/fixture.json" <<EOF
{ "users": [ { "id": 1, "username": "ci", "email": "ci@example.org", "token": "$FL_TOKEN",
               "maintainer_of": ["dpdk"] } ] }
EOF
	start_patchwork "$TMP/fixture.json"
}

fl_api_up() {
	[ "$(grep -c 'api: listening on http' "$TMP/ctl.log")" -gt "$1" ] ||
		{ kill -0 "$ctl" 2>/dev/null || { tail -n 30 "$TMP/ctl.log" >&2; fail "the controller died"; }; return 1; }
}
fl_start_ctl() {
	_before=$(grep -c 'api: listening on http' "$TMP/ctl.log" 2>/dev/null || echo 0)
	start_ctl "$1"
	wait_until "the controller's API" fl_api_up "$_before"
	url=$(sed -n 's/.*api: listening on \(http[^ ]*\).*/\1/p' "$TMP/ctl.log" | tail -n 1)
	port=${url##*:}
}
fl_kill9_ctl() {
	kill -9 "$ctl" 2>/dev/null
	wait "$ctl" 2>/dev/null
	ctl=""
}

fl_agent() {
	if [ ! -f "$TMP/agent-token-$1" ]; then
		"$CTL" --config "$TMP/c.json" agent add "$1" --labels pool=demo \
			>"$TMP/agent-token-$1" 2>"$TMP/add.err" || { cat "$TMP/add.err"; fail "agent add $1"; }
	fi
	mkdir -p "$TMP/agent-$1"
	cat >"$TMP/agent-$1.json" <<EOF
{ "name": "$1", "controller_url": "$url", "token_file": "$TMP/agent-token-$1",
  "labels": { "pool": "demo" }, "work_dir": "$TMP/agent-$1/work",
  "spool_dir": "$TMP/agent-$1/spool", "runner": "builtin", "profiles_dir": "$TMP/profiles",
  "lease_wait_s": 2, "request_timeout_s": 3, "max_backoff_s": 1 }
EOF
	"$AGENT" --config "$TMP/agent-$1.json" >>"$TMP/agent-$1.log" 2>&1 &
	fl_agents="$fl_agents $1:$!"
}
fl_agent_pid() {
	for a in $fl_agents; do [ "${a%%:*}" = "$1" ] && { echo "${a#*:}"; return 0; }; done
	return 1
}
fl_drop_agent() {
	fl_agents=$(for a in $fl_agents; do [ "${a%%:*}" = "$1" ] || printf '%s ' "$a"; done)
}
fl_kill9_agent() {
	_p=$(fl_agent_pid "$1") || fail "no agent $1 running"
	kill -9 "$_p"
	wait "$_p" 2>/dev/null
	fl_drop_agent "$1"
}
fl_stop_agents() {
	for a in $fl_agents; do kill -TERM "${a#*:}" 2>/dev/null; done
	for a in $fl_agents; do wait "${a#*:}" 2>/dev/null; done
	fl_agents=""
}

# fl_results_counts: "JOBS COMPLETED LOST DUP", counted from the store and
# the agents' own record, never from what the case meant to do:
#   JOBS       the jobs in the store
#   COMPLETED  jobs done with a result row of their final attempt whose
#              outcome is the job's
#   LOST       jobs not completed (cancelled ones aside), plus every
#              (job, attempt) whose result an agent spooled (its log says
#              "result spooled" or it reported a held job at restart) with
#              no result row while the controller did not end that attempt
#              itself (expired, cancelled), plus every (job, attempt) the
#              controller acknowledged ("result delivered") with no result
#              row, plus result files left in a spool
#   DUP        results beyond the first final (non infra-error) one of a
#              job, and attempts beyond the first that ended 'ok'
fl_results_counts() {
	_in="" _jin="" _rin=""
	if [ -n "${1:-}" ]; then
		_in="AND id IN ($1)" _jin="AND j.id IN ($1)" _rin="AND job_id IN ($1)"
	fi
	_jobs=$(q "SELECT count(*) FROM jobs WHERE state <> 'cancelled' $_in")
	_done=$(q "SELECT count(*) FROM jobs j JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt
		WHERE j.state = 'done' AND r.outcome = j.outcome $_jin")
	_lost=$((_jobs - _done))
	cat "$TMP"/agent-*.log 2>/dev/null |
		sed -n 's/.*job \([0-9]*\) attempt \([0-9]*\): \(outcome .*result spooled\|held when the agent last.*\)/\1 \2/p' |
		sort -u >"$TMP/spooled.txt"
	while read -r _j _a; do
		if [ -n "${1:-}" ]; then
			case ",$1," in *",$_j,"*) ;; *) continue ;; esac
		fi
		_have=$(q "SELECT count(*) FROM results WHERE job_id = $_j AND attempt = $_a")
		_ended=$(q "SELECT count(*) FROM attempts WHERE job_id = $_j AND attempt = $_a
			AND outcome IN ('expired', 'cancelled')")
		if [ "$_have" = 0 ] && [ "$_ended" = 0 ]; then
			echo "lost: job $_j attempt $_a: spooled by an agent, not in the store" >&2
			_lost=$((_lost + 1))
		fi
	done <"$TMP/spooled.txt"
	# Acknowledged: the controller said it has it; nothing excuses its loss.
	cat "$TMP"/agent-*.log 2>/dev/null |
		sed -n 's/.*job \([0-9]*\) attempt \([0-9]*\): result delivered.*/\1 \2/p' |
		sort -u >"$TMP/acked.txt"
	while read -r _j _a; do
		if [ -n "${1:-}" ]; then
			case ",$1," in *",$_j,"*) ;; *) continue ;; esac
		fi
		if [ "$(q "SELECT count(*) FROM results WHERE job_id = $_j AND attempt = $_a")" = 0 ]; then
			echo "lost: job $_j attempt $_a: acknowledged to the agent, not in the store" >&2
			_lost=$((_lost + 1))
		fi
	done <"$TMP/acked.txt"
	_left=0
	for _f in "$TMP"/agent-*/spool/result-*; do
		[ -e "$_f" ] || continue
		_j=$(basename "$_f" | cut -d- -f2)
		if [ -n "${1:-}" ]; then
			case ",$1," in *",$_j,"*) ;; *) continue ;; esac
		fi
		echo "lost: $_f left in an agent's spool" >&2
		_left=$((_left + 1))
	done
	_lost=$((_lost + _left))
	_dup=$(q "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM results
		WHERE outcome <> 'infra-error' $_rin GROUP BY job_id HAVING n > 1)")
	_dup2=$(q "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM attempts
		WHERE outcome = 'ok' $_rin GROUP BY job_id HAVING n > 1)")
	echo "$_jobs $_done $_lost $((_dup + _dup2))"
}

# fl_checks_counts: "LOST DUP" from the checks the fake Patchwork holds:
# LOST the (patch, context) pairs of the store's runs (the last patch of
# each run's series, as Patchwork knows it) whose run has a final verdict
# and that got no final (non-pending) check, plus runs with no verdict;
# DUP the checks beyond the first of one (patch, context, state).
fl_checks_counts() {
	checks
	_sin="" _pids="[]"
	if [ -n "${1:-}" ]; then
		_sin="AND r.series_id IN ($1)"
		_pids="[$(q "SELECT group_concat(pw_patch_id) FROM patches WHERE series_id IN ($1)
			AND pw_patch_id IS NOT NULL")]"
	fi
	jq --argjson only "$_pids" '[.checks[] | select(($only | length) == 0 or
		(.patch as $p | $only | index($p)))]' "$TMP/checks.json" >"$TMP/checks-of.json"
	_dup=$(jq '[.[] | [.patch, .context, .state] | tostring] | group_by(.)
		| map(length - 1) | add // 0' "$TMP/checks-of.json")
	jq -r '.[] | select(.state != "pending") | "\(.patch) \(.context)"' "$TMP/checks-of.json" |
		sort -u >"$TMP/finals.txt"
	q "SELECT DISTINCT p.pw_patch_id, j.context FROM jobs j JOIN runs r ON r.id = j.run_id
		JOIN patches p ON p.series_id = r.series_id
		WHERE r.state <> 'cancelled' $_sin AND p.number = (SELECT max(number) FROM patches
			WHERE series_id = r.series_id)" | tr '|' ' ' | sort -u >"$TMP/want-finals.txt"
	_lost=$(comm -23 "$TMP/want-finals.txt" "$TMP/finals.txt" | wc -l)
	comm -23 "$TMP/want-finals.txt" "$TMP/finals.txt" | sed 's/^/lost check: patch /' >&2
	echo "$_lost $_dup"
}

# fl_mails_counts SPOOL...: "EXPECTED LOST DUP" of report mails: expected
# one per row of the mail outbox (the verdict pass queues one per run and
# context), found by Message-ID in the SMTP spools (every .eml); a context
# verdict with no mail queued counts as expected and lost.
fl_mails_counts() {
	_sin="" _vin=""
	case ${1:-} in
	[0-9]*)
		_sin="AND series_id IN ($1)"
		_vin="AND v.run_id IN (SELECT id FROM runs WHERE series_id IN ($1))"
		shift
		;;
	esac
	q "SELECT msgid FROM email_outbox WHERE 1 $_sin" | tr -d '<>' | sort -u >"$TMP/want-mails.txt"
	"$PY" -c '
import email, glob, sys
for d in sys.argv[1:]:
    for f in sorted(glob.glob(d + "/*.eml")):
        m = email.message_from_bytes(open(f, "rb").read())
        print(" ".join(str(m["Message-ID"] or "").split()).strip("<>"))
' "$@" | sort | grep -Fxf "$TMP/want-mails.txt" >"$TMP/got-mails.txt"
	_want=$(wc -l <"$TMP/want-mails.txt")
	_lost=$(sort -u "$TMP/got-mails.txt" | comm -23 "$TMP/want-mails.txt" - | wc -l)
	_dup=$(($(wc -l <"$TMP/got-mails.txt") - $(sort -u "$TMP/got-mails.txt" | wc -l)))
	_unqueued=$(q "SELECT count(*) FROM (SELECT DISTINCT run_id, context FROM verdicts v
		WHERE metric IS NULL $_vin AND NOT EXISTS (SELECT 1 FROM email_outbox e
			WHERE e.run_id = v.run_id AND e.context = v.context))")
	echo "$((_want + _unqueued)) $((_lost + _unqueued)) $_dup"
}

# fl_unsettled: how much work is left: jobs not ended, runs with no
# context verdict, checks and mails still queued (0 when all is settled);
# only the jobs when fl_jobs_only=1 (no Patchwork, no mail).
fl_unsettled() {
	if [ "${fl_jobs_only:-0}" = 1 ]; then
		q "SELECT count(*) FROM jobs WHERE state NOT IN ('done', 'cancelled', 'infra-error')"
		return
	fi
	# A run is done once every context has its verdict, whose final
	# check and mail are queued in the same commit.  (A verdict row of
	# any kind was not enough: a run whose first job was decided counted
	# as settled in the second before the pass decided its last job and
	# queued the check and mail, and those were then counted as lost.)
	q "SELECT (SELECT count(*) FROM jobs WHERE state NOT IN ('done', 'cancelled', 'infra-error'))
		+ (SELECT count(*) FROM runs WHERE state IN ('planned', 'running'))
		+ (SELECT count(*) FROM check_outbox WHERE delivery = 'queued')
		+ (SELECT count(*) FROM email_outbox WHERE delivery = 'queued')"
}
# fl_wait_settled: until fl_unsettled is 0 (and stays so for a second:
# the verdict pass queues checks after the jobs end), or, after a bound of
# 60 s + 3 s per job (against hanging; no timing is asserted), a warning:
# what is left then shows in the counts as lost.
fl_wait_settled() {
	_limit=$((60 + 3 * $(q "SELECT count(*) FROM jobs")))
	_t0=$(date +%s)
	_calm=0
	while [ "$_calm" -lt 2 ]; do
		if [ "$(fl_unsettled)" = 0 ]; then _calm=$((_calm + 1)); else _calm=0; fi
		if [ $(($(date +%s) - _t0)) -gt "$_limit" ]; then
			echo "warning: not settled after ${_limit} s: $(fl_unsettled) items left" >&2
			tail -n 20 "$TMP/ctl.log" >&2
			return 0
		fi
		sleep 0.5
	done
	echo "settled after $(($(date +%s) - _t0)) s"
}

# fl_explain: on a loss or duplicate, what the fake holds and the store
# says, and the outbox's log lines (for the report of a failing case).
fl_explain() {
	echo "--- checks at the fake:" >&2
	jq -c '.checks[] | [.id, .patch, .context, .state, .date]' "$TMP/checks.json" >&2
	echo "--- check outbox:" >&2
	q "SELECT id, run_id, patch_id, state, delivery, attempts, response_code, response
		FROM check_outbox" >&2
	echo "--- outbox log:" >&2
	grep -E 'outbox|killed|stopping' "$TMP/ctl.log" | tail -n 40 >&2
}

# fl_series_of FROM TO: the store's series (comma-separated) of the mails
# fl_pw_series made as numbers FROM..TO.
fl_series_of() {
	_ids=""
	for _i in $(seq "$1" "$2"); do _ids="$_ids${_ids:+,}'fault.$_i.$$@example.org'"; done
	q "SELECT group_concat(DISTINCT p.series_id) FROM patches p JOIN messages m
		ON m.id = p.message_id WHERE m.msgid IN ($_ids)"
}
# fl_jobs_of SERIES: their jobs (comma-separated).
fl_jobs_of() {
	q "SELECT group_concat(j.id) FROM jobs j JOIN runs r ON r.id = j.run_id
		WHERE r.series_id IN ($1)"
}
