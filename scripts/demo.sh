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

step "done"
echo "Works now: configuration, profiles, the store, and intake of patch mails"
echo "from a public-inbox archive into series."
echo "Not yet: planning, scheduling, DPDK builds, benchmarks and verdicts"
echo "(they arrive with the next capabilities; see README.md, 'Status')."
