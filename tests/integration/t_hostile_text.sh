# Text from an attacker's mail, shown to people: two series whose headers
# hold ESC/BEL sequences (in the Message-ID too), C1 controls as UTF-8 and
# as the raw byte 0x9b, bidi overrides and isolates, DEL, invalid UTF-8,
# overlong forms and surrogates, raw and inside RFC 2047 encoded words.
# The store keeps them as received; everything that leaves for a person
# must be valid UTF-8 without a raw control (C0 but LF/TAB in blocks, DEL,
# C1, bidi): every CLI listing (text and --json), every line of the
# controller's log at debug level (with request paths holding %1b%0d%0a),
# every JSON answer of the API, and every mail the SMTP server received;
# and the report of the run whose Message-ID holds ESC is still sent.
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/delivery_lib.sh"
LC_ALL=C.UTF-8
export LC_ALL

OTOOL="$PG_BUILD/tests/tools/outbox-tool"
[ -x "$OTOOL" ] || fail "$OTOOL not built"
CTX=perfgate-demo-Performance

# ---- the hostile mails --------------------------------------------------------

demo_tree
"$PY" - "$TMP/hostile.mbox" <<'EOF_PY' || fail "writing the mbox"
import base64, sys
def patch(msgid, frm, subject, n):
    return (b'From hostile@example.org Mon Nov 30 05:00:00 2026\n'
            b'Message-Id: <' + msgid + b'>\n'
            b'From: ' + frm + b'\n'
            b'Date: Mon, 30 Nov 2026 05:0' + str(n).encode() + b':00 +0000\n'
            b'Subject: ' + subject + b'\n'
            b'MIME-Version: 1.0\n'
            b'Content-Type: text/plain; charset=UTF-8\n'
            b'Content-Transfer-Encoding: 8bit\n'
            b'\n'
            b'Body \x1b[2J with \xe2\x80\xae controls.\n'
            b'\n'
            b'Signed-off-by: Eve <eve@example.org>\n'
            b'---\n'
            b' VERSION | 2 +-\n'
            b' 1 file changed, 1 insertion(+), 1 deletion(-)\n'
            b'\n'
            b'diff --git a/VERSION b/VERSION\n'
            b'index 0000000..1111111 100644\n'
            b'--- a/VERSION\n'
            b'+++ b/VERSION\n'
            b'@@ -1 +1 @@\n'
            b'-22.11.0\n'
            b'+22.11.' + str(n).encode() + b'\n'
            b'-- \n'
            b'2.39.5\n'
            b'\n')
# 1: raw 8-bit headers; the Message-ID clears the screen and rings.
a = patch(b'evil\x1b[2J\x07\x1b]0;pwned\x07@example.org',
          b'"Eve \xc2\x85\xe2\x80\xae Hacker\x7f" <eve@example.org>',
          b'[PATCH] net: \xc2\x9b' b'2J fix \x9b \xe2\x80\xae\xe2\x81\xa6gpj.exe \xc0\xaf'
          b'\xed\xa0\x80 \x1b[31mred\x7f \xe2\x80\x8f\xd8\x9c end', 1)
# 2: the same bytes hidden in encoded words.
ew = base64.b64encode(b'lib: \x1b[2J\x07 \xc2\x9b \xe2\x80\xae txt \xe2\x81\xa6 \xc0\xaf').decode()
b = patch(b'plain.2@example.org',
          b'=?UTF-8?Q?Mallory_=E2=80=AE=1B[2J=C2=9B?= <mallory@example.org>',
          b'[PATCH] =?UTF-8?B?' + ew.encode() + b'?= =?ISO-8859-1?Q?=9B=85?= '
          b'=?UTF-8?Q?=ED=A0=80=FF?=', 2)
open(sys.argv[1], 'wb').write(a + b)
EOF_PY

# ---- the controller: ingest, plan, report mails queued ------------------------

start_smtp
cat >"$TMP/c.json" <<EOF
{ "db": "$db", "data_dir": "$TMP/state", "profiles_dir": "$TMP/profiles",
  "api": { "listen": "127.0.0.1:0", "public_url": "https://perfgate.example.org/" },
  "mail": { "enabled": true, "smtp_url": "smtp://127.0.0.1:$sport/lab.example.org",
            "starttls": "off", "from": "perfgate CI <perfgate@lab.example.org>",
            "timeout_s": 10 } }
EOF
C="$CTL --config $TMP/c.json --log-level debug"
$C ingest --mbox "$TMP/hostile.mbox" >"$TMP/ingest.out" 2>>"$TMP/ctl.log" || fail "ingest"
$C plan >"$TMP/plan.out" 2>>"$TMP/ctl.log" || fail "plan"
[ "$(q "SELECT count(*) FROM runs")" = 2 ] || fail "expected 2 runs: $(cat "$TMP/plan.out")"
# The store keeps what was received.
[ "$(q "SELECT count(*) FROM messages WHERE instr(msgid, char(27)) > 0")" = 1 ] ||
	fail "the Message-ID with ESC is not stored as received"
run_a=$(q "SELECT r.id FROM runs r JOIN patches p ON p.series_id = r.series_id
	   JOIN messages m ON m.id = p.message_id WHERE instr(m.msgid, char(27)) > 0")
run_b=$(q "SELECT id FROM runs WHERE id <> $run_a")
printf 'key\033[2J \342\200\256 rate\t-16.1%%\r\nnext \302\233 line\n' >"$TMP/table.txt"
for r in "$run_a" "$run_b"; do
	"$OTOOL" queue-mail "$TMP/c.json" "$r" "$CTX" fail "Performance Testing FAIL" \
		"$TMP/table.txt" >"$TMP/queue.out" 2>&1 ||
		{ cat "$TMP/queue.out"; fail "queue-mail for run $r (hostile Message-ID: $run_a)"; }
done

# ---- the daemon: mails delivered, the API asked, paths that forge lines ---------

# start_ctl at debug level: api=debug logs every request's path.
"$CTL" --config "$TMP/c.json" --log-level debug serve >>"$TMP/ctl.log" 2>&1 &
ctl=$!
wait_until "the API" grep -q 'api: listening on http' "$TMP/ctl.log"
url=$(sed -n 's/.*api: listening on \(http[^ ]*\).*/\1/p' "$TMP/ctl.log" | head -n 1)
mails_sent() { [ "$(q "SELECT count(*) FROM email_outbox WHERE delivery = 'sent'")" = 2 ]; }
wait_until "both report mails" mails_sent
sid_a=$(q "SELECT series_id FROM runs WHERE id = $run_a")
sid_b=$(q "SELECT series_id FROM runs WHERE id = $run_b")
mkdir "$TMP/api"
n=0
job_a=$(q "SELECT min(id) FROM jobs WHERE run_id = $run_a")
for p in series "series/$sid_a" "series/$sid_b" "runs/$run_a" "runs/$run_b" jobs "jobs/$job_a" \
	agents "series?state=complete"; do
	n=$((n + 1))
	curl -sS -o "$TMP/api/$n.json" -w '%{http_code}' "$url/api/v1/$p" >"$TMP/api/$n.code" ||
		fail "GET /api/v1/$p"
	[ "$(cat "$TMP/api/$n.code")" = 200 ] || fail "GET /api/v1/$p: $(cat "$TMP/api/$n.code")"
done
# Paths and a header that would forge a log line (or clear the screen of
# whoever tails the log), answered 404 and logged at api=debug.
forged='2026-01-01T00:00:00.000Z perfgate-controller[1] error api: FORGED'
curl -gsS -o "$TMP/api/404a.json" "$url/api/v1/series/%1b%5b2J%0d%0a$(echo "$forged" | sed 's/ /%20/g')" ||
	fail "GET a forging path"
curl -gsS -o "$TMP/api/404b.json" "$url/api/v1/%1b%0d%0a%c2%9b%e2%80%ae%ff%07" || fail "GET a C1 path"
curl -gsS -o "$TMP/api/400.json" -X POST -H 'Authorization: Bearer x' \
	"$url/api/v1/jobs/1%0a$(echo "$forged" | sed 's/ /%20/g')/heartbeat" || fail "POST"
stop_ctl

# ---- the CLI: every listing, text and JSON --------------------------------------

mkdir "$TMP/cli"
cli() {
	name=$1
	shift
	$CTL --config "$TMP/c.json" "$@" >"$TMP/cli/$name" 2>"$TMP/cli/$name.err" ||
		{ cat "$TMP/cli/$name.err"; fail "perfgate-controller $*"; }
}
cli series-list series list
cli series-list.json series list --json
for s in "$sid_a" "$sid_b"; do
	cli "series-$s" series show "$s"
	cli "series-$s.json" series show "$s" --json
done
cli run-a run show "$run_a"
cli run-b run show "$run_b"
cli outbox outbox list --all
cli outbox.json outbox list --all --json
cli agents agent list
cli agents.json agent list --json
cli dbcheck db check
cp "$TMP/ingest.out" "$TMP/plan.out" "$TMP/cli/"

# ---- the checks -----------------------------------------------------------------

"$PY" - "$TMP" "$run_a" <<'EOF_PY' || fail "hostile text reached a person"
import email, email.policy, glob, json, os, re, sys
tmp, run_a = sys.argv[1], sys.argv[2]
bidi = {0x061c, 0x200e, 0x200f, 0x2028, 0x2029} | set(range(0x202a, 0x202f)) | \
       set(range(0x2066, 0x206a))
bad = []
def scan(name, raw, keep=('\n', '\t')):
    try:
        text = raw.decode('utf-8')
    except UnicodeDecodeError as e:
        bad.append(f'{name}: not UTF-8 ({e})')
        return None
    for i, ch in enumerate(text):
        c = ord(ch)
        if (c < 0x20 and ch not in keep) or 0x7f <= c <= 0x9f or c in bidi:
            bad.append(f'{name}: raw U+{c:04X} at {i}: {text[max(0, i - 30):i + 10]!r}')
            return None
    return text

# The CLI, text and JSON; the JSON parses and is valid UTF-8.
for f in sorted(glob.glob(tmp + '/cli/*')):
    if f.endswith('.err'):
        continue
    t = scan(f, open(f, 'rb').read())
    if t is not None and f.endswith('.json'):
        json.loads(t)
shows = open(tmp + '/cli/series-list', 'rb').read().decode(errors='replace')
if '\\x1b' not in shows and '\\u009b' not in shows:
    bad.append('series list: the escapes are not shown')

# The API: every answer valid JSON, valid UTF-8, no raw C1/bidi.
for f in sorted(glob.glob(tmp + '/api/*.json')):
    t = scan(f, open(f, 'rb').read())
    if t is not None:
        json.loads(t)

# The log: one line per message, every line a real one.
head = re.compile(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z perfgate-controller\[\d+\] '
                  r'(error|warn|info|debug) [a-z-]+: ')
log = scan('ctl.log', open(tmp + '/ctl.log', 'rb').read(), keep=('\n',))
if log is not None:
    for line in log.splitlines():
        if not head.match(line):
            bad.append(f'ctl.log: a line that is not a log line: {line[:120]!r}')
    if 'FORGED' not in log:
        bad.append('ctl.log: the forging request was not logged at api=debug')
    if '\\x1b[2J\\x07\\x1b]0;pwned' not in log and 'pwned' in log:
        bad.append('ctl.log: the Message-ID is not shown escaped')

# The mails: CRLF only, valid UTF-8, no raw controls; the run with the
# hostile Message-ID got its report, unthreaded.
emls = sorted(glob.glob(tmp + '/spool/*.eml'))
if len(emls) != 2:
    bad.append(f'expected 2 mails, got {len(emls)}')
got_a = False
for f in emls:
    raw = open(f, 'rb').read()
    if raw.replace(b'\r\n', b'').count(b'\r') or raw.replace(b'\r\n', b'').count(b'\n'):
        bad.append(f'{f}: a bare CR or LF')
    scan(f, raw.replace(b'\r\n', b'\n'))
    m = email.message_from_bytes(raw.replace(b'\r\n', b'\n'), policy=email.policy.default)
    if m.defects:
        bad.append(f'{f}: defects {m.defects}')
    for h in ('Subject', 'From', 'Cc', 'In-Reply-To', 'References'):
        if m[h] is not None:
            scan(f'{f} {h} (decoded)', str(m[h]).encode())
    scan(f + ' body (decoded)', m.get_content().encode())
    if m['Message-ID'] == f'<perfgate.r{run_a}.perfgate-demo-Performance@lab.example.org>':
        got_a = True
        if m['In-Reply-To'] is not None or m['References'] is not None:
            bad.append(f'{f}: threads on a Message-ID it cannot write')
        if '\\u202e' not in str(m['Subject']):
            bad.append(f'{f}: the subject does not show the escape: {m["Subject"]!r}')
    elif m['In-Reply-To'] != '<plain.2@example.org>':
        bad.append(f'{f}: In-Reply-To {m["In-Reply-To"]!r}')
if not got_a:
    bad.append('the report of the run with the hostile Message-ID was not sent')
if bad:
    sys.exit('\n'.join(bad))
EOF_PY
echo "hostile text: CLI, log, API and mail clean"
