# Test-report mails through a real SMTP server on loopback (aiosmtpd,
# tests/smtp_server.py): the message as received and parsed by Python's
# email module carries DPDK's fields (and dpdk.org's own update-pw.sh
# patterns find them); plain SMTP, STARTTLS with AUTH PLAIN and LOGIN,
# smtps://; failures classified: wrong password, missing AUTH, no STARTTLS,
# untrusted certificate, 5xx and rejected recipient are permanent; server
# down, a 451 and a silent server are transient; a resend is the same mail.
. "$PG_TOP/tests/integration/lib.sh"
LC_ALL=C.UTF-8
export LC_ALL

PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
"$PY" -c 'import aiosmtpd' 2>/dev/null ||
	fail "python3-aiosmtpd is not installed (make deps)"
SEND="$PG_BUILD/tests/tools/pg-sendmail"
[ -x "$SEND" ] || fail "$SEND not built"

# ---- servers ----------------------------------------------------------------

pids=""
stop_servers() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	return 0
}
cleanup_hooks="stop_servers"

# start_smtp NAME ARGS...: a server spooling to $TMP/NAME; sets $port.
start_smtp() {
	name=$1
	shift
	"$PY" tests/smtp_server.py --spool "$TMP/$name" "$@" >"$TMP/$name.out" 2>"$TMP/$name.log" &
	pid=$!
	pids="$pids $pid"
	i=0
	while ! grep -q '^listening on ' "$TMP/$name.out"; do
		i=$((i + 1))
		[ $i -le 100 ] || { cat "$TMP/$name.log"; fail "SMTP server $name did not start"; }
		kill -0 "$pid" 2>/dev/null || { cat "$TMP/$name.log"; fail "SMTP server $name died"; }
		sleep 0.1
	done
	port=$(sed -n '1s/^listening on \([0-9]*\)$/\1/p' "$TMP/$name.out")
	[ -n "$port" ] || fail "SMTP server $name: first line is not 'listening on PORT'"
}

# Self-signed certificates for 127.0.0.1, made now: one the client trusts
# (ca_file), one it does not.
for c in cert other; do
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
		-addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
		-keyout "$TMP/$c.key" -out "$TMP/$c.pem" >"$TMP/openssl.log" 2>&1 ||
		{ cat "$TMP/openssl.log"; fail "openssl req"; }
done
printf 's3cret pass\n' >"$TMP/pw"
printf 'wrong\n' >"$TMP/badpw"
chmod 600 "$TMP/pw" "$TMP/badpw"

# mail_conf FILE MAIL_MEMBERS: a controller configuration with a mail section.
mail_conf() {
	write_config "$1" "\"mail\": { \"enabled\": true, \"from\": \"perfgate CI <perfgate@lab.example.org>\", \"timeout_s\": 20, $2 }"
}

# ---- the report --------------------------------------------------------------

MSGID='20220124145953.14281-1-olivier.matz@6wind.com'
SUBJECT='[PATCH v2] mempool: test performance with constant n'
# report FILE STATUS DESCRIPTION [AUTHOR]
report() {
	"$PY" - "$@" <<'EOF_PY'
import json, sys
path, status, desc = sys.argv[1:4]
author = sys.argv[4] if len(sys.argv) > 4 else 'Morten Brørup <mb@smartsharesystems.com>'
json.dump({
    'author': author,
    'patch_msgid': '<20220124145953.14281-1-olivier.matz@6wind.com>',
    'patch_id': 1234,
    'subject': '[dpdk-dev] [PATCH v2] mempool: test performance with constant n',
    'label': 'perfgate-demo-Performance',
    'status': status,
    'description': desc,
    'table': 'key                                       base      patched   delta\n'
             'mempool.cache.cores1.bulk32.keep128.rate  2.61e+08  2.19e+08  -16.1%\n',
    'reproduce': 'To reproduce:\n  DPDK_TEST=mempool_perf_autotest build/app/test/dpdk-test -l 0-1\n'
                 '.a line that starts with a dot\n',
    'msgid': 'explicit@lab.example.org',
    'date': '2026-11-30T04:30:00Z',
}, open(path, 'w'), ensure_ascii=False)
EOF_PY
}
report "$TMP/fail.json" fail "Performance Testing FAIL"
report "$TMP/warn.json" warning "Performance Testing WARNING"
report "$TMP/pass.json" success "Performance Testing PASS"
report "$TMP/blocked.json" fail "Performance Testing FAIL" "Blocked <blocked@example.org>"

# check_mail SPOOL_FILE_BASE STATUS DESCRIPTION CC(yes|no) TLS(true|false)
# AUTH(login|none) [RUN_ID]: the received message, parsed by Python's email
# module, and its envelope.
check_mail() {
	[ -e "$1.json" ] || fail "no message $1"
	"$PY" - "$@" >"$TMP/body.txt" <<'EOF_PY' || fail "received message $1 is wrong"
import email, email.policy, json, sys
base, status, desc, cc, tls, auth = sys.argv[1:7]
run_id = sys.argv[7] if len(sys.argv) > 7 else None
raw = open(base + '.eml', 'rb').read()
env = json.load(open(base + '.json'))
def check(what, got, want):
    if got != want:
        sys.exit(f'{what}: got {got!r}, want {want!r}')
# CRLF on the wire, every line; then local line ends, as a delivery agent
# writes a mailbox, for Python's parser.
check('bare LF', raw.replace(b'\r\n', b'').count(b'\n'), 0)
check('bare CR', raw.replace(b'\r\n', b'').count(b'\r'), 0)
m = email.message_from_bytes(raw.replace(b'\r\n', b'\n'), policy=email.policy.default)
check('defects', m.defects, [])
check('Subject', m['Subject'],
      f'|{status}| pw1234 [PATCH v2] mempool: test performance with constant n')
msgid = '<20220124145953.14281-1-olivier.matz@6wind.com>'
check('In-Reply-To', m['In-Reply-To'], msgid)
check('References', m['References'], msgid)
check('From', (m['From'].addresses[0].display_name, m['From'].addresses[0].addr_spec),
      ('perfgate CI', 'perfgate@lab.example.org'))
check('To', str(m['To']), 'test-report@dpdk.org')
if cc == 'yes':
    check('Cc', [(a.display_name, a.addr_spec) for a in m['Cc'].addresses],
          [('Morten Brørup', 'mb@smartsharesystems.com')])
else:
    check('Cc', m['Cc'], None)
check('Message-ID', m['Message-ID'],
      f'<perfgate.r{run_id}.perfgate-demo-Performance@lab.example.org>' if run_id
      else '<explicit@lab.example.org>')
check('Date', m['Date'], 'Mon, 30 Nov 2026 04:30:00 +0000')
check('Content-Type', m.get_content_type(), 'text/plain')
check('charset', m.get_content_charset(), 'utf-8')
body = m.get_content()
lines = body.split('\n')
check('head lines', lines[:6], ['Test-Label: perfgate-demo-Performance',
                                f'Test-Status: {status}',
                                'http://patches.dpdk.org/patch/1234/', '',
                                f'_{desc}_', ''])
for part in ('mempool.cache.cores1.bulk32.keep128.rate  2.61e+08  2.19e+08  -16.1%\n',
             'To reproduce:\n  DPDK_TEST=mempool_perf_autotest build/app/test/dpdk-test -l 0-1\n'
             '.a line that starts with a dot\n'):
    if part not in body:
        sys.exit(f'body lacks {part!r}:\n{body}')
rcpts = ['test-report@dpdk.org'] + (['mb@smartsharesystems.com'] if cc == 'yes' else [])
check('envelope from', env['mail_from'], 'perfgate@lab.example.org')
check('envelope to', env['rcpt_tos'], rcpts)
check('tls', env['tls'], tls == 'true')
check('auth', env['auth_login'], 'perfgate' if auth == 'login' else None)
sys.stdout.write(body)
EOF_PY
}

# What dpdk.org's bot reads (dpdk-ci tools/update-pw.sh, its own sed
# expressions over the first lines of the archived body).
check_update_pw() {
	report=$(head -n 9 "$TMP/body.txt")
	pwid=$(echo "$report" | sed -rn 's,.*http://.*dpdk.org/.*patch/([0-9]+).*,\1,p')
	label=$(echo "$report" | sed -n 's,.*Test-Label: *,,p')
	status=$(echo "$report" | sed -n 's,.*Test-Status: *,,p')
	desc=$(echo "$report" | sed -n 's,^_\(.*\)_$,\1,p')
	[ "$pwid|$label|$status|$desc" = "1234|perfgate-demo-Performance|$1|$2" ] ||
		fail "update-pw.sh would read '$pwid|$label|$status|$desc'"
}

# send CONF REPORT [ARGS...]: run pg-sendmail; $rc, output in $TMP/send.out/err
send() {
	conf=$1
	rep=$2
	shift 2
	"$SEND" -c "$conf" "$@" "$rep" >"$TMP/send.out" 2>"$TMP/send.err"
	rc=$?
}
expect_sent() {
	[ "$rc" -eq 0 ] || { cat "$TMP/send.err"; fail "$1: pg-sendmail exited $rc, not 0"; }
}
# expect_failed RC PATTERN WHAT: exit status and the error message
expect_failed() {
	[ "$rc" -eq "$1" ] || { cat "$TMP/send.out" "$TMP/send.err"; fail "$3: exited $rc, not $1"; }
	grep -Eq -- "$2" "$TMP/send.err" || { cat "$TMP/send.err"; fail "$3: error lacks /$2/"; }
	echo "$3: $(cat "$TMP/send.err")"
}

# ---- plain SMTP ---------------------------------------------------------------

start_smtp plain --reject-rcpt blocked@example.org
mail_conf "$TMP/plain.json" "\"smtp_url\": \"smtp://127.0.0.1:$port/lab.example.org\", \"starttls\": \"off\""
expect_rc 0 "$CTL" --config "$TMP/plain.json" --check-config
jq_is "$TMP/out" .config.mail.smtp_url "smtp://127.0.0.1:$port/lab.example.org"
jq_is "$TMP/out" .config.mail.to test-report@dpdk.org
jq_is "$TMP/out" .config.mail.cc_author_on failure

send "$TMP/plain.json" "$TMP/fail.json" --run-id 42
expect_sent "plain FAILURE"
grep -qx "sent perfgate.r42.perfgate-demo-Performance@lab.example.org to test-report@dpdk.org,mb@smartsharesystems.com (250 2.0.0 Ok: queued as 0001)" "$TMP/send.out" ||
	{ cat "$TMP/send.out"; fail "sent line"; }
check_mail "$TMP/plain/0001" FAILURE "Performance Testing FAIL" yes false none 42
check_update_pw FAILURE "Performance Testing FAIL"
# The bytes received are the bytes formatted (libcurl's dot-stuffing undone
# by the server): nothing is lost or added on the way.
send "$TMP/plain.json" "$TMP/fail.json" --run-id 42 --print
expect_sent "print"
cmp -s "$TMP/send.out" "$TMP/plain/0001.eml" || fail "received bytes differ from the formatted message"

send "$TMP/plain.json" "$TMP/warn.json"
expect_sent "plain WARNING"
check_mail "$TMP/plain/0002" WARNING "Performance Testing WARNING" yes false none
check_update_pw WARNING "Performance Testing WARNING"
send "$TMP/plain.json" "$TMP/pass.json"
expect_sent "plain SUCCESS"
check_mail "$TMP/plain/0003" SUCCESS "Performance Testing PASS" no false none
check_update_pw SUCCESS "Performance Testing PASS"

# A resend after a crash is the same mail: same Message-ID, same bytes.
send "$TMP/plain.json" "$TMP/fail.json" --run-id 42
expect_sent "resend"
cmp -s "$TMP/plain/0001.eml" "$TMP/plain/0004.eml" || fail "a resend is not the same mail"

# A recipient the server refuses: permanent, with the server's words.
send "$TMP/plain.json" "$TMP/blocked.json"
expect_failed 4 "RCPT.*550.*server said: 550 5\.1\.1 <blocked@example\.org>: Recipient address rejected" \
	"rejected recipient"

# STARTTLS required, not offered: permanent.
mail_conf "$TMP/needtls.json" "\"smtp_url\": \"smtp://127.0.0.1:$port\", \"starttls\": \"required\""
send "$TMP/needtls.json" "$TMP/fail.json"
expect_failed 4 "permanent: send mail via smtp://127.0.0.1:$port: .*(SSL|TLS)" "STARTTLS not offered"
[ ! -e "$TMP/plain/0005.eml" ] || fail "a mail went out without the required TLS"

# ---- STARTTLS and AUTH ----------------------------------------------------------

start_smtp tls --starttls "$TMP/cert.pem" "$TMP/cert.key" --auth "perfgate:s3cret pass"
tls_port=$port
TLS_MEMBERS="\"smtp_url\": \"smtp://127.0.0.1:$port/lab.example.org\", \"starttls\": \"required\", \"ca_file\": \"$TMP/cert.pem\""
mail_conf "$TMP/tls.json" "$TLS_MEMBERS, \"username\": \"perfgate\", \"password_file\": \"$TMP/pw\""
expect_rc 0 "$CTL" --config "$TMP/tls.json" --check-config
jq_is "$TMP/out" .config.mail.password_file "$TMP/pw"
grep -q 's3cret' "$TMP/out" && fail "--check-config printed the password"
send "$TMP/tls.json" "$TMP/fail.json" --run-id 43
expect_sent "STARTTLS + AUTH"
check_mail "$TMP/tls/0001" FAILURE "Performance Testing FAIL" yes true login 43
grep -q 'AUTH PLAIN: ok' "$TMP/tls.log" || { cat "$TMP/tls.log"; fail "AUTH PLAIN was not used"; }

# The wrong password: permanent, and the error says so.
mail_conf "$TMP/badpw.json" "$TLS_MEMBERS, \"username\": \"perfgate\", \"password_file\": \"$TMP/badpw\""
send "$TMP/badpw.json" "$TMP/fail.json"
expect_failed 4 "permanent: .*(Login denied|Authentication failed).*server said: 535 5\.7\.8 Authentication credentials invalid" \
	"wrong password"
grep -q wrong "$TMP/send.err" && fail "the error shows the password"
# No credentials where the server wants them: permanent.
mail_conf "$TMP/noauth.json" "$TLS_MEMBERS"
send "$TMP/noauth.json" "$TMP/fail.json"
expect_failed 4 "permanent: .*server said: 530 5\.7\.0 Authentication required" "no AUTH"
# A certificate the client does not trust: permanent.
mail_conf "$TMP/untrusted.json" "\"smtp_url\": \"smtp://127.0.0.1:$tls_port\", \"ca_file\": \"$TMP/other.pem\", \"username\": \"perfgate\", \"password_file\": \"$TMP/pw\""
send "$TMP/untrusted.json" "$TMP/fail.json"
expect_failed 4 "permanent: .*(certificate|SSL)" "untrusted certificate"
[ ! -e "$TMP/tls/0002.json" ] || fail "a mail went through an untrusted connection"

# AUTH LOGIN when that is all the server offers.
start_smtp login --starttls "$TMP/cert.pem" "$TMP/cert.key" --auth "perfgate:s3cret pass" --auth-mechs LOGIN
mail_conf "$TMP/login.json" "\"smtp_url\": \"smtp://127.0.0.1:$port\", \"ca_file\": \"$TMP/cert.pem\", \"username\": \"perfgate\", \"password_file\": \"$TMP/pw\""
send "$TMP/login.json" "$TMP/pass.json"
expect_sent "AUTH LOGIN"
check_mail "$TMP/login/0001" SUCCESS "Performance Testing PASS" no true login
grep -q 'AUTH LOGIN: ok' "$TMP/login.log" || { cat "$TMP/login.log"; fail "AUTH LOGIN was not used"; }

# smtps://: TLS from the first byte.
start_smtp smtps --tls "$TMP/cert.pem" "$TMP/cert.key" --auth "perfgate:s3cret pass"
mail_conf "$TMP/smtps.json" "\"smtp_url\": \"smtps://127.0.0.1:$port\", \"ca_file\": \"$TMP/cert.pem\", \"username\": \"perfgate\", \"password_file\": \"$TMP/pw\""
send "$TMP/smtps.json" "$TMP/warn.json"
expect_sent "smtps"
check_mail "$TMP/smtps/0001" WARNING "Performance Testing WARNING" yes true login

# ---- transient failures -------------------------------------------------------

# 451 at the end of DATA, once: transient, then the retry goes through.
start_smtp busy --fail-data "451 4.3.0 try later" --fail-count 1
mail_conf "$TMP/busy.json" "\"smtp_url\": \"smtp://127.0.0.1:$port\", \"starttls\": \"off\""
send "$TMP/busy.json" "$TMP/fail.json"
expect_failed 3 "transient: send mail via smtp://127.0.0.1:$port: .*server said: 451 4\.3\.0 try later" "451"
[ ! -e "$TMP/busy/0001.json" ] || fail "the refused mail was stored"
send "$TMP/busy.json" "$TMP/fail.json"
expect_sent "retry after 451"
check_mail "$TMP/busy/0001" FAILURE "Performance Testing FAIL" yes false none
[ ! -e "$TMP/busy/0002.json" ] || fail "more than one message stored"

# 554 at the end of DATA: permanent.
start_smtp refuse --fail-data "554 5.6.0 message refused" --fail-count 100
mail_conf "$TMP/refuse.json" "\"smtp_url\": \"smtp://127.0.0.1:$port\", \"starttls\": \"off\""
send "$TMP/refuse.json" "$TMP/fail.json"
expect_failed 4 "permanent: .*server said: 554 5\.6\.0 message refused" "554"

# The server down: transient.  (The port of a server just stopped.)
start_smtp gone
gone_port=$port
kill "$pid"
wait "$pid" 2>/dev/null
mail_conf "$TMP/gone.json" "\"smtp_url\": \"smtp://127.0.0.1:$gone_port\", \"starttls\": \"off\""
send "$TMP/gone.json" "$TMP/fail.json"
expect_failed 3 "transient: send mail via smtp://127.0.0.1:$gone_port: .*(connect|Connection refused)" \
	"server down"

# A server that accepts and never speaks: the timeout, transient.
start_smtp mute --mute
write_config "$TMP/mute.json" "\"mail\": { \"enabled\": true, \"from\": \"perfgate@lab.example.org\", \"timeout_s\": 2, \"smtp_url\": \"smtp://127.0.0.1:$port\", \"starttls\": \"off\" }"
send "$TMP/mute.json" "$TMP/fail.json"
expect_failed 3 "transient: .*(timed out|Timeout).*timeout 2000 ms" "silent server"

# ---- configuration the tool refuses before sending ---------------------------

write_config "$TMP/off.json" "\"mail\": { \"smtp_url\": \"smtp://127.0.0.1:$port\" }"
send "$TMP/off.json" "$TMP/fail.json"
expect_failed 1 "mail is not enabled" "disabled"

# SIGTERM ends the servers with status 0.
for p in $pids; do
	[ "$p" = "$pid" ] && continue	# the mute one, checked below too
	kill -0 "$p" 2>/dev/null || continue
	kill "$p"
	wait "$p"
	s=$?
	[ "$s" -eq 0 ] || fail "SMTP server $p exited $s on SIGTERM"
done
kill "$pid"
wait "$pid"
[ $? -eq 0 ] || fail "mute server did not exit 0 on SIGTERM"
pids=""
echo "mail: all cases hold"
