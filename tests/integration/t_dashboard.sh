# The dashboard over HTTP (the browser tests in tests/browser/ drive the
# pages themselves): pages and assets from the web directory with their
# types and the security headers on every answer; an unknown series is a
# 404 page; no path leaves the web directory, not even through a link in
# it; the JSON behind the pages (series list filters and order with the
# check matrix, the queue's order and reasons, trends, meta); a series
# whose subject and submitter hold markup and control bytes comes out as
# inert text.
. "$PG_TOP/tests/integration/lib.sh"

DB="$TMP/state/perfgate.db"
q() { sqlite3 "$DB" "$1" || fail "sqlite3: $1"; }
CSP="default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

# get PATH: the status; body in $TMP/body, headers in $TMP/hdr.
get() {
	curl -sS -m 20 -o "$TMP/body" -D "$TMP/hdr" -w '%{http_code}' "$URL$1" || fail "GET $1"
}
expect_get() {	# expect_get STATUS PATH [CONTENT-TYPE]
	_got=$(get "$2")
	[ "$_got" = "$1" ] || { cat "$TMP/hdr" "$TMP/body" >&2; fail "GET $2: $_got, expected $1"; }
	[ -z "${3:-}" ] || grep -qi "^content-type: $3" "$TMP/hdr" ||
		{ cat "$TMP/hdr" >&2; fail "GET $2: not $3"; }
	grep -qiF "content-security-policy: $CSP" "$TMP/hdr" || fail "GET $2: no or another CSP"
	grep -qi '^x-content-type-options: nosniff' "$TMP/hdr" || fail "GET $2: no nosniff"
	grep -qi '^referrer-policy: same-origin' "$TMP/hdr" || fail "GET $2: no referrer policy"
}

demo_tree
# Two series, the second one hostile: markup, script and control bytes in
# its subject and in its author's name.
cat >"$TMP/two.mbox" <<'EOF'
From 1 Mon Sep 17 00:00:00 2001
Message-Id: <dash-1@example.org>
From: Carol Single <carol@example.net>
Date: Mon, 30 Nov 2026 05:00:00 +0000
Subject: [PATCH] lib: fix hello

---
 lib/hello.c | 1 +
 1 file changed, 1 insertion(+)

diff --git a/lib/hello.c b/lib/hello.c
index ce01362..8edb2c2 100644
--- a/lib/hello.c
+++ b/lib/hello.c
@@ -1 +1,2 @@
 hello
+fix
-- 
2.39.5

EOF
printf 'From 2 Mon Sep 17 00:00:00 2001\nMessage-Id: <dash-2@example.org>\nFrom: "<img src=x onerror=alert(1)> \033[31mMallory" <mallory@example.net>\nDate: Mon, 30 Nov 2026 06:00:00 +0000\nSubject: [PATCH] net/x: <script>window.__pwned=1</script> \033]0;title\007 fix\n\n---\n a.c | 1 +\n\ndiff --git a/a.c b/a.c\nindex ce01362..8edb2c2 100644\n--- a/a.c\n+++ b/a.c\n@@ -1 +1,2 @@\n hello\n+fix\n-- \n2.39.5\n\n' >>"$TMP/two.mbox"
mkdir -p "$TMP/web"
cp -R "$PG_TOP/web/." "$TMP/web/"
printf 'the-secret-content-4242\n' >"$TMP/secret.txt"
ln -s "$TMP/secret.txt" "$TMP/web/assets/link.txt"
write_config "$TMP/c.json" "\"api\": { \"listen\": \"127.0.0.1:0\", \"web_dir\": \"$TMP/web\",
	\"archive_url\": \"https://inbox.dpdk.org/dev/{msgid}/\" }"
sed -i "s|\"profiles_dir\": \"$PG_TOP/profiles\"|\"profiles_dir\": \"$TMP/profiles\"|" "$TMP/c.json"
C="$CTL --config $TMP/c.json"
expect_rc 0 $C ingest --mbox "$TMP/two.mbox"
expect_rc 0 $C plan
[ "$(q "SELECT count(*) FROM series")" = 2 ] || fail "two series expected"
[ "$(q "SELECT count(*) FROM jobs WHERE state = 'queued'")" -ge 2 ] || fail "no jobs queued"

$C serve >"$TMP/serve.log" 2>&1 &
ctl=$!
stop_ctl() { kill "$ctl" 2>/dev/null; wait "$ctl" 2>/dev/null; }
cleanup_hooks="stop_ctl"
i=0
until grep -q 'api: listening on http' "$TMP/serve.log"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { cat "$TMP/serve.log"; fail "the API did not start"; }
	sleep 0.1
done
URL=$(sed -n 's/.*api: listening on \(http[^ ]*\).*/\1/p' "$TMP/serve.log")
grep -q "api: dashboard from $TMP/web" "$TMP/serve.log" || fail "the web directory was not logged"

# ---- pages and assets ----------------------------------------------------------
for page in / /trends /agents /queue /changes /series/1 /series/2; do
	expect_get 200 "$page" 'text/html; charset=utf-8'
	grep -qi '^cache-control: no-cache' "$TMP/hdr" || fail "$page: not revalidated"
	grep -q '<script[^>]*>[^<]' "$TMP/body" && fail "$page: an inline script"
	grep -qE 'src="(https?:)?//|href="(https?:)?//' "$TMP/body" && fail "$page: another origin"
done
expect_get 200 /series/1 'text/html'
grep -q 'src="/assets/series.js"' "$TMP/body" || fail "/series/1 is not the series page"
# Every check ever posted resolves; a series that does not exist is a 404
# with the page that says so.
expect_get 404 /series/999 'text/html'
grep -q 'src="/assets/series.js"' "$TMP/body" || fail "/series/999: not the series page"
expect_get 200 /assets/style.css 'text/css'
expect_get 200 /assets/series.js 'text/javascript'
grep -qi '^cache-control: public, max-age=300' "$TMP/hdr" || fail "assets are not cacheable"
expect_get 200 /assets/vendor/uplot/uPlot.iife.min.js 'text/javascript'
for bad in /assets/link.txt /assets/../secret.txt /assets/%2e%2e/secret.txt /assets/.x \
	   /assets/nope.js /index.html /series/0 /series/1/ /web/index.html; do
	expect_get 404 "$bad"
	grep -q the-secret-content "$TMP/body" && fail "$bad leaked a file from outside"
done
_code=$(curl -sS -o /dev/null -w '%{http_code}' --path-as-is "$URL/assets/../../secret.txt")
[ "$_code" = 404 ] || fail "a raw ../ answered $_code"
_code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST "$URL/")
[ "$_code" = 405 ] || fail "POST / answered $_code"

# ---- the JSON ----------------------------------------------------------------------
expect_get 200 /api/v1/meta 'application/json'
jq_is "$TMP/body" '.contexts | join(",")' perfgate-demo-Performance
jq_is "$TMP/body" '.trees | join(",")' dpdk-demo
jq_is "$TMP/body" .admin false
expect_get 200 '/api/v1/series?order=newest' 'application/json'
jq_is "$TMP/body" '[.series[].id] | join(",")' 2,1
jq_is "$TMP/body" .total 2
jq_is "$TMP/body" '.series[1].checks[0].context' perfgate-demo-Performance
jq_is "$TMP/body" '.series[1].checks[0].state' pending
# The hostile series: no raw control byte in the JSON, the markup kept as
# text (escaping it is the page's business, and it renders text only).
tr -d '\n' <"$TMP/body" | LC_ALL=C grep -q '[[:cntrl:]]' && fail "a raw control byte in the JSON"
jq -r '.series[0].title' "$TMP/body" | grep -qF '<script>window.__pwned=1</script>' ||
	fail "the hostile title was not kept as text"
jq -r '.series[0].title' "$TMP/body" | grep -qF '\u241b' && fail "control bytes shown as escapes"
expect_get 200 '/api/v1/series?order=oldest&limit=1' 'application/json'
jq_is "$TMP/body" '[.series[].id] | join(",")' 1
jq_is "$TMP/body" .total 2
for filter in 'submitter=CAROL' 'q=fix%20hello' 'q=%3Cdash-1@example.org%3E' 'q=dash-1@example.org' \
	      'tree=dpdk-demo&submitter=carol' 'context=perfgate-demo-Performance&q=hello'; do
	expect_get 200 "/api/v1/series?$filter"
	jq_is "$TMP/body" '[.series[].id] | join(",")' 1
done
expect_get 200 '/api/v1/series?tree=other'
jq_is "$TMP/body" .total 0
expect_get 400 '/api/v1/series?order=sideways'
expect_get 400 "/api/v1/series?q=$(printf 'a%%01b')"
expect_get 200 /api/v1/series/1
jq_is "$TMP/body" '.patches[0].archive_url' 'https://inbox.dpdk.org/dev/dash-1@example.org/'
jq_is "$TMP/body" '.versions | length' 1
jq_is "$TMP/body" '.checks[0].target_url | test("/series/1$")' true
jq_is "$TMP/body" '.runs[0].jobs | length' 2

# The queue, in the scheduler's order, says why each job waits.
expect_get 200 /api/v1/queue
n=$(q "SELECT count(*) FROM jobs WHERE state = 'queued'")
jq_is "$TMP/body" '.queued | length' "$n"
jq_is "$TMP/body" '[.queued[].position] | map(tostring) | join(",")' "$(seq -s, 1 "$n")"
jq_is "$TMP/body" '.queued[0].waiting' 'no enabled agent has the labels of host class demo'
jq_is "$TMP/body" "[.queued[].id] | map(tostring) | join(\",\")" \
	"$(q "SELECT group_concat(id) FROM (SELECT id FROM jobs WHERE state = 'queued'
	      ORDER BY priority DESC, served, boost DESC, created_at, id)")"
expect_rc 0 $C agent add lab-1 --labels pool=demo
expect_get 200 /api/v1/queue
jq_is "$TMP/body" '.queued[0].waiting' 'no agent of host class demo is online (1 enabled)'
expect_get 200 /api/v1/agents
jq_is "$TMP/body" '.agents[0].state' offline
jq_is "$TMP/body" '.agents[0].recent | length' 0

# Trends: no history yet; a key needs all six of its parts.
expect_get 200 /api/v1/trends
jq_is "$TMP/body" '.keys | length' 0
expect_get 400 '/api/v1/trends?host=lab-1'
expect_get 200 '/api/v1/trends?host=a&tree=b&branch=c&build_mode=d&benchmark=e&metric=f'
jq_is "$TMP/body" '.points | length' 0
jq_is "$TMP/body" .key null
expect_get 404 /api/v1/jobs/999/verdict
expect_get 200 /api/v1/jobs/1/verdict
jq_is "$TMP/body" .final false
jq_is "$TMP/body" '.keys | length' 0

# The controller refuses a web directory without the dashboard.
mkdir -p "$TMP/empty"
write_config "$TMP/bad.json" "\"api\": { \"listen\": \"127.0.0.1:0\", \"web_dir\": \"$TMP/empty\" }"
expect_rc 1 "$CTL" --config "$TMP/bad.json" serve
expect_grep "field 'web_dir': $TMP/empty holds no index.html" "$TMP/out"
echo "dashboard: pages, assets and JSON hold"
