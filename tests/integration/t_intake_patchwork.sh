# Intake from Patchwork (the fake of tests/fake_patchwork.py, faithful to
# the API facts of the reference): completed series arrive through their
# events with Patchwork's ids remembered, out-of-order patches, a repeated
# series-completed event, a Recheck-request comment, new series in a later
# pass, an outage that fails the pass without losing anything, and the same
# mails from an archive and from Patchwork assembled once.
. "$PG_TOP/tests/integration/lib.sh"

python3 tests/fake_patchwork.py --port 0 --fixture tests/patchwork/fixture.json --quiet \
	>"$TMP/pw.out" 2>"$TMP/pw.err" &
pw=$!
stop_pw() { kill "$pw" 2>/dev/null; wait "$pw" 2>/dev/null; }
cleanup_hooks="stop_pw"
i=0
until grep -q '^listening on ' "$TMP/pw.out" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || { cat "$TMP/pw.err"; fail "fake Patchwork did not start"; }
	sleep 0.1
done
port=$(sed -n 's/^listening on //p' "$TMP/pw.out")
base="http://127.0.0.1:$port"
fake() { curl -sS -f -X POST -H 'Content-Type: application/json' -d "$2" "$base/_fake/$1"; }

src="\"sources\": [ { \"name\": \"pw\", \"type\": \"patchwork\", \"url\": \"$base/api/1.3\", \"project\": \"dpdk\" } ], \"intake\": { \"since\": \"2026-11-29T00:00:00\" }"
write_config "$TMP/c.json" "$src"
C="$CTL --config $TMP/c.json"

expect_rc 0 $C ingest
cp "$TMP/out" "$TMP/first"
# Series 1 (cover + 2), 2 (3 patches, dates out of order), 3 (single); the
# project "ci" is not ours.
expect_grep '^messages read: +7$' "$TMP/first"
expect_grep '^series completed: +3$' "$TMP/first"
expect_grep '^recheck requests: +1$' "$TMP/first"
expect_rc 0 $C series list --json
cp "$TMP/out" "$TMP/list.json"
jq_is "$TMP/list.json" 'length' 3
jq_is "$TMP/list.json" 'map(.patchwork_series) | sort | map(tostring) | join(",")' "1,2,3"
s1=$(jq -r '.[] | select(.patchwork_series == 1) | .id' "$TMP/list.json")
s2=$(jq -r '.[] | select(.patchwork_series == 2) | .id' "$TMP/list.json")
expect_rc 0 $C series show "$s1" --json
jq_is "$TMP/out" '.patches | map(.patchwork_patch | tostring) | join(",")' "101,102"
jq_is "$TMP/out" '.cover_msgid != null' true
jq_is "$TMP/out" '.rechecks[0].origin' patchwork
jq_is "$TMP/out" '.rechecks[0].contexts' perfgate-demo-Performance
expect_rc 0 $C series show "$s2" --json
jq_is "$TMP/out" '.state' complete
jq_is "$TMP/out" '.patches | map(.number | tostring) | join(",")' "1,2,3"
jq_is "$TMP/out" '.patches | map(.patchwork_patch | tostring) | join(",")' "201,202,203"

# Nothing new: every event is seen already (Patchwork's since is inclusive).
expect_rc 0 $C ingest
expect_grep '^messages read: +0$' "$TMP/out"

# A repeated series-completed event and a new series.
fake events '{"events": [{"category": "series-completed", "series": 1}]}' >/dev/null ||
	fail "could not add an event"
fake series '{"project": "dpdk", "mails": [{"file": "'"$PG_TOP"'/tests/patchwork/single/0001-lib-fix-hello.patch", "id": 501}]}' \
	>"$TMP/new.json" || fail "could not add a series"
expect_rc 0 $C ingest
expect_grep '^series created: +0$' "$TMP/out"
expect_grep '^series completed: +0$' "$TMP/out"

# An outage: the pass fails with the HTTP status, the cursor stays, and
# the next pass brings what was missed.
sed -e 's/lib: fix hello/lib: fix hello again/' -e 's/^Message-I[dD]: <\(.*\)>/Message-ID: <again.\1>/' \
	tests/patchwork/single/0001-lib-fix-hello.patch >"$TMP/again.patch"
fake series '{"project": "dpdk", "mails": [{"file": "'"$TMP"'/again.patch", "id": 601}]}' >/dev/null ||
	fail "could not add a series"
fake fail '{"count": 100, "status": 503, "path": "/api/"}' >/dev/null || fail "could not inject a fault"
expect_rc 1 $C ingest
expect_grep 'source pw: .*503' "$TMP/out"
expect_grep '1 source\(s\) failed' "$TMP/out"
fake reset '{}' >/dev/null || fail "could not reset the fake"

# The source's timeout_s bounds every request (not a fixed 30 s): an answer
# later than it fails the pass, and the error names that timeout.
slow=$(printf '%s' "$src" | sed 's/"project": "dpdk" }/"project": "dpdk", "timeout_s": 1 }/')
write_config "$TMP/slow.json" "$slow"
"$CTL" --config "$TMP/slow.json" --check-config >"$TMP/out" 2>/dev/null || fail "--check-config with timeout_s"
jq_is "$TMP/out" ".config.sources[0].timeout_s" 1
fake fail '{"count": 1, "hang": 4, "path": "/api/"}' >/dev/null || fail "could not inject a fault"
expect_rc 1 "$CTL" --config "$TMP/slow.json" ingest
expect_grep 'source pw: GET .*timeout 1000 ms' "$TMP/out"
fake reset '{}' >/dev/null || fail "could not reset the fake"

expect_rc 0 $C ingest
expect_grep '^series created: +1$' "$TMP/out"
expect_rc 0 $C series list --json
jq_is "$TMP/out" '[.[] | select(.title == "lib: fix hello again")] | length' 1

# A Depends-on written after the diff means the same from an archive as
# through Patchwork, whose mbox moves that text in front of the diff.
sed -e 's/lib: fix hello/lib: fix hello after/' -e 's/^Message-I[dD]: <\(.*\)>/Message-ID: <after.\1>/' \
	-e '/^+fix$/a\
\
Depends-on: series-1' tests/patchwork/single/0001-lib-fix-hello.patch >"$TMP/after.patch"
mkdir -p "$TMP/afterdir" && cp "$TMP/after.patch" "$TMP/afterdir/01.eml"
corpus_mbox "$TMP/afterdir" "$TMP/after.mbox"
write_config "$TMP/archive.json" "$src"
sed -i "s|$TMP/state|$TMP/archive|g" "$TMP/archive.json"
expect_rc 0 "$CTL" --config "$TMP/archive.json" ingest --mbox "$TMP/after.mbox"
expect_rc 0 "$CTL" --config "$TMP/archive.json" series list --json
sid=$(jq -r '[.[] | select(.title == "lib: fix hello after")][0].id' "$TMP/out")
expect_rc 0 "$CTL" --config "$TMP/archive.json" series show "$sid" --json
jq_is "$TMP/out" '.depends_on | map(.kind + " " + .ref) | join(",")' "series 1"
fake series '{"project": "dpdk", "mails": [{"file": "'"$TMP"'/after.patch", "id": 801}]}' >/dev/null ||
	fail "could not add a series"
expect_rc 0 $C ingest
expect_rc 0 $C series list --json
sid=$(jq -r '[.[] | select(.title == "lib: fix hello after")][0].id' "$TMP/out")
expect_rc 0 $C series show "$sid" --json
jq_is "$TMP/out" '.depends_on | map(.kind + " " + .ref) | join(",")' "series 1"

# The same mails from an archive first, then from Patchwork: assembled
# once, with Patchwork's ids attached afterwards.
write_config "$TMP/both.json" "$src"
sed -i "s|$TMP/state|$TMP/both|g" "$TMP/both.json"
cat tests/patchwork/series-a/*.patch >"$TMP/series-a.mbox"
expect_rc 0 "$CTL" --config "$TMP/both.json" ingest --mbox "$TMP/series-a.mbox"
expect_grep '^series completed: +1$' "$TMP/out"
expect_rc 0 "$CTL" --config "$TMP/both.json" ingest
expect_rc 0 "$CTL" --config "$TMP/both.json" series list --json
jq_is "$TMP/out" '[.[] | select(.title == "Add world and bang")] | length' 1
jq_is "$TMP/out" '[.[] | select(.title == "Add world and bang")][0].patchwork_series' 1
sid=$(jq -r '[.[] | select(.title == "Add world and bang")][0].id' "$TMP/out")
expect_rc 0 "$CTL" --config "$TMP/both.json" series show "$sid" --json
jq_is "$TMP/out" '.patches | map(.patchwork_patch | tostring) | join(",")' "101,102"
