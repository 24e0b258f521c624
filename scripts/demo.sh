#!/bin/sh
# make demo: run what the pipeline can do so far, end to end, on this
# machine, with the local configuration in etc/ (state under var/).
#
# Today (the foundation): build both daemons, validate the configuration
# and the demo profile, create and migrate the store, verify it, and show
# which host classes a local agent would serve.  Each later capability
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

step "creating and migrating the store (var/perfgate.db)"
mkdir -p var
$CTL --config etc/controller.json db migrate
step "verifying the store"
$CTL --config etc/controller.json db check

step "what a local agent would serve (etc/agent.json)"
$AGENT --config etc/agent.json --check-config | sed -n '/"matches"/,$p'

step "done"
echo "The foundation works: configuration, profiles and store are valid."
echo "Not yet: mail intake, scheduling, DPDK builds, benchmarks and verdicts"
echo "(they arrive with the next capabilities; see README.md, 'Status')."
