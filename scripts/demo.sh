#!/bin/sh
# make demo: run what the pipeline can do so far, end to end, on this
# machine, with the local configuration in etc/ (state under var/).
#
# Today: build both daemons, validate the configuration and the demo
# profile, create and migrate the store, build a real public-inbox archive
# of patch mails and ingest it into series, and show which host classes a
# local agent would serve.  Each later capability
# (intake, scheduling, DPDK builds and benchmarks, verdicts) extends this.
set -eu
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "installing the Debian packages perfgate needs"
make deps
step "building perfgate-controller and perfgate-agent"
make -j"$(nproc)" all >/dev/null
CTL=build/perfgate-controller
AGENT=build/perfgate-agent
$CTL --version
$AGENT --version

step "validating the controller configuration and the demo profile (etc/controller.json)"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
$CTL --config etc/controller.json --check-config >"$out"
sed -n '1,40p' "$out"
echo "    ... (full output: $CTL --config etc/controller.json --check-config)"

step "creating and migrating the store (var/perfgate.db, fresh for the demo)"
mkdir -p var
rm -f var/perfgate.db var/perfgate.db-wal var/perfgate.db-shm
$CTL --config etc/controller.json db migrate
step "verifying the store"
$CTL --config etc/controller.json db check

step "building a mailing-list archive with public-inbox (tests/intake/make-corpus.sh)"
# Real patch mails from git format-patch: two versions of a series, a
# single patch, an RFC, a stable backport, a series never completed, a
# recheck request, a test report and a few broken mails.
rm -rf var/demo-inbox var/demo-corpus
sh tests/intake/make-corpus.sh var/demo-corpus
mkdir -p var/demo-inbox
sh tests/inbox/make-inbox.sh init var/demo-inbox dev v2 >/dev/null 2>&1
sh tests/inbox/make-inbox.sh deliver var/demo-inbox dev var/demo-corpus/*.eml >/dev/null 2>&1
echo "    $(ls var/demo-corpus | wc -l) mails delivered to var/demo-inbox/dev"

step "ingesting the archive (perfgate-controller ingest --inbox var/demo-inbox/dev)"
$CTL --config etc/controller.json --log-level warn ingest --inbox var/demo-inbox/dev
step "the series it found (perfgate-controller series list)"
$CTL --config etc/controller.json series list
v2=$($CTL --config etc/controller.json series list --state complete | awk '/speed up bulk get/ { print $1; exit }')
step "one series in detail (perfgate-controller series show $v2)"
$CTL --config etc/controller.json series show "$v2"

step "what a local agent would serve (etc/agent.json)"
$AGENT --config etc/agent.json --check-config | sed -n '/"matches"/,$p'

step "planning, serving and running one job (controller + agent on loopback)"
# The demo profile names the DPDK tree that the execution capability will
# make from Debian's source package; until then a small stand-in git tree
# (a VERSION file saying 22.11.0) lets the planner resolve a base commit,
# and the agent's built-in runner runs the job without building or
# measuring anything (its result says so).
demo=var/demo-run
rm -rf "$demo"
mkdir -p "$demo/profiles"
git init -q -b main "$demo/tree"
printf '22.11.0\n' >"$demo/tree/VERSION"
git -C "$demo/tree" add VERSION
git -C "$demo/tree" -c user.name=demo -c user.email=demo@example.org commit -q -m "stand-in for DPDK 22.11"
sed "s|/var/lib/perfgate/demo/dpdk.git|$PWD/$demo/tree|" profiles/demo.json >"$demo/profiles/demo.json"
printf '%s\n' '{ "db": "../perfgate.db", "data_dir": "state", "profiles_dir": "profiles",' \
	'  "api": { "listen": "127.0.0.1:0", "lease_s": 30 } }' >"$demo/controller.json"
$CTL --config "$demo/controller.json" --log-level warn plan
$CTL --config "$demo/controller.json" agent add demo-agent --labels pool=demo \
	>"$demo/token" 2>/dev/null
$CTL --config "$demo/controller.json" serve >"$demo/serve.log" 2>&1 &
ctl=$!
trap 'kill "$ctl" 2>/dev/null || true; rm -f "$out"' EXIT
i=0
until grep -q 'api: listening on http' "$demo/serve.log"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { cat "$demo/serve.log"; exit 1; }
	sleep 0.1
done
url=$(sed -n 's/.*api: listening on \(http[^ ]*\).*/\1/p' "$demo/serve.log" | head -n 1)
echo "    controller API at $url"
printf '%s\n' "{ \"name\": \"demo-agent\", \"controller_url\": \"$url\", \"token_file\": \"token\"," \
	'  "labels": { "pool": "demo" }, "work_dir": "agent/work", "spool_dir": "agent/spool",' \
	'  "profiles_dir": "profiles", "lease_wait_s": 5, "runner": "builtin" }' >"$demo/agent.json"
$AGENT --config "$demo/agent.json" --log-level warn --once &&
	echo "    the agent leased one job, ran it (built-in runner) and its result was recorded"
curl -sf "$url/" >/dev/null && curl -sf "$url/api/v1/series?order=newest" >/dev/null &&
	echo "    dashboard at $url/ (series, /series/ID, /trends, /agents, /queue) while it runs"
echo "    jobs by state:"
curl -sf "$url/metrics" | grep '^perfgate_jobs{' | sed 's/^/      /'
kill -TERM "$ctl"
wait "$ctl" || true

step "done"
echo "Works now: configuration, profiles, the store, intake of patch mails from a"
echo "public-inbox archive into series, planning into jobs, the controller's HTTP"
echo "API, and an agent that leases, heartbeats and reports."
echo "Not yet: DPDK builds and benchmarks (the agent's built-in runner measures"
echo "nothing), verdicts and checks (see README.md, 'Status')."
