#!/bin/sh
# make demo: the whole job on this machine, from mails to verdicts.
#
# Installs what it needs, builds perfgate, makes the demo's DPDK tree
# (Debian's 22.11 source as a local git repository: the "upstream"), puts
# the demo series (patches/samples/demo/, made against that tree with git
# format-patch) into a local public-inbox archive, and starts the
# controller (store, API and dashboard on loopback), the fake Patchwork of
# the tests (Patchwork itself is not packaged for Debian), an SMTP sink and
# one local agent with the demo profile.  Then it follows the pipeline
# until every demo series has its final check, prints what was decided,
# the checks as Patchwork got them and one report mail, and exits 0 when
# every series got the verdict patches/samples/demo/expected says, else 1
# naming those that did not.  Unless DEMO_EXIT=1 the controller keeps
# serving the dashboard until Ctrl-C.
#
#   DEMO_STATE=DIR   where everything lives (default var/demo); the agent's
#                    build directories and ccache there are kept between
#                    runs, the store is made anew each time
#   DEMO_SHORT=1     the form `make check` runs: release only, testpmd
#                    left out, the agent's work directory in DEMO_WORK
#   DEMO_WORK=DIR    the agent's work directory (default DEMO_STATE/agent)
#   DEMO_EXIT=1      stop everything once the report is printed (the
#                    default without a terminal); DEMO_EXIT=0 keeps
#                    serving even then (the tests look at the results)
#   DEMO_PORT=N      the controller's port (default: any free one)
#   DEMO_BUILD=DIR   take the binaries from DIR, install and build nothing
#                    (the tests)
#   DEMO_TIMEOUT_MIN bound on the wait (default 120; 60 when short)
#
# `make demo-clean` removes DEMO_STATE.
set -eu
cd "$(dirname "$0")/.."
top=$PWD
state=${DEMO_STATE:-$top/var/demo}
short=${DEMO_SHORT:-0}
work=${DEMO_WORK:-$state/agent}
samples=$top/patches/samples/demo
t0=$(date +%s)

step() { printf '\n==> %s\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }
elapsed() { s=$(( $(date +%s) - t0 )); printf '%d min %02d s' $((s / 60)) $((s % 60)); }

if [ -n "${DEMO_BUILD:-}" ]; then
	# The tests: their own binaries, nothing installed or rebuilt.
	CTL=$DEMO_BUILD/perfgate-controller
	AGENT=$DEMO_BUILD/perfgate-agent
else
	step "installing the Debian packages perfgate needs (make deps)"
	make -s deps
	step "building perfgate-controller and perfgate-agent"
	make -s -j"$(nproc)" all >/dev/null
	CTL=$top/build/perfgate-controller
	AGENT=$top/build/perfgate-agent
fi
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
$CTL --version

step "the demo's DPDK tree: Debian's DPDK 22.11 source as a git repository"
tree=$(scripts/dpdk-tree.sh) || die "could not make the DPDK tree"
echo "    $tree at $(git --git-dir="$tree" rev-parse --short=12 main)"

# The store, the archive and the services are made anew; the agent's work
# (mirror, worktrees, build directories, ccache) is kept.
mkdir -p "$state" "$work"
for d in inbox mails state spool logs; do rm -rf "${state:?}/$d"; done
mkdir -p "$state/mails" "$state/logs" "$state/inbox"

step "a mailing-list archive of the demo series (public-inbox, $samples)"
ls "$samples"/[0-9]*.mbox >/dev/null 2>&1 || die "no demo series in $samples (scripts/demo-series.sh makes them)"
# One directory of mails per series file; the list receives them in file
# order, the v2 (07) once its v1 is planned and the recheck request (08)
# once the series it asks about has its verdict (demo_watch.py).
"$PY" - "$state/mails" "$samples"/[0-9]*.mbox <<'PY'
import mailbox, os, sys
out, n = sys.argv[1], 0
for path in sys.argv[2:]:
    d = os.path.join(out, os.path.basename(path)[:-5])
    os.mkdir(d)
    for i, msg in enumerate(mailbox.mbox(path)):
        n += 1
        with open(os.path.join(d, '%02d.eml' % i), 'wb') as f:
            f.write(msg.as_bytes(unixfrom=False))
print(f'    {n} mails in {len(sys.argv) - 2} series files')
PY
sh tests/inbox/make-inbox.sh init "$state/inbox" dev v2 >/dev/null 2>&1 ||
	die "public-inbox-init failed"
first=""
later=""
for d in "$state/mails"/*/; do
	d=${d%/}
	case ${d##*/} in
	07-*|08-*) later="$later $d" ;;
	*) first="$first $d" ;;
	esac
done
# shellcheck disable=SC2086
for d in $first; do
	sh tests/inbox/make-inbox.sh deliver "$state/inbox" dev "$d"/*.eml >/dev/null 2>&1 ||
		die "public-inbox-mda failed on $d"
done
echo "    $(echo $first | wc -w) series delivered to $state/inbox/dev; later:$(for d in $later; do printf ' %s' "${d##*/}"; done)"

pids=""
stop_all() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	for p in $pids; do wait "$p" 2>/dev/null || true; done
	pids=""
}
trap 'stop_all' EXIT
trap 'echo; echo "demo: stopped"; exit 130' INT TERM

wait_for() {	# wait_for FILE PATTERN WHAT: a service's first line
	i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 300 ] || { cat "$1" >&2; die "$3 did not start"; }
		sleep 0.1
	done
}

step "Patchwork (the tests' fake) and an SMTP sink, on loopback"
token=04b5b8ffb66a2d9ba9ad32d0ba95a2b120a60b9a
printf '%s\n' "$token" >"$state/pw-token"
chmod 600 "$state/pw-token"
printf '{ "users": [ { "id": 1, "username": "perfgate-ci", "email": "ci@lab.example.org",\n  "token": "%s", "maintainer_of": ["dpdk"] } ] }\n' "$token" >"$state/pw-fixture.json"
"$PY" tests/fake_patchwork.py --port 0 --fixture "$state/pw-fixture.json" --quiet \
	>"$state/logs/patchwork.out" 2>"$state/logs/patchwork.log" &
pids="$pids $!"
wait_for "$state/logs/patchwork.out" '^listening on ' "the fake Patchwork"
pw="http://127.0.0.1:$(sed -n 's/^listening on //p' "$state/logs/patchwork.out")"
# Patchwork learns the patches from the list as the real one would; the
# fake is told them: each series file of the demo is one Patchwork series
# (patch and cover ids 1001, 1002, ... in mail order).
"$PY" - "$pw" "$samples"/[0-9]*.mbox <<'PY'
import json, mailbox, re, sys, urllib.request
pw, pid, n = sys.argv[1], 1000, 0
for path in sys.argv[2:]:
    mails = []
    for msg in mailbox.mbox(path):
        if not re.search(r'\[(RFC )?PATCH', str(msg['Subject'] or '')):
            continue	# a reply: the recheck request
        pid += 1
        mails.append({'text': msg.as_bytes(unixfrom=False).decode('utf-8', 'replace'), 'id': pid})
    if not mails:
        continue
    req = urllib.request.Request(pw + '/_fake/series', data=json.dumps({'mails': mails}).encode(),
                                 headers={'Content-Type': 'application/json'})
    urllib.request.urlopen(req).close()
    n += 1
print(f'    {pw}: {pid - 1000} patches and covers in {n} series')
PY
"$PY" tests/smtp_server.py --spool "$state/spool" >"$state/logs/smtp.out" 2>"$state/logs/smtp.log" &
pids="$pids $!"
wait_for "$state/logs/smtp.out" '^listening on ' "the SMTP sink"
sport=$(sed -n 's/^listening on //p' "$state/logs/smtp.out")
echo "    SMTP on 127.0.0.1:$sport, mails kept in $state/spool"

step "the controller: store, intake from the archive, planner, API and dashboard"
mkdir -p "$state/profiles"
# The demo profile on this tree, with testpmd forwarding 1 s a run instead
# of 5 (net_null ports: enough for its rate, and the demo's 20-odd
# attempts run 6 of them each: with 5 s a repeated demo took 16 minutes,
# with 2 s just over 10); the short form builds release only and measures
# the mempool only (what `make check` runs).
filter='.trees["dpdk-demo"].url = $url
	| .benchmarks.testpmd_io_demo += {"duration_s": 1,
		"description": "testpmd io forwarding on two net_null ports for 1 s (make demo)."}'
if [ "$short" = 1 ]; then
	filter="$filter"' | .contexts["perfgate-demo-Performance"] += {"build_modes": ["demo-release"],
		"benchmarks": ["mempool_perf_demo"], "max_repetitions": 6}'
fi
jq --arg url "$tree" "$filter" profiles/demo.json >"$state/profiles/demo.json" ||
	die "jq on the demo profile"
printf 'demo-admin-%s\n' "$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$state/admin-token"
chmod 600 "$state/admin-token"
cat >"$state/controller.json" <<EOF
{ "db": "state/perfgate.db", "data_dir": "state", "profiles_dir": "profiles",
  "sources": [ { "name": "demo-dev", "type": "public-inbox", "url": "$state/inbox/dev" } ],
  "intake": { "interval_s": 5 },
  "api": { "listen": "127.0.0.1:${DEMO_PORT:-0}", "lease_s": 120, "web_dir": "$top/web",
           "admin_token_file": "admin-token" },
  "checks": { "enabled": true, "patchwork_url": "$pw/api/1.3", "token_file": "pw-token",
              "username": "perfgate-ci", "timeout_s": 10, "max_backoff_s": 10 },
  "mail": { "enabled": true, "smtp_url": "smtp://127.0.0.1:$sport/lab.example.org",
            "starttls": "off", "from": "perfgate demo <perfgate@lab.example.org>",
            "patch_url_template": "$pw/patch/{id}/" } }
EOF
C="$CTL --config $state/controller.json"
$C --log-level warn db migrate >/dev/null
$C agent add demo-agent --labels pool=demo >"$state/agent-token" 2>/dev/null ||
	die "agent add"
chmod 600 "$state/agent-token"
$C serve >"$state/logs/controller.log" 2>&1 &
pids="$pids $!"
wait_for "$state/logs/controller.log" 'api: listening on http' "the controller"
url=$(sed -n 's/.*api: listening on \(http[^ ]*\).*/\1/p' "$state/logs/controller.log" | head -n 1)
echo "    dashboard and API at $url/ (log: $state/logs/controller.log)"

step "one local agent with the DPDK runner (work directory $work)"
cat >"$state/agent.json" <<EOF
{ "name": "demo-agent", "controller_url": "$url", "token_file": "agent-token",
  "labels": { "pool": "demo" }, "work_dir": "$work", "spool_dir": "agent-spool",
  "profiles_dir": "profiles", "lease_wait_s": 5, "runner": "dpdk" }
EOF
if [ -z "$(find "$work" -name build.ninja 2>/dev/null | head -n 1)" ]; then
	echo "    the first builds are cold: a few minutes per build mode on 2 cores with"
	echo "    the demo's options (base and patched share ccache); every later job"
	echo "    rebuilds what its patch touches, in seconds to a minute"
else
	echo "    build directories and ccache of an earlier run are reused"
fi
$AGENT --config "$state/agent.json" >"$state/logs/agent.log" 2>&1 &
pids="$pids $!"

step "following the pipeline (every job's stage and progress, every decision)"
timeout_min=${DEMO_TIMEOUT_MIN:-120}
[ "$short" = 1 ] && timeout_min=${DEMO_TIMEOUT_MIN:-60}
v1=$(sed -n 's/^Message-I[dD]: *//p' "$state"/mails/03-*/00.eml | head -n 1)
one=$(sed -n 's/^Message-I[dD]: *//p' "$state"/mails/01-*/00.eml | head -n 1)
"$PY" scripts/demo_watch.py wait "$url" "$state/logs/controller.log" "$samples/expected" \
	--timeout-min "$timeout_min" \
	--deliver "$state/inbox" planned "$v1" "$(echo "$state"/mails/07-*)" \
	--deliver "$state/inbox" decided "$one" "$(echo "$state"/mails/08-*)" ||
	{ tail -n 30 "$state/logs/agent.log"; die "the pipeline did not finish"; }

step "what perfgate decided ($(elapsed))"
rc=0
"$PY" scripts/demo_watch.py report "$url" "$pw" "$state/spool" "$samples/expected" || rc=$?
echo
echo "demo: took $(elapsed) (this 2-core machine: within 45 min the first time, 10 min again)"
echo "demo: the dashboard: $url/   (state, logs and configuration in $state)"
# Keep serving for a person at a terminal (or a test that asked to).
if [ "${DEMO_EXIT:-0}" != 1 ] && { [ -t 0 ] || [ "${DEMO_EXIT:-}" = 0 ]; }; then
	echo "demo: the controller keeps serving until Ctrl-C (DEMO_EXIT=1 stops here)"
	trap 'echo; stop_all; exit $rc' INT TERM
	while :; do sleep 1; done
fi
exit $rc
