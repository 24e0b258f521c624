# make demo's own code path, shortened (DEMO_SHORT=1: the release build
# mode only, the mempool benchmark only, the agent's work directory shared
# with t_e2e_dpdk so that its builds are warm): the demo series of
# patches/samples/demo/ through a public-inbox archive, the controller,
# the fake Patchwork, an SMTP sink and a real agent with the DPDK runner.
# Checked from outside the demo's own report: each series' verdict in the
# store and on the dashboard's JSON, the series page served, exactly one
# pending and one final check per run at Patchwork (what the store sent,
# nothing twice), the report mails; and the report exits non-zero, naming
# the series, when an expectation is broken.
. "$PG_TOP/tests/integration/lib.sh"
. "$PG_TOP/tests/integration/dpdk_lib.sh"

dpdk_setup
state=$TMP/demo
DEMO_SHORT=1 DEMO_EXIT=0 DEMO_STATE=$state DEMO_WORK=$work DEMO_TIMEOUT_MIN=40 DEMO_BUILD=$PG_BUILD \
	sh "$PG_TOP/scripts/demo.sh" >"$TMP/demo.out" 2>&1 &
demo=$!
stop_demo() { kill "$demo" 2>/dev/null; wait "$demo" 2>/dev/null; }
cleanup_hooks="stop_demo"
# The demo prints its report, then keeps serving (DEMO_EXIT=0).
i=0
until grep -q '^demo: the dashboard: ' "$TMP/demo.out"; do
	kill -0 "$demo" 2>/dev/null || { cat "$TMP/demo.out"; fail "the demo ended early"; }
	i=$((i + 1))
	[ $i -le 3000 ] || { tail -n 60 "$TMP/demo.out"; fail "no report from the demo"; }
	sleep 1
done
grep -q '^demo: every series got the verdict the demo expects' "$TMP/demo.out" ||
	{ cat "$TMP/demo.out"; fail "the demo's own report: not as expected"; }
url=$(sed -n 's|^demo: the dashboard: \(http://[^/ ]*\)/ .*|\1|p' "$TMP/demo.out")
[ -n "$url" ] || fail "no dashboard URL in the demo's output"
pw="http://127.0.0.1:$(sed -n 's/^listening on //p' "$state/logs/patchwork.out")"
db=$state/state/perfgate.db
q() { sqlite3 "$db" "$1" || fail "sqlite3: $1"; }
expected=$PG_TOP/patches/samples/demo/expected

# No attempt ended as an infrastructure error: a build that breaks is a
# build failure the first time (a long compiler error once overflowed the
# result's detail and came back as "out of memory", three times).
[ "$(q "SELECT count(*) FROM attempts WHERE outcome = 'infra-error'")" = 0 ] ||
	fail "attempts ended infra-error: $(q "SELECT job_id || '/' || attempt || ': ' || substr(reason, 1, 200)
		FROM attempts WHERE outcome = 'infra-error'")"
[ "$(q "SELECT count(*) FROM attempts a JOIN jobs j ON j.id = a.job_id
	WHERE j.outcome = 'patched-build-failure' AND a.attempt > 1")" = 0 ] ||
	fail "a build failure was tried more than once"

# Each series, from the store: the context verdict of each of its runs is
# one its line allows; a superseded series' run, cancelled, ends with one
# final warning that says so (its pending check was posted first, or not
# at all).
grep -v '^#' "$expected" | grep -v '^recheck ' | while read -r msgid allow label; do
	[ -n "$msgid" ] || continue
	m=$(printf '%s' "$msgid" | tr -d '<>')
	id=$(q "SELECT p.series_id FROM patches p JOIN messages g ON g.id = p.message_id
		WHERE g.msgid = '$m' UNION SELECT s.id FROM series s JOIN messages g
		ON g.id = s.cover_message_id WHERE g.msgid = '$m'")
	[ -n "$id" ] || fail "$label: no series holds $msgid"
	st=$(q "SELECT state FROM series WHERE id = $id")
	if [ "$st" = superseded ]; then
		echo "$allow" | grep -qw superseded || fail "$label: superseded, expected $allow"
		newer=$(q "SELECT id FROM series WHERE supersedes_id = $id")
		for run in $(q "SELECT id FROM runs WHERE series_id = $id"); do
			[ "$(q "SELECT state FROM runs WHERE id = $run")" = cancelled ] ||
				fail "$label: run $run of a superseded series is not cancelled"
			[ "$(q "SELECT count(*) FROM check_outbox WHERE run_id = $run AND state <> 'pending'")" = 1 ] ||
				fail "$label: run $run: not one final check"
			[ "$(q "SELECT state || ':' || description || ':' || delivery FROM check_outbox
				WHERE run_id = $run AND state <> 'pending'")" = \
			  "warning:Performance Testing NOT TESTED: superseded by series $newer:sent" ] ||
				fail "$label: run $run: its final check does not say it was superseded"
			[ "$(q "SELECT count(*) FROM check_outbox WHERE run_id = $run AND state = 'pending'
				AND delivery NOT IN ('sent', 'cancelled')")" = 0 ] ||
				fail "$label: run $run: a pending check neither sent nor cancelled"
		done
		continue
	fi
	runs=$(q "SELECT count(*) FROM runs WHERE series_id = $id")
	[ "$runs" -ge 1 ] || fail "$label: never planned"
	for run in $(q "SELECT id FROM runs WHERE series_id = $id"); do
		v=$(q "SELECT state FROM verdicts WHERE run_id = $run AND job_id IS NULL")
		echo "$allow" | tr '|' '\n' | sed 's/:.*//' | grep -qx "$v" ||
			fail "$label: run $run ended $v, expected $allow"
		# Exactly one pending and one final check per context and
		# patch of the run, each received by Patchwork once.
		[ "$(q "SELECT count(*) FROM check_outbox WHERE run_id = $run AND state = 'pending'")" = 1 ] ||
			fail "$label: run $run: not one pending check"
		[ "$(q "SELECT count(*) FROM check_outbox WHERE run_id = $run AND state <> 'pending'")" = 1 ] ||
			fail "$label: run $run: not one final check"
		# The dashboard: the series page is served, and the JSON it
		# shows has the verdict of every job.
		code=$(curl -sS -o "$TMP/page.html" -w '%{http_code}' "$url/series/$id") || fail "GET /series/$id"
		[ "$code" = 200 ] && grep -q 'src="/assets/series.js"' "$TMP/page.html" ||
			fail "$label: /series/$id is not the series page ($code)"
		for job in $(q "SELECT id FROM jobs WHERE run_id = $run AND state = 'done'"); do
			curl -sSf "$url/api/v1/jobs/$job/verdict" >"$TMP/verdict.json" || fail "verdict of job $job"
			jq_is "$TMP/verdict.json" .state "$(q "SELECT state FROM verdicts WHERE job_id = $job AND metric IS NULL")"
			jq_is "$TMP/verdict.json" .final true
		done
	done
done || exit 1
# The recheck made a second run of its series.
grep '^recheck ' "$expected" | while read -r _ msgid n; do
	m=$(printf '%s' "$msgid" | tr -d '<>')
	id=$(q "SELECT p.series_id FROM patches p JOIN messages g ON g.id = p.message_id
		WHERE g.msgid = '$m' UNION SELECT s.id FROM series s JOIN messages g
		ON g.id = s.cover_message_id WHERE g.msgid = '$m'")
	[ "$(q "SELECT count(*) FROM runs WHERE series_id = $id")" = "$n" ] || fail "recheck: not $n runs"
	[ "$(q "SELECT count(*) FROM runs WHERE series_id = $id AND reason = 'recheck'")" = 1 ] ||
		fail "recheck: no recheck run"
done || exit 1

# Patchwork got exactly what the store says it sent, each once: the same
# (patch, context, state, description) rows, as many of each (a recheck
# posts its pending and final checks on the same patch again).
curl -sSf "$pw/_fake/checks" >"$TMP/checks.json" || fail "GET /_fake/checks"
jq -r '.checks[] | [.patch, .context, .state, .description] | @tsv' "$TMP/checks.json" | sort >"$TMP/got"
sqlite3 -tabs "$db" "SELECT p.pw_patch_id, c.context, c.state, c.description FROM check_outbox c
	JOIN patches p ON p.id = c.patch_id WHERE c.delivery = 'sent'" | sort >"$TMP/sent"
[ -s "$TMP/sent" ] || fail "the store sent no check"
diff -u "$TMP/sent" "$TMP/got" || fail "Patchwork's checks differ from those the store sent"
[ "$(q "SELECT count(*) FROM check_outbox WHERE delivery NOT IN ('sent', 'cancelled')")" = 0 ] ||
	fail "checks not delivered: $(q "SELECT id, state, delivery, response FROM check_outbox WHERE delivery NOT IN ('sent', 'cancelled')")"
# The report mails: one per decided run and context, a failure among them.
n_mail=$(ls "$state/spool"/*.eml 2>/dev/null | wc -l)
[ "$n_mail" = "$(q "SELECT count(*) FROM email_outbox WHERE delivery = 'sent'")" ] && [ "$n_mail" -ge 1 ] ||
	fail "$n_mail mails in the spool"
grep -l '^Subject: |FAILURE|' "$state/spool"/*.eml >/dev/null || fail "no failure report mail"

# A broken expectation makes the report fail, naming the series.
sed 's/^\([^#r][^ ]*\) \([^ ]*\) \(.*harmless.*\)$/\1 fail:regression \3/' "$expected" >"$TMP/broken"
cmp -s "$expected" "$TMP/broken" && fail "could not break an expectation (no 'harmless' line)"
expect_rc 1 python3 "$PG_TOP/scripts/demo_watch.py" report "$url" "$pw" "$state/spool" "$TMP/broken"
expect_grep '^demo: NOT AS EXPECTED: .*harmless' "$TMP/out"

kill -TERM "$demo"
wait "$demo"
rc=$?
cleanup_hooks=""
[ "$rc" = 0 ] || { tail -n 20 "$TMP/demo.out"; fail "the demo exited $rc on SIGTERM"; }
grep -E '^(    job |    verdict: |demo: )' "$TMP/demo.out" | head -n 40
