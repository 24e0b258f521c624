# The sandbox, for real (agent/sandbox.h through build_dpdk() and
# tests/tools/pg_build): a source tree whose configure and build steps try
# to reach the network (a listener on the host's loopback, and a
# non-loopback address, tried only where no route exists), to write
# outside the workspace (the host's /tmp, /var/lib, $HOME, /etc, the source
# tree itself) and to use more CPU and memory than allowed fails that way,
# visibly in the log, as an unprivileged user; nothing reaches the
# listener and no marker file exists afterwards.  The same tree built
# unsandboxed (with harmless targets only) does reach the listener and
# write its marker: the test can tell the difference.
. "$PG_TOP/tests/integration/lib.sh"

PGB="$PG_BUILD/tests/tools/pg_build"
[ -x "$PGB" ] || fail "$PGB missing (make $PGB)"

listener_pid=""
stop_listener() {
	[ -n "$listener_pid" ] && kill "$listener_pid" 2>/dev/null
	return 0
}
cleanup_hooks="stop_listener rm_markers"

# mktemp -d is 0700: the sandbox user must be able to pass through.
chmod 755 "$TMP"
tag=pg-sandbox-marker.$$
home=${HOME:-/root}
markers="/tmp/$tag /var/lib/$tag $home/$tag /etc/$tag"
rm_markers() {
	for m in $markers; do rm -f "$m"; done
	return 0
}

# A listener on the host's loopback that counts connections (bounded: it
# exits after 300 s on its own).
python3 - "$TMP/listener" <<'EOF' &
import socket, sys, time
out = sys.argv[1]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
s.settimeout(0.5)
with open(out + ".port", "w") as f:
    f.write(str(s.getsockname()[1]))
n = 0
end = time.time() + 300
while time.time() < end:
    try:
        c, _ = s.accept()
        c.close()
        n += 1
        with open(out + ".count", "w") as f:
            f.write(str(n))
    except socket.timeout:
        pass
EOF
listener_pid=$!
i=0
until [ -s "$TMP/listener.port" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "listener did not start"
	sleep 0.1
done
port=$(cat "$TMP/listener.port")
connections() { cat "$TMP/listener.count" 2>/dev/null || echo 0; }

# The hostile tree, with every target.
src=$TMP/ws/src
mkdir -p "$src" "$TMP/ws/out"
cp "$PG_TOP"/tests/sandbox/escape/* "$src/"
cat >"$src/probe.json" <<EOF
{ "connect": [["127.0.0.1", $port], ["192.0.2.1", 9]],
  "write": ["/tmp/$tag", "/var/lib/$tag", "$home/$tag", "/etc/$tag", "$src/$tag"],
  "limits": true }
EOF
chmod -R a+rX "$TMP/ws"

expect_rc 0 "$PGB" --src "$src" --build "$TMP/ws/build" --log "$TMP/ws/out/build.log" \
	--buildtype release --ccache "$TMP/ws/ccache" --basedir "$TMP/ws" \
	--cpu-s 5 --memory-mb 256 --max-procs 256 --timeout 300 --stream "$TMP/stream.log"
res=$TMP/out
log=$TMP/ws/out/build.log
cat "$log"
jq_is "$res" .ok false
jq_is "$res" .failed_step "ninja: exited 1"
jq_is "$res" .sandbox_failed false
jq_is "$res" .setup fresh
cmp "$log" "$TMP/stream.log" || fail "the streamed log differs from the log file"

# Who and what: an unprivileged user, a loopback only, the limits.
if [ "$(id -u)" -eq 0 ]; then
	want_uid=$(id -u perfgate-sandbox) || fail "no user perfgate-sandbox (scripts/deps.sh)"
	expect_grep "^perfgate: sandbox: bwrap as perfgate-sandbox \\(uid $want_uid\\), no network, cpu 5 s, data 256 MiB, 256 processes$" "$log"
else
	want_uid=$(id -u)
fi
[ "$want_uid" -ne 0 ] || fail "sandbox user is root"
for phase in configure build; do
	expect_grep "^(Message: )?probe $phase uid : $want_uid$" "$log"
	expect_grep "^probe $phase interfaces : lo$" "$log"
	expect_grep "^probe $phase limit Max cpu time: 5 15 seconds$" "$log"
	expect_grep "^probe $phase limit Max data size: 268435456 268435456 bytes$" "$log"
	expect_grep "^probe $phase limit Max processes: 256 256 processes$" "$log"
	# The network: the host's loopback is not this loopback, and nothing
	# else is reachable at all.
	expect_grep "^probe $phase connect 127.0.0.1:$port: Connection refused$" "$log"
	expect_grep "^probe $phase connect 192.0.2.1:9: Network is unreachable$" "$log"
	# The file system: read-only, or not there.
	expect_grep "^probe $phase write /var/lib/$tag: No such file or directory$" "$log"
	expect_grep "^probe $phase write $home/$tag: No such file or directory$" "$log"
	expect_grep "^probe $phase write /etc/$tag: Read-only file system$" "$log"
	expect_grep "^probe $phase write $src/$tag: Read-only file system$" "$log"
	# /tmp is the sandbox's own: written there, gone with it.
	expect_grep "^probe $phase write /tmp/$tag: written$" "$log"
	# The limits hold.
	expect_grep "^probe $phase memory 1GiB: MemoryError$" "$log"
	expect_grep "^probe $phase cpu burn: killed by SIGXCPU$" "$log"
done
expect_grep "^FAILED: probe.txt" "$log"
for m in $markers "$src/$tag"; do
	[ ! -e "$m" ] || fail "marker $m exists outside the sandbox"
done
[ "$(connections)" -eq 0 ] || fail "the listener on the host's loopback was reached"
# The build directory belongs to the sandbox user.
[ "$(stat -c %u "$TMP/ws/build")" -eq "$want_uid" ] || fail "build dir not the sandbox user's"

# The contrast: unsandboxed, with harmless targets only (the listener, a
# marker under $TMP), the same steps get through and the build succeeds.
src2=$TMP/ws2/src
mkdir -p "$src2" "$TMP/outside"
cp "$PG_TOP"/tests/sandbox/escape/* "$src2/"
printf '{ "connect": [["127.0.0.1", %s]], "write": ["%s"] }\n' "$port" \
	"$TMP/outside/marker" >"$src2/probe.json"
expect_rc 0 "$PGB" --no-sandbox --src "$src2" --build "$TMP/ws2/build" \
	--log "$TMP/ws2/build.log" --buildtype release --timeout 300
jq_is "$TMP/out" .ok true
expect_grep "^probe build connect 127.0.0.1:$port: connected$" "$TMP/ws2/build.log"
expect_grep "^perfgate: sandbox: unsandboxed$" "$TMP/ws2/build.log"
[ -e "$TMP/outside/marker" ] || fail "unsandboxed marker missing"
[ "$(connections)" -ge 2 ] || fail "unsandboxed connections did not reach the listener"

# The same harmless tree in the sandbox fails on both.
rm -f "$TMP/outside/marker"
expect_rc 0 "$PGB" --src "$src2" --build "$TMP/ws2/build-sbx" --log "$TMP/ws2/sbx.log" \
	--buildtype release --timeout 300
jq_is "$TMP/out" .ok false
expect_grep "^probe build connect 127.0.0.1:$port: Connection refused$" "$TMP/ws2/sbx.log"
expect_grep "^probe build write $TMP/outside/marker: No such file or directory$" "$TMP/ws2/sbx.log"
[ ! -e "$TMP/outside/marker" ] || fail "sandboxed marker exists"

# The patched side's ccache (--ccache-readonly): read-only in the sandbox,
# so a patch's build cannot plant objects for a base build; writable
# without it.
src3=$TMP/ws3/src
mkdir -p "$src3" "$TMP/ws3/ccache"
cp "$PG_TOP"/tests/sandbox/escape/* "$src3/"
printf '{ "write": ["%s"] }\n' "$TMP/ws3/ccache/$tag" >"$src3/probe.json"
chmod -R a+rX "$TMP/ws3"
expect_rc 0 "$PGB" --src "$src3" --build "$TMP/ws3/build-ro" --log "$TMP/ws3/ro.log" \
	--buildtype release --ccache "$TMP/ws3/ccache" --ccache-readonly --timeout 300
expect_grep "^probe build write $TMP/ws3/ccache/$tag: Read-only file system$" "$TMP/ws3/ro.log"
[ ! -e "$TMP/ws3/ccache/$tag" ] || fail "a read-only ccache was written"
expect_rc 0 "$PGB" --src "$src3" --build "$TMP/ws3/build-rw" --log "$TMP/ws3/rw.log" \
	--buildtype release --ccache "$TMP/ws3/ccache" --timeout 300
expect_grep "^probe build write $TMP/ws3/ccache/$tag: written$" "$TMP/ws3/rw.log"

# The shared ccache that patched builds read base objects from: read-only
# to them (--ccache-shared-readonly), so nothing a patch compiles or plants
# reaches it; writable to base builds, which fill it.
mkdir -p "$TMP/ws3/shared"
chmod a+rX "$TMP/ws3/shared"
printf '{ "write": ["%s"] }\n' "$TMP/ws3/shared/$tag" >"$src3/probe.json"
expect_rc 0 "$PGB" --src "$src3" --build "$TMP/ws3/build-sro" --log "$TMP/ws3/sro.log" \
	--buildtype release --ccache "$TMP/ws3/ccache-patched" --ccache-shared "$TMP/ws3/shared" \
	--ccache-shared-readonly --timeout 300
expect_grep "^probe build write $TMP/ws3/shared/$tag: Read-only file system$" "$TMP/ws3/sro.log"
[ ! -e "$TMP/ws3/shared/$tag" ] || fail "a read-only shared ccache was written"
expect_rc 0 "$PGB" --src "$src3" --build "$TMP/ws3/build-srw" --log "$TMP/ws3/srw.log" \
	--buildtype release --ccache "$TMP/ws3/ccache" --ccache-shared "$TMP/ws3/shared" --timeout 300
expect_grep "^probe build write $TMP/ws3/shared/$tag: written$" "$TMP/ws3/srw.log"
echo "t_sandbox: ok"
