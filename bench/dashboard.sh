#!/bin/sh
# The dashboard's reads on big stores: a store of PG_BENCH_DASH_SERIES
# series (default 10,000: a million samples) and a reference of
# PG_BENCH_DASH_REF (default 1,000), both made by bench/dashboard_gen.sh,
# each served by a real `perfgate-controller serve`.  Per store, after a
# warm-up, PG_BENCH_DASH_REQUESTS (default 200) sequential requests over
# one keep-alive connection (curl, one process per query) of:
#   list           /api/v1/series?order=newest&limit=50
#   list_filtered  the same with state=complete&q=ring (a quarter of the titles)
#   series         /api/v1/series/ID of the series in the middle
#   verdict        /api/v1/jobs/J/verdict of its two jobs, alternately
#   trends         /api/v1/trends?host=...&metric=... of the key with the
#                  most history points (3,333 at 10,000 series)
#   trend_keys     /api/v1/trends: every key with history (the trends
#                  page's lists: a scan of all history, 100,000 rows)
# and prints p50/p99 (ms, curl's time_total) per query per store, the
# ratio of the p99s (big / reference: how the reads scale) and the goal,
# p99 < 50 ms on the big store, met or not.  Then the bytes of the series
# page on the big store: /series/ID, every asset it loads (script src and
# link href in the HTML, the modules those import, CSS url()s), and the
# JSON it fetches (the series, each job's verdict, the meta), headers
# included, logs excluded; goal < 300 KB.
#
# An endpoint that answers 404 is not there yet: it is named, the rest is
# measured, and the bench fails at the end.
set -eu
build=${PG_BUILD:?run through make bench}
top=$(cd "$(dirname "$0")/.." && pwd)
big=${PG_BENCH_DASH_SERIES:-10000}
ref=${PG_BENCH_DASH_REF:-1000}
reqs=${PG_BENCH_DASH_REQUESTS:-200}
warm=20
GOAL_MS=50
GOAL_KB=300
CTL="$build/perfgate-controller"
for tool in curl sqlite3 python3; do
	command -v $tool >/dev/null || { echo "bench dashboard: $tool is needed (make deps)" >&2; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-bench-dash.XXXXXX")
pid=""
stop() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
		pid=""
	fi
	return 0
}
trap 'stop; rm -rf "$tmp"' EXIT
missing=""
say() { echo "bench dashboard: $*"; }
die() { echo "bench dashboard: $*" >&2; exit 1; }

# start DIR: serve the store in DIR; $url is its API.
start() {
	cat >"$1/serve.json" <<EOF
{ "db": "$1/perfgate.db", "data_dir": "$1/state", "profiles_dir": "$top/profiles",
  "profiles": ["demo.json"], "api": { "listen": "127.0.0.1:0", "web_dir": "$top/web" } }
EOF
	"$CTL" --config "$1/serve.json" --log-level info serve >"$1/serve.log" 2>&1 &
	pid=$!
	i=0
	until grep -q 'api: listening on http://' "$1/serve.log"; do
		i=$((i + 1))
		kill -0 "$pid" 2>/dev/null || { cat "$1/serve.log" >&2; pid=""; die "the controller died"; }
		[ $i -lt 600 ] || { cat "$1/serve.log" >&2; die "the API never listened"; }
		sleep 0.1
	done
	url=$(sed -n 's/.*api: listening on \(http:[^ ]*\).*/\1/p' "$1/serve.log" | head -n 1)
}

# probe NAME PATH: 0 when GET PATH is 200; a 404 is noted as missing.
probe() {
	code=$(curl -sS -o "$tmp/body" -w '%{http_code}' "$url$2") || die "GET $2: curl failed"
	case $code in
	200) return 0 ;;
	404)
		say "GET $2: 404, not there yet ($(head -c 200 "$tmp/body"))"
		case " $missing " in *" $1 "*) ;; *) missing="$missing $1" ;; esac
		return 1 ;;
	*) die "GET $2: HTTP $code: $(head -c 300 "$tmp/body")" ;;
	esac
}

# timeit COUNT PATH...: COUNT sequential GETs cycling through the PATHs
# over one keep-alive connection; prints "P50 P99" in ms.
timeit() {
	count=$1
	shift
	: >"$tmp/curl.cfg"
	k=0
	while [ $k -lt "$count" ]; do
		for p in "$@"; do
			[ $k -lt "$count" ] || break
			printf 'url = "%s%s"\noutput = "/dev/null"\n' "$url" "$p" >>"$tmp/curl.cfg"
			k=$((k + 1))
		done
	done
	curl -sS -K "$tmp/curl.cfg" -w '%{http_code} %{time_total} %{num_connects}\n' >"$tmp/times" ||
		die "curl failed on $*"
	bad=$(awk '$1 != 200' "$tmp/times" | head -n 3)
	[ -z "$bad" ] || die "GET $*: not all 200: $bad"
	[ "$(wc -l <"$tmp/times")" -eq "$count" ] || die "GET $*: $(wc -l <"$tmp/times") answers of $count"
	# One connection for all (keep-alive), or the figures include connects.
	conns=$(awk '{ s += $3 } END { print s }' "$tmp/times")
	[ "$conns" -le 1 ] || say "note: $conns connections for $count requests of $1 (keep-alive lost)"
	awk '{ print $2 * 1000 }' "$tmp/times" | sort -n | awk -v n="$count" '
		{ v[NR] = $1 }
		END { p50 = v[int((n + 1) / 2)]; i = int(n * 0.99 + 0.999999); if (i > n) i = n;
		      printf "%.2f %.2f\n", p50, v[i] }'
}

QUERIES="list list_filtered series verdict trends trend_keys"
for n in $ref $big; do
	d="$tmp/s$n"
	t0=$(date +%s)
	"$top/bench/dashboard_gen.sh" -n "$n" -c "$CTL" "$d" >/dev/null || die "dashboard_gen.sh -n $n failed"
	gen_s=$(( $(date +%s) - t0 ))
	db="$d/perfgate.db"
	samples=$(sqlite3 "$db" "SELECT count(*) FROM samples")
	mid=$((n / 2))
	jobs=$(sqlite3 "$db" "SELECT group_concat(j.id, ' ') FROM jobs j JOIN runs r ON r.id = j.run_id WHERE r.series_id = $mid")
	key=$(sqlite3 -separator '&' "$db" "SELECT 'host=' || host, 'tree=' || tree, 'branch=' || branch,
		'build_mode=' || build_mode, 'benchmark=' || benchmark, 'metric=' || metric, count(*)
		FROM history h GROUP BY host, tree, branch, build_mode, benchmark, metric
		ORDER BY count(*) DESC, (SELECT count(*) FROM change_points c WHERE c.host = h.host
			AND c.build_mode = h.build_mode AND c.metric = h.metric) DESC, 1, 4, 6 LIMIT 1")
	points=${key##*&}
	key=${key%&*}
	start "$d"
	line="store=$n series, $samples samples (made in ${gen_s}s):"
	for qn in $QUERIES; do
		case $qn in
		list) paths="/api/v1/series?order=newest&limit=50" ;;
		list_filtered) paths="/api/v1/series?order=newest&limit=50&state=complete&q=ring" ;;
		series) paths="/api/v1/series/$mid" ;;
		verdict) paths=$(for j in $jobs; do printf '/api/v1/jobs/%s/verdict ' "$j"; done) ;;
		trends) paths="/api/v1/trends?$key" ;;
		trend_keys) paths="/api/v1/trends" ;;
		esac
		ok=1
		for p in $paths; do
			probe "$qn" "$p" || ok=0
		done
		if [ $ok = 0 ]; then
			line="$line $qn=404"
			continue
		fi
		# shellcheck disable=SC2086  # the paths are words
		timeit $warm $paths >/dev/null
		# shellcheck disable=SC2086
		set -- $(timeit "$reqs" $paths)
		eval "p50_${qn}_$n=$1 p99_${qn}_$n=$2"
		line="$line $qn p50=$1 p99=$2 ms,"
	done
	say "${line%,} (trends key: $points points)"
	if [ "$n" = "$big" ]; then
		page_mid=$mid
		page_url=$url
		page_dir=$d
	else
		stop
	fi
done

# The p99s at the big store against the reference, and the goal there.
ratios=""
worst=""
worst_ms=0
goal=met
for qn in $QUERIES; do
	eval "a=\${p99_${qn}_$big:-} b=\${p99_${qn}_$ref:-}"
	if [ -z "$a" ]; then
		goal="not measured"
		continue
	fi
	[ -n "$b" ] && ratios="$ratios $qn=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')x"
	if awk -v a="$a" -v m="$worst_ms" 'BEGIN { exit !(a > m) }'; then
		worst_ms=$a
		worst=$qn
	fi
	if awk -v a="$a" -v g="$GOAL_MS" 'BEGIN { exit !(a >= g) }' && [ "$goal" = met ]; then
		goal="not met"
	fi
done
[ -n "$worst" ] && worst=" (worst: $worst p99=$worst_ms ms)"
say "p99 ratio $big/$ref series:${ratios:- none measured}; goal p99 < $GOAL_MS ms at $big series: $goal$worst"

# The series page's bytes, on the big store.
url=$page_url
if probe page "/series/$page_mid"; then
	python3 - "$url" "/series/$page_mid" "$GOAL_KB" >"$tmp/page.out" 2>"$tmp/page.err" <<'EOF_PY' || {
import http.client, json, re, sys, urllib.parse, zlib

base, page, goal_kb = sys.argv[1], sys.argv[2], int(sys.argv[3])
u = urllib.parse.urlsplit(base)
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)

def get(path):
    # Bytes as transferred (compressed if the server compresses), the
    # text decoded for parsing.
    conn.request('GET', path, headers={'Accept-Encoding': 'gzip, deflate'})
    r = conn.getresponse()
    body = r.read()
    head = len(f'HTTP/1.1 {r.status} {r.reason}\r\n') + sum(len(k) + len(v) + 4 for k, v in r.getheaders()) + 2
    if r.status != 200:
        sys.exit(f'GET {path}: HTTP {r.status}' + (' (not there yet)' if r.status == 404 else ''))
    n = head + len(body)
    enc = (r.getheader('Content-Encoding') or '').lower()
    if enc == 'gzip':
        body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
    elif enc == 'deflate':
        body = zlib.decompress(body)
    return body, n

def local(ref, at):
    p = urllib.parse.urlsplit(urllib.parse.urljoin(base + at, ref))
    if (p.scheme, p.netloc) != (u.scheme, u.netloc):
        sys.exit(f'{at} loads {ref} from another origin')
    return p.path + (('?' + p.query) if p.query else '')

html, n_html = get(page)
text = html.decode('utf-8', 'replace')
todo = []
for tag in re.findall(r'<(?:script|link)\b[^>]*>', text, re.I):
    m = re.search(r'\b(?:src|href)\s*=\s*["\']?([^"\'\s>]+)', tag, re.I)
    # data: URLs are in the page already (the empty favicon).
    if m and not m.group(1).startswith('data:') and \
            not re.search(r'\brel\s*=\s*["\']?(?:canonical|alternate)', tag, re.I):
        todo.append((m.group(1), page))
seen, assets, n_assets = set(), [], 0
while todo:
    ref, at = todo.pop(0)
    path = local(ref, at)
    if path in seen:
        continue
    seen.add(path)
    body, n = get(path)
    assets.append((path, n))
    n_assets += n
    t = body.decode('utf-8', 'replace')
    if path.endswith(('.js', '.mjs')):
        for m in re.finditer(r'''(?:\bimport\s*(?:[\w*{}\s,$]+\s*from\s*)?|\bexport\s*[\w*{}\s,$]+\s*from\s*|\bimport\s*\(\s*)["']([^"']+)["']''', t):
            todo.append((m.group(1), path))
    elif path.endswith('.css'):
        for m in re.finditer(r'''url\(\s*["']?([^"')]+)["']?\s*\)|@import\s+["']([^"']+)["']''', t):
            ref2 = m.group(1) or m.group(2)
            if not ref2.startswith('data:'):
                todo.append((ref2, path))

series_id = page.rsplit('/', 1)[1]
js, n_json, fetched = [], 0, []
body, n = get(f'/api/v1/series/{series_id}')
n_json += n
fetched.append('series')
doc = json.loads(body)
jobs = [j['id'] for r in doc.get('runs', []) for j in r.get('jobs', [])]
for j in jobs:
    _, n = get(f'/api/v1/jobs/{j}/verdict')
    n_json += n
fetched.append(f'{len(jobs)} verdicts')
_, n = get('/api/v1/meta')
n_json += n
fetched.append('meta')
total = n_html + n_assets + n_json
kb = total / 1024
print(f'html={n_html} B, assets={n_assets} B in {len(assets)} files, json={n_json} B ({", ".join(fetched)}), '
      f'total={kb:.1f} KB; goal < {goal_kb} KB: {"met" if kb < goal_kb else "not met"}')
for p, n in sorted(assets, key=lambda x: -x[1])[:5]:
    print(f'  largest: {p} {n} B', file=sys.stderr)
EOF_PY
		say "series page /series/$page_mid: $(cat "$tmp/page.err")"
		missing="$missing page"
	}
	if [ -s "$tmp/page.out" ]; then
		say "series page /series/$page_mid: $(cat "$tmp/page.out")"
		sed 's/^ */bench dashboard:   /' "$tmp/page.err"
	fi
fi
stop
if [ -n "$missing" ]; then
	say "not measured (404, the endpoints or pages are not there yet):$missing"
	exit 1
fi
