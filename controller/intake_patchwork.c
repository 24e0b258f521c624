/* SPDX-License-Identifier: MIT */
/*
 * Intake from Patchwork: poll the project's events per category (one per
 * request, as Patchwork filters) from a cursor per category, and for each
 * new event:
 *   series-completed       fetch the series and each patch's and the
 *                          cover's mbox, and take the mails through the
 *                          same intake as an archive's (so grouping is
 *                          ours), remembering Patchwork's ids;
 *   patch-comment-created, cover-comment-created
 *                          fetch the comment and record its
 *                          Recheck-request, if any, on the series.
 * The network comes first; then one transaction stores what the event
 * brought, marks the event seen (source_events, so the inclusive `since`
 * and repeated series-completed events are harmless) and moves the
 * category's cursor (the event's date in ms; polls start an hour before
 * it, see PW_EVENT_OVERLAP_MS).
 */
#include "intake_src.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fmt.h"
#include "log.h"
#include "mbox.h"
#include "patchwork.h"
#include "series.h"
#include "timeutil.h"
#include "trailers.h"

/*
 * Each poll goes back this far before the cursor: Patchwork dates an event
 * when it is created, inside a transaction that may commit later than a
 * newer one, so an event can appear behind a cursor that has passed its
 * date.  source_events drops the ones seen already.
 */
#define PW_EVENT_OVERLAP_MS (3600 * 1000LL)

static const char *const pw_categories[] = {
	"series-completed", "patch-comment-created", "cover-comment-created",
};

struct pw_pass {
	struct intake *in;
	struct pg_pw_client *pw;
	int64_t source_id;
	const char *category;
	char scope[64];
	const volatile sig_atomic_t *stop;
};

/* One downloaded mail, waiting for the event's transaction. */
struct pw_mail {
	struct pg_buf raw;
	char position[48];
	int64_t pw_patch_id;
};

struct pw_split {
	struct pg_buf *out;
	int count;
};

/* A Patchwork mbox of one patch holds one mail; keep the first. */
static int pw_first_mail(const char *msg, size_t len, void *arg)
{
	struct pw_split *s = arg;

	if (s->count++ > 0)
		return 1;
	return pg_buf_add(s->out, msg, len) < 0 ? -1 : 0;
}

static int pw_download(struct pw_pass *p, const char *url, struct pw_mail *m,
		       struct pg_err *err)
{
	struct pg_buf mbox = PG_BUF_INIT(p->in->max_message + 4096);
	struct pw_split split = { &m->raw, 0 };
	int rc = -1;

	if (pg_pw_download_mbox(p->pw, url, &mbox, err) < 0)
		goto out;
	if (pg_mbox_split(pg_buf_str(&mbox), mbox.len, PG_MBOX_MBOXO, pw_first_mail, &split,
			  err) < 0)
		goto out;
	if (split.count == 0) {
		pg_err_set(err, PG_EINVAL, "%s: empty mbox", url);
		goto out;
	}
	rc = 0;
out:
	pg_buf_release(&mbox);
	return rc;
}

static int pw_seen(struct pw_pass *p, int64_t event_id, int *seen, struct pg_err *err)
{
	int64_t n = 0;

	if (store_query_int(p->in->st, "look up event",
			    "SELECT count(*) FROM source_events WHERE source_id = ?1 AND event_id = ?2",
			    STORE_ARGS(STORE_INT(p->source_id), STORE_INT(event_id)), &n, err) < 0)
		return -1;
	*seen = n > 0;
	return 0;
}

/* Inside the event's transaction: mark it seen and move the cursor. */
static int pw_done(struct pw_pass *p, const struct pg_pw_event *ev, struct pg_err *err)
{
	char pos[32];

	if (pg_fmt(pos, sizeof(pos), "%" PRId64, ev->date_ms) < 0)
		return pg_err_set(err, PG_EINVAL, "event %" PRId64 ": cursor too long", ev->id);
	if (store_run(p->in->st, "mark event seen",
		      "INSERT OR IGNORE INTO source_events (source_id, event_id, category, seen_at)"
		      " VALUES (?1, ?2, ?3, strftime('%s', 'now'))",
		      STORE_ARGS(STORE_INT(p->source_id), STORE_INT(ev->id),
				 STORE_TEXT(ev->category)), err) < 0)
		return -1;
	return intake_cursor_set(p->in, p->source_id, p->scope, pos, err);
}

static int pw_series(struct pw_pass *p, const struct pg_pw_event *ev, struct pg_err *err)
{
	struct pg_pw_series s;
	struct pw_mail *mails = NULL;
	int64_t have = 0;
	size_t n = 0;
	int rc = -1, in_tx = 0;

	memset(&s, 0, sizeof(s));
	/* series-completed fires again for a series Patchwork already
	 * completed (another patch joined it): one we hold complete is not
	 * fetched again. */
	if (store_query_int(p->in->st, "look up Patchwork series",
			    "SELECT count(*) FROM series WHERE project = ?1 AND pw_series_id = ?2"
			    " AND state <> 'incomplete'",
			    STORE_ARGS(STORE_TEXT(p->in->project), STORE_INT(ev->series_id)),
			    &have, err) < 0)
		goto out;
	if (have) {
		if (store_begin(p->in->st, err) < 0)
			goto out;
		in_tx = 1;
		if (pw_done(p, ev, err) < 0 || store_commit(p->in->st, err) < 0)
			goto out;
		in_tx = 0;
		rc = 0;
		goto out;
	}
	if (pg_pw_get_series(p->pw, ev->series_id, &s, err) < 0)
		goto out;
	mails = calloc(s.npatches + 1, sizeof(*mails));
	if (!mails) {
		pg_err_set(err, PG_ENOMEM, "out of memory");
		goto out;
	}
	/* The cover first, so that patches find the thread it starts. */
	if (s.has_cover) {
		pg_buf_init(&mails[n].raw, p->in->max_message);
		if (pg_fmt(mails[n].position, sizeof(mails[n].position), "pw:cover:%" PRId64,
			   s.cover.id) < 0) {
			pg_err_set(err, PG_EINVAL, "cover %" PRId64 ": position too long",
				   s.cover.id);
			goto out;
		}
		if (pw_download(p, s.cover.mbox_url, &mails[n], err) < 0)
			goto out;
		n++;
	}
	for (size_t i = 0; i < s.npatches; i++, n++) {
		pg_buf_init(&mails[n].raw, p->in->max_message);
		if (pg_fmt(mails[n].position, sizeof(mails[n].position), "pw:patch:%" PRId64,
			   s.patches[i].id) < 0) {
			pg_err_set(err, PG_EINVAL, "patch %" PRId64 ": position too long",
				   s.patches[i].id);
			goto out;
		}
		mails[n].pw_patch_id = s.patches[i].id;
		if (pw_download(p, s.patches[i].mbox_url, &mails[n], err) < 0)
			goto out;
	}
	if (store_begin(p->in->st, err) < 0)
		goto out;
	in_tx = 1;
	for (size_t i = 0; i < n; i++) {
		struct intake_origin from = {
			.source_id = p->source_id,
			.position = mails[i].position,
			.pw_patch_id = mails[i].pw_patch_id,
			.pw_series_id = s.id,
		};

		if (intake_message(p->in, &from, pg_buf_str(&mails[i].raw), mails[i].raw.len,
				   err) < 0)
			goto out;
	}
	if (pw_done(p, ev, err) < 0 || store_commit(p->in->st, err) < 0)
		goto out;
	in_tx = 0;
	rc = 0;
out:
	if (in_tx)
		store_rollback(p->in->st);
	if (rc < 0)
		pg_err_prefix(err, "series %" PRId64, ev->series_id);
	/* Every slot, not only the n read whole: a download that failed
	 * half-way may have filled one (calloc'd: the others are empty). */
	for (size_t i = 0; mails && i < s.npatches + 1; i++)
		pg_buf_release(&mails[i].raw);
	free(mails);
	pg_pw_series_release(&s);
	return rc;
}

static int pw_comment(struct pw_pass *p, const struct pg_pw_event *ev, struct pg_err *err)
{
	struct pg_trailers tr = PG_TRAILERS_INIT;
	struct pg_pw_comment cm;
	char position[48];
	int64_t series_id = 0;
	int rc = -1, in_tx = 0;

	memset(&cm, 0, sizeof(cm));
	if (!ev->comment_url) {
		pg_err_set(err, PG_EINVAL, "event %" PRId64 ": no comment", ev->id);
		goto out;
	}
	if (pg_pw_get_comment(p->pw, ev->comment_url, &cm, err) < 0 ||
	    pg_trailers_parse(cm.content, strlen(cm.content), &tr, err) < 0)
		goto out;
	if (store_begin(p->in->st, err) < 0)
		goto out;
	in_tx = 1;
	if (tr.recheck.ncontexts > 0) {
		struct pg_err e = PG_ERR_INIT;

		/* Patches carry Patchwork's id; a cover is known by the
		 * position its mail was stored under. */
		if (pg_fmt(position, sizeof(position), "pw:cover:%" PRId64, ev->cover_id) < 0) {
			pg_err_set(err, PG_EINVAL, "cover %" PRId64 ": position too long",
				   ev->cover_id);
			goto out;
		}
		if (ev->patch_id ?
		    store_query_int(p->in->st, "find series of Patchwork patch",
				    "SELECT p.series_id FROM patches p JOIN series s ON s.id = p.series_id"
				    " WHERE s.project = ?1 AND p.pw_patch_id = ?2"
				    " ORDER BY p.series_id DESC LIMIT 1",
				    STORE_ARGS(STORE_TEXT(p->in->project), STORE_INT(ev->patch_id)),
				    &series_id, &e) :
		    store_query_int(p->in->st, "find series of Patchwork cover",
				    "SELECT s.id FROM series s JOIN messages m ON m.id = s.cover_message_id"
				    " WHERE m.source_id = ?1 AND m.position = ?2",
				    STORE_ARGS(STORE_INT(p->source_id), STORE_TEXT(position)),
				    &series_id, &e)) {
			if (e.code != PG_ENOTFOUND) {
				*err = e;
				goto out;
			}
			series_id = 0;
		}
		if (!series_id)
			pg_log_warn("intake", "Patchwork comment %" PRId64 ": Recheck-request on a "
				    "%s we have not seen", cm.id, ev->patch_id ? "patch" : "cover");
		else if (series_recheck(p->in, series_id, "patchwork", cm.msgid,
					cm.submitter_email, &tr, err) < 0)
			goto out;
	}
	if (pw_done(p, ev, err) < 0 || store_commit(p->in->st, err) < 0)
		goto out;
	in_tx = 0;
	rc = 0;
out:
	if (in_tx)
		store_rollback(p->in->st);
	pg_trailers_release(&tr);
	pg_pw_comment_release(&cm);
	return rc;
}

static int pw_on_event(const struct pg_pw_event *ev, void *arg, struct pg_err *err)
{
	struct pw_pass *p = arg;
	int seen = 0;

	if (p->stop && *p->stop)
		return 1;
	if (pw_seen(p, ev->id, &seen, err) < 0)
		return -1;
	if (seen)
		return 0;
	if (strcmp(ev->category, "series-completed") == 0)
		return pw_series(p, ev, err) < 0 ? -1 : 0;
	return pw_comment(p, ev, err) < 0 ? -1 : 0;
}

int intake_patchwork(struct intake *in, const struct intake_src *src,
		     const volatile sig_atomic_t *stop, struct pg_err *err)
{
	struct pg_pw_opts opts = PG_PW_OPTS_INIT;
	struct pw_pass p;
	int rc = -1;

	memset(&p, 0, sizeof(p));
	p.in = in;
	p.stop = stop;
	opts.base_url = src->location;
	opts.project = src->pw_project;
	opts.max_mbox = in->max_message + 4096;
	/* The source's bound holds for every GET, events, series and mboxes
	 * alike; connecting never gets more than the whole. */
	if (src->timeout_s > 0) {
		opts.timeout_ms = (long)src->timeout_s * 1000;
		if (opts.connect_timeout_ms > opts.timeout_ms)
			opts.connect_timeout_ms = opts.timeout_ms;
	}
	if (intake_source(in, src->name, "patchwork", src->location, &p.source_id, err) < 0 ||
	    pg_pw_client_new(&opts, &p.pw, err) < 0)
		goto out;
	for (size_t i = 0; i < sizeof(pw_categories) / sizeof(pw_categories[0]); i++) {
		struct pg_pw_poll_stats stats;
		char cursor[32];
		int64_t since;

		if (stop && *stop)
			break;
		p.category = pw_categories[i];
		if (pg_fmt(p.scope, sizeof(p.scope), "events:%s", p.category) < 0) {
			pg_err_set(err, PG_EINVAL, "events %s: cursor scope too long", p.category);
			goto out;
		}
		if (intake_cursor_get(in, p.source_id, p.scope, cursor, sizeof(cursor), err) < 0)
			goto out;
		if (*cursor)
			since = strtoll(cursor, NULL, 10) - PW_EVENT_OVERLAP_MS;
		else
			since = src->since_ms ? src->since_ms : pg_time_wall_ms() - 86400 * 1000LL;
		for (;;) {
			int64_t before = since;

			if (pg_pw_poll_events(p.pw, p.category, since, pw_on_event, &p, &stats,
					      err) < 0)
				goto out;
			if (stats.last_date_ms >= 0)
				since = stats.last_date_ms;
			/* More pages remain: go on from the last date, unless
			 * the pages held one instant only (then the next pass
			 * goes on; source_events drops what repeats). */
			if (!stats.more || stats.stopped || since <= before)
				break;
		}
	}
	rc = 0;
out:
	if (rc < 0)
		pg_err_prefix(err, "source %s", src->name);
	pg_pw_client_free(p.pw);
	return rc;
}
