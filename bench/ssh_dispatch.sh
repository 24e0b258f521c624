#!/bin/sh
# The cost of driving a host over SSH instead of running a daemon on it
# (issue 18, goal: under 1 % of a job's wall time).  One controller, one
# SSH host (a real OpenSSH server on loopback, tests/integration/ssh_lib.sh)
# and one daemon agent on this machine, both with the built-in runner; the
# same job (the built-in runner waiting PG_BENCH_SSH_SECONDS, default 10)
# is queued PG_BENCH_SSH_JOBS times (default 5) for each, pinned to it, in
# blocks that alternate between the two (PG_BENCH_SSH_BLOCKS per side,
# default 2).  A block's wall time runs from its first lease to its last
# result recorded, as the controller logged them (ms), so it holds each
# job's start (run-one started over SSH, the lease answer on its stdin),
# its heartbeats, logs, result and acknowledgement, and the next lease.
# Prints per side the mean per job, the ratio SSH / daemon, the overhead
# per job in ms, and that overhead as a share of a job of
# PG_BENCH_SSH_JOB_S (default 300: a DPDK job of the demo profile on this
# machine takes minutes).  Most of the overhead is the remote session's
# start: sshd's session set-up and the login shell's start-up files (on
# this machine root's .bashrc runs `pyenv init`), printed as session_ms, the
# median of 5 `ssh ... true` over one multiplexed connection.
set -u
PG_BUILD=${PG_BUILD:?run through make bench}
PG_TOP=$(cd "$(dirname "$0")/.." && pwd)
export PG_BUILD PG_TOP
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/ssh_lib.sh"
secs=${PG_BENCH_SSH_SECONDS:-10}
jobs=${PG_BENCH_SSH_JOBS:-4}
real_job_s=${PG_BENCH_SSH_JOB_S:-300}
blocks=${PG_BENCH_SSH_BLOCKS:-2}

sshd_start
demo_tree
db="$TMP/state/perfgate.db"
q() { sqlite3 "$db" "$1" || fail "sqlite3: $1"; }
mkdir -p "$TMP/host"
cat >"$TMP/host/agent.json" <<EOF
{ "name": "ssh-1", "labels": { "pool": "demo" }, "runner": "builtin",
  "work_dir": "$TMP/host/work", "spool_dir": "$TMP/host/spool", "profiles_dir": "$TMP/profiles" }
EOF
cat >"$TMP/c.json" <<EOF
{ "db": "$db", "data_dir": "$TMP/state", "profiles_dir": "$TMP/profiles",
  "api": { "listen": "127.0.0.1:0", "lease_s": 60 },
  "ssh": { "hosts": [ { "name": "ssh-1", "host": "127.0.0.1", "port": $SSHD_PORT, "user": "$(id -un)",
      "key_file": "$SSH_KEY", "known_hosts": "$SSH_KNOWN", "labels": { "pool": "demo" },
      "agent": "$AGENT", "agent_config": "$TMP/host/agent.json", "runner": "builtin" } ] } }
EOF
C="$CTL --config $TMP/c.json"
$C db migrate >/dev/null 2>&1 || fail "db migrate"
$C ingest --mbox "$PG_TOP/tests/patchwork/single/0001-lib-fix-hello.patch" >/dev/null 2>&1 || fail "ingest"
$C plan >/dev/null 2>&1 || fail "plan"
q "UPDATE jobs SET priority = -1"
token=$($C agent add d-1 --labels pool=demo 2>/dev/null) || fail "agent add"
printf '%s\n' "$token" >"$TMP/d1-token"

ctl=""
daemon=""
stop_all() {
	[ -n "$daemon" ] && kill -9 "$daemon" 2>/dev/null
	[ -n "$ctl" ] && kill -9 "$ctl" 2>/dev/null
	return 0
}
cleanup_hooks="$cleanup_hooks stop_all"
$C serve >"$TMP/serve.log" 2>&1 &
ctl=$!
i=0
until grep -q 'api: listening on http' "$TMP/serve.log"; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "the controller did not start"; sleep 0.1
done
url=$(sed -n 's/.*api: listening on \(http[^ ]*\).*/\1/p' "$TMP/serve.log" | head -n 1)
cat >"$TMP/daemon.json" <<EOF
{ "name": "d-1", "controller_url": "$url", "token_file": "$TMP/d1-token",
  "labels": { "pool": "demo" }, "runner": "builtin", "work_dir": "$TMP/daemon/work",
  "spool_dir": "$TMP/daemon/spool", "profiles_dir": "$TMP/profiles", "lease_wait_s": 30 }
EOF
"$AGENT" --config "$TMP/daemon.json" >"$TMP/daemon.log" 2>&1 &
daemon=$!
i=0
until [ "$(q "SELECT count(*) FROM agents WHERE last_seen IS NOT NULL")" = 2 ] &&
	[ "$(q "SELECT state FROM ssh_hosts")" = idle ]; do
	i=$((i + 1)); [ $i -lt 600 ] || fail "the agents did not come"; sleep 0.1
done

run=$(q "SELECT min(id) FROM runs")
job=$(q "SELECT min(id) FROM jobs")
# block AGENT: queue $jobs copies of the job pinned to AGENT, each in a
# run of its own, and wait for them; prints the block's ms.
block() {
	aid=$(q "SELECT id FROM agents WHERE name = '$1'")
	first=$(( $(q "SELECT max(id) FROM jobs") + 1 ))
	n=0
	while [ $n -lt "$jobs" ]; do
		q "INSERT INTO runs (series_id, reason, tree, branch, base_commit, created_at)
			SELECT series_id, 'manual', tree, branch, base_commit, created_at FROM runs WHERE id = $run;
		   INSERT INTO jobs (run_id, context, host_class, build_mode, spec, created_at, pin_agent_id)
			SELECT last_insert_rowid(), context, host_class, build_mode,
			json_set(spec, '\$.builtin_seconds', $secs), created_at, $aid FROM jobs WHERE id = $job"
		n=$((n + 1))
	done
	last=$(q "SELECT max(id) FROM jobs")
	i=0
	until [ "$(q "SELECT count(*) FROM jobs WHERE id BETWEEN $first AND $last AND state = 'done'")" = "$jobs" ]; do
		i=$((i + 1)); [ $i -lt $((jobs * secs * 20 + 600)) ] || fail "block on $1 did not finish"; sleep 0.1
	done
	# From the first lease to the last result, as logged (ms).

	python3 - "$TMP/serve.log" "$first" "$last" <<'EOP'
import re, sys, datetime
log, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t0 = t1 = None
for line in open(log, errors='replace'):
    m = re.match(r'(\S+Z) .* api: job (\d+) attempt \d+(.*)', line)
    if not m or not first <= int(m.group(2)) <= last:
        continue
    t = datetime.datetime.strptime(m.group(1), '%Y-%m-%dT%H:%M:%S.%fZ').timestamp()
    if ' leased to agent ' in m.group(3) and t0 is None:
        t0 = t
    if m.group(3).startswith(': result ') and m.group(3).endswith('recorded'):
        t1 = t
print(int(round((t1 - t0) * 1000)))
EOP
}

ssh_ms=0
daemon_ms=0
b=0
while [ $b -lt "$blocks" ]; do
	ms=$(block ssh-1) || exit 1
	ssh_ms=$((ssh_ms + ms))
	ms=$(block d-1) || exit 1
	daemon_ms=$((daemon_ms + ms))
	b=$((b + 1))
done
failed=$(q "SELECT count(*) FROM jobs WHERE state = 'done' AND outcome <> 'ok'")
[ "$failed" = 0 ] || fail "$failed jobs did not end ok"
n=$((jobs * blocks))
# The remote session's start alone, with OpenSSH's client over one
# connection: what every SSH command pays before it runs.
O="-o BatchMode=yes -o UserKnownHostsFile=$SSH_KNOWN -i $SSH_KEY -p $SSHD_PORT
	-o ControlPath=$TMP/cm -o ControlMaster=auto -o ControlPersist=60"
ssh $O "$(id -un)@127.0.0.1" true || fail "ssh true"
session=$(for i in 1 2 3 4 5; do
	python3 -c 'import subprocess, sys, time; t = time.monotonic(); subprocess.run(sys.argv[1:], check=True); print(int((time.monotonic() - t) * 1000))' \
		ssh $O "$(id -un)@127.0.0.1" true
done | sort -n | sed -n 3p)
ssh $O -O exit "$(id -un)@127.0.0.1" 2>/dev/null
python3 - "$ssh_ms" "$daemon_ms" "$n" "$secs" "$session" "$real_job_s" <<'EOP'
import sys
s, d, n, secs, session, real = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                                sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
over = (s - d) / n
print(f"bench ssh_dispatch: jobs={n} per side, job={secs} s (built-in runner), "
      f"ssh_ms_per_job={s / n:.0f} daemon_ms_per_job={d / n:.0f} ratio={s / d:.4f} "
      f"overhead_ms_per_job={over:.0f} session_ms={session} "
      f"overhead_pct_at_{secs}s={(s / d - 1) * 100:.2f} "
      f"overhead_pct_at_{real}s_job={over / (real * 1000) * 100:.2f} (goal: under 1 %)")
EOP
