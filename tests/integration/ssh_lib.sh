# Sourced by the tests of SSH-driven hosts, after lib.sh.  A real OpenSSH
# server (Debian's openssh-server) on a free loopback port, with its own
# host key, a client key made for the test, its authorized_keys and its
# own sshd_config: public keys only (no password, no keyboard-interactive,
# root only by key), this user only, no listener but 127.0.0.1:PORT.
#
#   sshd_start      start it; sets SSHD_DIR, SSHD_PORT, SSHD_PID,
#                   SSH_KEY (the client key, mode 600), SSH_KNOWN (a
#                   known_hosts file with the server's key)
#   sshd_sessions   the pids of its per-connection processes
#   sshd_stop       stop it (also a cleanup hook)

sshd_start() {
	SSHD_DIR="$TMP/sshd"
	mkdir -p "$SSHD_DIR" && chmod 700 "$SSHD_DIR"
	ssh-keygen -q -t ed25519 -N '' -C perfgate-test-host -f "$SSHD_DIR/host_key" ||
		fail "ssh-keygen (host key)"
	ssh-keygen -q -t ed25519 -N '' -C perfgate-test-client -f "$SSHD_DIR/client_key" ||
		fail "ssh-keygen (client key)"
	cp "$SSHD_DIR/client_key.pub" "$SSHD_DIR/authorized_keys"
	chmod 600 "$SSHD_DIR/authorized_keys" "$SSHD_DIR/client_key"
	SSHD_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cat >"$SSHD_DIR/sshd_config" <<EOC
Port $SSHD_PORT
ListenAddress 127.0.0.1
HostKey $SSHD_DIR/host_key
PidFile $SSHD_DIR/sshd.pid
AuthorizedKeysFile $SSHD_DIR/authorized_keys
AllowUsers $(id -un)
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
X11Forwarding no
AllowTcpForwarding no
Subsystem sftp internal-sftp
MaxStartups 50:30:100
LogLevel VERBOSE
EOC
	# Privilege separation wants its empty directory (root only).
	[ "$(id -u)" -ne 0 ] || mkdir -p /run/sshd
	/usr/sbin/sshd -t -f "$SSHD_DIR/sshd_config" 2>"$SSHD_DIR/check.err" ||
		{ cat "$SSHD_DIR/check.err" >&2; fail "sshd -t refuses the test's sshd_config"; }
	/usr/sbin/sshd -D -e -f "$SSHD_DIR/sshd_config" 2>"$SSHD_DIR/sshd.log" &
	SSHD_PID=$!
	_i=0
	until python3 -c "import socket; socket.create_connection(('127.0.0.1', $SSHD_PORT), 1)" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -lt 100 ] || { cat "$SSHD_DIR/sshd.log" >&2; fail "sshd did not listen"; }
		sleep 0.1
	done
	SSH_KEY="$SSHD_DIR/client_key"
	SSH_KNOWN="$SSHD_DIR/known_hosts"
	printf '[127.0.0.1]:%s %s\n' "$SSHD_PORT" "$(cut -d' ' -f1,2 "$SSHD_DIR/host_key.pub")" \
		>"$SSH_KNOWN"
	cleanup_hooks="$cleanup_hooks sshd_stop"
}

# The per-connection processes: sshd's children and theirs (not the
# commands the sessions run).
sshd_sessions() {
	for _p in $(pgrep -P "$SSHD_PID"); do
		echo "$_p"
		pgrep -P "$_p" -x sshd
	done
}

sshd_stop() {
	[ -n "${SSHD_PID:-}" ] || return 0
	kill "$SSHD_PID" 2>/dev/null
	pkill -9 -P "$SSHD_PID" 2>/dev/null
	wait "$SSHD_PID" 2>/dev/null
	SSHD_PID=""
	return 0
}
