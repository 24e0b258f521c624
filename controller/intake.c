/* SPDX-License-Identifier: MIT */
/* Intake of one raw message, sources and cursors: see intake.h. */
#include "intake.h"

#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "log.h"
#include "mail.h"
#include "series.h"
#include "subject.h"
#include "timeutil.h"
#include "trailers.h"

void intake_count_reason(struct intake_stats *s, const char *reason)
{
	char text[sizeof(s->reasons[0].text)];
	size_t i;

	/* Group by the reason's text without message-specific details after
	 * a parenthesis, so that "line 3" and "line 7" do not split groups.
	 * A long one is cut: the same start groups the same. */
	pg_fmt_cut(text, sizeof(text), "%s", reason);
	text[strcspn(text, "(")] = '\0';
	for (i = strlen(text); i > 0 && text[i - 1] == ' '; i--)
		text[i - 1] = '\0';
	for (i = 0; i < s->n_reasons; i++)
		if (strcmp(s->reasons[i].text, text) == 0)
			break;
	if (i == s->n_reasons) {
		if (s->n_reasons == INTAKE_MAX_REASONS)
			return;
		memcpy(s->reasons[i].text, text, sizeof(text));
		s->n_reasons++;
	}
	s->reasons[i].count++;
}

static const char *intake_kind(const struct pg_mail *m, const struct pg_subject *s)
{
	if (s->is_test_report)
		return "report";
	if (m->is_reply || s->is_reply)
		return "reply";
	if (m->has_patch)
		return "patch";
	if (s->is_cover)
		return "cover";
	return "other";
}

static int intake_reject(struct intake *in, const struct intake_origin *from, const char *raw,
			 size_t len, const char *reason, struct pg_err *err)
{
	/* A mail too big to keep is stored without its body: the reason and
	 * the size say what it was. */
	size_t keep = len <= in->max_message ? len : 0;

	if (store_run(in->st, "store rejected message",
		      "INSERT INTO messages (source_id, position, raw_size, raw, state, reject_reason,"
		      " received_at) VALUES (?1, ?2, ?3, ?4, 'rejected', ?5, strftime('%s', 'now'))"
		      " ON CONFLICT DO NOTHING",
		      STORE_ARGS(STORE_INT(from->source_id), STORE_TEXT(from->position),
				 STORE_INT((int64_t)len), STORE_BLOB(raw ? raw : "", keep),
				 STORE_TEXT(reason)),
		      err) < 0)
		return -1;
	if (store_changes(in->st) == 0) {
		in->stats.duplicates++;
		return 0;
	}
	in->stats.rejected++;
	intake_count_reason(&in->stats, reason);
	pg_log_warn("intake", "message at %s rejected: %s", from->position, reason);
	return 0;
}

static int intake_refs(const struct pg_mail *m, struct pg_buf *out)
{
	for (size_t i = 0; i < m->nreferences; i++)
		if (pg_buf_printf(out, "%s%s", i ? " " : "", m->references[i]) < 0)
			return -1;
	return 0;
}

int intake_message(struct intake *in, const struct intake_origin *from,
		   const char *raw, size_t len, struct pg_err *err)
{
	struct pg_err perr = PG_ERR_INIT;
	struct pg_trailers tr = PG_TRAILERS_INIT;
	struct pg_buf refs = PG_BUF_INIT(64 * 1024);
	struct pg_subject subj;
	struct series_mail sm;
	struct pg_mail m;
	const char *kind;
	int64_t series_id = 0, date_s;
	int rc = -1;

	memset(&m, 0, sizeof(m));
	in->stats.read++;
	if (len > in->max_message) {
		char reason[96];

		pg_fmt_cut(reason, sizeof(reason), "mail larger than %zu bytes (%zu)",
			   in->max_message, len);
		rc = intake_reject(in, from, raw, len, reason, err);
		goto out;
	}
	if (pg_mail_parse(&m, raw, len, &perr) < 0) {
		rc = intake_reject(in, from, raw, len, perr.msg, err);
		goto out;
	}
	if (pg_trailers_parse(m.body, m.body_len, &tr, &perr) < 0) {
		rc = intake_reject(in, from, raw, len, perr.msg, err);
		goto out;
	}
	if (pg_subject_parse(m.subject, &subj) < 0) {
		pg_err_set(err, PG_EINVAL, "subject parser refused its input");
		goto out;
	}
	kind = intake_kind(&m, &subj);
	date_s = m.date_ms ? m.date_ms / 1000 : pg_time_wall_ms() / 1000;
	if (intake_refs(&m, &refs) < 0) {
		rc = intake_reject(in, from, raw, len, "References header too long", err);
		goto out;
	}
	if (store_run(in->st, "store message",
		      "INSERT INTO messages (source_id, position, msgid, in_reply_to, refs, subject,"
		      " from_name, from_addr, sent_at, kind, raw_size, raw, state, received_at)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'accepted',"
		      " strftime('%s', 'now')) ON CONFLICT DO NOTHING",
		      STORE_ARGS(STORE_INT(from->source_id), STORE_TEXT(from->position),
				 STORE_TEXT(m.message_id),
				 *m.in_reply_to ? STORE_TEXT(m.in_reply_to) : STORE_NULL,
				 refs.len ? STORE_TEXT(pg_buf_str(&refs)) : STORE_NULL,
				 STORE_TEXT(m.subject), STORE_TEXT(m.from_name),
				 STORE_TEXT(m.from_addr), STORE_INT(date_s), STORE_TEXT(kind),
				 STORE_INT((int64_t)len), STORE_BLOB(raw, len)),
		      err) < 0)
		goto out;
	if (store_changes(in->st) == 0) {
		in->stats.duplicates++;
		rc = 0;
		goto out;
	}
	in->stats.accepted++;
	memset(&sm, 0, sizeof(sm));
	sm.message_row = store_last_id(in->st);
	sm.mail = &m;
	sm.subject = &subj;
	sm.trailers = &tr;
	sm.date_s = date_s;
	sm.pw_patch_id = from->pw_patch_id;
	sm.pw_series_id = from->pw_series_id;

	/* The same mail from another source (an archive and Patchwork) is
	 * assembled once; Patchwork's ids are still worth remembering. */
	if ((strcmp(kind, "patch") == 0 || strcmp(kind, "cover") == 0) &&
	    series_of_msgid(in, m.message_id, &series_id, err) < 0)
		goto out;
	if (series_id) {
		in->stats.duplicates++;
		if (series_remember_pw_ids(in->st, series_id, m.message_id, from->pw_patch_id,
					   from->pw_series_id, err) < 0)
			goto out;
		rc = 0;
		goto out;
	}
	if (strcmp(kind, "patch") == 0)
		rc = series_add_patch(in, &sm, err);
	else if (strcmp(kind, "cover") == 0)
		rc = series_add_cover(in, &sm, err);
	else if (strcmp(kind, "reply") == 0)
		rc = series_add_reply(in, &sm, err);
	else {
		if (strcmp(kind, "report") == 0)
			in->stats.reports++;
		else
			in->stats.other++;
		rc = 0;
	}
out:
	pg_buf_release(&refs);
	pg_trailers_release(&tr);
	pg_mail_free(&m);
	return rc;
}

int intake_source(struct intake *in, const char *name, const char *kind,
		  const char *location, int64_t *id, struct pg_err *err)
{
	if (store_run(in->st, "register source",
		      "INSERT INTO sources (name, kind, location, project, created_at)"
		      " VALUES (?1, ?2, ?3, ?4, strftime('%s', 'now')) ON CONFLICT (name) DO NOTHING",
		      STORE_ARGS(STORE_TEXT(name), STORE_TEXT(kind), STORE_TEXT(location),
				 STORE_TEXT(in->project)), err) < 0 ||
	    store_query_int(in->st, "look up source",
			    "SELECT id FROM sources WHERE name = ?1 AND kind = ?2",
			    STORE_ARGS(STORE_TEXT(name), STORE_TEXT(kind)), id, err) < 0) {
		pg_err_prefix(err, "source '%s'", name);
		return -1;
	}
	return 0;
}

int intake_cursor_get(struct intake *in, int64_t source_id, const char *scope,
		      char *out, size_t outlen, struct pg_err *err)
{
	sqlite3_stmt *stmt = NULL;
	int rc = -1, row;

	out[0] = '\0';
	if (store_prepare(in->st, &stmt,
			  "SELECT position FROM source_cursors WHERE source_id = ?1 AND scope = ?2",
			  "read cursor", err) < 0 ||
	    store_bind(stmt, STORE_ARGS(STORE_INT(source_id), STORE_TEXT(scope)),
		       "read cursor", err) < 0)
		goto out;
	row = store_step(stmt, "read cursor", err);
	if (row < 0)
		goto out;
	if (row) {
		const char *pos = (const char *)sqlite3_column_text(stmt, 0);

		if (pos && snprintf(out, outlen, "%s", pos) >= (int)outlen) {
			pg_err_set(err, PG_ETOOBIG, "cursor %s too long", scope);
			goto out;
		}
	}
	rc = 0;
out:
	sqlite3_finalize(stmt);
	return rc;
}

int intake_cursor_set(struct intake *in, int64_t source_id, const char *scope,
		      const char *position, struct pg_err *err)
{
	return store_run(in->st, "move cursor",
			 "INSERT INTO source_cursors (source_id, scope, position, updated_at)"
			 " VALUES (?1, ?2, ?3, strftime('%s', 'now'))"
			 " ON CONFLICT (source_id, scope) DO UPDATE SET position = excluded.position,"
			 " updated_at = excluded.updated_at",
			 STORE_ARGS(STORE_INT(source_id), STORE_TEXT(scope), STORE_TEXT(position)),
			 err);
}

int intake_mark_stale(struct intake *in, int64_t now, int64_t after_s, struct pg_err *err)
{
	int64_t marked;

	if (series_mark_stale(in->st, in->project, now, after_s, &marked, err) < 0)
		return -1;
	in->stats.series_stale += (unsigned long)marked;
	return 0;
}

int intake_stats_print(const struct intake_stats *s, struct pg_buf *out)
{
	int rc = pg_buf_printf(out,
			       "messages read:      %lu\n"
			       "  accepted:         %lu\n"
			       "  duplicates:       %lu\n"
			       "  rejected:         %lu\n"
			       "patches:            %lu\n"
			       "cover letters:      %lu\n"
			       "replies:            %lu\n"
			       "recheck requests:   %lu\n"
			       "test reports:       %lu (ignored)\n"
			       "other mails:        %lu\n"
			       "deleted upstream:   %lu\n"
			       "series created:     %lu\n"
			       "series completed:   %lu\n"
			       "series superseded:  %lu\n"
			       "series stale:       %lu (never completed)\n",
			       s->read, s->accepted, s->duplicates, s->rejected, s->patches,
			       s->covers, s->replies, s->rechecks, s->reports, s->other,
			       s->deleted, s->series_created, s->series_completed,
			       s->series_superseded, s->series_stale);

	for (size_t i = 0; rc == 0 && i < s->n_reasons; i++)
		rc = pg_buf_printf(out, "rejected: %lu x %s\n", s->reasons[i].count,
				   s->reasons[i].text);
	return rc;
}
