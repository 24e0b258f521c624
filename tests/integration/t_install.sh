# make install: everything lands under PREFIX/DESTDIR, the installed
# configuration points at the installed profiles, and the installed binaries
# find that configuration by default (compiled-in SYSCONFDIR).
. "$PG_TOP/tests/integration/lib.sh"

P="$TMP/prefix"
B="$TMP/build"
expect_rc 0 make -s -C "$PG_TOP" install BUILD="$B" PREFIX="$P" LOCALSTATEDIR="$P/var"
for f in bin/perfgate-controller bin/perfgate-agent \
	etc/perfgate/controller.json etc/perfgate/agent.json \
	share/perfgate/profiles/dpdk.json share/perfgate/profiles/demo.json \
	share/doc/perfgate/README.md \
	lib/systemd/system/perfgate-controller.service \
	lib/systemd/system/perfgate-agent.service; do
	[ -e "$P/$f" ] || fail "make install did not install $f"
done
[ -x "$P/bin/perfgate-controller" ] || fail "controller not executable"
expect_grep "^ExecStart=$P/bin/perfgate-controller --config $P/etc/perfgate/controller.json$" \
	"$P/lib/systemd/system/perfgate-controller.service"
expect_grep "^ExecStart=$P/bin/perfgate-agent --config $P/etc/perfgate/agent.json$" \
	"$P/lib/systemd/system/perfgate-agent.service"
grep -q '@' "$P/etc/perfgate/controller.json" && fail "unsubstituted @VAR@ in controller.json"

# No --config: the installed defaults are found and valid.
expect_rc 0 "$P/bin/perfgate-controller" --check-config
expect_grep "\"config_file\":[[:space:]]*\"$P/etc/perfgate/controller.json\"" "$TMP/out"
expect_grep "\"db\":[[:space:]]*\"$P/var/perfgate/perfgate.db\"" "$TMP/out"
expect_grep '"perfgate-intel-Performance"' "$TMP/out"
expect_rc 0 "$P/bin/perfgate-agent" --check-config
expect_grep "\"spool_dir\":[[:space:]]*\"$P/var/perfgate-agent/spool\"" "$TMP/out"

# A second install keeps the operator's edited configuration.
echo '{ "log_level": "debug" }' >"$P/etc/perfgate/controller.json"
expect_rc 0 make -s -C "$PG_TOP" install BUILD="$B" PREFIX="$P" LOCALSTATEDIR="$P/var"
expect_grep '"debug"' "$P/etc/perfgate/controller.json"

# DESTDIR staging puts the same tree under DESTDIR, with the paths of the
# final location inside (same PREFIX, so the build is reused).
expect_rc 0 make -s -C "$PG_TOP" install BUILD="$B" PREFIX="$P" LOCALSTATEDIR="$P/var" \
	DESTDIR="$TMP/stage"
[ -x "$TMP/stage$P/bin/perfgate-agent" ] || fail "DESTDIR install missing the agent"
expect_grep "\"$P/share/perfgate/profiles\"" "$TMP/stage$P/etc/perfgate/controller.json"
