#!/bin/sh
# Resident memory of the daemons after 10, 100 and PG_BENCH_MEMORY_JOBS
# (default 1,000) jobs: VmRSS (and the peak, VmHWM) from /proc/PID/status.
#
#  controller  `serve` with the fake Patchwork (tests/fake_patchwork.py)
#              and a real SMTP server on loopback (tests/smtp_server.py)
#              as its outboxes' peers; 4 fake agents (bench/memory_drive.py)
#              take turns over the HTTP API: lease, the series mbox, a
#              heartbeat, a log chunk and a result with samples each.  The
#              verdict pass decides every job (3 + 3 runs give no interval:
#              a follow-up round, which is a job too), a check goes to
#              Patchwork and a report mail to SMTP for every run.
#  agent       the real agent daemon with the built-in runner (jobs of 0 s:
#              "builtin_seconds": 0 in their spec) against a controller;
#              the jobs are queued in steps of 10, 90 and 900 so that the
#              figures are taken with the agent idle after exactly that many.
#
# The jobs are runs of one real series (tests/patchwork/single, planned by
# the controller on a local git tree), copied in the store: set-up, not
# measured.  Growth is after-N minus after-10.
#
# What the daemons keep between jobs, and its bound (goal: no growth
# beyond these):
#  controller  each SQLite connection's page cache, STORE_PAGE_CACHE_KIB
#              (2,000 KiB; heap, RssAnon); `serve` has 4 + api.threads + 1
#              connections (main loop, outbox, API writer and its
#              checkpointer, the API's read connections) and one per SSH
#              host: 9 here, 18,000 KiB (counted from /proc/PID/fd).  The read connections map the
#              store (PRAGMA mmap_size, 1 GiB): its pages that reads touched
#              are file-backed (RssFile), shared with the kernel's page cache
#              and at most the store's size.  256 prepared statements per
#              connection, the API's last-seen table (4,096 slots), one
#              libcurl handle for Patchwork (its connection cache), none
#              kept for SMTP; glibc's per-thread malloc arenas keep freed
#              memory for reuse.
#  agent       one libcurl handle (its connection and DNS caches); nothing
#              per job.  Bound stated here: 1,024 KiB of RssAnon growth.
# goal=met when the controller's RssAnon grew by at most its page caches'
# bound and the agent's by at most 1,024 KiB.
set -eu
build=${PG_BUILD:?run through make bench}
top=$(cd "$(dirname "$0")/.." && pwd)
n=${PG_BENCH_MEMORY_JOBS:-1000}
CTL="$build/perfgate-controller"
AGENT="$build/perfgate-agent"
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-bench-memory.XXXXXX")
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	if [ -n "${PG_BENCH_KEEP:-}" ]; then
		echo "kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT

die() { echo "bench memory: $*" >&2; exit 1; }
# until_ok SECONDS WHAT CMD...: poll CMD every 0.1 s (a bound against
# hanging, not a measurement)
until_ok() {
	_i=0
	_max=$(($1 * 10))
	_what=$2
	shift 2
	until "$@"; do
		_i=$((_i + 1))
		[ $_i -le $_max ] || die "timed out waiting for $_what"
		sleep 0.1
	done
}
listening() { sed -n 's/^listening on //p' "$1"; }
has_line() { [ -n "$(listening "$1")" ]; }

# ---- peers: the fake Patchwork, knowing the series, and the SMTP server ------
CI_TOKEN=04b5b8ffb66a2d9ba9ad32d0ba95a2b120a60b9a
MAIL=$top/tests/patchwork/single/0001-lib-fix-hello.patch
cat >"$tmp/fixture.json" <<EOF
{ "users": [ { "id": 1, "username": "ci", "email": "ci@example.org", "token": "$CI_TOKEN",
               "maintainer_of": ["dpdk"] } ] }
EOF
"$PY" "$top/tests/fake_patchwork.py" --port 0 --fixture "$tmp/fixture.json" --quiet \
	>"$tmp/pw.out" 2>"$tmp/pw.err" &
pids="$pids $!"
"$PY" "$top/tests/smtp_server.py" --spool "$tmp/spool" >"$tmp/smtp.out" 2>"$tmp/smtp.log" &
pids="$pids $!"
until_ok 30 "the fake Patchwork" has_line "$tmp/pw.out"
until_ok 30 "the SMTP server" has_line "$tmp/smtp.out"
pw="http://127.0.0.1:$(listening "$tmp/pw.out")"
curl -sS -f -X POST -H 'Content-Type: application/json' \
	-d "{\"mails\": [{\"file\": \"$MAIL\", \"id\": 301}]}" "$pw/_fake/series" >/dev/null ||
	die "the fake Patchwork refused the series"
printf '%s\n' "$CI_TOKEN" >"$tmp/pw-token"
chmod 600 "$tmp/pw-token"

# ---- the tree and profile the planner plans on ---------------------------------
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
git init -q -b main "$tmp/dpdk"
printf '22.11.0\n' >"$tmp/dpdk/VERSION"
git -C "$tmp/dpdk" add . && git -C "$tmp/dpdk" commit -q -m "version 22.11"
mkdir -p "$tmp/profiles"
jq --arg url "$tmp/dpdk" '.trees["dpdk-demo"].url = $url' "$top/profiles/demo.json" \
	>"$tmp/profiles/demo.json"

# setup DIR: a store in DIR with the series planned (run 1, its jobs of 0 s)
# and the configuration DIR/c.json.
setup() {
	cat >"$1/c.json" <<EOF
{ "db": "$1/state/perfgate.db", "data_dir": "$1/state", "profiles_dir": "$tmp/profiles",
  "api": { "listen": "127.0.0.1:0", "public_url": "https://perfgate.example.org/" },
  "checks": { "enabled": true, "patchwork_url": "$pw/api/1.3", "token_file": "$tmp/pw-token",
              "username": "ci", "timeout_s": 5, "max_backoff_s": 2 },
  "mail": { "enabled": true, "smtp_url": "smtp://127.0.0.1:$(listening "$tmp/smtp.out")/lab.example.org",
            "starttls": "off", "from": "perfgate CI <perfgate@lab.example.org>", "timeout_s": 10 } }
EOF
	if ! "$CTL" --config "$1/c.json" --log-level warn db migrate >/dev/null ||
	   ! "$CTL" --config "$1/c.json" --log-level warn ingest --mbox "$MAIL" >/dev/null ||
	   ! "$CTL" --config "$1/c.json" --log-level warn plan >"$1/plan.out"; then
		die "set-up of $1 failed"
	fi
	grep -q 'runs=1 ' "$1/plan.out" || die "the series was not planned: $(cat "$1/plan.out")"
	sql "$1" "UPDATE jobs SET spec = json_set(spec, '\$.builtin_seconds', 0) WHERE run_id = 1"
}
sql() { sqlite3 -cmd '.timeout 30000' "$1/state/perfgate.db" "$2"; }
# add_runs DIR N: N more runs like run 1 (its jobs, queued).
add_runs() {
	sql "$1" "BEGIN;
	WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < $2)
	INSERT INTO runs (series_id, reason, tree, branch, base_commit, created_at)
		SELECT series_id, 'manual', tree, branch, base_commit, created_at FROM runs, k
		WHERE runs.id = 1;
	INSERT INTO jobs (run_id, context, host_class, build_mode, spec, created_at)
		SELECT r.id, j.context, j.host_class, j.build_mode, j.spec, j.created_at
		FROM runs r JOIN jobs j ON j.run_id = 1
		WHERE r.id > 1 AND NOT EXISTS (SELECT 1 FROM jobs x WHERE x.run_id = r.id);
	COMMIT;"
}
# start_ctl DIR [WRAPPER...]: serve in the background, run by WRAPPER if
# given; $ctl its pid, $url its API.
start_ctl() {
	_dir=$1
	shift
	"$@" "$CTL" --config "$_dir/c.json" serve >"$_dir/serve.log" 2>&1 &
	ctl=$!
	pids="$pids $ctl"
	until_ok 60 "the API" grep -q 'api: listening on http://' "$_dir/serve.log"
	url=$(sed -n 's/.*api: listening on \(http:[^ ]*\).*/\1/p' "$_dir/serve.log" | head -n 1)
}
stop() {	# stop PID: SIGTERM, exit 0
	kill "$1"
	wait "$1" || die "pid $1 exited $? on SIGTERM"
}
kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
jobs_per_run=0

# ---- the controller: fake agents over the API ---------------------------------
mkdir -p "$tmp/c"
setup "$tmp/c"
jobs_per_run=$(sql "$tmp/c" "SELECT count(*) FROM jobs WHERE run_id = 1")
# Enough runs for n jobs whatever the follow-ups.
add_runs "$tmp/c" $((n / jobs_per_run + 1))
: >"$tmp/c/tokens"
for i in 1 2 3 4; do
	"$CTL" --config "$tmp/c/c.json" agent add "fake-$i" --labels pool=demo >>"$tmp/c/tokens" \
		2>/dev/null || die "agent add"
done
# PG_BENCH_MEMORY_WRAP: a command to run the measured daemons under (e.g.
# "valgrind --tool=massif --massif-out-file=/tmp/ms.%p"), to see where
# their memory goes.
# shellcheck disable=SC2086  # words of the wrapper
start_ctl "$tmp/c" ${PG_BENCH_MEMORY_WRAP:-}
"$PY" "$top/bench/memory_drive.py" "$url" "$tmp/c/tokens" "$ctl" "10,100,$n" >"$tmp/c/drive.out" ||
	die "the fake agents failed: $(tail -n 5 "$tmp/c/serve.log")"
# field N KEY: KEY= of the driver's "after N:" line
field() { sed -n "s/^after $1: \(.* \)*$2=\([0-9]*\).*/\2/p" "$tmp/c/drive.out"; }
c_rss="$(field 10 rss) $(field 100 rss) $(field "$n" rss)"
c_anon="$(field 10 anon) $(field 100 anon) $(field "$n" anon)"
chwm=$(field "$n" hwm)
ctime=$(sed -n "s/^after $n: .* t=//p" "$tmp/c/drive.out")
# Its SQLite connections: each holds the store's file open once.
conns=0
for fd in "/proc/$ctl/fd"/*; do
	[ "$(readlink "$fd")" = "$tmp/c/state/perfgate.db" ] && conns=$((conns + 1))
done
cdone=$(sql "$tmp/c" "SELECT count(*) FROM runs WHERE state = 'done'")
cchecks=$(sql "$tmp/c" "SELECT count(*) FROM check_outbox WHERE delivery = 'sent'")
cmails=$(sql "$tmp/c" "SELECT count(*) FROM email_outbox WHERE delivery = 'sent'")
stop "$ctl"

# ---- the agent: the built-in runner against a controller -----------------------
mkdir -p "$tmp/a"
setup "$tmp/a"
"$CTL" --config "$tmp/a/c.json" agent add lab-1 --labels pool=demo >"$tmp/a/token" 2>/dev/null ||
	die "agent add"
start_ctl "$tmp/a"
cat >"$tmp/a/agent.json" <<EOF
{ "name": "lab-1", "controller_url": "$url", "token_file": "$tmp/a/token",
  "labels": { "pool": "demo" }, "work_dir": "$tmp/a/work", "spool_dir": "$tmp/a/spool",
  "runner": "builtin", "profiles_dir": "$tmp/profiles", "lease_wait_s": 5 }
EOF
# shellcheck disable=SC2086  # words of the wrapper
${PG_BENCH_MEMORY_WRAP:-} "$AGENT" --config "$tmp/a/agent.json" --log-level warn \
	>"$tmp/a/agent.log" 2>&1 &
agent=$!
pids="$agent $pids"
done_jobs() { [ "$(sql "$tmp/a" "SELECT count(*) FROM jobs WHERE state = 'done'")" -ge "$1" ]; }
t0=$(date +%s)
a_rss=""
a_anon=""
for target in 10 100 "$n"; do
	have=$(sql "$tmp/a" "SELECT count(*) FROM jobs")
	[ "$have" -ge "$target" ] || add_runs "$tmp/a" $(((target - have) / jobs_per_run))
	until_ok $((target + 60)) "$target jobs of the agent" done_jobs "$target"
	# The result's delivery is the agent's last step: let it go idle.
	sleep 1
	a_rss="$a_rss $(kib $agent VmRSS)"
	a_anon="$a_anon $(kib $agent RssAnon)"
done
ahwm=$(kib "$agent" VmHWM)
asecs=$(($(date +%s) - t0))
afail=$(sql "$tmp/a" "SELECT count(*) FROM jobs WHERE outcome <> 'ok'")
stop "$agent"
stop "$ctl"
pids=""

row() {	# row NAME "AFTER10 AFTER100 AFTERn"
	echo "$2" | awk -v name="$1" -v n="$n" '{
		printf "%-18s | %9d KiB | %9d KiB | %9d KiB | %+6d KiB, %+.2f KiB/job\n",
			name, $1, $2, $3, $3 - $1, ($3 - $1) / (n - 10) }'
}
printf '%-18s | %13s | %13s | %13s | %s\n' daemon "after 10 jobs" "after 100" "after $n" \
	"growth 10->$n"
row "controller VmRSS" "$c_rss"
row "controller RssAnon" "$c_anon"
row "agent VmRSS" "$a_rss"
row "agent RssAnon" "$a_anon"
slashes() { echo "$1" | awk '{ $1 = $1; gsub(/ /, "/"); print }'; }
echo "bench memory-controller: jobs=$n rss=$(slashes "$c_rss") anon=$(slashes "$c_anon")" \
	"peak=$chwm KiB runs_done=$cdone checks_sent=$cchecks mails_sent=$cmails ($ctime)"
echo "bench memory-agent: jobs=$n rss=$(slashes "$a_rss") anon=$(slashes "$a_anon")" \
	"peak=$ahwm KiB not_ok=$afail (${asecs}s)"
cache_kib=$(sed -n 's/^#define STORE_PAGE_CACHE_KIB "\([0-9]*\)".*/\1/p' "$top/controller/store.h")
[ -n "$cache_kib" ] || die "no STORE_PAGE_CACHE_KIB in controller/store.h"
echo "$c_anon $a_anon" | awk -v cache="$cache_kib" -v conns="$conns" '{
	cg = $3 - $1; ag = $6 - $4; cb = conns * cache; ab = 1024
	printf "bench memory: controller RssAnon growth %d KiB (bound: %d page caches of %d KiB = %d KiB),", cg, conns, cache, cb
	printf " agent %d KiB (bound %d KiB) goal=%s\n", ag, ab, (cg <= cb && ag <= ab) ? "met" : "missed" }'
