/* SPDX-License-Identifier: MIT */
/*
 * The store's schema as a list of migration steps (see store.h).  Step N
 * takes a store from user_version N-1 to N; store_open() runs each missing
 * step in its own transaction.  A step that has shipped is never edited:
 * stores in the field were made by it, and tests/fixtures/store-v1.sql
 * records what step 1 made.
 *
 * Conventions of the SQL below:
 * - Plain SQL (no STRICT tables, no WITHOUT ROWID, no JSON functions in
 *   constraints) so that a server database could take SQLite's place.
 * - `x_id` columns are row ids of table `x`; `msgid` columns are Message-ID
 *   header values without the angle brackets.
 * - Times are INTEGER seconds since the Unix epoch, UTC.
 * - Enumerated states are TEXT with a CHECK, so a typo in a module's SQL
 *   fails loudly instead of inventing a state.
 * - Rows that others point to are kept (ON DELETE RESTRICT) when losing
 *   them would lose history (messages); rows that only make sense with
 *   their parent go with it (ON DELETE CASCADE); optional links are
 *   cleared (ON DELETE SET NULL).  Every child column of a foreign key is
 *   indexed so that deleting a parent does not scan the child table.
 */
#include "store.h"

/*
 * Version 1: intake, planning, scheduling, results, verdicts and the
 * outboxes.
 *
 * sources, source_cursors, source_events: where messages come from.  A
 *   cursor is per (source, scope): for a public-inbox archive the scope is
 *   an epoch ("git/3.git", "" for v1) and the position the last commit
 *   read; for Patchwork the scope is an event category and the position
 *   the naive-UTC "since" of the next poll.  Patchwork events seen are kept
 *   by id, since pages overlap at equal timestamps.  Intake moves cursors
 *   in the transaction that stores what it read.
 * messages: every message read, exactly once per (source, position) and
 *   per (source, Message-ID).  A message that cannot be parsed is kept as
 *   rejected with its reason; its parsed fields may then be NULL, and so
 *   may its Message-ID (SQLite lets NULLs repeat in a UNIQUE column).
 * series, series_deps, patches: the series model.  A series is complete
 *   when its `total` patches are there; `supersedes_id` links a new
 *   version to the old.  Depends-on trailers are rows of series_deps, the
 *   prerequisite resolved to a series when it is known.
 * recheck_requests: "Recheck-request:" replies and API rechecks, once per
 *   (series, requesting Message-ID).
 * runs, jobs: a run is a series tested against a recorded base commit; its
 *   jobs are one per (context, host class, build mode).  A partial UNIQUE
 *   index enforces that an agent holds at most one leased or running job,
 *   which also makes it the agent's current job (no copy of it is kept in
 *   agents that could disagree).
 * attempts, results, samples, logs: one attempt per lease of a job; at
 *   most one result per (job, attempt), so that a retried upload is
 *   recognised (by its digest) and acknowledged instead of counted twice;
 *   samples belong to the result that brought them.  Log files live on
 *   disk; their rows index them (deleting a row does not delete a file).
 * verdicts: per key (job_id, benchmark and metric set), per job (metric
 *   NULL) and per context (job_id NULL).
 * agents: only a hash of each token is stored; hosts driven over SSH have
 *   no token.
 * check_outbox, email_outbox: what must be delivered, exactly once.  A
 *   check is unique per (run, patch, context, state); a report mail per
 *   (run, context) and carries its own Message-ID so that a resend after a
 *   crash is the same mail.
 */
static const char migration_1[] =
	"PRAGMA application_id = 0x50474154;\n"
	"\n"
	"CREATE TABLE sources (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\tname TEXT NOT NULL UNIQUE,\n"
	"\tkind TEXT NOT NULL CHECK (kind IN ('public-inbox', 'patchwork', 'mbox')),\n"
	"\tlocation TEXT NOT NULL,\n"
	"\tproject TEXT NOT NULL,\n"
	"\tenabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),\n"
	"\tcreated_at INTEGER NOT NULL\n"
	");\n"
	"\n"
	"CREATE TABLE source_cursors (\n"
	"\tsource_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,\n"
	"\tscope TEXT NOT NULL,\n"
	"\tposition TEXT NOT NULL,\n"
	"\tupdated_at INTEGER NOT NULL,\n"
	"\tPRIMARY KEY (source_id, scope)\n"
	");\n"
	"\n"
	"CREATE TABLE source_events (\n"
	"\tsource_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,\n"
	"\tevent_id INTEGER NOT NULL,\n"
	"\tcategory TEXT NOT NULL,\n"
	"\tseen_at INTEGER NOT NULL,\n"
	"\tPRIMARY KEY (source_id, event_id)\n"
	");\n"
	"\n"
	"CREATE TABLE messages (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\tsource_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE RESTRICT,\n"
	"\tposition TEXT NOT NULL,\n"
	"\tmsgid TEXT,\n"
	"\tin_reply_to TEXT,\n"
	"\trefs TEXT,\n"
	"\tsubject TEXT,\n"
	"\tfrom_name TEXT,\n"
	"\tfrom_addr TEXT,\n"
	"\tsent_at INTEGER,\n"
	"\tkind TEXT CHECK (kind IN ('patch', 'cover', 'reply', 'report', 'other')),\n"
	"\traw_size INTEGER NOT NULL CHECK (raw_size >= 0),\n"
	"\traw BLOB,\n"
	"\traw_path TEXT,\n"
	"\tstate TEXT NOT NULL CHECK (state IN ('accepted', 'rejected')),\n"
	"\treject_reason TEXT,\n"
	"\treceived_at INTEGER NOT NULL,\n"
	"\tCHECK (raw IS NOT NULL OR raw_path IS NOT NULL),\n"
	"\tCHECK ((state = 'rejected') = (reject_reason IS NOT NULL)),\n"
	"\tUNIQUE (source_id, position),\n"
	"\tUNIQUE (source_id, msgid)\n"
	");\n"
	"CREATE INDEX messages_msgid ON messages(msgid);\n"
	"CREATE INDEX messages_in_reply_to ON messages(in_reply_to);\n"
	"\n"
	"CREATE TABLE series (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\tproject TEXT NOT NULL,\n"
	"\troot_msgid TEXT NOT NULL,\n"
	"\tversion INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),\n"
	"\ttotal INTEGER NOT NULL CHECK (total >= 1),\n"
	"\ttitle TEXT NOT NULL,\n"
	"\ttags TEXT NOT NULL DEFAULT '',\n"
	"\tsubmitter_name TEXT,\n"
	"\tsubmitter_addr TEXT NOT NULL,\n"
	"\tstate TEXT NOT NULL DEFAULT 'incomplete'\n"
	"\t\tCHECK (state IN ('incomplete', 'complete', 'superseded')),\n"
	"\tsupersedes_id INTEGER REFERENCES series(id) ON DELETE SET NULL,\n"
	"\tcover_message_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,\n"
	"\tpw_series_id INTEGER,\n"
	"\treceived_at INTEGER NOT NULL,\n"
	"\tcompleted_at INTEGER,\n"
	"\tCHECK (state <> 'complete' OR completed_at IS NOT NULL),\n"
	"\tCHECK (supersedes_id <> id)\n"
	");\n"
	"CREATE INDEX series_state ON series(state, received_at);\n"
	"CREATE INDEX series_root ON series(project, root_msgid);\n"
	"CREATE UNIQUE INDEX series_pw ON series(project, pw_series_id)\n"
	"\tWHERE pw_series_id IS NOT NULL;\n"
	"CREATE INDEX series_supersedes ON series(supersedes_id);\n"
	"CREATE INDEX series_cover ON series(cover_message_id);\n"
	"\n"
	"CREATE TABLE series_deps (\n"
	"\tseries_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,\n"
	"\tkind TEXT NOT NULL CHECK (kind IN ('series', 'patch', 'msgid')),\n"
	"\tref TEXT NOT NULL,\n"
	"\tdep_series_id INTEGER REFERENCES series(id) ON DELETE SET NULL,\n"
	"\tPRIMARY KEY (series_id, kind, ref)\n"
	");\n"
	"CREATE INDEX series_deps_dep ON series_deps(dep_series_id);\n"
	"\n"
	"CREATE TABLE patches (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\tseries_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,\n"
	"\tnumber INTEGER NOT NULL CHECK (number >= 1),\n"
	"\tmessage_id INTEGER NOT NULL UNIQUE REFERENCES messages(id) ON DELETE RESTRICT,\n"
	"\tpw_patch_id INTEGER,\n"
	"\tsubject TEXT NOT NULL,\n"
	"\tbase_commit TEXT,\n"
	"\tUNIQUE (series_id, number)\n"
	");\n"
	"CREATE INDEX patches_pw ON patches(pw_patch_id);\n"
	"\n"
	"CREATE TABLE recheck_requests (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\tseries_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,\n"
	"\torigin TEXT NOT NULL CHECK (origin IN ('mail', 'patchwork', 'api')),\n"
	"\tmsgid TEXT,\n"
	"\trequester TEXT,\n"
	"\tcontexts TEXT NOT NULL,\n"
	"\trebase_branch TEXT,\n"
	"\tstate TEXT NOT NULL DEFAULT 'pending'\n"
	"\t\tCHECK (state IN ('pending', 'planned', 'ignored')),\n"
	"\treason TEXT,\n"
	"\tcreated_at INTEGER NOT NULL,\n"
	"\tUNIQUE (series_id, msgid)\n"
	");\n"
	"CREATE INDEX recheck_requests_state ON recheck_requests(state, created_at);\n"
	"\n"
	"CREATE TABLE agents (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\tname TEXT NOT NULL UNIQUE,\n"
	"\ttransport TEXT NOT NULL DEFAULT 'http' CHECK (transport IN ('http', 'ssh')),\n"
	"\ttoken_hash TEXT UNIQUE,\n"
	"\tlabels TEXT NOT NULL DEFAULT '{}',\n"
	"\tfacts TEXT NOT NULL DEFAULT '{}',\n"
	"\tenabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),\n"
	"\tcreated_at INTEGER NOT NULL,\n"
	"\tlast_seen INTEGER,\n"
	"\tCHECK (transport = 'ssh' OR token_hash IS NOT NULL)\n"
	");\n"
	"\n"
	"CREATE TABLE runs (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\tseries_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,\n"
	"\treason TEXT NOT NULL CHECK (reason IN ('new', 'recheck', 'manual')),\n"
	"\trecheck_id INTEGER REFERENCES recheck_requests(id) ON DELETE SET NULL,\n"
	"\ttree TEXT NOT NULL,\n"
	"\tbranch TEXT NOT NULL,\n"
	"\tbase_commit TEXT NOT NULL,\n"
	"\tstate TEXT NOT NULL DEFAULT 'planned'\n"
	"\t\tCHECK (state IN ('planned', 'running', 'done', 'cancelled')),\n"
	"\tcreated_at INTEGER NOT NULL,\n"
	"\tfinished_at INTEGER\n"
	");\n"
	"CREATE INDEX runs_series ON runs(series_id, created_at);\n"
	"CREATE INDEX runs_recheck ON runs(recheck_id);\n"
	"\n"
	"CREATE TABLE jobs (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\trun_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
	"\tcontext TEXT NOT NULL,\n"
	"\thost_class TEXT NOT NULL,\n"
	"\tbuild_mode TEXT NOT NULL,\n"
	"\tspec TEXT NOT NULL DEFAULT '{}',\n"
	"\tpriority INTEGER NOT NULL DEFAULT 0,\n"
	"\tstate TEXT NOT NULL DEFAULT 'queued'\n"
	"\t\tCHECK (state IN ('queued', 'leased', 'running', 'done', 'cancelled', 'infra-error')),\n"
	"\tattempt INTEGER NOT NULL DEFAULT 0 CHECK (attempt >= 0),\n"
	"\tagent_id INTEGER REFERENCES agents(id) ON DELETE SET NULL,\n"
	"\tlease_expires INTEGER,\n"
	"\toutcome TEXT CHECK (outcome IN ('ok', 'apply-failure', 'base-build-failure',\n"
	"\t\t'patched-build-failure', 'bench-failure', 'infra-error')),\n"
	"\toutcome_detail TEXT,\n"
	"\tcreated_at INTEGER NOT NULL,\n"
	"\tstarted_at INTEGER,\n"
	"\tfinished_at INTEGER,\n"
	"\tCHECK (state NOT IN ('leased', 'running') OR (attempt >= 1 AND lease_expires IS NOT NULL)),\n"
	"\tCHECK (state NOT IN ('done', 'infra-error') OR outcome IS NOT NULL),\n"
	"\tUNIQUE (run_id, context, host_class, build_mode)\n"
	");\n"
	"CREATE INDEX jobs_queued ON jobs(created_at, id) WHERE state = 'queued';\n"
	"CREATE INDEX jobs_state ON jobs(state);\n"
	"CREATE UNIQUE INDEX jobs_one_per_agent ON jobs(agent_id)\n"
	"\tWHERE state IN ('leased', 'running');\n"
	"CREATE INDEX jobs_agent ON jobs(agent_id);\n"
	"\n"
	"CREATE TABLE attempts (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\tjob_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,\n"
	"\tattempt INTEGER NOT NULL CHECK (attempt >= 1),\n"
	"\tagent_id INTEGER REFERENCES agents(id) ON DELETE SET NULL,\n"
	"\tstarted_at INTEGER NOT NULL,\n"
	"\tended_at INTEGER,\n"
	"\toutcome TEXT CHECK (outcome IN ('ok', 'apply-failure', 'base-build-failure',\n"
	"\t\t'patched-build-failure', 'bench-failure', 'infra-error', 'expired', 'cancelled')),\n"
	"\treason TEXT,\n"
	"\tUNIQUE (job_id, attempt)\n"
	");\n"
	"CREATE INDEX attempts_agent ON attempts(agent_id);\n"
	"\n"
	"CREATE TABLE results (\n"
	"\tjob_id INTEGER NOT NULL,\n"
	"\tattempt INTEGER NOT NULL,\n"
	"\toutcome TEXT NOT NULL CHECK (outcome IN ('ok', 'apply-failure', 'base-build-failure',\n"
	"\t\t'patched-build-failure', 'bench-failure', 'infra-error')),\n"
	"\tdetail TEXT,\n"
	"\tfingerprint TEXT NOT NULL DEFAULT '{}',\n"
	"\tdigest TEXT NOT NULL,\n"
	"\treceived_at INTEGER NOT NULL,\n"
	"\tPRIMARY KEY (job_id, attempt),\n"
	"\tFOREIGN KEY (job_id, attempt) REFERENCES attempts(job_id, attempt) ON DELETE CASCADE\n"
	");\n"
	"\n"
	"CREATE TABLE samples (\n"
	"\tjob_id INTEGER NOT NULL,\n"
	"\tattempt INTEGER NOT NULL,\n"
	"\tside TEXT NOT NULL CHECK (side IN ('base', 'patched')),\n"
	"\tbenchmark TEXT NOT NULL,\n"
	"\tmetric TEXT NOT NULL,\n"
	"\trepetition INTEGER NOT NULL CHECK (repetition >= 0),\n"
	"\tvalue REAL NOT NULL,\n"
	"\tunit TEXT NOT NULL DEFAULT '',\n"
	"\tPRIMARY KEY (job_id, attempt, side, benchmark, metric, repetition),\n"
	"\tFOREIGN KEY (job_id, attempt) REFERENCES results(job_id, attempt) ON DELETE CASCADE\n"
	");\n"
	"\n"
	"CREATE TABLE logs (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\tjob_id INTEGER NOT NULL,\n"
	"\tattempt INTEGER NOT NULL,\n"
	"\tstage TEXT NOT NULL,\n"
	"\tpath TEXT NOT NULL UNIQUE,\n"
	"\tbytes INTEGER NOT NULL DEFAULT 0 CHECK (bytes >= 0),\n"
	"\tupdated_at INTEGER NOT NULL,\n"
	"\tUNIQUE (job_id, attempt, stage),\n"
	"\tFOREIGN KEY (job_id, attempt) REFERENCES attempts(job_id, attempt) ON DELETE CASCADE\n"
	");\n"
	"\n"
	"CREATE TABLE verdicts (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\trun_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
	"\tcontext TEXT NOT NULL,\n"
	"\tjob_id INTEGER REFERENCES jobs(id) ON DELETE CASCADE,\n"
	"\tbenchmark TEXT,\n"
	"\tmetric TEXT,\n"
	"\tbase_median REAL,\n"
	"\tpatched_median REAL,\n"
	"\tn_base INTEGER,\n"
	"\tn_patched INTEGER,\n"
	"\teffect REAL,\n"
	"\tp REAL CHECK (p >= 0 AND p <= 1),\n"
	"\tstate TEXT NOT NULL,\n"
	"\tdescription TEXT NOT NULL DEFAULT '',\n"
	"\tcreated_at INTEGER NOT NULL,\n"
	"\tCHECK ((metric IS NULL AND benchmark IS NULL\n"
	"\t\t\tAND state IN ('success', 'warning', 'fail'))\n"
	"\t\tOR (metric IS NOT NULL AND benchmark IS NOT NULL AND job_id IS NOT NULL\n"
	"\t\t\tAND state IN ('pass', 'improvement', 'regression', 'inconclusive', 'noisy')))\n"
	");\n"
	"CREATE UNIQUE INDEX verdicts_one ON verdicts(run_id, context, coalesce(job_id, 0),\n"
	"\tcoalesce(benchmark, ''), coalesce(metric, ''));\n"
	"CREATE INDEX verdicts_job ON verdicts(job_id);\n"
	"\n"
	"CREATE TABLE check_outbox (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\tseries_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,\n"
	"\trun_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
	"\tpatch_id INTEGER NOT NULL REFERENCES patches(id) ON DELETE CASCADE,\n"
	"\tcontext TEXT NOT NULL CHECK (context <> '' AND context NOT LIKE '%/%'),\n"
	"\tstate TEXT NOT NULL CHECK (state IN ('pending', 'success', 'warning', 'fail')),\n"
	"\tdescription TEXT NOT NULL DEFAULT '',\n"
	"\ttarget_url TEXT,\n"
	"\tdelivery TEXT NOT NULL DEFAULT 'queued'\n"
	"\t\tCHECK (delivery IN ('queued', 'sent', 'failed', 'cancelled')),\n"
	"\tattempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),\n"
	"\tnext_try INTEGER NOT NULL,\n"
	"\tsent_at INTEGER,\n"
	"\tresponse_code INTEGER,\n"
	"\tresponse TEXT,\n"
	"\tcreated_at INTEGER NOT NULL,\n"
	"\tCHECK (delivery <> 'sent' OR sent_at IS NOT NULL),\n"
	"\tUNIQUE (run_id, patch_id, context, state)\n"
	");\n"
	"CREATE INDEX check_outbox_due ON check_outbox(next_try) WHERE delivery = 'queued';\n"
	"CREATE INDEX check_outbox_series ON check_outbox(series_id, context);\n"
	"CREATE INDEX check_outbox_patch ON check_outbox(patch_id);\n"
	"\n"
	"CREATE TABLE email_outbox (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\tseries_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,\n"
	"\trun_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
	"\tcontext TEXT NOT NULL,\n"
	"\tmsgid TEXT NOT NULL UNIQUE,\n"
	"\tin_reply_to TEXT,\n"
	"\tto_addrs TEXT NOT NULL,\n"
	"\tcc_addrs TEXT NOT NULL DEFAULT '',\n"
	"\tsubject TEXT NOT NULL,\n"
	"\tbody TEXT NOT NULL,\n"
	"\tdelivery TEXT NOT NULL DEFAULT 'queued'\n"
	"\t\tCHECK (delivery IN ('queued', 'sent', 'failed', 'cancelled')),\n"
	"\tattempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),\n"
	"\tnext_try INTEGER NOT NULL,\n"
	"\tsent_at INTEGER,\n"
	"\tresponse TEXT,\n"
	"\tcreated_at INTEGER NOT NULL,\n"
	"\tCHECK (delivery <> 'sent' OR sent_at IS NOT NULL),\n"
	"\tUNIQUE (run_id, context)\n"
	");\n"
	"CREATE INDEX email_outbox_due ON email_outbox(next_try) WHERE delivery = 'queued';\n"
	"CREATE INDEX email_outbox_series ON email_outbox(series_id);\n"
	"\n"
	"PRAGMA user_version = 1;\n";

/*
 * Version 2: trends and progress.
 *
 * jobs gain the stage and progress an agent reports in its heartbeats (for
 * the dashboard's queue), and an index on lease expiry for the scheduler's
 * sweep of expired leases.
 *
 * history holds, per (host, tree, branch, build mode, benchmark, metric),
 * the base side's median at each base commit measured: the dashboard's
 * trends and the change-point detection read it, and it outlives the
 * samples it came from (job_id is cleared when a job is pruned).
 * change_points records suspected main-branch regressions with their
 * commit range.
 *
 * The step backfills history from the results a version-1 store already
 * holds: the median of the base side's repetitions of every finished job
 * whose result was "ok" (window functions: SQLite has no median()).
 */
static const char migration_2[] =
	"ALTER TABLE jobs ADD COLUMN stage TEXT;\n"
	"ALTER TABLE jobs ADD COLUMN progress INTEGER CHECK (progress >= 0 AND progress <= 100);\n"
	"ALTER TABLE jobs ADD COLUMN stage_at INTEGER;\n"
	"CREATE INDEX jobs_lease_expiry ON jobs(lease_expires)\n"
	"\tWHERE state IN ('leased', 'running');\n"
	"\n"
	"CREATE TABLE history (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\thost TEXT NOT NULL,\n"
	"\ttree TEXT NOT NULL,\n"
	"\tbranch TEXT NOT NULL,\n"
	"\tbuild_mode TEXT NOT NULL,\n"
	"\tbenchmark TEXT NOT NULL,\n"
	"\tmetric TEXT NOT NULL,\n"
	"\tcommit_oid TEXT NOT NULL,\n"
	"\tvalue REAL NOT NULL,\n"
	"\tunit TEXT NOT NULL DEFAULT '',\n"
	"\tsamples INTEGER NOT NULL CHECK (samples >= 1),\n"
	"\tjob_id INTEGER REFERENCES jobs(id) ON DELETE SET NULL,\n"
	"\tmeasured_at INTEGER NOT NULL\n"
	");\n"
	"CREATE INDEX history_trend ON history(host, tree, branch, build_mode, benchmark, metric,\n"
	"\tmeasured_at);\n"
	"CREATE UNIQUE INDEX history_job ON history(job_id, benchmark, metric);\n"
	"\n"
	"CREATE TABLE change_points (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\thost TEXT NOT NULL,\n"
	"\ttree TEXT NOT NULL,\n"
	"\tbranch TEXT NOT NULL,\n"
	"\tbuild_mode TEXT NOT NULL,\n"
	"\tbenchmark TEXT NOT NULL,\n"
	"\tmetric TEXT NOT NULL,\n"
	"\tcommit_before TEXT NOT NULL,\n"
	"\tcommit_after TEXT NOT NULL,\n"
	"\teffect REAL NOT NULL,\n"
	"\tp REAL CHECK (p >= 0 AND p <= 1),\n"
	"\tstate TEXT NOT NULL DEFAULT 'suspected'\n"
	"\t\tCHECK (state IN ('suspected', 'confirmed', 'dismissed')),\n"
	"\tdetected_at INTEGER NOT NULL,\n"
	"\tUNIQUE (host, tree, branch, build_mode, benchmark, metric, commit_after)\n"
	");\n"
	"\n"
	"WITH base AS (\n"
	"\tSELECT job_id, attempt, benchmark, metric, unit, value,\n"
	"\t\trow_number() OVER (PARTITION BY job_id, attempt, benchmark, metric\n"
	"\t\t\tORDER BY value) AS rn,\n"
	"\t\tcount(*) OVER (PARTITION BY job_id, attempt, benchmark, metric) AS n\n"
	"\tFROM samples WHERE side = 'base'\n"
	"), med AS (\n"
	"\tSELECT job_id, attempt, benchmark, metric, max(unit) AS unit,\n"
	"\t\tavg(value) AS value, max(n) AS n\n"
	"\tFROM base WHERE rn IN ((n + 1) / 2, (n + 2) / 2)\n"
	"\tGROUP BY job_id, attempt, benchmark, metric\n"
	")\n"
	"INSERT INTO history (host, tree, branch, build_mode, benchmark, metric, commit_oid,\n"
	"\t\tvalue, unit, samples, job_id, measured_at)\n"
	"\tSELECT ag.name, r.tree, r.branch, j.build_mode, m.benchmark, m.metric,\n"
	"\t\tr.base_commit, m.value, m.unit, m.n, j.id, res.received_at\n"
	"\tFROM med m\n"
	"\tJOIN jobs j ON j.id = m.job_id AND j.attempt = m.attempt AND j.state = 'done'\n"
	"\tJOIN runs r ON r.id = j.run_id\n"
	"\tJOIN results res ON res.job_id = m.job_id AND res.attempt = m.attempt\n"
	"\t\tAND res.outcome = 'ok'\n"
	"\tJOIN attempts a ON a.job_id = m.job_id AND a.attempt = m.attempt\n"
	"\tJOIN agents ag ON ag.id = a.agent_id\n"
	"\tORDER BY res.received_at, j.id, m.benchmark, m.metric;\n"
	"\n"
	"PRAGMA user_version = 2;\n";

/*
 * Version 3: what series assembly needs.  series_refs is the thread index
 * (Patchwork's SeriesReference): every Message-ID that belongs to a series
 * (its patches, its cover, and what they reference), so that siblings
 * arriving in any order find their series.  series_key is the title
 * normalised for matching one version of a series with the next; stale_at
 * marks an incomplete series reported as never completed; base_commit is
 * the cover letter's base-commit: trailer; patches.files
 * lists the paths a patch touches, one per line, for tree selection.
 */
static const char migration_3[] =
	"CREATE TABLE series_refs (\n"
	"\tseries_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,\n"
	"\tmsgid TEXT NOT NULL,\n"
	"\tPRIMARY KEY (series_id, msgid)\n"
	");\n"
	"CREATE INDEX series_refs_msgid ON series_refs(msgid);\n"
	"ALTER TABLE series ADD COLUMN series_key TEXT NOT NULL DEFAULT '';\n"
	"ALTER TABLE series ADD COLUMN is_rfc INTEGER NOT NULL DEFAULT 0 CHECK (is_rfc IN (0, 1));\n"
	"ALTER TABLE series ADD COLUMN stale_at INTEGER;\n"
	"ALTER TABLE series ADD COLUMN base_commit TEXT;\n"
	"ALTER TABLE patches ADD COLUMN files TEXT NOT NULL DEFAULT '';\n"
	"CREATE INDEX series_lineage ON series(project, submitter_addr, series_key);\n"
	"\n"
	"UPDATE series SET series_key = lower(title);\n"
	"INSERT OR IGNORE INTO series_refs (series_id, msgid)\n"
	"\tSELECT id, root_msgid FROM series;\n"
	"INSERT OR IGNORE INTO series_refs (series_id, msgid)\n"
	"\tSELECT p.series_id, m.msgid FROM patches p JOIN messages m ON m.id = p.message_id\n"
	"\tWHERE m.msgid IS NOT NULL;\n"
	"INSERT OR IGNORE INTO series_refs (series_id, msgid)\n"
	"\tSELECT s.id, m.msgid FROM series s JOIN messages m ON m.id = s.cover_message_id\n"
	"\tWHERE m.msgid IS NOT NULL;\n"
	"\n"
	"PRAGMA user_version = 3;\n";

/*
 * Step 4: the lease order without a scan of the queue.  The fairness rule
 * (sched.h) ranks a queued job by its run's "served" count, the sum of
 * jobs.attempt over the jobs of its run and host class, and by a boost
 * for rechecks and one-patch series; computed per candidate, every lease
 * read every queued job and sorted them (milliseconds for a thousand).
 * jobs.served and jobs.boost keep both in the row, maintained by triggers
 * whoever writes (the scheduler, the planner, an operator's sqlite3), and
 * jobs_pick orders the queued jobs as the rule does, so that a lease reads
 * the first few rows of an index.
 */
static const char migration_4[] =
	"ALTER TABLE jobs ADD COLUMN served INTEGER NOT NULL DEFAULT 0;\n"
	"ALTER TABLE jobs ADD COLUMN boost INTEGER NOT NULL DEFAULT 0 CHECK (boost IN (0, 1));\n"
	"UPDATE jobs SET\n"
	"\tserved = (SELECT sum(k.attempt) FROM jobs k\n"
	"\t\tWHERE k.run_id = jobs.run_id AND k.host_class = jobs.host_class),\n"
	"\tboost = coalesce((SELECT r.reason = 'recheck' OR s.total = 1\n"
	"\t\tFROM runs r JOIN series s ON s.id = r.series_id WHERE r.id = jobs.run_id), 0);\n"
	"CREATE INDEX jobs_pick ON jobs(priority DESC, served, boost DESC, created_at, id)\n"
	"\tWHERE state = 'queued';\n"
	"\n"
	"CREATE TRIGGER jobs_served_insert AFTER INSERT ON jobs BEGIN\n"
	"\tUPDATE jobs SET\n"
	"\t\tserved = (SELECT sum(k.attempt) FROM jobs k\n"
	"\t\t\tWHERE k.run_id = NEW.run_id AND k.host_class = NEW.host_class),\n"
	"\t\tboost = coalesce((SELECT r.reason = 'recheck' OR s.total = 1\n"
	"\t\t\tFROM runs r JOIN series s ON s.id = r.series_id WHERE r.id = NEW.run_id), 0)\n"
	"\tWHERE id = NEW.id;\n"
	"\tUPDATE jobs SET served = served + NEW.attempt\n"
	"\tWHERE NEW.attempt != 0 AND run_id = NEW.run_id AND host_class = NEW.host_class\n"
	"\t\tAND id != NEW.id;\n"
	"END;\n"
	"CREATE TRIGGER jobs_served_update AFTER UPDATE OF attempt, run_id, host_class ON jobs\n"
	"WHEN NEW.attempt IS NOT OLD.attempt OR NEW.run_id IS NOT OLD.run_id\n"
	"\tOR NEW.host_class IS NOT OLD.host_class BEGIN\n"
	"\tUPDATE jobs SET served = served - OLD.attempt\n"
	"\tWHERE run_id = OLD.run_id AND host_class = OLD.host_class AND id != OLD.id;\n"
	"\tUPDATE jobs SET served = served + NEW.attempt\n"
	"\tWHERE run_id = NEW.run_id AND host_class = NEW.host_class AND id != NEW.id;\n"
	"\tUPDATE jobs SET served = (SELECT sum(k.attempt) FROM jobs k\n"
	"\t\tWHERE k.run_id = NEW.run_id AND k.host_class = NEW.host_class)\n"
	"\tWHERE id = NEW.id;\n"
	"END;\n"
	"CREATE TRIGGER jobs_served_delete AFTER DELETE ON jobs BEGIN\n"
	"\tUPDATE jobs SET served = served - OLD.attempt\n"
	"\tWHERE run_id = OLD.run_id AND host_class = OLD.host_class;\n"
	"END;\n"
	"CREATE TRIGGER runs_boost AFTER UPDATE OF reason, series_id ON runs BEGIN\n"
	"\tUPDATE jobs SET boost = coalesce((SELECT NEW.reason = 'recheck' OR s.total = 1\n"
	"\t\tFROM series s WHERE s.id = NEW.series_id), 0)\n"
	"\tWHERE run_id = NEW.id;\n"
	"END;\n"
	"CREATE TRIGGER series_boost AFTER UPDATE OF total ON series BEGIN\n"
	"\tUPDATE jobs SET boost = coalesce((SELECT r.reason = 'recheck' OR NEW.total = 1\n"
	"\t\tFROM runs r WHERE r.id = jobs.run_id), 0)\n"
	"\tWHERE run_id IN (SELECT id FROM runs WHERE series_id = NEW.id);\n"
	"END;\n"
	"\n"
	"PRAGMA user_version = 4;\n";

/*
 * Step 5: follow-up rounds of a job (controller/verdict_pass.h).  A job
 * whose verdict needs more repetitions runs again on the agent that ran it
 * (same host, same build directories): jobs.pin_agent_id names that agent
 * while the job waits, and the scheduler leases a pinned job to that agent
 * only.  The pin is cleared when the job's verdict is final.  RESTRICT:
 * an agent that a follow-up waits for cannot vanish under it.  runs_open
 * lets the verdict pass, every few seconds, look at the runs still open
 * rather than at every job ever finished.
 */
static const char migration_5[] =
	"ALTER TABLE jobs ADD COLUMN pin_agent_id INTEGER\n"
	"\tREFERENCES agents(id) ON DELETE RESTRICT;\n"
	"CREATE INDEX jobs_pin ON jobs(pin_agent_id);\n"
	"CREATE INDEX runs_open ON runs(id) WHERE state IN ('planned', 'running');\n"
	"\n"
	"PRAGMA user_version = 5;\n";

/*
 * Step 6: baseline runs (issue 17, DESIGN.md section 2.9).  A baseline run
 * measures one commit of a branch by itself, no series: runs.series_id
 * becomes NULL for reason 'baseline' and only then (a CHECK), and
 * runs.trigger says why it was planned ('head' when the branch head moved,
 * 'interval' when the last one got old, 'manual' from the CLI or API,
 * 'bisect' inside a change point's range).  SQLite cannot relax NOT NULL
 * in place: runs is rebuilt (store.c runs every step with foreign keys
 * off and checks them before it commits), and the triggers that read runs
 * are made again around it, a baseline job boosted like no patch job.
 * runs_baseline finds the latest baseline of a (tree, branch) at once.
 */
static const char migration_6[] =
	"DROP TRIGGER jobs_served_insert;\n"
	"DROP TRIGGER series_boost;\n"
	"CREATE TABLE runs_v6 (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\tseries_id INTEGER REFERENCES series(id) ON DELETE CASCADE,\n"
	"\treason TEXT NOT NULL CHECK (reason IN ('new', 'recheck', 'manual', 'baseline')),\n"
	"\trecheck_id INTEGER REFERENCES recheck_requests(id) ON DELETE SET NULL,\n"
	"\ttree TEXT NOT NULL,\n"
	"\tbranch TEXT NOT NULL,\n"
	"\tbase_commit TEXT NOT NULL,\n"
	"\tstate TEXT NOT NULL DEFAULT 'planned'\n"
	"\t\tCHECK (state IN ('planned', 'running', 'done', 'cancelled')),\n"
	"\tcreated_at INTEGER NOT NULL,\n"
	"\tfinished_at INTEGER,\n"
	"\ttrigger TEXT CHECK (trigger IN ('head', 'interval', 'manual', 'bisect')),\n"
	"\tCHECK ((reason = 'baseline') = (series_id IS NULL)),\n"
	"\tCHECK ((reason = 'baseline') = (trigger IS NOT NULL))\n"
	");\n"
	"INSERT INTO runs_v6 (id, series_id, reason, recheck_id, tree, branch, base_commit, state,\n"
	"\t\tcreated_at, finished_at)\n"
	"\tSELECT id, series_id, reason, recheck_id, tree, branch, base_commit, state,\n"
	"\t\tcreated_at, finished_at FROM runs;\n"
	"DROP TABLE runs;\n"
	"ALTER TABLE runs_v6 RENAME TO runs;\n"
	"CREATE INDEX runs_series ON runs(series_id, created_at);\n"
	"CREATE INDEX runs_recheck ON runs(recheck_id);\n"
	"CREATE INDEX runs_open ON runs(id) WHERE state IN ('planned', 'running');\n"
	"CREATE INDEX runs_baseline ON runs(tree, branch, created_at) WHERE reason = 'baseline';\n"
	"\n"
	"CREATE TRIGGER jobs_served_insert AFTER INSERT ON jobs BEGIN\n"
	"\tUPDATE jobs SET\n"
	"\t\tserved = (SELECT sum(k.attempt) FROM jobs k\n"
	"\t\t\tWHERE k.run_id = NEW.run_id AND k.host_class = NEW.host_class),\n"
	"\t\tboost = coalesce((SELECT r.reason = 'recheck' OR s.total = 1\n"
	"\t\t\tFROM runs r JOIN series s ON s.id = r.series_id WHERE r.id = NEW.run_id), 0)\n"
	"\tWHERE id = NEW.id;\n"
	"\tUPDATE jobs SET served = served + NEW.attempt\n"
	"\tWHERE NEW.attempt != 0 AND run_id = NEW.run_id AND host_class = NEW.host_class\n"
	"\t\tAND id != NEW.id;\n"
	"END;\n"
	"CREATE TRIGGER runs_boost AFTER UPDATE OF reason, series_id ON runs BEGIN\n"
	"\tUPDATE jobs SET boost = coalesce((SELECT NEW.reason = 'recheck' OR s.total = 1\n"
	"\t\tFROM series s WHERE s.id = NEW.series_id), 0)\n"
	"\tWHERE run_id = NEW.id;\n"
	"END;\n"
	"CREATE TRIGGER series_boost AFTER UPDATE OF total ON series BEGIN\n"
	"\tUPDATE jobs SET boost = coalesce((SELECT r.reason = 'recheck' OR NEW.total = 1\n"
	"\t\tFROM runs r WHERE r.id = jobs.run_id), 0)\n"
	"\tWHERE run_id IN (SELECT id FROM runs WHERE series_id = NEW.id);\n"
	"END;\n"
	"\n"
	"PRAGMA user_version = 6;\n";

/*
 * Step 7: change points bisected (controller/changes.h).  A change point
 * found between two measured commits more than one apart is narrowed by
 * baselines inside its range until it names one commit: commit_before
 * and commit_after are the range as it stands (first_before and
 * first_after as first found), bisect_run_id the baseline that waits,
 * located_commit the commit once found (state 'confirmed'), `why` what
 * ended it, alerted_at when it was told; context is the one whose job
 * measured the step (its baselines use that context's build).
 */
static const char migration_7[] =
	"ALTER TABLE change_points ADD COLUMN context TEXT;\n"
	"ALTER TABLE change_points ADD COLUMN first_before TEXT;\n"
	"ALTER TABLE change_points ADD COLUMN first_after TEXT;\n"
	"ALTER TABLE change_points ADD COLUMN located_commit TEXT;\n"
	"ALTER TABLE change_points ADD COLUMN bisect_runs INTEGER NOT NULL DEFAULT 0\n"
	"\tCHECK (bisect_runs >= 0);\n"
	"ALTER TABLE change_points ADD COLUMN bisect_run_id INTEGER\n"
	"\tREFERENCES runs(id) ON DELETE SET NULL;\n"
	"ALTER TABLE change_points ADD COLUMN why TEXT;\n"
	"ALTER TABLE change_points ADD COLUMN updated_at INTEGER;\n"
	"ALTER TABLE change_points ADD COLUMN alerted_at INTEGER;\n"
	"UPDATE change_points SET first_before = commit_before, first_after = commit_after,\n"
	"\tupdated_at = detected_at;\n"
	"CREATE INDEX change_points_open ON change_points(id) WHERE state = 'suspected';\n"
	"CREATE INDEX change_points_bisect_run ON change_points(bisect_run_id);\n"
	"\n"
	"PRAGMA user_version = 7;\n";

/*
 * Step 8: alerts and host drift (issue 17).  A located main-branch
 * regression is told by mail to an address of the configuration: such a
 * mail has no series and no run, so email_outbox is rebuilt with both
 * NULL for a change point's alert (change_point_id, one mail per change
 * point) and only then.  host_drift (controller/drift.h): a host whose
 * baselines of one commit moved beyond its noise, over time ('time') or
 * against the other hosts of its class ('class'); at most one open row
 * per (host, build mode, key, kind); state 'drained' keeps the host from
 * leasing until an operator clears it.  history_commit finds the baselines
 * of one commit (drift, and a patch's base side against them) without a
 * scan of the whole history.
 */
static const char migration_8[] =
	"CREATE TABLE email_outbox_v8 (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\tseries_id INTEGER REFERENCES series(id) ON DELETE CASCADE,\n"
	"\trun_id INTEGER REFERENCES runs(id) ON DELETE CASCADE,\n"
	"\tcontext TEXT NOT NULL,\n"
	"\tmsgid TEXT NOT NULL UNIQUE,\n"
	"\tin_reply_to TEXT,\n"
	"\tto_addrs TEXT NOT NULL,\n"
	"\tcc_addrs TEXT NOT NULL DEFAULT '',\n"
	"\tsubject TEXT NOT NULL,\n"
	"\tbody TEXT NOT NULL,\n"
	"\tdelivery TEXT NOT NULL DEFAULT 'queued'\n"
	"\t\tCHECK (delivery IN ('queued', 'sent', 'failed', 'cancelled')),\n"
	"\tattempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),\n"
	"\tnext_try INTEGER NOT NULL,\n"
	"\tsent_at INTEGER,\n"
	"\tresponse TEXT,\n"
	"\tcreated_at INTEGER NOT NULL,\n"
	"\tchange_point_id INTEGER UNIQUE REFERENCES change_points(id) ON DELETE CASCADE,\n"
	"\tCHECK (delivery <> 'sent' OR sent_at IS NOT NULL),\n"
	"\tCHECK ((change_point_id IS NULL) = (series_id IS NOT NULL AND run_id IS NOT NULL)),\n"
	"\tUNIQUE (run_id, context)\n"
	");\n"
	"INSERT INTO email_outbox_v8 (id, series_id, run_id, context, msgid, in_reply_to, to_addrs,\n"
	"\t\tcc_addrs, subject, body, delivery, attempts, next_try, sent_at, response, created_at)\n"
	"\tSELECT id, series_id, run_id, context, msgid, in_reply_to, to_addrs, cc_addrs, subject,\n"
	"\t\tbody, delivery, attempts, next_try, sent_at, response, created_at FROM email_outbox;\n"
	"DROP TABLE email_outbox;\n"
	"ALTER TABLE email_outbox_v8 RENAME TO email_outbox;\n"
	"CREATE INDEX email_outbox_due ON email_outbox(next_try) WHERE delivery = 'queued';\n"
	"CREATE INDEX email_outbox_series ON email_outbox(series_id);\n"
	"\n"
	"CREATE TABLE host_drift (\n"
	"\tid INTEGER PRIMARY KEY,\n"
	"\thost TEXT NOT NULL,\n"
	"\tbuild_mode TEXT NOT NULL,\n"
	"\tbenchmark TEXT NOT NULL,\n"
	"\tmetric TEXT NOT NULL,\n"
	"\tkind TEXT NOT NULL CHECK (kind IN ('time', 'class')),\n"
	"\tcommit_oid TEXT NOT NULL,\n"
	"\tchange_pct REAL NOT NULL,\n"
	"\tp REAL CHECK (p >= 0 AND p <= 1),\n"
	"\tnoise_pct REAL,\n"
	"\twhy TEXT NOT NULL,\n"
	"\tjob_id INTEGER REFERENCES jobs(id) ON DELETE SET NULL,\n"
	"\tstate TEXT NOT NULL CHECK (state IN ('flagged', 'drained', 'cleared')),\n"
	"\tflagged_at INTEGER NOT NULL,\n"
	"\tcleared_at INTEGER,\n"
	"\tcleared_by TEXT,\n"
	"\tCHECK ((state = 'cleared') = (cleared_at IS NOT NULL))\n"
	");\n"
	"CREATE UNIQUE INDEX host_drift_open ON host_drift(host, build_mode, benchmark, metric, kind)\n"
	"\tWHERE state <> 'cleared';\n"
	"CREATE INDEX host_drift_job ON host_drift(job_id);\n"
	"CREATE INDEX history_commit ON history(tree, commit_oid, build_mode, benchmark, metric);\n"
	"\n"
	"PRAGMA user_version = 8;\n";

/*
 * Step 9: hosts driven over SSH (controller/ssh_disp.h).  Their agent rows
 * get a token hash too: the dispatcher leases through the controller's own
 * API with a token it makes at each start and keeps in memory.  ssh_hosts
 * (owner controller/ssh_state.c) is what the dispatcher last knew of each
 * such host, for `agent list`, the API, /metrics and the dashboard: its
 * connection's state, the job it runs, the host key's fingerprint, the
 * agent version found there, and the last error.
 */
static const char migration_9[] =
	"CREATE TABLE ssh_hosts (\n"
	"\tagent_id INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,\n"
	"\ttarget TEXT NOT NULL,\n"
	"\tstate TEXT NOT NULL CHECK (state IN ('disconnected', 'connecting', 'idle',\n"
	"\t\t'running', 'error')),\n"
	"\tjob_id INTEGER REFERENCES jobs(id) ON DELETE SET NULL,\n"
	"\tattempt INTEGER,\n"
	"\thost_key TEXT,\n"
	"\tagent_version TEXT,\n"
	"\tlast_error TEXT,\n"
	"\tlast_error_at INTEGER,\n"
	"\tconnected_at INTEGER,\n"
	"\tconnects INTEGER NOT NULL DEFAULT 0,\n"
	"\tfailures INTEGER NOT NULL DEFAULT 0,\n"
	"\tupdated_at INTEGER NOT NULL\n"
	");\n"
	"\n"
	"PRAGMA user_version = 9;\n";

/*
 * Step 10: whether a queued check's last try may have created it on
 * Patchwork (its answer lost: a timeout or a broken connection after the
 * POST went out, or a 5xx).  Only then does the next try look it up
 * first; a try refused at connect cannot have posted anything.  Rows tried
 * before this step are taken as unsure: the old rule looked them up.
 */
static const char migration_10[] =
	"ALTER TABLE check_outbox ADD COLUMN maybe_posted INTEGER NOT NULL DEFAULT 0\n"
	"\tCHECK (maybe_posted IN (0, 1));\n"
	"UPDATE check_outbox SET maybe_posted = 1 WHERE attempts > 0;\n"
	"\n"
	"PRAGMA user_version = 10;\n";

/*
 * Step 11: an agent's attempts in job order.  A host's noise is read from
 * its latest baseline jobs (hostnoise.c) for every verdict; with
 * attempts(agent_id) alone SQLite found them by walking every finished
 * job of the store from the newest back (jobs_state), a cost that grew
 * with the store's whole history: 14,000 steps of its virtual machine per
 * verdict in a store of 8,000 jobs, against 73 with this index.  It
 * replaces attempts(agent_id), which it covers as its first column.
 */
static const char migration_11[] =
	"CREATE INDEX attempts_agent_job ON attempts(agent_id, job_id);\n"
	"DROP INDEX attempts_agent;\n"
	"\n"
	"PRAGMA user_version = 11;\n";

const struct store_migration store_migrations[STORE_SCHEMA_VERSION] = {
	{ 1, "intake, planning, scheduling, results, verdicts, outboxes", migration_1 },
	{ 2, "trends (history, change points), job stage and progress", migration_2 },
	{ 3, "series assembly (thread index, lineage key, stale series, files)", migration_3 },
	{ 4, "lease order kept in the job rows (served, boost, jobs_pick)", migration_4 },
	{ 5, "follow-up rounds: jobs pinned to an agent", migration_5 },
	{ 6, "baseline runs: runs without a series, and why they were planned", migration_6 },
	{ 7, "change points bisected: their range, baseline, commit and alert", migration_7 },
	{ 8, "alert mails of change points, host drift", migration_8 },
	{ 9, "hosts driven over SSH: their connection state", migration_9 },
	{ 10, "checks: whether the last try may have posted", migration_10 },
	{ 11, "an agent's attempts in job order (host noise)", migration_11 },
};
