# The fake Patchwork server (tests/fake_patchwork.py) keeps the facts of the
# real one that perfgate relies on (shared reference, section 1): Link
# paging, the per_page cap, HTTP 500 on a "Z" since, 200 [] on bad filters,
# 302 on /patch/N/mbox/, series mboxes without the cover letter and without
# ">From" escaping, check creation (201, 400 on a slug with '/', 403 for a
# non-maintainer or a bad token), outage injection (counted and timed,
# dropped connections, lost replies) and a clean SIGTERM.
. "$PG_TOP/tests/integration/lib.sh"
LC_ALL=C
export LC_ALL

PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
CI_TOKEN=04b5b8ffb66a2d9ba9ad32d0ba95a2b120a60b9a
BOB_TOKEN=1111111111111111111111111111111111111111

"$PY" tests/fake_patchwork.py --port 0 --fixture tests/patchwork/fixture.json \
	>"$TMP/pw.log" 2>&1 &
pw_pid=$!
stop_pw() {
	[ -n "${pw_pid:-}" ] && kill "$pw_pid" 2>/dev/null
	return 0
}
cleanup_hooks="stop_pw"
i=0
while ! grep -q '^listening on ' "$TMP/pw.log"; do
	i=$((i + 1))
	[ $i -le 100 ] || { cat "$TMP/pw.log"; fail "fake server did not start"; }
	kill -0 "$pw_pid" 2>/dev/null || { cat "$TMP/pw.log"; fail "fake server died"; }
	sleep 0.1
done
head -n 1 "$TMP/pw.log" | grep -Eq '^listening on [0-9]+$' ||
	fail "first line is not 'listening on PORT'"
port=$(sed -n '1s/^listening on //p' "$TMP/pw.log")
B="http://127.0.0.1:$port"
API="$B/api/1.3"

# get URL: body in $TMP/body, headers in $TMP/head, status in $code
get() {
	code=$(curl -sS -D "$TMP/head" -o "$TMP/body" -w '%{http_code}' "$@") ||
		fail "curl $*"
}
expect_code() {
	[ "$code" = "$1" ] || { cat "$TMP/head" "$TMP/body" >&2; fail "$2: HTTP $code, expected $1"; }
}
expect_body() {
	printf '%s' "$1" >"$TMP/want"
	cmp -s "$TMP/want" "$TMP/body" ||
		{ echo "want: $1" >&2; echo "got:  $(cat "$TMP/body")" >&2; fail "$2: body differs"; }
}
# json EXPR: evaluate a Python expression over the parsed body (as `d`)
json() {
	"$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
		"$TMP/body" "$1"
}

# --- Link paging: a bare array, next/first/last with a sorted query,
# walked to the end; prev drops the page when it leads to page 1.
get "$API/events/?project=dpdk&per_page=2&order=date"
expect_code 200 "events page 1"
[ "$(json 'len(d)')" = 2 ] || fail "page 1 does not hold 2 events"
grep -q "^Link: <$API/events/?order=date&page=2&per_page=2&project=dpdk>; rel=\"next\", <$API/events/?order=date&page=1&per_page=2&project=dpdk>; rel=\"first\", <$API/events/?order=date&page=[0-9]*&per_page=2&project=dpdk>; rel=\"last\"" "$TMP/head" ||
	{ cat "$TMP/head"; fail "Link header not as patchwork formats it"; }
total=0
pages=0
url="$API/events/?project=dpdk&per_page=2&order=date"
last_date=""
while [ -n "$url" ]; do
	get "$url"
	expect_code 200 "events $url"
	total=$((total + $(json 'len(d)')))
	pages=$((pages + 1))
	# order=date: ascending dates within and across pages
	first=$(json 'd[0]["date"]')
	[ -z "$last_date" ] || [ "$(printf '%s\n%s\n' "$last_date" "$first" | sort | head -n 1)" = "$last_date" ] ||
		fail "order=date not ascending across pages"
	last_date=$(json 'd[-1]["date"]')
	if [ $pages -eq 2 ]; then
		grep -q "<$API/events/?order=date&per_page=2&project=dpdk>; rel=\"prev\"" "$TMP/head" ||
			{ cat "$TMP/head"; fail "prev link to page 1 should drop the page"; }
	fi
	url=$(sed -n 's/^Link: .*<\([^>]*\)>; rel="next".*/\1/p' "$TMP/head" | tr -d '\r')
	[ $pages -le 50 ] || fail "paging does not end"
done
[ $pages -ge 3 ] || fail "expected several pages, got $pages"
get "$API/events/?project=dpdk&per_page=250"
[ "$(json 'len(d)')" = "$total" ] || fail "paged total $total differs from one page"
get "$API/events/?project=dpdk&per_page=2&page=999"
expect_code 404 "page past the end"
expect_body '{"detail":"Invalid page."}' "page past the end"

# Default order is newest first.
get "$API/events/?project=dpdk"
[ "$(json 'd[0]["date"] >= d[-1]["date"]')" = True ] || fail "default order is not -date"

# --- per_page is capped at 250.
"$PY" -c 'import json; print(json.dumps({"events": [{"category": "patch-created", "patch": 301, "date": "2026-12-01T00:00:%02d.%06d" % (i // 100000, i % 100000)} for i in range(300)]}))' >"$TMP/many.json"
get -H 'Content-Type: application/json' --data-binary @"$TMP/many.json" "$B/_fake/events"
expect_code 200 "adding 300 events"
get "$API/events/?category=patch-created&patch=301&per_page=1000"
expect_code 200 "per_page=1000"
[ "$(json 'len(d)')" = 250 ] || fail "per_page=1000 returned $(json 'len(d)') events, not 250"
grep -q 'page=2&patch=301&per_page=1000>; rel="next"' "$TMP/head" ||
	{ cat "$TMP/head"; fail "no next link after a capped page"; }

# --- since: naive and inclusive; "Z" or an offset is HTTP 500.
get "$API/events/?project=dpdk&category=series-completed&order=date"
n_all=$(json 'len(d)')
since=$(json 'd[1]["date"]')
get "$API/events/?project=dpdk&category=series-completed&order=date&since=$since"
[ "$(json 'len(d)')" = $((n_all - 1)) ] || fail "since is not inclusive"
[ "$(json 'd[0]["date"]')" = "$since" ] || fail "since did not start at the event"
get "$API/events/?since=2026-11-30T03:00:00Z"
expect_code 500 "since with Z"
grep -q 'Server Error (500)' "$TMP/body" || fail "500 is not Django's error page"
get "$API/events/?since=2026-11-30T03:00:00%2B00:00"
expect_code 500 "since with +00:00"

# --- Bad filter values answer 200 [].
for q in category=bogus project=nope since=2026-11-30 series=abc series=99999 \
	'category=series-completed&project=nope'; do
	get "$API/events/?$q"
	expect_code 200 "events?$q"
	expect_body '[]' "events?$q"
done
# Repeated category: the last one wins.
get "$API/events/?project=dpdk&category=bogus&category=series-completed"
[ "$(json 'set(e["category"] for e in d)')" = "{'series-completed'}" ] ||
	fail "repeated category: the last one should win"
# Other projects' events stay out.
get "$API/events/?project=ci&category=series-created"
[ "$(json '[e["payload"]["series"]["id"] for e in d]')" = "[4]" ] || fail "project filter"
# Comment events only from API 1.3.
get "$API/events/?category=patch-comment-created"
[ "$(json 'len(d)')" = 1 ] || fail "comment event missing in 1.3"
[ "$(json 'd[0]["payload"]["comment"]["url"]')" = "$API/patches/101/comments/7001/" ] ||
	fail "comment url"
get "$B/api/1.2/events/?category=patch-comment-created"
expect_body '[]' "comment events in 1.2"
get "$B/api/1.4/events/"
expect_code 404 "unknown API version"

# --- Series: patches in date order, not number order; cover letter.
get "$API/series/2/"
expect_code 200 "series 2"
[ "$(json '[p["name"][:5] for p in d["patches"]]')" = "['[2/3]', '[3/3]', '[1/3]']" ] ||
	fail "series patches not in date order: $(json '[p["name"] for p in d["patches"]]')"
[ "$(json 'd["cover_letter"]')" = None ] || fail "series 2 has no cover"
get "$API/series/1/"
[ "$(json 'd["cover_letter"]["name"]')" = "[v2,0/2] Add world and bang" ] || fail "cover name"
[ "$(json '(d["name"], d["version"], d["total"], d["received_total"], d["received_all"])')" = \
	"('Add world and bang', 2, 2, 2, True)" ] || fail "series 1 fields"
get "$API/series/999/"
expect_code 404 "unknown series"
expect_body '{"detail":"Not found."}' "unknown series"

# --- Patches: mbox URL, series list, aggregate check.
get "$API/patches/102/"
[ "$(json 'd["check"]')" = success ] || fail "aggregate check of 102"
[ "$(json 'd["checks"]')" = "$B/api/patches/102/checks/" ] || fail "checks URL has no version"
[ "$(json '[s["id"] for s in d["series"]]')" = "[1]" ] || fail "patch series list"
mbox_url=$(json 'd["mbox"]')
get "$API/patches/101/"
[ "$(json 'd["check"]')" = pending ] || fail "no checks means pending"

# --- mbox: 302 from /patch/N/mbox/ (relative, query dropped); no >From.
get "$B/patch/102/mbox/?series=*"
expect_code 302 "patch mbox redirect"
loc=$(sed -n 's/^Location: //p' "$TMP/head" | tr -d '\r')
[ "$B$loc" = "$mbox_url" ] || fail "redirect to '$loc', not the patch's mbox URL"
get -L "$B/patch/102/mbox/"
expect_code 200 "patch mbox after redirect"
head -n 1 "$TMP/body" | grep -Eq '^From patchwork [A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9:]{8} 2026$' ||
	fail "mbox does not start with 'From patchwork <ctime>'"
expect_grep '^X-Patchwork-Id: 102$' "$TMP/body"
expect_grep '^From the body: this line starts with From' "$TMP/body"
grep -q '^>From' "$TMP/body" && fail "mbox escaped a From line"
grep -qi '^Content-Type: text/plain; charset="utf-8"$' "$TMP/body" || fail "mbox Content-Type"
get "$B/series/1/mbox/"
expect_code 200 "series mbox"
[ "$(grep -c '^From patchwork ' "$TMP/body")" = 2 ] || fail "series mbox: not 2 messages"
grep -q '0/2' "$TMP/body" && fail "series mbox includes the cover letter"
[ "$(sed -n 's/^Subject: \[PATCH v2 \([0-9]\)\/2\].*/\1/p' "$TMP/body" | tr -d '\n')" = 12 ] ||
	fail "series mbox not ordered by number"
get "$B/series/2/mbox/"
[ "$(sed -n 's/^Subject: \[PATCH \([0-9]\)\/3\].*/\1/p' "$TMP/body" | tr -d '\n')" = 123 ] ||
	fail "series 2 mbox not ordered by number"
get "$B/cover/1001/mbox/"
expect_code 302 "cover mbox redirect"

# --- As patchwork 3.1 rebuilds a mail: the text after the diff (up to the
# signature) is content, served after the notes and in front of the diff;
# a long Message-Id is folded onto a continuation line.
long=0123456789abcdef0123456789abcdef01234567.1796014799.git.carol@example.net
sed -e "s/^Message-Id: <.*>/Message-Id: <$long>/" -e 's/lib: fix hello/lib: fix hello after/' \
	-e '/^+fix$/a\
\
Depends-on: series-1\
base-commit: 210305f144b7d56c19abbe6c36cb68c737ec5cfe' \
	tests/patchwork/single/0001-lib-fix-hello.patch >"$TMP/after.patch"
get -H 'Content-Type: application/json' \
	--data-binary "{\"mails\":[{\"file\":\"$TMP/after.patch\",\"id\":701}]}" "$B/_fake/series"
expect_code 200 "add a patch with text after its diff"
get "$API/patches/701/"
[ "$(json '("Depends-on: series-1" in d["content"], "Depends-on" in d["diff"], "2.39.5" in d["content"] + d["diff"])')" = \
	"(True, False, False)" ] || fail "content and diff of a patch with text after its diff"
get -L "$B/patch/701/mbox/"
expect_code 200 "mbox of a patch with text after its diff"
line_of() { grep -n -m1 -e "$1" "$TMP/body" | cut -d: -f1; }
notes=$(line_of '^ 1 file changed')
dep=$(line_of '^Depends-on: series-1$')
base=$(line_of '^base-commit: ')
diff=$(line_of '^diff --git ')
[ -n "$notes" ] && [ -n "$dep" ] && [ -n "$base" ] && [ -n "$diff" ] &&
	[ "$notes" -lt "$dep" ] && [ "$dep" -lt "$base" ] && [ "$base" -lt "$diff" ] ||
	{ cat "$TMP/body" >&2; fail "text after the diff not moved in front of it"; }
grep -q '^-- $' "$TMP/body" && fail "the signature is served"
grep -A1 '^Message-Id: *$' "$TMP/body" | grep -qx " <$long>" ||
	{ cat "$TMP/body" >&2; fail "long Message-Id not folded"; }
# Comments: "addressed" (null unless the mail asks for action), no "url".
get "$API/patches/101/comments/7001/"
expect_code 200 "comment detail"
[ "$(json '("url" in d, d["addressed"])')" = "(False, None)" ] || fail "comment detail fields"
get "$API/patches/101/comments/"
[ "$(json '[("url" in c, c["addressed"]) for c in d]')" = "[(False, None)]" ] ||
	fail "comment list fields"
get "$B/api/1.2/patches/101/comments/"
[ "$(json '[("url" in c, "addressed" in c) for c in d]')" = "[(False, False)]" ] ||
	fail "comment fields in 1.2"

# --- Checks.
post_check() { # TOKEN JSON [PATCH]
	get -H "Authorization: Token $1" -H 'Content-Type: application/json' \
		--data-binary "$2" "$API/patches/${3:-101}/checks/"
}
post_check "$CI_TOKEN" '{"state":"success","context":"ci/Intel-compilation"}'
expect_code 400 "context with a slash"
expect_body '{"context":["Enter a valid \"slug\" consisting of letters, numbers, underscores or hyphens."]}' "slug error"
post_check "$CI_TOKEN" '{"state":"failure","context":"perf"}'
expect_code 400 "bad state"
expect_body '{"state":["\"failure\" is not a valid choice."]}' "bad state"
post_check "$CI_TOKEN" '{"context":"perf"}'
expect_body '{"state":["A check must have a state."]}' "no state"
long=$("$PY" -c 'print("https://ci.example.org/" + "x" * 180)')
post_check "$CI_TOKEN" "{\"state\":\"success\",\"target_url\":\"$long\"}"
expect_body '{"target_url":["Ensure this field has no more than 200 characters."]}' "long url"
post_check "$CI_TOKEN" '{"state":"success","target_url":"not a url"}'
expect_body '{"target_url":["Enter a valid URL."]}' "bad url"
# JSON sent as a form (curl's default, like libcurl's) is not parsed.
get -H "Authorization: Token $CI_TOKEN" -d '{"state":"success"}' "$API/patches/101/checks/"
expect_code 400 "JSON as a form"
expect_body '{"state":["A check must have a state."]}' "JSON as a form"

post_check "$BOB_TOKEN" '{"state":"success","context":"perf"}'
expect_code 403 "non-maintainer"
expect_body '{"detail":"You do not have permission to perform this action."}' "non-maintainer"
post_check "0000000000000000000000000000000000000000" '{"state":"success"}'
expect_code 403 "bad token"
expect_body '{"detail":"Invalid token."}' "bad token"
get -H 'Content-Type: application/json' --data-binary '{"state":"success"}' "$API/patches/101/checks/"
expect_code 403 "no credentials"
expect_body '{"detail":"You do not have permission to perform this action."}' "no credentials"
post_check "$CI_TOKEN" '{"state":"success"}' 99999
expect_code 404 "unknown patch"
expect_body '{"detail":"Not found."}' "unknown patch"
# The submitter's own account may post on her patch only.
post_check 3333333333333333333333333333333333333333 '{"state":"pending","context":"own"}' 101
expect_code 201 "submitter on her patch"
post_check 3333333333333333333333333333333333333333 '{"state":"pending","context":"own"}' 201
expect_code 403 "submitter on another's patch"

good='{"state":"success","context":"perfgate-demo-Performance","description":"Performance Testing PASS","target_url":"https://perfgate.example.org/runs/1"}'
post_check "$CI_TOKEN" "$good"
expect_code 201 "good check"
id1=$(json 'd["id"]')
[ "$(json '(d["state"], d["context"], d["description"], d["target_url"], d["user"]["username"])')" = \
	"('success', 'perfgate-demo-Performance', 'Performance Testing PASS', 'https://perfgate.example.org/runs/1', 'ci')" ] ||
	fail "created check fields: $(cat "$TMP/body")"
grep -q "^Location: $API/patches/101/checks/$id1/" "$TMP/head" || fail "Location header"
# Immutable: the same context again is a new check; the newest counts.
post_check "$CI_TOKEN" '{"state":"fail","context":"perfgate-demo-Performance"}'
expect_code 201 "second check, same context"
id2=$(json 'd["id"]')
[ "$id2" -gt "$id1" ] || fail "a new check was not created"
get "$API/patches/101/"
[ "$(json 'd["check"]')" = fail ] || fail "aggregate should be fail"
get -X PUT -H "Authorization: Token $CI_TOKEN" -H 'Content-Type: application/json' \
	--data-binary '{"state":"success"}' "$API/patches/101/checks/$id1/"
expect_code 405 "checks are immutable"
# Form encoding works; absent fields are null.
get -H "Authorization: Token $CI_TOKEN" -d 'state=warning&context=form-ctx&description=via+form' \
	"$API/patches/101/checks/"
expect_code 201 "form-encoded check"
[ "$(json '(d["state"], d["target_url"], d["description"])')" = "('warning', None, 'via form')" ] ||
	fail "form check fields"
post_check "$CI_TOKEN" '{"state":"success"}'
[ "$(json 'd["context"]')" = default ] || fail "default context"
# Listing with filters.
get "$API/patches/101/checks/?context=perfgate-demo-Performance"
[ "$(json '[c["id"] for c in d]')" = "[$id1, $id2]" ] || fail "checks by context"
get "$API/patches/101/checks/?user=ci&state=3"
[ "$(json '[c["id"] for c in d]')" = "[$id2]" ] || fail "checks by user and state"
get "$API/events/?category=check-created&patch=101&order=date"
[ "$(json 'd[-1]["actor"]["username"]')" = ci ] || fail "check-created actor"
[ "$(json '"description" in d[-1]["payload"]["check"]')" = False ] ||
	fail "embedded check carries no description"

# --- Control: what was posted, and outages.
get "$B/_fake/checks"
[ "$(json 'd["posts"]["by_status"]["403"]')" -ge 3 ] || fail "403s not counted"
[ "$(json 'len([c for c in d["checks"] if c["patch"] == 101 and c["context"] == "perfgate-demo-Performance"])')" = 2 ] ||
	fail "/_fake/checks does not list the checks"
get -H 'Content-Type: application/json' --data-binary '{"count":2,"status":503,"retry_after":"7"}' "$B/_fake/fail"
get "$API/events/"
expect_code 503 "first injected failure"
grep -q '^Retry-After: 7' "$TMP/head" || fail "Retry-After"
get "$API/events/"
expect_code 503 "second injected failure"
get "$API/events/"
expect_code 200 "after the injected failures"
get -H 'Content-Type: application/json' --data-binary '{"count":1,"hang":1.5,"path":"/api/"}' "$B/_fake/fail"
start=$(date +%s)
code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 0.5 "$API/projects/" 2>/dev/null) && fail "hang did not hang"
get "$B/_fake/checks"
expect_code 200 "control answers while a request hangs"
get -H 'Content-Type: application/json' --data-binary '{"count":1,"drop":true}' "$B/_fake/fail"
curl -sS -o /dev/null "$API/projects/" 2>/dev/null && fail "a dropped request got an answer"
get "$API/projects/"
expect_code 200 "after a dropped request"
[ "$(json 'd[0]["link_name"]')" = dpdk ] || fail "projects"
# A lost reply: the check is created, the answer never sent.
get "$B/_fake/checks"
before=$(json 'len(d["checks"])')
get -H 'Content-Type: application/json' --data-binary '{"count":1,"lost_reply":true,"method":"POST"}' "$B/_fake/fail"
curl -sS -o /dev/null -H "Authorization: Token $CI_TOKEN" -H 'Content-Type: application/json' \
	--data-binary '{"state":"success","context":"lost-reply"}' "$API/patches/101/checks/" 2>/dev/null &&
	fail "a lost reply reached the client"
get "$B/_fake/checks"
[ "$(json 'len(d["checks"])')" = $((before + 1)) ] || fail "the lost reply's check was not created"
[ "$(json 'd["checks"][-1]["context"]')" = lost-reply ] || fail "the lost reply's check"
get "$B/_fake/requests"
[ "$(json '[e.get("lost_reply") for e in d if e["method"] == "POST"][-1]')" = True ] ||
	fail "the request log does not mark the lost reply"
# An outage for a time: every matching request fails until it ends,
# whatever the count; then the next one is served.
get -H 'Content-Type: application/json' --data-binary '{"status":503,"for_s":4,"path":"/api/"}' "$B/_fake/fail"
for i in 1 2 3; do
	get "$API/projects/"
	expect_code 503 "request $i in the outage"
done
sleep 4.2
get "$API/projects/"
expect_code 200 "after the outage"

# --- Adding a series at run time: events as patchwork's signals make them.
get -H 'Content-Type: application/json' --data-binary \
	'{"mails":[{"file":"series-b/0002-net-two-add-two.patch"},{"file":"series-b/0001-net-one-add-one.patch"},{"file":"series-b/0003-net-three-add-three.patch"}]}' \
	"$B/_fake/series"
expect_code 200 "add a series"
sid=$(json 'd["series"]')
cp "$TMP/body" "$TMP/added.json"
get "$API/events/?series=$sid&order=date"
[ "$(json '[e["category"] for e in d]')" = "['series-created', 'patch-completed', 'patch-completed', 'patch-completed', 'series-completed']" ] ||
	fail "events of the series: $(json '[e["category"] for e in d]')"
# All of its events, found by id whatever the clock says, in date order.
cats=$("$PY" - "$API" "$TMP/added.json" <<'EOF_PY'
import json, re, sys, urllib.request
api, added = sys.argv[1], json.load(open(sys.argv[2]))
want = set(added['events'])
url, cats = api + '/events/?order=date&per_page=100', []
while url:
    with urllib.request.urlopen(url) as r:
        cats += [e['category'] for e in json.load(r) if e['id'] in want]
        m = re.search(r'<([^>]*)>; rel="next"', r.headers.get('Link', ''))
        url = m.group(1) if m else None
print(cats)
EOF_PY
)
[ "$cats" = "['series-created', 'patch-created', 'patch-created', 'patch-completed', 'patch-completed', 'patch-created', 'patch-completed', 'series-completed']" ] ||
	fail "run-time events: $cats"

# The cover letter may arrive after series-completed.
"$PY" - "$sid" >"$TMP/cover.json" <<'EOF_PY'
import json, sys
text = open('tests/patchwork/series-a/v2-0000-cover-letter.patch').read()
text = text.replace('<cover.1796014702.git.alice@example.com>', '<cover.late@example.com>')
text = text.replace('[PATCH v2 0/2] Add world and bang', '[PATCH 0/3] Add one, two, three')
print(json.dumps({'series': int(sys.argv[1]), 'mails': [{'text': text}]}))
EOF_PY
get -H 'Content-Type: application/json' --data-binary @"$TMP/cover.json" "$B/_fake/series"
expect_code 200 "a late cover letter"
cid=$(json 'd["cover"]')
get "$API/series/$sid/"
[ "$(json '(d["name"], d["cover_letter"]["msgid"])')" = "('Add one, two, three', '<cover.late@example.com>')" ] ||
	fail "late cover: $(json '(d["name"], d["cover_letter"])')"
get "$API/events/?series=$sid&order=date"
[ "$(json '[e["category"] for e in d][-1]')" = series-completed ] ||
	fail "a cover letter is no series event"
get "$API/events/?category=cover-created&cover=$cid"
[ "$(json '[e["payload"]["cover"]["msgid"] for e in d]')" = "['<cover.late@example.com>']" ] ||
	fail "cover-created event of the late cover"

# --- SIGTERM ends the server with status 0.
kill "$pw_pid"
wait "$pw_pid"
rc=$?
pw_pid=""
[ "$rc" -eq 0 ] || fail "fake server exited $rc on SIGTERM"
echo "fake patchwork: all facts hold"
