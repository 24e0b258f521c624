#!/bin/sh
# Run the dashboard's browser tests, tests/browser/t_*.mjs, against the
# built controller with Debian's chromium driven by playwright-core.
# Usage: run.sh BUILD_DIR [t_name.mjs ...]
#
# playwright-core is installed from package-lock.json (npm ci) into
# BUILD_DIR/browser/node_modules, once: a copy of the lock file next to it
# says what is installed, and while it matches nothing is fetched.  Each
# test file runs in its own node process (runner.mjs), which prints an
# `ok`/`FAIL` line per test function; the closing line counts them.
# Screenshots go to BUILD_DIR/screenshots/.  VERBOSE=1 shows the output of
# the tests that passed too.
set -u
build=${1:?usage: run.sh BUILD_DIR [tests...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$(cd "$build" && pwd) || exit 1
CHROMIUM=${PG_CHROMIUM:-/usr/bin/chromium}

for tool in node npm sqlite3 git; do
	command -v "$tool" >/dev/null 2>&1 || { echo "browser: $tool is not installed (make deps)" >&2; exit 1; }
done
[ -x "$CHROMIUM" ] || { echo "browser: $CHROMIUM is not installed (make deps)" >&2; exit 1; }
[ -x "$build/perfgate-controller" ] || { echo "browser: no $build/perfgate-controller (make all)" >&2; exit 1; }

# playwright-core, as the lock file pins it.
mods="$build/browser"
if cmp -s "$here/package-lock.json" "$mods/installed-lock.json" &&
	[ -f "$mods/node_modules/playwright-core/package.json" ]; then
	:
else
	echo "browser: npm ci into $mods"
	rm -rf "$mods" && mkdir -p "$mods" &&
		cp "$here/package.json" "$here/package-lock.json" "$mods/" &&
		npm ci --prefix "$mods" --ignore-scripts --no-audit --no-fund --loglevel=error &&
		cp "$here/package-lock.json" "$mods/installed-lock.json" ||
		{ echo "browser: npm ci failed" >&2; exit 1; }
fi

if [ $# -eq 0 ]; then
	set -- "$here"/t_*.mjs
fi
mkdir -p "$build/screenshots"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
passed=0
failed=0
names=""
for t in "$@"; do
	case $t in
	/*) ;;
	*) [ -f "$t" ] || t="$here/$t" ;;
	esac
	PG_BUILD="$build" PG_TOP="$top" PG_BROWSER_MODULES="$mods/node_modules" \
		PG_CHROMIUM="$CHROMIUM" node "$here/runner.mjs" "$t" >"$out" 2>&1
	rc=$?
	# runner.mjs prints "ok   NAME (Ns)" / "FAIL NAME (Ns)" per test, the
	# test's own output indented below a FAIL, and "tests: P F" last.
	if [ "${VERBOSE:-0}" = 1 ] || [ "$rc" -ne 0 ]; then
		grep -v '^tests: ' "$out"
	else
		grep -E '^(ok|FAIL) ' "$out"
	fi
	p=$(sed -n 's/^tests: \([0-9]*\) \([0-9]*\)$/\1/p' "$out")
	f=$(sed -n 's/^tests: \([0-9]*\) \([0-9]*\)$/\2/p' "$out")
	if [ -z "$p" ]; then
		# The runner itself failed before counting (a syntax error, a
		# missing module): the whole file counts as one failure.
		p=0
		f=1
		echo "FAIL $(basename "$t" .mjs) (runner exited $rc)"
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	[ "$f" -eq 0 ] || names="$names $(basename "$t" .mjs)"
done
echo "browser: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || { echo "browser: failed:$names"; exit 1; }
