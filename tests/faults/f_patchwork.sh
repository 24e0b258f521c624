# Patchwork and the SMTP server failing for a stretch, then healthy: the
# real controller (series read from the fake Patchwork's API 1.3), two real
# agents (built-in runner), checks posted through the fake's API 1.2 (so
# that the faults below hit check delivery and not intake) and report mails
# to a real SMTP server.  Each repetition runs every kind once: two new
# series are added, the fault holds for FAULT_STRETCH_S seconds (default
# 3 in the short form, 6 in the long; the configuration retries at most 2 s apart, so the stretch is several
# retries, as minutes are with production backoff), then it ends:
#   unreachable       the checks' port closed (the TCP forwarder in front of
#                     the fake killed, started again on the same port after)
#   slow              every POST answered 4 s late, after the client's 3 s
#                     timeout (the check made, the answer to nobody)
#   HTTP 500, 502     Django's error page
#   HTTP 429          with Retry-After: 3
#   garbage JSON      every answer cut in half (POSTs make their check)
#   SMTP down         the SMTP server killed, started again on its port
#   SMTP refusing     the SMTP server answering DATA "451 4.3.0 try later"
#   SMTP mute         the SMTP server taking connections and never answering
# After the last stretch everything must settle: one row per kind with the
# jobs of its series, and their checks (for the SMTP kinds: their report
# mails, counted by Message-ID across the SMTP server's spools, in the
# check columns) lost or duplicated.
. "$PG_TOP/tests/faults/lib.sh"
. "$PG_TOP/tests/faults/faults_lib.sh"

if [ "$FAULT_REPS" -gt 1 ]; then : "${FAULT_STRETCH_S:=6}"; else : "${FAULT_STRETCH_S:=3}"; fi
fl_start_patchwork
pw_port=${base##*:}
spool_n=1
start_smtp_on() {	# start_smtp_on PORT [OPTIONS...]: a new spool each time
	_p=$1
	shift
	spool_n=$((spool_n + 1))
	"$PY" tests/smtp_server.py --spool "$TMP/spool$spool_n" --port "$_p" "$@" \
		>"$TMP/smtp$spool_n.out" 2>>"$TMP/smtp.log" &
	smtp=$!
	wait_until "the SMTP server" grep -q '^listening on ' "$TMP/smtp$spool_n.out"
}
start_smtp
stop_smtp() { kill "$smtp"; wait "$smtp" 2>/dev/null; smtp=""; }

proxy=""
stop_proxy() { [ -n "$proxy" ] && kill "$proxy" 2>/dev/null; return 0; }
cleanup_hooks="stop_proxy $cleanup_hooks"
start_proxy() {	# start_proxy PORT
	"$PY" "$PG_TOP/tests/faults/tcp_proxy.py" --port "$1" --to "127.0.0.1:$pw_port" \
		>"$TMP/proxy.out" 2>>"$TMP/proxy.err" &
	proxy=$!
	wait_until "the forwarder" grep -q '^listening on ' "$TMP/proxy.out"
	proxy_port=$(sed -n 's/^listening on //p' "$TMP/proxy.out")
}
start_proxy 0
FL_CHECKS_URL="http://127.0.0.1:$proxy_port/api/1.2"

demo_tree
fl_ctl_conf "$TMP/c.json" 127.0.0.1:0 "$(fl_mail_conf)"
expect_rc 0 "$CTL" --config "$TMP/c.json" db migrate
fl_start_ctl "$TMP/c.json"
fl_agent a1
fl_agent a2

kinds=${FAULT_PW_KINDS:-"unreachable slow http500 http502 http429 garbage smtp-down smtp-refusing smtp-mute"}
n=0
for rep in $(seq "$FAULT_REPS"); do
	for kind in $kinds; do
		n=$((n + 1))
		first=$((fl_series_n + 1))
		case $kind in
		unreachable) stop_proxy; wait "$proxy" 2>/dev/null ;;
		slow) fake fail "{\"hang\": 4, \"for_s\": $FAULT_STRETCH_S, \"method\": \"POST\", \"path\": \"/api/1.2/\"}" ;;
		http500) fake fail "{\"status\": 500, \"for_s\": $FAULT_STRETCH_S, \"path\": \"/api/1.2/\"}" ;;
		http502) fake fail "{\"status\": 502, \"for_s\": $FAULT_STRETCH_S, \"path\": \"/api/1.2/\"}" ;;
		http429) fake fail "{\"status\": 429, \"retry_after\": \"3\", \"body\": \"{\\\"detail\\\":\\\"Request was throttled.\\\"}\", \"for_s\": $FAULT_STRETCH_S, \"path\": \"/api/1.2/\"}" ;;
		garbage) fake fail "{\"garble\": true, \"for_s\": $FAULT_STRETCH_S, \"path\": \"/api/1.2/\"}" ;;
		smtp-down) stop_smtp ;;
		smtp-refusing) stop_smtp; start_smtp_on "$sport" --fail-data "451 4.3.0 try later" --fail-count 100000 ;;
		smtp-mute) stop_smtp; start_smtp_on "$sport" --mute ;;
		esac
		echo "stretch $n: $kind for $FAULT_STRETCH_S s from $(date -u +%T)"
		fl_pw_series 2
		sleep "$FAULT_STRETCH_S"
		case $kind in
		unreachable) start_proxy "$proxy_port" ;;
		smtp-*) [ -n "$smtp" ] && stop_smtp; start_smtp_on "$sport" ;;
		esac
		v=series_$(echo "$kind" | tr '-' '_')
		eval "$v=\"\${$v:-}\${$v:+ }$first-$fl_series_n\""
	done
done
fl_wait_settled
fl_stop_agents
spools="$TMP/spool $(ls -d "$TMP"/spool[0-9]* 2>/dev/null | tr '\n' ' ')"
for kind in $kinds; do
	eval "ranges=\$series_$(echo "$kind" | tr '-' '_')"
	sids=""
	for r in $ranges; do
		s=$(fl_series_of "${r%-*}" "${r#*-}")
		sids="$sids${sids:+,}$s"
	done
	set -- $(fl_results_counts "$(fl_jobs_of "$sids")")
	jobs=$1 completed=$2 rlost=$3 rdup=$4
	case $kind in
	smtp-*)
		# shellcheck disable=SC2086
		set -- $(fl_mails_counts "$sids" $spools)
		echo "$kind: series $sids: mails $1 expected, $2 lost, $3 duplicated"
		clost=$2 cdup=$3
		;;
	*)
		set -- $(fl_checks_counts "$sids")
		clost=$1 cdup=$2
		echo "$kind: series $sids: checks $clost lost, $cdup duplicated"
		;;
	esac
	fault_row "$(echo "$kind" | sed 's/^smtp-/SMTP /; s/^http/HTTP /') (${FAULT_STRETCH_S} s)$(case $kind in smtp-*) echo ': mails as checks' ;; esac)" \
		"$FAULT_REPS" "$jobs" "$completed" "$rlost" "$rdup" "$clost" "$cdup"
done
set -- $(fl_checks_counts)
[ "$1$2" = 00 ] || fl_explain
# shellcheck disable=SC2086
set -- $(fl_mails_counts $spools)
echo "all mails: $1 expected, $2 lost, $3 duplicated"
checks
echo "POSTs of checks by status: $(jq -c '.posts.by_status' "$TMP/checks.json"); lookups found: $(grep -c 'already on Patchwork as check' "$TMP/ctl.log")"
