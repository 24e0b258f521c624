#!/bin/sh
# A big store for the dashboard's benchmark (bench/dashboard.sh), shaped
# like a real one: the controller creates and migrates it (`db migrate`, so
# the schema and its triggers are the real ones), then one SQL transaction
# of recursive CTEs fills it.  bench/run.sh skips it (*_gen.sh):
# bench/dashboard.sh calls it.
#
# Usage: bench/dashboard_gen.sh [-n SERIES] [-c CONTROLLER] OUTDIR
#   -n SERIES      series (default 10000)
#   -c CONTROLLER  perfgate-controller (default $PG_BUILD/perfgate-controller)
#   OUTDIR         gets perfgate.db and controller.json (db, data_dir, the
#                  repository's profiles/demo.json); must not exist
#
# Per series i (times 10 minutes apart):
#   1-5 patches (1 + 7i mod 5), a cover letter when more than one, each a
#   small raw mail; every 10th series is v2 of the one before (same
#   submitter and title; that one superseded); a thread index row per
#   Message-ID
#   a run on tree dpdk-demo, branch main, at a base commit that moves every
#   10 series; jobs demo-release and demo-debugoptimized, done, outcome ok,
#   on agent lab-(1 + i mod 3), each with two attempts (a follow-up round),
#   a result per attempt with a fingerprint, 5 stage log rows per attempt
#   (rows only: no files)
#   samples: 2 jobs x 2 sides x 5 keys x 5 repetitions (3 in attempt 1,
#   2 in its follow-up) = 100, so 1,000,000 for 10,000 series; every 7th
#   series makes mempool.nocache 15 % slower
#   verdicts: per key (5 per job) from the real medians, per job, per
#   context; checks: pending and final per patch, sent
#   history: the base median per job and key on its agent, so each of the
#   3 agents x 2 modes x 5 keys has N * 2 * 5 / 30 points (3,333 for
#   10,000 series); from the middle commit on mempool.nocache is 7 %
#   slower everywhere, and that step is a change point per (agent, mode)
# Then PRAGMA foreign_key_check and integrity_check must be clean.
set -eu
n=10000
ctl="${PG_BUILD:-build}/perfgate-controller"
while getopts n:c: opt; do
	case $opt in
	n) n=$OPTARG ;;
	c) ctl=$OPTARG ;;
	*) echo "usage: $0 [-n SERIES] [-c CONTROLLER] OUTDIR" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: $0 [-n SERIES] [-c CONTROLLER] OUTDIR" >&2; exit 2; }
out=$1
case $n in
''|*[!0-9]*) echo "dashboard_gen: -n $n: not a number" >&2; exit 2 ;;
esac
[ "$n" -ge 20 ] || { echo "dashboard_gen: -n $n: at least 20 series" >&2; exit 2; }
[ -x "$ctl" ] || { echo "dashboard_gen: no $ctl (make all)" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "dashboard_gen: sqlite3 is needed (make deps)" >&2; exit 1; }
[ ! -e "$out" ] || { echo "dashboard_gen: $out exists" >&2; exit 1; }
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out/state"
out=$(cd "$out" && pwd)
db="$out/perfgate.db"
cat >"$out/controller.json" <<EOF
{ "db": "$db", "data_dir": "$out/state", "profiles_dir": "$top/profiles", "profiles": ["demo.json"] }
EOF
"$ctl" --config "$out/controller.json" --log-level warn db migrate

# Times: series i arrives at T0 + 600 i.
t0=1790000000
sqlite3 -bail "$db" <<EOF
PRAGMA foreign_keys = ON;
PRAGMA synchronous = OFF;
BEGIN;

CREATE TEMP TABLE keys (k INTEGER PRIMARY KEY, benchmark TEXT, metric TEXT, unit TEXT, base REAL,
	gated INTEGER);
INSERT INTO keys VALUES
	(1, 'mempool_perf_demo', 'mempool.cache.cores1.keep128.get32.put32.const0', 'obj/s', 4.26e9, 1),
	(2, 'mempool_perf_demo', 'mempool.nocache.cores1.keep128.get32.put32.const0', 'obj/s', 1.28e9, 1),
	(3, 'testpmd_io_demo', 'fwd.rx_pps', 'pps', 6.92e7, 1),
	(4, 'testpmd_io_demo', 'fwd.tx_pps', 'pps', 6.92e7, 0),
	(5, 'testpmd_io_demo', 'fwd.cycles_per_pkt', 'cycles', 36.8, 0);
CREATE TEMP TABLE modes (m INTEGER PRIMARY KEY, name TEXT, buildtype TEXT, speed REAL);
INSERT INTO modes VALUES (0, 'demo-release', 'release', 1.0), (1, 'demo-debugoptimized', 'debugoptimized', 0.6);
CREATE TEMP TABLE comps (c INTEGER PRIMARY KEY, name TEXT, file TEXT);
INSERT INTO comps VALUES (0, 'mempool', 'lib/mempool/rte_mempool.c'), (1, 'ring', 'lib/ring/rte_ring.c'),
	(2, 'net/ixgbe', 'drivers/net/ixgbe/ixgbe_rxtx.c'), (3, 'eal', 'lib/eal/common/eal_common_memory.c'),
	(4, 'mbuf', 'lib/mbuf/rte_mbuf.c'), (5, 'net/i40e', 'drivers/net/i40e/i40e_rxtx.c'),
	(6, 'hash', 'lib/hash/rte_cuckoo_hash.c'), (7, 'mempool/ring', 'drivers/mempool/ring/rte_mempool_ring.c');
CREATE TEMP TABLE nums (k INTEGER PRIMARY KEY);
INSERT INTO nums VALUES (0), (1), (2), (3), (4), (5);

-- The shape of each series; b is the series whose title and submitter it
-- shares (itself, or the v1 before a v2).
CREATE TEMP TABLE shape (i INTEGER PRIMARY KEY, b INTEGER, np INTEGER, nm INTEGER, first_msg INTEGER,
	version INTEGER, comp INTEGER, dev INTEGER, t INTEGER, cix INTEGER, agent INTEGER, regress INTEGER);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $n),
s AS (SELECT i, CASE WHEN i % 10 = 0 THEN i - 1 ELSE i END AS b, 1 + (i * 7) % 5 AS np FROM c)
INSERT INTO shape SELECT i, b, np, np + (np > 1),
	sum(np + (np > 1)) OVER (ORDER BY i) - (np + (np > 1)) + 1,
	CASE WHEN b = i THEN 1 ELSE 2 END, b % 8, b % 97, $t0 + 600 * i, i / 10, 1 + i % 3, i % 7 = 0
	FROM s;
CREATE TEMP TABLE commits (cix INTEGER PRIMARY KEY, oid TEXT);
INSERT INTO commits SELECT DISTINCT cix, printf('%08x%08x%024x', (cix * 2654435761) % 4294967296,
	(cix * 40503 + 12345) % 4294967296, cix) FROM shape;

INSERT INTO sources (id, name, kind, location, project, created_at)
	VALUES (1, 'bench', 'mbox', '/dev/null', 'dpdk', $t0);

-- Messages: k = 0 the cover, 1..np the patches.
CREATE TEMP TABLE msgs (id INTEGER PRIMARY KEY, i INTEGER, k INTEGER, msgid TEXT, subject TEXT);
INSERT INTO msgs SELECT s.first_msg + k - (s.np = 1), s.i, k,
	'bench-' || s.i || '-' || k || '@example.org',
	CASE WHEN s.np = 1 THEN '[PATCH' || CASE WHEN s.version > 1 THEN ' v2' ELSE '' END || '] '
	     ELSE '[PATCH' || CASE WHEN s.version > 1 THEN ' v2' ELSE '' END || ' ' || k || '/' || s.np || '] ' END ||
	co.name || ': change ' || s.b || CASE WHEN k = 0 OR s.np = 1 THEN '' ELSE ' (part ' || k || ')' END
	FROM shape s JOIN nums ON k <= s.np AND (k > 0 OR s.np > 1) JOIN comps co ON co.c = s.comp;
INSERT INTO messages (id, source_id, position, msgid, in_reply_to, subject, from_name, from_addr, sent_at,
		kind, raw_size, raw, state, received_at)
	SELECT id, 1, CAST(id AS TEXT), msgid,
		CASE WHEN m.k > 1 OR (m.k = 1 AND s.np > 1) THEN 'bench-' || m.i || '-0@example.org' END,
		subject, 'Developer ' || s.dev, 'dev' || s.dev || '@example.org', s.t, CASE WHEN m.k = 0 THEN 'cover' ELSE 'patch' END,
		0, CAST('From: Developer ' || s.dev || ' <dev' || s.dev || '@example.org>' || char(10) ||
			'Message-ID: <' || msgid || '>' || char(10) || 'Subject: ' || subject || char(10) ||
			'Date: ' || strftime('%Y-%m-%dT%H:%M:%SZ', s.t, 'unixepoch') || char(10) || char(10) ||
			'This changes ' || co.name || ' for the benchmark store (series ' || s.i || ').' || char(10) ||
			char(10) || 'Signed-off-by: Developer ' || s.dev || ' <dev' || s.dev || '@example.org>' ||
			char(10) || '---' || char(10) || ' ' || co.file || ' | 2 +-' || char(10) || char(10) ||
			'diff --git a/' || co.file || ' b/' || co.file || char(10) || '--- a/' || co.file || char(10) ||
			'+++ b/' || co.file || char(10) || '@@ -1 +1 @@' || char(10) || '-old ' || m.k || char(10) ||
			'+new ' || m.k || char(10) AS BLOB),
		'accepted', s.t + m.k
	FROM msgs m JOIN shape s ON s.i = m.i JOIN comps co ON co.c = s.comp;
UPDATE messages SET raw_size = length(raw);

INSERT INTO series (id, project, root_msgid, version, total, title, tags, submitter_name, submitter_addr,
		state, supersedes_id, cover_message_id, received_at, completed_at, series_key, is_rfc)
	SELECT s.i, 'dpdk', 'bench-' || s.i || '-' || CASE WHEN s.np > 1 THEN 0 ELSE 1 END || '@example.org',
		s.version, s.np, co.name || ': change ' || s.b,
		'', 'Developer ' || s.dev, 'dev' || s.dev || '@example.org',
		CASE WHEN (s.i + 1) % 10 = 0 AND s.i < $n THEN 'superseded' ELSE 'complete' END,
		CASE WHEN s.b <> s.i THEN s.b END, CASE WHEN s.np > 1 THEN s.first_msg END, s.t, s.t + 60,
		lower(co.name || ': change ' || s.b), s.i % 50 = 0
	FROM shape s JOIN comps co ON co.c = s.comp ORDER BY s.i;
INSERT INTO series_refs (series_id, msgid) SELECT i, msgid FROM msgs;
INSERT INTO patches (series_id, number, message_id, subject, files)
	SELECT m.i, m.k, m.id, m.subject, co.file FROM msgs m JOIN shape s ON s.i = m.i
	JOIN comps co ON co.c = s.comp WHERE m.k > 0 ORDER BY m.i, m.k;

INSERT INTO agents (id, name, token_hash, labels, facts, created_at, last_seen)
	SELECT k, 'lab-' || k, lower(hex(randomblob(32))), '{"pool":"demo","arch":"x86_64"}',
		'{"hostname":"lab-' || k || '","vendor":"intel","cores":32,"numa_nodes":2,"kernel":"6.1.0","agent_version":"0.1.0"}',
		$t0, $t0 + 600 * $n + 900
	FROM nums WHERE k BETWEEN 1 AND 3;

INSERT INTO runs (id, series_id, reason, tree, branch, base_commit, state, created_at, finished_at)
	SELECT s.i, s.i, 'new', 'dpdk-demo', 'main', c.oid, 'done', s.t + 60, s.t + 60 + 1200
	FROM shape s JOIN commits c ON c.cix = s.cix;

-- Jobs 2i - 1 (release) and 2i (debugoptimized).
INSERT INTO jobs (id, run_id, context, host_class, build_mode, spec, priority, state, attempt, agent_id,
		outcome, outcome_detail, created_at, started_at, finished_at)
	SELECT 2 * s.i - 1 + md.m, s.i, 'perfgate-demo-Performance', 'demo', md.name,
		json_object('format', 1, 'run', s.i, 'reason', 'new', 'context', 'perfgate-demo-Performance',
			'host_class', 'demo', 'build_mode', md.name,
			'tree', json_object('name', 'dpdk-demo', 'url', '/var/cache/perfgate/dpdk.git', 'branch', 'main',
				'base_commit', c.oid, 'base_source', 'branch', 'version', '22.11.11'),
			'series', json_object('id', s.i, 'title', 'series ' || s.i, 'version', s.version, 'patches', s.np),
			'depends_on', json_array(),
			'build', json_object('buildtype', md.buildtype, 'meson_options', json_object('default_library', 'static',
				'enable_apps', 'test-pmd', 'enable_drivers', 'net/null,net/ring,mempool/ring,mempool/stack',
				'tests', 'true', 'platform', 'native')),
			'host', json_object('labels', json_object('pool', 'demo'), 'lcores', '0-1', 'memory_mb', 1024,
				'hugepages', json('false')),
			'benchmarks', json_array(
				json_object('name', 'mempool_perf_demo', 'program', 'app/test/dpdk-test',
					'parser', 'mempool_perf', 'gate', json_array('mempool.nocache.cores1.*', 'mempool.cache.cores1.*'),
					'timeout_s', 120, 'mode', 'subset'),
				json_object('name', 'testpmd_io_demo', 'program', 'app/dpdk-testpmd', 'parser', 'testpmd',
					'gate', json_array('fwd.rx_pps'), 'duration_s', 5, 'timeout_s', 60)),
			'max_repetitions', 5, 'threshold_pct', 5, 'alpha', 0.1, 'noise_limit_pct', 5, 'notes', json_array(),
			'round', 1, 'repetition_base', 3, 'repetitions', 2, 'pin_agent', 'lab-' || s.agent),
		0, 'done', 2, s.agent, 'ok', '3 + 2 repetitions of 2 benchmarks, base and patched interleaved',
		s.t + 60, s.t + 120, s.t + 1200
	FROM shape s JOIN modes md JOIN commits c ON c.cix = s.cix ORDER BY s.i, md.m;

CREATE TEMP TABLE att (job_id INTEGER, attempt INTEGER, i INTEGER, m INTEGER, t INTEGER,
	PRIMARY KEY (job_id, attempt));
INSERT INTO att SELECT 2 * s.i - 1 + md.m, a.k, s.i, md.m, s.t + 120 + 540 * (a.k - 1)
	FROM shape s JOIN modes md JOIN nums a ON a.k IN (1, 2);
INSERT INTO attempts (job_id, attempt, agent_id, started_at, ended_at, outcome)
	SELECT a.job_id, a.attempt, s.agent, a.t, a.t + 520, 'ok' FROM att a JOIN shape s ON s.i = a.i
	ORDER BY a.job_id, a.attempt;
INSERT INTO results (job_id, attempt, outcome, detail, fingerprint, digest, received_at)
	SELECT a.job_id, a.attempt, 'ok', CASE a.attempt WHEN 1 THEN '3' ELSE '2' END ||
			' repetitions of 2 benchmarks, base and patched interleaved: ' ||
			CASE a.attempt WHEN 1 THEN 30 ELSE 20 END || ' samples',
		json_object('hostname', 'lab-' || s.agent, 'vendor', 'intel', 'model', 'Intel(R) Xeon(R) Gold 6338',
			'microcode', '0xd0003a5', 'arch', 'x86_64', 'cores', 32, 'numa_nodes', 2, 'kernel', '6.1.0-27-amd64',
			'memory_kb', 263842128, 'agent_version', '0.1.0', 'runner', 'dpdk',
			'host_check', json_object('governor', 'performance', 'turbo', 'off', 'smt', 'off',
				'isolated_cpus', '2-31', 'nohz_full', '2-31', 'load', json_array(0.12, 0.2, 0.3),
				'busy_share', 0, 'hugepages', json_object('total', 1024, 'free', 1000, 'page_kb', 2048),
				'compiler', 'cc (Debian 12.2.0-14+deb12u1) 12.2.0', 'busy', json('false')),
			'dpdk_version', '22.11.11', 'build_mode', md.name,
			'build', json_object('buildtype', md.buildtype),
			'builds', json_object('base', json_object('duration_ms', 41000, 'steps', 120),
				'patched', json_object('duration_ms', 9000, 'steps', 12)),
			'harness', 'subset', 'sandbox', json('true'), 'warnings', json_array(),
			'timings', json_object('total_ms', 520000, 'bench_wall_ms', 460000),
			'apply', json_object('applied', s.np, 'exact', s.np, 'offset', 0, 'three_way', 0)),
		lower(hex(randomblob(32))), a.t + 520
	FROM att a JOIN shape s ON s.i = a.i JOIN modes md ON md.m = a.m ORDER BY a.job_id, a.attempt;

-- Samples: repetitions 0-2 in attempt 1, 3-4 in attempt 2; about 1 %
-- noise; the step at the middle commit and the slow series.
INSERT INTO samples (job_id, attempt, side, benchmark, metric, repetition, value, unit)
	SELECT a.job_id, a.attempt, sd.side, ky.benchmark, ky.metric, r.k,
		ky.base * md.speed * (1 + (abs(random()) % 2001 - 1000) / 100000.0) *
		CASE WHEN ky.k = 2 AND s.cix >= $n / 20 THEN 0.93 ELSE 1 END *
		CASE WHEN ky.k = 2 AND sd.side = 'patched' AND s.regress THEN 0.85 ELSE 1 END,
		ky.unit
	FROM att a JOIN shape s ON s.i = a.i JOIN modes md ON md.m = a.m
	JOIN (SELECT 'base' AS side UNION ALL SELECT 'patched') sd JOIN keys ky
	JOIN nums r ON (a.attempt = 1 AND r.k BETWEEN 0 AND 2) OR (a.attempt = 2 AND r.k BETWEEN 3 AND 4)
	ORDER BY a.job_id, a.attempt, sd.side, ky.k, r.k;

INSERT INTO logs (job_id, attempt, stage, path, bytes, updated_at)
	SELECT a.job_id, a.attempt, st.stage, 'logs/' || a.job_id || '/' || a.attempt || '/' || st.stage || '.log',
		st.bytes, a.t + 520
	FROM att a JOIN (SELECT 'prepare' AS stage, 191 AS bytes UNION ALL SELECT 'apply', 370
		UNION ALL SELECT 'build-base', 18000 UNION ALL SELECT 'build-patched', 2400
		UNION ALL SELECT 'bench', 1128) st ORDER BY a.job_id, a.attempt;

-- Verdicts from the medians of the samples (5 per side: the third).
CREATE TEMP TABLE med (job_id INTEGER, benchmark TEXT, metric TEXT, side TEXT, value REAL,
	PRIMARY KEY (job_id, benchmark, metric, side));
INSERT INTO med SELECT job_id, benchmark, metric, side, value FROM (
	SELECT job_id, benchmark, metric, side, value,
		row_number() OVER (PARTITION BY job_id, benchmark, metric, side ORDER BY value) AS rn
	FROM samples) WHERE rn = 3;
CREATE TEMP TABLE kv (job_id INTEGER, run_id INTEGER, benchmark TEXT, metric TEXT, gated INTEGER,
	base REAL, patched REAL, effect REAL, state TEXT);
INSERT INTO kv SELECT b.job_id, (b.job_id + 1) / 2, b.benchmark, b.metric, ky.gated, b.value, p.value,
	100 * (p.value / b.value - 1),
	CASE WHEN ky.gated AND 100 * (p.value / b.value - 1) < -5 THEN 'regression'
	     WHEN ky.gated AND 100 * (p.value / b.value - 1) > 5 THEN 'improvement' ELSE 'pass' END
	FROM med b JOIN med p ON p.job_id = b.job_id AND p.benchmark = b.benchmark AND p.metric = b.metric
		AND p.side = 'patched'
	JOIN keys ky ON ky.metric = b.metric WHERE b.side = 'base';
INSERT INTO verdicts (run_id, context, job_id, benchmark, metric, base_median, patched_median, n_base,
		n_patched, effect, p, state, description, created_at)
	SELECT kv.run_id, 'perfgate-demo-Performance', kv.job_id, kv.benchmark, kv.metric, kv.base, kv.patched,
		5, 5, kv.effect, CASE WHEN kv.state = 'pass' THEN 0.4375 ELSE 0.0625 END, kv.state,
		printf('%+.1f%% %s', kv.effect, CASE WHEN kv.state = 'pass' THEN 'within 5%' ELSE 'beyond 5% and p=0.062 < 0.1' END),
		s.t + 1260
	FROM kv JOIN shape s ON s.i = kv.run_id ORDER BY kv.job_id, kv.benchmark, kv.metric;
INSERT INTO verdicts (run_id, context, job_id, state, description, p, n_base, n_patched, created_at)
	SELECT kv.run_id, 'perfgate-demo-Performance', kv.job_id,
		CASE WHEN max(kv.state = 'regression') THEN 'fail' ELSE 'success' END,
		CASE WHEN max(kv.state = 'regression') THEN 'mempool.nocache.cores1.keep128.get32.put32.const0: ' ||
			printf('%+.1f%%', min(kv.effect)) || ' (p=0.062) on ' || md.name ELSE 'no regression' END,
		0.0625, 5, 5, s.t + 1260
	FROM kv JOIN shape s ON s.i = kv.run_id JOIN modes md ON md.m = (kv.job_id + 1) % 2
	GROUP BY kv.job_id ORDER BY kv.job_id;
INSERT INTO verdicts (run_id, context, state, description, p, created_at)
	SELECT kv.run_id, 'perfgate-demo-Performance',
		CASE WHEN max(kv.state = 'regression') THEN 'fail' ELSE 'success' END,
		CASE WHEN max(kv.state = 'regression') THEN 'Performance Testing FAIL: mempool.nocache.cores1.keep128.get32.put32.const0: ' ||
			printf('%+.1f%%', min(kv.effect)) ELSE 'Performance Testing PASS' END,
		0.0625, s.t + 1260
	FROM kv JOIN shape s ON s.i = kv.run_id GROUP BY kv.run_id ORDER BY kv.run_id;

-- Checks: pending at planning, the final state at the verdict; all sent.
INSERT INTO check_outbox (series_id, run_id, patch_id, context, state, description, target_url, delivery,
		attempts, next_try, sent_at, response_code, created_at)
	SELECT p.series_id, p.series_id, p.id, 'perfgate-demo-Performance', st.state, st.description,
		'https://perfgate.example.org/series/' || p.series_id, 'sent', 1, st.t, st.t + 1, 201, st.t
	FROM patches p JOIN (
		SELECT v.run_id, 'pending' AS state, 'Performance Testing pending' AS description, s.t + 60 AS t
			FROM verdicts v JOIN shape s ON s.i = v.run_id WHERE v.job_id IS NULL
		UNION ALL
		SELECT v.run_id, v.state, v.description, s.t + 1260 FROM verdicts v JOIN shape s ON s.i = v.run_id
			WHERE v.job_id IS NULL) st ON st.run_id = p.series_id
	ORDER BY p.series_id, p.number, st.t;

-- History: the base median of each job and key on its agent.
INSERT INTO history (host, tree, branch, build_mode, benchmark, metric, commit_oid, value, unit, samples,
		job_id, measured_at)
	SELECT 'lab-' || s.agent, 'dpdk-demo', 'main', j.build_mode, m.benchmark, m.metric, c.oid, m.value, ky.unit,
		5, m.job_id, j.finished_at
	FROM med m JOIN jobs j ON j.id = m.job_id JOIN shape s ON s.i = j.run_id JOIN commits c ON c.cix = s.cix
	JOIN keys ky ON ky.metric = m.metric WHERE m.side = 'base' ORDER BY j.finished_at, j.id, m.metric;
INSERT INTO change_points (host, tree, branch, build_mode, benchmark, metric, commit_before, commit_after,
		effect, p, state, detected_at)
	SELECT 'lab-' || a.k, 'dpdk-demo', 'main', md.name, 'mempool_perf_demo',
		'mempool.nocache.cores1.keep128.get32.put32.const0', cb.oid, ca.oid, -7.0, 0.004,
		CASE WHEN a.k = 1 THEN 'confirmed' ELSE 'suspected' END, $t0 + 600 * $n / 2
	FROM nums a JOIN modes md JOIN commits cb ON cb.cix = $n / 20 - 1 JOIN commits ca ON ca.cix = $n / 20
	WHERE a.k BETWEEN 1 AND 3;
COMMIT;
EOF

# Clean, or not a benchmark of a real store.
fk=$(sqlite3 "$db" "PRAGMA foreign_key_check")
[ -z "$fk" ] || { echo "dashboard_gen: foreign_key_check: $fk" | head -5 >&2; exit 1; }
ic=$(sqlite3 "$db" "PRAGMA integrity_check")
[ "$ic" = ok ] || { echo "dashboard_gen: integrity_check: $ic" | head -5 >&2; exit 1; }
"$ctl" --config "$out/controller.json" --log-level warn db check >/dev/null ||
	{ echo "dashboard_gen: perfgate-controller db check failed" >&2; exit 1; }
