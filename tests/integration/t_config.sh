# --check-config: the shipped configurations and every shipped profile are
# accepted; each broken configuration and each broken profile is rejected
# with the message that names its file and field.
. "$PG_TOP/tests/integration/lib.sh"

# The local configurations in etc/ and the ones `make install` writes.
expect_rc 0 "$CTL" --config etc/controller.json --check-config
sed "s|$PG_TOP|@TOP@|g" "$TMP/out" >"$TMP/ctl.json"
diff -u tests/configs/golden/controller-etc.json.ok "$TMP/ctl.json" ||
	fail "normalised controller configuration differs from the golden file"
expect_rc 0 "$AGENT" --config etc/agent.json --check-config
expect_grep '"perfgate-demo-Performance"' "$TMP/out"
# The agent's "config" part only: "matches" holds this host's facts.
"$AGENT" --config etc/agent.json --check-config 2>/dev/null | jq .config |
	sed "s|$PG_TOP|@TOP@|g" >"$TMP/agent.json" || fail "agent --check-config | jq"
diff -u tests/configs/golden/agent-etc.json.ok "$TMP/agent.json" ||
	fail "normalised agent configuration differs from the golden file"
# Every sandbox field set, and the sandbox checked with them on this host.
cat >"$TMP/sandbox.json" <<EOC
{ "profiles_dir": "$PG_TOP/profiles", "profiles": ["demo.json"],
  "sandbox": { "enabled": true, "user": "nobody", "cpu_s": 0, "memory_mb": 0, "max_procs": 0,
  "allow_unsandboxed": true, "ro_paths": ["/usr/local"] } }
EOC
expect_rc 0 "$AGENT" --config "$TMP/sandbox.json" --check-config
expect_grep 'info sandbox: bwrap as (nobody \(uid [0-9]+\)|the agent.s user \(uid [0-9]+\)), no network$' "$TMP/out"
"$AGENT" --config "$TMP/sandbox.json" --check-config 2>/dev/null | jq -c .config.sandbox \
	>"$TMP/sandbox.out" || fail "agent --check-config | jq"
echo '{"enabled":true,"user":"nobody","cpu_s":0,"memory_mb":0,"max_procs":0,"allow_unsandboxed":true,"ro_paths":["/usr/local"]}' |
	diff -u - "$TMP/sandbox.out" || fail "sandbox fields not printed as set"
for f in controller agent; do
	sed -e "s|@DATADIR@|$PG_TOP/build-share|; s|@LOCALSTATEDIR@|$TMP/var|" \
		"etc/$f.json.in" >"$TMP/$f.json"
done
mkdir -p "$TMP/build-share/perfgate"
ln -s "$PG_TOP/profiles" "$TMP/build-share/perfgate/profiles"
sed -i "s|$PG_TOP/build-share|$TMP/build-share|" "$TMP/controller.json" "$TMP/agent.json"
expect_rc 0 "$CTL" --config "$TMP/controller.json" --check-config
expect_grep '"perfgate-intel-Performance"' "$TMP/out"
expect_rc 0 "$AGENT" --config "$TMP/agent.json" --check-config
expect_grep '"intel"' "$TMP/out"

# Every shipped profile on its own passes, for both daemons.
for p in profiles/*.json; do
	name=$(basename "$p")
	printf '{ "profiles_dir": "%s", "profiles": ["%s"] }\n' "$PG_TOP/profiles" "$name" \
		>"$TMP/one.json"
	expect_rc 0 "$CTL" --config "$TMP/one.json" --check-config
	expect_grep '"contexts"' "$TMP/out"
	expect_rc 0 "$AGENT" --config "$TMP/one.json" --check-config
done

# The shipped profiles' contexts can all pass; one whose cap is below the
# 6 pairs of a 95 % interval is valid but said to be unable to (stderr).
! grep -q "warning: context" "$TMP/out" || fail "a shipped context cannot pass"
mkdir -p "$TMP/capped"
jq '.contexts["perfgate-demo-Performance"].max_repetitions = 3' profiles/demo.json \
	>"$TMP/capped/demo.json" || fail "jq"
printf '{ "profiles_dir": "%s", "profiles": ["demo.json"] }\n' "$TMP/capped" >"$TMP/capped.json"
"$CTL" --config "$TMP/capped.json" --check-config >/dev/null 2>"$TMP/capped.err" ||
	fail "a context capped at 3 repetitions was rejected: $(cat "$TMP/capped.err")"
grep -qx "perfgate-controller: warning: context perfgate-demo-Performance: max_repetitions 3 cannot reach a 95 % interval (6 pairs at alpha 0.05): its verdicts can only warn or fail, never pass" \
	"$TMP/capped.err" || { cat "$TMP/capped.err"; fail "no warning for a context capped below 6 pairs"; }

# Broken configurations: exit 1 and the exact message.
n=0
for f in tests/configs/controller/*.json tests/configs/agent/*.json; do
	case $f in
	*/controller/*) bin=$CTL ;;
	*) bin=$AGENT ;;
	esac
	expect_rc 1 "$bin" --config "$f" --check-config
	diff -u "${f%.json}.err" "$TMP/out" || fail "wrong message for $f"
	n=$((n + 1))
done
[ "$n" -ge 17 ] || fail "only $n broken configurations found"

# Broken profiles, through the daemons' --check-config: same messages as
# the unit test expects from the loader, prefixed by the program name.
n=0
for f in tests/profiles/broken/*.json; do
	case $f in *.2.json) continue ;; esac
	name=$(basename "$f")
	list="\"$name\""
	[ -e "${f%.json}.2.json" ] && list="$list, \"$(basename "${f%.json}.2.json")\""
	printf '{ "profiles_dir": "%s", "profiles": [%s] }\n' \
		"$PG_TOP/tests/profiles/broken" "$list" >"$TMP/broken.json"
	for bin in "$CTL" "$AGENT"; do
		expect_rc 1 "$bin" --config "$TMP/broken.json" --check-config
		sed "s|$PG_TOP/||g" "$TMP/out" >"$TMP/msg"
		printf '%s: %s\n' "$(basename "$bin")" "$(cat "${f%.json}.err")" >"$TMP/want"
		diff -u "$TMP/want" "$TMP/msg" || fail "wrong message for $f from $(basename "$bin")"
	done
	n=$((n + 1))
done
[ "$n" -ge 15 ] || fail "only $n broken profiles found"
