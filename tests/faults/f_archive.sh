# The archive's history changing under the controller: the real daemon
# reads a public-inbox v2 epoch (git, one commit per mail, as
# tests/intake/gen-archive.py writes it) every second and plans jobs that
# two real agents (built-in runner) run.  Two kinds, each in its own store,
# FAULT_REPS times:
#   purge         new mails delivered, then the history rewritten without
#                 one mail already read (what public-inbox-purge does: the
#                 commits after it rebuilt), with more new mails, before
#                 the next fetch;
#   lost commits  the mirror's branch reset back 1-3 commits already read
#                 (a mirror that lost them), then the lost commits and new
#                 mails come back.
# Every pass must end with a clear outcome (the daemon logs each pass; a
# rewrite is a warning, "rewritten (purge): rescanned"), and in the end the
# store must hold the same series as a fresh store that read every mail
# ever delivered from one mbox (no series lost or duplicated), each series
# planned once, each job done once.  The rows: jobs, completed, results lost
# (with series lost), duplicated (with series duplicated and runs planned
# twice); no Patchwork here: 0 checks.
. "$PG_TOP/tests/faults/lib.sh"
. "$PG_TOP/tests/faults/faults_lib.sh"

export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
demo_tree
fl_jobs_only=1
total=$((8 + 2 * 10 * FAULT_REPS))
python3 tests/intake/gen-archive.py "$TMP/full" "$total" >/dev/null || fail "gen-archive failed"
FULL="$TMP/full/git/0.git"
git -C "$FULL" rev-list --reverse master >"$TMP/full.commits"
[ "$(wc -l <"$TMP/full.commits")" = "$total" ] || fail "gen-archive: not $total commits"

# The epoch being served: E.  delivered: how many of full's mails so far.
E="$TMP/archive/git/0.git"
delivered=0
deliver_to() {	# deliver_to N: the branch gets full's mails up to N, on its tip
	_tip=$(git -C "$E" rev-parse -q --verify master) || _tip=""
	for _i in $(seq $((delivered + 1)) "$1"); do
		_c=$(sed -n "${_i}p" "$TMP/full.commits")
		_tree=$(git -C "$FULL" rev-parse "$_c^{tree}")
		git -C "$FULL" cat-file -p "$_c" | sed '1,/^$/d' >"$TMP/msg"
		_tip=$(git -C "$E" commit-tree "$_tree" ${_tip:+-p "$_tip"} -F "$TMP/msg") ||
			fail "commit-tree"
	done
	git -C "$E" update-ref refs/heads/master "$_tip"
	delivered=$1
}
# purge_one K: rewrite the branch without its K-th commit from the root.
purge_one() {
	git -C "$E" rev-list --reverse master >"$TMP/now.commits"
	_tip=""
	_k=0
	while read -r _c; do
		_k=$((_k + 1))
		if [ "$_k" = "$1" ]; then
			echo "purged: $(git -C "$E" cat-file -p "$_c:m" | sed -n 's/^Message-ID: //p')"
			continue
		fi
		git -C "$E" cat-file -p "$_c" | sed '1,/^$/d' >"$TMP/msg"
		_tip=$(git -C "$E" commit-tree "$(git -C "$E" rev-parse "$_c^{tree}")" \
			${_tip:+-p "$_tip"} -F "$TMP/msg") || fail "commit-tree"
	done <"$TMP/now.commits"
	git -C "$E" update-ref refs/heads/master "$_tip"
}
read_all() {	# read_all: the store holds every message the branch has
	git -C "$E" rev-list master | while read -r _c; do
		git -C "$E" cat-file -p "$_c:m" | sed -n 's/^Message-ID: <\(.*\)>$/\1/p'
	done | sort >"$TMP/branch.ids"
	q "SELECT msgid FROM messages" | sort >"$TMP/store.ids"
	[ -z "$(comm -23 "$TMP/branch.ids" "$TMP/store.ids")" ]
}
pass_after() {	# pass_after LINE: an intake pass ended after line LINE of the log
	fl_has_line "$TMP/ctl.log" "$1" 'serve: intake: [0-9]+ messages'
}

phase() {	# phase KIND: a fresh archive, store, daemon and agents
	kind=$1
	rm -rf "$TMP/archive" "$TMP/state" "$TMP"/agent-* "$TMP/ctl.log"
	delivered=0
	git init -q --bare "$E" || fail "git init"
	# Every object of the full archive, under no ref (no gc runs here).
	git -C "$E" fetch -q "$FULL" master:refs/fault/full || fail "git fetch"
	git -C "$E" update-ref -d refs/fault/full
	deliver_to 8
	echo "admin-token-0123456789abcdef" >"$TMP/admin-token"
	cat >"$TMP/c.json" <<EOF
{ "db": "$db", "data_dir": "$TMP/state", "profiles_dir": "$TMP/profiles",
  "sources": [ { "name": "dev", "type": "public-inbox", "url": "$TMP/archive" } ],
  "intake": { "interval_s": 1 },
  "api": { "listen": "127.0.0.1:0", "lease_s": 4, "max_attempts": 20,
           "admin_token_file": "$TMP/admin-token" } }
EOF
	expect_rc 0 "$CTL" --config "$TMP/c.json" db migrate
	fl_start_ctl "$TMP/c.json"
	fl_agent a1
	fl_agent a2
	wait_until "the first mails read" read_all
	n=0
	for rep in $(seq "$FAULT_REPS"); do
		n=$((n + 1))
		deliver_to $((delivered + $(rand_between 3 6)))
		wait_until "the new mails read" read_all
		from=$(fl_log_lines "$TMP/ctl.log")
		case $kind in
		purge)
			k=$(rand_between 1 "$delivered")
			echo "injection $n: purge of mail $k of $delivered, and new mails: $(purge_one "$k")"
			before=$delivered
			deliver_to $((delivered + $(rand_between 1 4)))
			echo "  delivered mails $((before + 1))-$delivered after the purge"
			wait_until "the rescan after the purge" fl_has_line "$TMP/ctl.log" "$from" \
				'epoch 0 was rewritten \(purge\): rescanned'
			;;
		lost)
			r=$(rand_between 1 3)
			old=$(git -C "$E" rev-parse master)
			git -C "$E" update-ref refs/heads/master "$(git -C "$E" rev-parse "master~$r")"
			echo "injection $n: the branch reset back $r commits (of $delivered)"
			wait_until "an intake pass after the reset" pass_after "$from"
			from=$(fl_log_lines "$TMP/ctl.log")
			# The lost commits come back (the same ones), then new mails.
			git -C "$E" update-ref refs/heads/master "$old"
			before=$delivered
			deliver_to $((delivered + $(rand_between 1 4)))
			echo "  the lost commits back, then mails $((before + 1))-$delivered"
			wait_until "an intake pass after the return" pass_after "$from"
			;;
		esac
		wait_until "the new mails read" read_all
		grep -E 'error (serve|intake)' "$TMP/ctl.log" | tail -n 3
		grep -E 'warn intake' "$TMP/ctl.log" | tail -n 2
	done
	fl_wait_settled
	fl_stop_agents
	fl_kill9_ctl

	# A fresh store from every mail ever delivered, in one mbox.
	python3 tests/intake/gen-archive.py "$TMP/ref-$kind" "$delivered" --mbox "$TMP/ref.mbox" \
		>/dev/null || fail "gen-archive --mbox failed"
	sed "s|$TMP/state|$TMP/ref-$kind/state|g" "$TMP/c.json" | jq 'del(.sources)' >"$TMP/ref.json"
	expect_rc 0 "$CTL" --config "$TMP/ref.json" ingest --mbox "$TMP/ref.mbox"
	shape='.[] | [.title, .version, .total, .received, .submitter] | tostring'
	expect_rc 0 "$CTL" --config "$TMP/c.json" series list --json
	jq -r "$shape" "$TMP/out" | sort >"$TMP/ours"
	expect_rc 0 "$CTL" --config "$TMP/ref.json" series list --json
	jq -r "$shape" "$TMP/out" | sort >"$TMP/ref"
	slost=$(comm -13 "$TMP/ours" "$TMP/ref" | wc -l)
	sdup=$(comm -23 "$TMP/ours" "$TMP/ref" | wc -l)
	comm -3 "$TMP/ours" "$TMP/ref" | sed 's/^/series differ (ours | reference): /'
	twice=$(q "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM runs
		WHERE reason = 'new' GROUP BY series_id HAVING n > 1)")
	echo "$kind: $(wc -l <"$TMP/ours") series ($(wc -l <"$TMP/ref") in the reference):" \
		"$slost lost, $sdup duplicated; runs planned twice: $twice;" \
		"rewrites logged: $(grep -c 'was rewritten' "$TMP/ctl.log");" \
		"failed passes: $(grep -c 'error serve' "$TMP/ctl.log")"
	set -- $(fl_results_counts)
	echo "$kind: jobs $1, completed $2, results lost $3, duplicated $4"
	case $kind in
	purge) name="archive history rewritten (purge)" ;;
	lost) name="archive mirror loses commits" ;;
	esac
	fault_row "$name" "$n" "$1" "$2" $(($3 + slost)) $(($4 + sdup + twice)) 0 0
}

phase purge
phase lost
