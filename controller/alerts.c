/* SPDX-License-Identifier: MIT */
/* Alert mails of located main-branch regressions (alerts.h). */
#include "alerts.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "changes.h"
#include "fmt.h"
#include "log.h"
#include "outbox.h"
#include "sanitize.h"
#include "timeutil.h"
#include "trees.h"

#define COMP "alerts"
/* Change points read per pass: far more than a lab locates in a poll. */
#define ALERTS_BATCH 200
#define ALERTS_TEXT_MAX (64 * 1024)

/* s as one safe line appended to b. */
static int add_line_text(struct pg_buf *b, const char *s)
{
	return pg_sanitize(b, s ? s : "", s ? strlen(s) : 0, PG_SAN_LINE);
}

/* The subject: "main-branch regression: TREE/BRANCH BENCH METRIC -8.1% at
 * OID12 (SUMMARY)", every part made safe. */
static int make_subject(const struct change_point *c, const struct trees_commit_info *ci,
			struct pg_buf *b)
{
	char pct[32];

	if (pg_fmt(pct, sizeof(pct), "%+.1f%%", c->effect) < 0)
		return -1;
	if (pg_buf_adds(b, "main-branch regression: ") < 0 || add_line_text(b, c->tree) < 0 ||
	    pg_buf_addch(b, '/') < 0 || add_line_text(b, c->branch) < 0 ||
	    pg_buf_addch(b, ' ') < 0 || add_line_text(b, c->benchmark) < 0 ||
	    pg_buf_addch(b, ' ') < 0 || add_line_text(b, c->metric) < 0 ||
	    pg_buf_printf(b, " %s at %.12s", pct, c->located) < 0)
		return -1;
	if (ci && *ci->summary &&
	    (pg_buf_adds(b, " (") < 0 || add_line_text(b, ci->summary) < 0 ||
	     pg_buf_addch(b, ')') < 0))
		return -1;
	return 0;
}

static int make_table(const struct change_point *c, const struct trees_commit_info *ci,
		      const char *ci_note, const char *public_url, struct pg_buf *b)
{
	char when[PG_TIME_UTC_MAX];

	if (pg_buf_printf(b, "Change point %" PRId64 ": ", c->id) < 0 ||
	    add_line_text(b, c->benchmark) < 0 || pg_buf_addch(b, ' ') < 0 ||
	    add_line_text(b, c->metric) < 0 ||
	    pg_buf_printf(b, " %+.1f%% (p=%.2g), worse\n", c->effect, c->p) < 0 ||
	    pg_buf_adds(b, "Branch: ") < 0 || add_line_text(b, c->tree) < 0 ||
	    pg_buf_addch(b, '/') < 0 || add_line_text(b, c->branch) < 0 ||
	    pg_buf_adds(b, "\nHost: ") < 0 || add_line_text(b, c->host) < 0 ||
	    pg_buf_adds(b, ", build mode ") < 0 || add_line_text(b, c->build_mode) < 0 ||
	    (*c->context && (pg_buf_adds(b, ", context ") < 0 || add_line_text(b, c->context) < 0)) ||
	    pg_buf_printf(b, "\nCommit: %s\n", c->located) < 0)
		return -1;
	if (ci) {
		pg_time_format_utc(ci->author_time * 1000, 0, when, sizeof(when));
		if (pg_buf_adds(b, "Subject: ") < 0 || add_line_text(b, ci->summary) < 0 ||
		    pg_buf_adds(b, "\nAuthor: ") < 0 || add_line_text(b, ci->author_name) < 0 ||
		    pg_buf_adds(b, " <") < 0 || add_line_text(b, ci->author_email) < 0 ||
		    pg_buf_printf(b, ">, %s\n", when) < 0)
			return -1;
	} else if (pg_buf_adds(b, "Author: unknown (") < 0 || add_line_text(b, ci_note) < 0 ||
		   pg_buf_adds(b, ")\n") < 0) {
		return -1;
	}
	if (pg_buf_printf(b, "Found between %.12s and %.12s; located by %" PRId64
			  " bisection baseline%s (", c->first_before, c->first_after,
			  c->bisect_runs, c->bisect_runs == 1 ? "" : "s") < 0 ||
	    add_line_text(b, c->why) < 0 || pg_buf_adds(b, ")\n") < 0)
		return -1;
	if (public_url && *public_url) {
		size_t len = strlen(public_url);

		while (len > 0 && public_url[len - 1] == '/')
			len--;
		if (pg_buf_printf(b, "Dashboard: %.*s/changes?state=confirmed#cp-%" PRId64 "\n",
				  (int)len, public_url, c->id) < 0)
			return -1;
	}
	return 0;
}

static int make_reproduce(const struct change_point *c, struct pg_buf *b)
{
	struct pg_buf ctx = PG_BUF_INIT(CHANGES_TEXT_MAX * PG_SAN_GROWTH + 16);
	int rc = -1;

	if (*c->context &&
	    (pg_buf_adds(&ctx, " --context ") < 0 || add_line_text(&ctx, c->context) < 0))
		goto out;
	/* The names are the profile's and the agent's, already slugs; made
	 * safe all the same. */
	if (pg_buf_adds(b, "To measure the commit and the one before it again:\n") < 0)
		goto out;
	for (int i = 0; i < 2; i++)
		if (pg_buf_adds(b, "  perfgate-controller baseline run ") < 0 ||
		    add_line_text(b, c->tree) < 0 || pg_buf_addch(b, ' ') < 0 ||
		    add_line_text(b, c->branch) < 0 ||
		    pg_buf_printf(b, " --commit %s%s\n", i ? c->located : c->before,
				  pg_buf_str(&ctx)) < 0)
			goto out;
	if (pg_buf_printf(b, "  perfgate-controller changes show %" PRId64 "\n", c->id) < 0 ||
	    pg_buf_printf(b, "  git show %s\n", c->located) < 0)
		goto out;
	rc = 0;
out:
	pg_buf_release(&ctx);
	return rc;
}

/* Queue the mail of c in its own transaction. */
static int alert_one(const struct ctl_config *cfg, struct store *st, const char *mirror_root,
		     const char *public_url, const struct change_point *c, int64_t now_ms,
		     unsigned int *queued, struct pg_err *err)
{
	struct pg_buf subject = PG_BUF_INIT(ALERTS_TEXT_MAX);
	struct pg_buf table = PG_BUF_INIT(ALERTS_TEXT_MAX);
	struct pg_buf repro = PG_BUF_INIT(ALERTS_TEXT_MAX);
	struct trees_commit_info ci;
	struct pg_err gerr = PG_ERR_INIT;
	char mirror[TREES_PATH_MAX], desc[64];
	bool have = false, known;
	unsigned int n = 0;
	int rc = -1;

	if (outbox_alert_queued(st, c->id, &known, err) < 0)
		goto out;
	if (known) {
		rc = 0;
		goto out;
	}
	if (trees_mirror_path(mirror_root, c->tree, mirror, sizeof(mirror), &gerr) == 0 &&
	    trees_commit_info(mirror, c->located, &ci, &gerr) == 0)
		have = true;
	if (pg_fmt(desc, sizeof(desc), "Performance regression on a main branch") < 0 ||
	    make_subject(c, have ? &ci : NULL, &subject) < 0 ||
	    make_table(c, have ? &ci : NULL, gerr.msg, public_url, &table) < 0 ||
	    make_reproduce(c, &repro) < 0) {
		pg_err_set(err, PG_ETOOBIG, "change point %" PRId64 ": alert text too long", c->id);
		goto out;
	}
	{
		const struct outbox_alert a = {
			.change_point_id = c->id,
			.to_name = cfg->baseline.alert_to_name,
			.to_addr = cfg->baseline.alert_to_addr,
			.subject = pg_buf_str(&subject),
			.description = desc,
			.table = pg_buf_str(&table),
			.reproduce = pg_buf_str(&repro),
		};

		if (store_begin(st, err) < 0)
			goto out;
		if (outbox_queue_alert_tx(st, &cfg->mail, &a, now_ms, &n, err) < 0 ||
		    store_commit(st, err) < 0) {
			store_rollback(st);
			goto out;
		}
	}
	if (n) {
		(*queued)++;
		pg_log_info(COMP, "change point %" PRId64 ": alert mail queued to %s", c->id,
			    cfg->baseline.alert_to_addr);
	}
	rc = 0;
out:
	pg_buf_release(&subject);
	pg_buf_release(&table);
	pg_buf_release(&repro);
	return rc;
}

int alerts_pass(const struct ctl_config *cfg, struct store *st, const char *mirror_root,
		const char *public_url, int64_t now_ms, unsigned int *queued,
		struct pg_err *err)
{
	struct change_point *cps = NULL;
	size_t n = 0;
	int rc = -1;

	*queued = 0;
	if (!cfg->baseline.alert_to_addr || !cfg->mail.enabled)
		return 0;
	if (changes_list(st, "confirmed", ALERTS_BATCH, &cps, &n, err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct pg_err e = PG_ERR_INIT;

		if (!(cps[i].effect < 0) || !*cps[i].located)
			continue;
		if (alert_one(cfg, st, mirror_root, public_url, &cps[i], now_ms, queued, &e) == 0)
			continue;
		if (e.code == PG_EDB) {
			*err = e;
			goto out;
		}
		pg_log_warn(COMP, "change point %" PRId64 ": no alert mail: %s", cps[i].id, e.msg);
	}
	rc = 0;
out:
	free(cps);
	if (rc)
		pg_err_prefix(err, "alerts");
	return rc;
}
