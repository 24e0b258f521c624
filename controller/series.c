/* SPDX-License-Identifier: MIT */
/* Series assembly: see series.h for the rules. */
#include "series.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "recheck.h"
#include "store.h"
#include "timeutil.h"

/* Unthreaded siblings must have been sent this close together (Patchwork's
 * SERIES_DELAY_INTERVAL). */
#define SERIES_UNTHREADED_WINDOW_S (20 * 60)

/* Lowercased copy of an address for comparisons (out has room). */
static void series_lower(const char *in, char *out, size_t outlen)
{
	size_t i = 0;

	for (; in[i] && i + 1 < outlen; i++)
		out[i] = (char)tolower((unsigned char)in[i]);
	out[i] = '\0';
}

/*
 * The queries below run once or more per mail, so each must walk an index
 * from the mail's own keys (Message-IDs, the series id), never every
 * series of a submitter: CROSS JOIN fixes the join order and a unary '+'
 * keeps the planner off an index that would scan (SQLite plans without
 * statistics here).  bench/ shows the ingest rate staying flat as the
 * store grows.
 */

int series_of_msgid(struct intake *in, const char *msgid, int64_t *series_id,
		    struct pg_err *err)
{
	if (store_query_id(in->st, "find series of patch",
			   "SELECT p.series_id FROM patches p JOIN messages m ON m.id = p.message_id"
			   " JOIN series s ON s.id = p.series_id"
			   " WHERE m.msgid = ?1 AND s.project = ?2 ORDER BY p.series_id DESC LIMIT 1",
			   STORE_ARGS(STORE_TEXT(msgid), STORE_TEXT(in->project)),
			   series_id, err) < 0)
		return -1;
	if (*series_id)
		return 0;
	return store_query_id(in->st, "find series of cover",
			      "SELECT s.id FROM messages m CROSS JOIN series s"
			      " ON s.cover_message_id = m.id"
			      " WHERE m.msgid = ?1 AND s.project = ?2 ORDER BY s.id DESC LIMIT 1",
			      STORE_ARGS(STORE_TEXT(msgid), STORE_TEXT(in->project)),
			      series_id, err);
}

/* The ids a mail is threaded under, closest first: its own Message-ID,
 * In-Reply-To, then References from the last (the parent) to the first. */
static size_t series_thread_ids(const struct pg_mail *m, const char **ids, size_t max)
{
	size_t n = 0;

	if (n < max && *m->message_id)
		ids[n++] = m->message_id;
	if (n < max && *m->in_reply_to)
		ids[n++] = m->in_reply_to;
	for (size_t i = m->nreferences; i > 0 && n < max; i--)
		ids[n++] = m->references[i - 1];
	return n;
}

/* Find the series a numbered patch or cover belongs to (0 when none). */
static int series_find(struct intake *in, const struct series_mail *sm, const char *submitter,
		       unsigned version, unsigned total, int64_t *series_id,
		       struct pg_err *err)
{
	const char *ids[64];
	size_t n = series_thread_ids(sm->mail, ids, 64);

	*series_id = 0;
	for (size_t i = 0; i < n && !*series_id; i++)
		if (store_query_id(in->st, "find series by thread",
				   "SELECT s.id FROM series_refs r CROSS JOIN series s ON s.id = r.series_id"
				   " WHERE r.msgid = ?1 AND s.project = ?2 AND s.version = ?3"
				   " AND s.total = ?4 AND s.submitter_addr = ?5"
				   " ORDER BY s.id DESC LIMIT 1",
				   STORE_ARGS(STORE_TEXT(ids[i]), STORE_TEXT(in->project),
					      STORE_INT(version), STORE_INT(total),
					      STORE_TEXT(submitter)),
				   series_id, err) < 0)
			return -1;
	if (*series_id)
		return 0;
	return store_query_id(in->st, "find unthreaded series",
			      "SELECT id FROM series WHERE +project = ?1 AND +submitter_addr = ?2"
			      " AND version = ?3 AND total = ?4 AND state = 'incomplete'"
			      " AND received_at BETWEEN ?5 - ?6 AND ?5 + ?6 ORDER BY id DESC LIMIT 1",
			      STORE_ARGS(STORE_TEXT(in->project), STORE_TEXT(submitter),
					 STORE_INT(version), STORE_INT(total), STORE_INT(sm->date_s),
					 STORE_INT(SERIES_UNTHREADED_WINDOW_S)),
			      series_id, err);
}

static int series_tags(const struct pg_subject *s, char *out, size_t outlen)
{
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; i < s->ntags; i++) {
		int n = snprintf(out + len, outlen - len, "%s%s", len ? "," : "", s->tags[i]);

		if (n < 0 || (size_t)n >= outlen - len)
			return -1;
		len += (size_t)n;
	}
	return 0;
}

static int series_create(struct intake *in, const struct series_mail *sm, const char *submitter,
			 unsigned version, unsigned total, int64_t *series_id,
			 struct pg_err *err)
{
	const struct pg_mail *m = sm->mail;
	const char *root = m->nreferences ? m->references[0] :
			   *m->in_reply_to ? m->in_reply_to : m->message_id;
	char tags[PG_SUBJECT_TAGS_MAX * PG_SUBJECT_TAG_MAX + PG_SUBJECT_TAGS_MAX];

	/* A cover letter starts its own thread. */
	if (sm->subject->is_cover)
		root = m->message_id;
	if (series_tags(sm->subject, tags, sizeof(tags)) < 0)
		tags[0] = '\0';
	if (store_run(in->st, "create series",
		      "INSERT INTO series (project, root_msgid, version, total, title, tags,"
		      " submitter_name, submitter_addr, state, received_at, series_key, is_rfc,"
		      " pw_series_id)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'incomplete', ?9, ?10, ?11, ?12)",
		      STORE_ARGS(STORE_TEXT(in->project), STORE_TEXT(root), STORE_INT(version),
				 STORE_INT(total), STORE_TEXT(sm->subject->title), STORE_TEXT(tags),
				 STORE_TEXT(m->from_name), STORE_TEXT(submitter),
				 STORE_INT(sm->date_s), STORE_TEXT(sm->subject->key),
				 STORE_INT(sm->subject->is_rfc ? 1 : 0),
				 sm->pw_series_id ? STORE_INT(sm->pw_series_id) : STORE_NULL),
		      err) < 0)
		return -1;
	*series_id = store_last_id(in->st);
	in->stats.series_created++;
	return 0;
}

/* Index the mail's own id and what it references under the series. */
static int series_index(struct intake *in, int64_t series_id, const struct pg_mail *m,
			struct pg_err *err)
{
	const char *ids[64];
	size_t n = series_thread_ids(m, ids, 64);

	for (size_t i = 0; i < n; i++)
		if (store_run(in->st, "index series thread",
			      "INSERT OR IGNORE INTO series_refs (series_id, msgid) VALUES (?1, ?2)",
			      STORE_ARGS(STORE_INT(series_id), STORE_TEXT(ids[i])), err) < 0)
			return -1;
	return 0;
}

int series_dep_resolve(struct store *st, const char *project, int64_t owner, const char *kind,
		       const char *ref, int64_t *dep, struct pg_err *err)
{
	char *end = NULL;
	long long num;

	*dep = 0;
	if (strcmp(kind, "msgid") == 0) {
		/* A series' own patch or cover: a self-reference. */
		if (store_query_id(st, "resolve dependency on itself",
				   "SELECT p.series_id FROM messages m JOIN patches p"
				   " ON p.message_id = m.id WHERE m.msgid = ?1 AND p.series_id = ?2"
				   " UNION ALL SELECT s.id FROM messages m JOIN series s"
				   " ON s.cover_message_id = m.id WHERE m.msgid = ?1 AND s.id = ?2",
				   STORE_ARGS(STORE_TEXT(ref), STORE_INT(owner)), dep, err) < 0)
			return -1;
		if (*dep)
			return 0;
		if (store_query_id(st, "resolve dependency by patch",
				   "SELECT p.series_id FROM messages m JOIN patches p ON p.message_id = m.id"
				   " JOIN series s ON s.id = p.series_id WHERE m.msgid = ?1"
				   " AND s.project = ?2 AND s.id <> ?3 ORDER BY p.series_id DESC LIMIT 1",
				   STORE_ARGS(STORE_TEXT(ref), STORE_TEXT(project), STORE_INT(owner)),
				   dep, err) < 0)
			return -1;
		if (!*dep &&
		    store_query_id(st, "resolve dependency by cover",
				   "SELECT s.id FROM messages m JOIN series s ON s.cover_message_id = m.id"
				   " WHERE m.msgid = ?1 AND s.project = ?2 AND s.id <> ?3"
				   " ORDER BY s.id DESC LIMIT 1",
				   STORE_ARGS(STORE_TEXT(ref), STORE_TEXT(project), STORE_INT(owner)),
				   dep, err) < 0)
			return -1;
		/* The thread index also holds what a series' mails refer to,
		 * so a later series may list an earlier one's ids: the
		 * earliest series that knows the id is its owner. */
		if (!*dep &&
		    store_query_id(st, "resolve dependency by thread",
				   "SELECT r.series_id FROM series_refs r JOIN series s ON s.id = r.series_id"
				   " WHERE r.msgid = ?1 AND s.project = ?2 AND s.id <> ?3"
				   " ORDER BY r.series_id LIMIT 1",
				   STORE_ARGS(STORE_TEXT(ref), STORE_TEXT(project), STORE_INT(owner)),
				   dep, err) < 0)
			return -1;
		return 0;
	}
	errno = 0;
	num = strtoll(ref, &end, 10);
	if (errno || end == ref || *end || num <= 0)
		return 0;	/* not a number: nothing can match */
	if (store_query_id(st, "resolve dependency on itself",
			   strcmp(kind, "series") == 0 ?
			   "SELECT id FROM series WHERE id = ?1 AND pw_series_id = ?2" :
			   "SELECT series_id FROM patches WHERE series_id = ?1 AND pw_patch_id = ?2",
			   STORE_ARGS(STORE_INT(owner), STORE_INT(num)), dep, err) < 0)
		return -1;
	if (*dep)
		return 0;
	if (strcmp(kind, "series") == 0)
		return store_query_id(st, "resolve dependency by Patchwork series",
				      "SELECT id FROM series WHERE project = ?1 AND pw_series_id = ?2"
				      " AND id <> ?3 ORDER BY id DESC LIMIT 1",
				      STORE_ARGS(STORE_TEXT(project), STORE_INT(num), STORE_INT(owner)),
				      dep, err);
	return store_query_id(st, "resolve dependency by Patchwork patch",
			      "SELECT p.series_id FROM patches p JOIN series s ON s.id = p.series_id"
			      " WHERE s.project = ?1 AND p.pw_patch_id = ?2 AND s.id <> ?3"
			      " ORDER BY p.series_id DESC LIMIT 1",
			      STORE_ARGS(STORE_TEXT(project), STORE_INT(num), STORE_INT(owner)),
			      dep, err);
}

int series_dep_record(struct store *st, int64_t owner, const char *kind, const char *ref,
		      int64_t dep, struct pg_err *err)
{
	if (dep <= 0 || dep == owner)
		return pg_err_set(err, PG_EINVAL, "record dependency of series %lld: bad series %lld",
				  (long long)owner, (long long)dep);
	return store_run(st, "record dependency",
			 "UPDATE series_deps SET dep_series_id = ?1 WHERE series_id = ?2"
			 " AND kind = ?3 AND ref = ?4 AND dep_series_id IS NULL",
			 STORE_ARGS(STORE_INT(dep), STORE_INT(owner), STORE_TEXT(kind),
				    STORE_TEXT(ref)), err);
}

static int series_add_deps(struct intake *in, int64_t series_id, const struct pg_trailers *t,
			   struct pg_err *err)
{
	for (size_t i = 0; i < t->ndeps; i++) {
		const struct pg_dep *d = &t->deps[i];
		const char *kind = pg_dep_kind_name(d->kind);
		char ref[PG_TRAILERS_MSGID_MAX];
		int64_t dep = 0;
		int n;

		if (d->kind == PG_DEP_MSGID)
			n = snprintf(ref, sizeof(ref), "%s", d->msgid);
		else
			n = snprintf(ref, sizeof(ref), "%llu", (unsigned long long)d->id);
		if (n < 0 || (size_t)n >= sizeof(ref))
			return pg_err_set(err, PG_EINVAL, "series %lld: Depends-on reference too long",
					  (long long)series_id);
		if (series_dep_resolve(in->st, in->project, series_id, kind, ref, &dep, err) < 0)
			return -1;
		if (dep == series_id)
			continue;	/* names the series itself */
		if (store_run(in->st, "record dependency",
			      "INSERT OR IGNORE INTO series_deps (series_id, kind, ref, dep_series_id)"
			      " VALUES (?1, ?2, ?3, ?4)",
			      STORE_ARGS(STORE_INT(series_id), STORE_TEXT(kind), STORE_TEXT(ref),
					 dep ? STORE_INT(dep) : STORE_NULL),
			      err) < 0)
			return -1;
	}
	return 0;
}

/* Supersede older versions of a series that just completed, or the
 * series itself when a newer version of it is already there. */
static int series_supersede(struct intake *in, int64_t series_id, struct pg_err *err)
{
	int64_t newer = 0, older;

	if (store_query_id(in->st, "find newer version",
			   "SELECT n.id FROM series s JOIN series n ON n.project = s.project"
			   " AND n.submitter_addr = s.submitter_addr AND n.series_key = s.series_key"
			   " AND n.version > s.version AND n.state = 'complete'"
			   " WHERE s.id = ?1 AND s.series_key <> '' ORDER BY n.version DESC LIMIT 1",
			   STORE_ARGS(STORE_INT(series_id)), &newer, err) < 0)
		return -1;
	if (newer) {
		if (store_run(in->st, "supersede late series",
			      "UPDATE series SET state = 'superseded' WHERE id = ?1",
			      STORE_ARGS(STORE_INT(series_id)), err) < 0 ||
		    store_run(in->st, "link late series",
			      "UPDATE series SET supersedes_id = ?1 WHERE id = ?2 AND supersedes_id IS NULL",
			      STORE_ARGS(STORE_INT(series_id), STORE_INT(newer)), err) < 0)
			return -1;
		in->stats.series_superseded++;
		pg_log_info("intake", "series %lld: superseded by the newer version %lld",
			    (long long)series_id, (long long)newer);
		return 0;
	}
	/* Older versions: same lineage, or threaded under a message of ours
	 * (a v2 sent --in-reply-to the v1 cover).  Two queries rather than
	 * one with OR, so that each walks an index, not every series. */
	for (;;) {
		if (store_query_id(in->st, "find older version by title",
				   "SELECT o.id FROM series s JOIN series o ON o.project = s.project"
				   " AND o.submitter_addr = s.submitter_addr AND o.series_key = s.series_key"
				   " AND o.version < s.version AND o.state <> 'superseded' AND o.id <> s.id"
				   " WHERE s.id = ?1 AND s.series_key <> ''"
				   " ORDER BY o.version DESC, o.id DESC LIMIT 1",
				   STORE_ARGS(STORE_INT(series_id)), &older, err) < 0)
			return -1;
		if (!older &&
		    store_query_id(in->st, "find older version by thread",
				   "SELECT o.id FROM series s CROSS JOIN series_refs r1 ON r1.series_id = s.id"
				   " CROSS JOIN series_refs r2 ON r2.msgid = r1.msgid AND r2.series_id <> s.id"
				   " CROSS JOIN series o ON o.id = r2.series_id AND o.project = s.project"
				   " AND o.submitter_addr = s.submitter_addr AND o.version < s.version"
				   " AND o.state <> 'superseded'"
				   " WHERE s.id = ?1 ORDER BY o.version DESC, o.id DESC LIMIT 1",
				   STORE_ARGS(STORE_INT(series_id)), &older, err) < 0)
			return -1;
		if (!older)
			return 0;
		if (store_run(in->st, "supersede older version",
			      "UPDATE series SET state = 'superseded' WHERE id = ?1",
			      STORE_ARGS(STORE_INT(older)), err) < 0 ||
		    store_run(in->st, "link older version",
			      "UPDATE series SET supersedes_id = ?1 WHERE id = ?2 AND supersedes_id IS NULL",
			      STORE_ARGS(STORE_INT(older), STORE_INT(series_id)), err) < 0)
			return -1;
		in->stats.series_superseded++;
		pg_log_info("intake", "series %lld: supersedes series %lld",
			    (long long)series_id, (long long)older);
	}
}

/* Mark the series complete when patches 1..total are all there. */
static int series_check_complete(struct intake *in, int64_t series_id, struct pg_err *err)
{
	int64_t missing = 0;

	if (store_query_int(in->st, "count missing patches",
			    "SELECT s.total - count(p.id) FROM series s"
			    " LEFT JOIN patches p ON p.series_id = s.id"
			    " WHERE s.id = ?1 AND s.state = 'incomplete' GROUP BY s.id",
			    STORE_ARGS(STORE_INT(series_id)), &missing, err) < 0) {
		if (err->code == PG_ENOTFOUND)
			return 0;	/* already complete or superseded */
		return -1;
	}
	if (missing > 0)
		return 0;
	if (store_run(in->st, "complete series",
		      "UPDATE series SET state = 'complete', completed_at = strftime('%s', 'now')"
		      " WHERE id = ?1",
		      STORE_ARGS(STORE_INT(series_id)), err) < 0)
		return -1;
	in->stats.series_completed++;
	return series_supersede(in, series_id, err);
}

static int series_has(struct intake *in, int64_t series_id, unsigned number, int *has,
		      struct pg_err *err)
{
	int64_t id;

	if (store_query_id(in->st, "look for patch number",
			   number ? "SELECT id FROM patches WHERE series_id = ?1 AND number = ?2"
				  : "SELECT id FROM series WHERE id = ?1 AND ?2 = 0"
				    " AND cover_message_id IS NOT NULL",
			   STORE_ARGS(STORE_INT(series_id), STORE_INT(number)), &id, err) < 0)
		return -1;
	*has = id != 0;
	return 0;
}

/* Find the series for a numbered mail, or create one; a series that
 * already holds this number means a resend: start a new one. */
static int series_place(struct intake *in, const struct series_mail *sm, unsigned number,
			unsigned total, int64_t *series_id, struct pg_err *err)
{
	char submitter[256];
	int has = 0;

	series_lower(sm->mail->from_addr, submitter, sizeof(submitter));
	*series_id = 0;
	if (sm->subject->has_counter &&
	    series_find(in, sm, submitter, sm->subject->version, total, series_id, err) < 0)
		return -1;
	if (*series_id && series_has(in, *series_id, number, &has, err) < 0)
		return -1;
	if (!*series_id || has)
		return series_create(in, sm, submitter, sm->subject->version, total, series_id, err);
	return 0;
}

static int series_join_files(const struct pg_mail *m, struct pg_buf *out)
{
	for (size_t i = 0; i < m->nfiles; i++)
		if (pg_buf_printf(out, "%s%s", i ? "\n" : "", m->files[i]) < 0)
			return -1;
	return 0;
}

int series_add_patch(struct intake *in, const struct series_mail *sm, struct pg_err *err)
{
	const struct pg_subject *s = sm->subject;
	unsigned number = s->has_counter ? s->number : 1;
	unsigned total = s->has_counter ? s->total : 1;
	struct pg_buf files = PG_BUF_INIT(1024 * 1024);
	int64_t series_id;
	int rc = -1;

	if (number < 1 || total < 1 || number > total) {
		in->stats.other++;
		pg_log_warn("intake", "message <%s>: patch %u/%u is out of range: not assembled",
			    sm->mail->message_id, number, total);
		return 0;
	}
	if (series_place(in, sm, number, total, &series_id, err) < 0)
		goto out;
	if (series_join_files(sm->mail, &files) < 0) {
		pg_err_set(err, PG_ENOMEM, "list of files too large");
		goto out;
	}
	if (store_run(in->st, "add patch",
		      "INSERT INTO patches (series_id, number, message_id, pw_patch_id, subject,"
		      " base_commit, files) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
		      STORE_ARGS(STORE_INT(series_id), STORE_INT(number),
				 STORE_INT(sm->message_row),
				 sm->pw_patch_id ? STORE_INT(sm->pw_patch_id) : STORE_NULL,
				 STORE_TEXT(sm->mail->subject),
				 *sm->trailers->base_commit ? STORE_TEXT(sm->trailers->base_commit)
							    : STORE_NULL,
				 STORE_TEXT(pg_buf_str(&files))),
		      err) < 0)
		goto out;
	in->stats.patches++;
	/* Without a cover, patch 1 names the series. */
	if (number == 1 &&
	    store_run(in->st, "name series after patch 1",
		      "UPDATE series SET title = ?1, series_key = ?2"
		      " WHERE id = ?3 AND cover_message_id IS NULL",
		      STORE_ARGS(STORE_TEXT(s->title), STORE_TEXT(s->key), STORE_INT(series_id)),
		      err) < 0)
		goto out;
	if (sm->pw_series_id &&
	    store_run(in->st, "remember Patchwork series",
		      "UPDATE series SET pw_series_id = ?1 WHERE id = ?2 AND pw_series_id IS NULL",
		      STORE_ARGS(STORE_INT(sm->pw_series_id), STORE_INT(series_id)), err) < 0)
		goto out;
	if (series_index(in, series_id, sm->mail, err) < 0 ||
	    series_add_deps(in, series_id, sm->trailers, err) < 0 ||
	    series_check_complete(in, series_id, err) < 0)
		goto out;
	rc = 0;
out:
	pg_buf_release(&files);
	return rc;
}

int series_add_cover(struct intake *in, const struct series_mail *sm, struct pg_err *err)
{
	const struct pg_subject *s = sm->subject;
	int64_t series_id;

	if (s->total < 1) {
		in->stats.other++;
		return 0;
	}
	if (series_place(in, sm, 0, s->total, &series_id, err) < 0)
		return -1;
	if (store_run(in->st, "attach cover letter",
		      "UPDATE series SET cover_message_id = ?1, title = ?2, series_key = ?3,"
		      " base_commit = coalesce(?4, base_commit),"
		      " pw_series_id = coalesce(pw_series_id, ?5) WHERE id = ?6",
		      STORE_ARGS(STORE_INT(sm->message_row), STORE_TEXT(s->title),
				 STORE_TEXT(s->key),
				 *sm->trailers->base_commit ? STORE_TEXT(sm->trailers->base_commit)
							    : STORE_NULL,
				 sm->pw_series_id ? STORE_INT(sm->pw_series_id) : STORE_NULL,
				 STORE_INT(series_id)),
		      err) < 0)
		return -1;
	in->stats.covers++;
	if (series_index(in, series_id, sm->mail, err) < 0 ||
	    series_add_deps(in, series_id, sm->trailers, err) < 0)
		return -1;
	/* The lineage key may have changed with the cover's title. */
	return series_check_complete(in, series_id, err);
}

int series_recheck(struct intake *in, int64_t series_id, const char *origin, const char *msgid,
		   const char *requester, const struct pg_trailers *tr, struct pg_err *err)
{
	struct pg_buf ctx = PG_BUF_INIT(4096);
	struct recheck_new req;
	struct pg_recheck ours;
	int64_t id;
	int rc = -1;

	if (pg_trailers_recheck_ours(tr, in->contexts, in->n_contexts, &ours) == 0)
		return 0;
	for (size_t i = 0; i < ours.ncontexts; i++)
		if (pg_buf_printf(&ctx, "%s%s", i ? "," : "", ours.contexts[i]) < 0) {
			pg_buf_err(&ctx, err, "recheck contexts");
			goto out;
		}
	req.series_id = series_id;
	req.origin = origin;
	req.msgid = msgid;
	req.requester = requester;
	req.contexts = pg_buf_str(&ctx);
	req.rebase = ours.rebase;
	if (recheck_add(in->st, &req, pg_time_wall_ms() / 1000, &id, err) < 0)
		goto out;
	if (id) {
		in->stats.rechecks++;
		pg_log_info("intake", "series %lld: recheck of %s requested by %s%s%s",
			    (long long)series_id, pg_buf_str(&ctx), requester,
			    *ours.rebase ? " after a rebase on " : "", ours.rebase);
	}
	rc = 0;
out:
	pg_buf_release(&ctx);
	return rc;
}

int series_add_reply(struct intake *in, const struct series_mail *sm, struct pg_err *err)
{
	const char *ids[64];
	int64_t series_id = 0;
	size_t n;

	in->stats.replies++;
	if (sm->trailers->recheck.ncontexts == 0)
		return 0;
	/* The series of the closest message above the reply. */
	n = series_thread_ids(sm->mail, ids, 64);
	for (size_t i = 1; i < n && !series_id; i++)
		if (series_of_msgid(in, ids[i], &series_id, err) < 0)
			return -1;
	if (!series_id) {
		pg_log_warn("intake", "message <%s>: Recheck-request in a thread we do not know",
			    sm->mail->message_id);
		return 0;
	}
	return series_recheck(in, series_id, "mail", sm->mail->message_id, sm->mail->from_addr,
			      sm->trailers, err);
}

/* ---- Patchwork's ids and staleness ------------------------------------- */

int series_remember_pw_ids(struct store *st, int64_t series_id, const char *msgid,
			   int64_t pw_patch_id, int64_t pw_series_id, struct pg_err *err)
{
	if (pw_patch_id > 0 && msgid &&
	    store_run(st, "remember Patchwork patch id",
		      "UPDATE patches SET pw_patch_id = ?1 WHERE series_id = ?2 AND pw_patch_id"
		      " IS NULL AND message_id IN (SELECT id FROM messages WHERE msgid = ?3)",
		      STORE_ARGS(STORE_INT(pw_patch_id), STORE_INT(series_id), STORE_TEXT(msgid)),
		      err) < 0)
		return -1;
	if (pw_series_id > 0 &&
	    store_run(st, "remember Patchwork series id",
		      "UPDATE series SET pw_series_id = ?1 WHERE id = ?2 AND pw_series_id IS NULL",
		      STORE_ARGS(STORE_INT(pw_series_id), STORE_INT(series_id)), err) < 0)
		return -1;
	return 0;
}

int series_patch_set_pw_id(struct store *st, int64_t patch_id, int64_t pw_patch_id,
			   struct pg_err *err)
{
	if (patch_id <= 0 || pw_patch_id <= 0)
		return pg_err_set(err, PG_EINVAL, "record a Patchwork patch id: bad id");
	return store_run(st, "record a Patchwork patch id",
			 "UPDATE patches SET pw_patch_id = ?2 WHERE id = ?1 AND pw_patch_id IS NULL",
			 STORE_ARGS(STORE_INT(patch_id), STORE_INT(pw_patch_id)), err);
}

int series_mark_stale(struct store *st, const char *project, int64_t now, int64_t after_s,
		      int64_t *marked, struct pg_err *err)
{
	*marked = 0;
	if (store_run(st, "mark stale series",
		      "UPDATE series SET stale_at = ?1 WHERE project = ?2 AND state = 'incomplete'"
		      " AND stale_at IS NULL AND received_at < ?3",
		      STORE_ARGS(STORE_INT(now), STORE_TEXT(project), STORE_INT(now - after_s)),
		      err) < 0)
		return -1;
	*marked = store_changes(st);
	return 0;
}
