# Sourced after lib.sh by the tests that run the controller against the
# fake Patchwork (tests/fake_patchwork.py) and a real SMTP server on
# loopback (tests/smtp_server.py), where its checks and report mails are
# delivered (t_checks.sh, t_verdict.sh).  Gives:
#   $PY                  the python3 that runs them
#   $db, q SQL           the controller's store and a query on it (sqlite3)
#   wait_until WHAT CMD...  poll CMD every 0.2 s; after 120 s (a bound
#                        against hanging, not a measurement) fail, showing
#                        the end of $TMP/ctl.log
#   start_patchwork FIXTURE  the fake Patchwork with the users of FIXTURE:
#                        $pw its pid, $base its URL
#   fake WHAT JSON       POST JSON to the fake's /_fake/WHAT
#   checks               the checks it has received, into $TMP/checks.json
#   start_smtp [ARGS...] the SMTP server spooling to $TMP/spool, ARGS its
#                        failure options: $smtp its pid, $sport its port
#   conf FILE TOKEN_FILE USER [EXTRA]  a controller configuration: checks
#                        posted to the fake as USER, retries at most 2 s
#                        apart (an outage of minutes takes seconds here),
#                        the API on a free port, EXTRA more JSON members
#   start_ctl CONFIG, stop_ctl   the controller daemon ($ctl, its log
#                        appended to $TMP/ctl.log); stop_ctl sends SIGTERM
#                        and fails unless it exits 0
#   run_of MSGID         the run of the series that holds message MSGID
#   lease TOKEN OUT      a fake agent's lease at the controller $URL: a job
#                        (200), its body in OUT
# The fake, the SMTP server and the controller are killed on exit.

PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
db="$TMP/state/perfgate.db"
q() { sqlite3 "$db" "$1" || fail "sqlite3: $1"; }

pw=""
smtp=""
ctl=""
stop_services() {
	[ -n "$ctl" ] && kill -9 "$ctl" 2>/dev/null
	[ -n "$smtp" ] && kill "$smtp" 2>/dev/null
	[ -n "$pw" ] && kill "$pw" 2>/dev/null
	return 0
}
cleanup_hooks="$cleanup_hooks stop_services"

wait_until() {
	what=$1
	shift
	i=0
	until "$@"; do
		i=$((i + 1))
		[ $i -le 600 ] || { tail -n 40 "$TMP/ctl.log" >&2; fail "timed out waiting for $what"; }
		sleep 0.2
	done
}

start_patchwork() {
	"$PY" tests/fake_patchwork.py --port 0 --fixture "$1" --quiet \
		>"$TMP/pw.out" 2>"$TMP/pw.err" &
	pw=$!
	wait_until "the fake Patchwork" grep -q '^listening on ' "$TMP/pw.out"
	base="http://127.0.0.1:$(sed -n 's/^listening on //p' "$TMP/pw.out")"
}

fake() {
	curl -sS -f -X POST -H 'Content-Type: application/json' -d "$2" "$base/_fake/$1" \
		>/dev/null || fail "fake $1 $2"
}
checks() { curl -sS -f "$base/_fake/checks" >"$TMP/checks.json" || fail "GET /_fake/checks"; }

start_smtp() {
	"$PY" -c 'import aiosmtpd' 2>/dev/null ||
		fail "python3-aiosmtpd is not installed (make deps)"
	"$PY" tests/smtp_server.py --spool "$TMP/spool" "$@" >"$TMP/smtp.out" 2>"$TMP/smtp.log" &
	smtp=$!
	wait_until "the SMTP server" grep -q '^listening on ' "$TMP/smtp.out"
	sport=$(sed -n 's/^listening on //p' "$TMP/smtp.out")
}

conf() {
	cat >"$1" <<EOF
{ "db": "$db", "data_dir": "$TMP/state", "profiles_dir": "$TMP/profiles",
  "api": { "listen": "127.0.0.1:0", "public_url": "https://perfgate.example.org/",
           "web_dir": "$PG_TOP/web" },
  "checks": { "enabled": true, "patchwork_url": "$base/api/1.3", "token_file": "$2",
              "username": "$3", "timeout_s": 5, "max_backoff_s": 2 }${4:+, $4} }
EOF
}

start_ctl() {
	"$CTL" --config "$1" serve >>"$TMP/ctl.log" 2>&1 &
	ctl=$!
}
stop_ctl() {
	kill "$ctl"
	wait "$ctl"
	s=$?
	ctl=""
	[ "$s" -eq 0 ] || { tail -n 20 "$TMP/ctl.log"; fail "controller exited $s on SIGTERM"; }
}

run_of() {
	q "SELECT r.id FROM runs r JOIN patches p ON p.series_id = r.series_id
	   JOIN messages m ON m.id = p.message_id WHERE m.msgid = '$1'"
}

lease() {
	code=$(curl -sS -o "$2" -w '%{http_code}' -H "Authorization: Bearer $1" \
		-H 'Content-Type: application/json' --data-binary '{"wait_s": 5}' \
		"$URL/api/v1/lease") || fail "lease: curl failed"
	[ "$code" = 200 ] || { cat "$2"; fail "lease: HTTP $code"; }
}
