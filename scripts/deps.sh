#!/bin/sh
# Install the Debian packages that perfgate's build, tests and demo need.
# Idempotent: when everything is installed already it changes nothing and
# does not touch the network.  Run as root (or with sudo) on Debian 12.
set -eu

# Build: compiler, pkg-config and the libraries the daemons link.
BUILD="build-essential pkg-config libcurl4-openssl-dev libgit2-dev libssh-dev
libcjson-dev libsqlite3-dev libmicrohttpd-dev libssl-dev zlib1g-dev"
# Tests: the unit test framework, sanitizer runtimes come with gcc, clang
# and libclang-rt-14-dev (libFuzzer's runtime, libclang_rt.fuzzer) for
# make fuzz, the sqlite3 shell for inspecting stores, git for fixtures, an SMTP server
# (aiosmtpd, unprivileged, any port), openssl for its test certificates, and
# OpenSSH's server, started by the tests on a loopback port for the SSH hosts,
# and valgrind, which runs both daemons in t_leaks.
TESTS="libcmocka-dev sqlite3 git ca-certificates clang libclang-rt-14-dev jq public-inbox python3 curl
python3-aiosmtpd openssl openssh-server openssh-client valgrind"
# The dashboard's browser tests (tests/browser/): Debian's chromium, driven
# by playwright-core (npm ci from tests/browser/package-lock.json into the
# build directory, by the tests themselves).  node and npm come from
# Debian's nodejs and npm only when there is no npm at all: a machine with
# NodeSource's nodejs has npm inside it, and Debian's npm conflicts with it.
BROWSER="chromium"
if ! command -v npm >/dev/null 2>&1; then
	BROWSER="$BROWSER nodejs npm"
fi
# Agent execution and its end-to-end tests: DPDK's build tools (meson,
# ninja, ccache, pyelftools for pmdinfogen, libnuma), bubblewrap for the
# sandbox, Debian's DPDK 22.11 binaries (captured outputs for the parsers)
# and dpkg-dev to unpack its source package (scripts/dpdk-tree.sh).
AGENT="meson ninja-build ccache python3-pyelftools libnuma-dev bubblewrap
dpdk dpdk-dev dpkg-dev xz-utils"

# The user that sandboxed builds and benchmarks run as when the agent runs
# as root (agent/sandbox.h); the tests use it too.
SANDBOX_USER=perfgate-sandbox

sandbox_user() {
	getent passwd "$SANDBOX_USER" >/dev/null 2>&1 && return 0
	if [ "$(id -u)" -ne 0 ] && [ -z "$SUDO" ]; then
		# Not needed then: an agent that is not root sandboxes as its own user.
		echo "deps: note: no user $SANDBOX_USER (an agent running as root needs it)"
		return 0
	fi
	echo "deps: creating the system user $SANDBOX_USER"
	$SUDO useradd --system --user-group --no-create-home --home-dir /nonexistent \
		--shell /usr/sbin/nologin "$SANDBOX_USER"
}

SUDO=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
	SUDO=sudo
fi

want="$BUILD $TESTS $BROWSER $AGENT"
missing=""
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
if [ -z "$missing" ]; then
	echo "deps: all $(echo $want | wc -w) packages installed"
	sandbox_user
	exit 0
fi
echo "deps: installing:$missing"
if [ "$(id -u)" -ne 0 ] && [ -z "$SUDO" ]; then
	echo "deps: run as root (or install sudo)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086  # word splitting of the package list is wanted
$SUDO apt-get install -y -q --no-install-recommends $missing
sandbox_user
