/* SPDX-License-Identifier: MIT */
#include "ctl_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conffile.h"
#include "fmt.h"
#include "json.h"
#include "log.h"
#include "sched.h"
#include "timeutil.h"

static const char *const ctl_config_fields[] = {
	"db", "data_dir", "profiles_dir", "profiles", "log_level", "project", "sources",
	"intake", "api", "mail", "checks", "baseline", "ssh", NULL
};
static const char *const ctl_baseline_fields[] = {
	"enabled", "interval_s", "poll_s", "alert_to", "drain_on_drift", NULL
};
static const char *const ctl_source_fields[] = {
	"name", "type", "url", "project", "token_file", "timeout_s", NULL
};
static const char *const ctl_intake_fields[] = {
	"interval_s", "stale_after_s", "batch", "max_message_bytes", "since", NULL
};

static const char *const ctl_api_fields[] = {
	"listen", "public_url", "admin_token_file", "lease_s", "max_attempts",
	"max_body_bytes", "threads", "web_dir", "archive_url", NULL
};

static const char *const ctl_mail_fields[] = {
	"enabled", "smtp_url", "starttls", "username", "password_file", "ca_file", "from",
	"to", "cc_author_on", "timeout_s", "patch_url_template", NULL
};

static const char *const ctl_checks_fields[] = {
	"enabled", "patchwork_url", "project", "token_file", "username", "timeout_s",
	"max_backoff_s", NULL
};

#define CTL_MAX_SOURCES 64
#define CTL_URL_MAX 1024

/* Defaults of the "mail" section.  http://, not https://: dpdk.org's bot
 * (dpdk-ci tools/update-pw.sh) finds the patch id with the pattern
 * "http://.*dpdk.org/.*patch/N" and misses an https:// URL. */
#define CTL_MAIL_TO "test-report@dpdk.org"
#define CTL_MAIL_TIMEOUT_S 60
#define CTL_MAIL_PATCH_URL "http://patches.dpdk.org/patch/{id}/"

/* Each request to a Patchwork source. */
#define CTL_SOURCE_TIMEOUT_S 30

/* Defaults of the "checks" section. */
#define CTL_CHECKS_TIMEOUT_S 30
#define CTL_CHECKS_BACKOFF_S 900

/* Defaults of the "api" section. */
#define CTL_API_LISTEN "127.0.0.1:8080"
#define CTL_API_LEASE_S 60
#define CTL_API_MAX_ATTEMPTS 3
#define CTL_API_MAX_BODY (16LL << 20)
#define CTL_API_THREADS 4

const char *ctl_source_type_name(enum ctl_source_type t)
{
	return t == CTL_SOURCE_PATCHWORK ? "patchwork" : "public-inbox";
}

const struct ctl_source *ctl_config_source(const struct ctl_config *c, const char *name)
{
	for (size_t i = 0; i < c->n_sources; i++)
		if (strcmp(c->sources[i].name, name) == 0)
			return &c->sources[i];
	return NULL;
}

static int ctl_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= 64 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

static void ctl_sources_free(struct ctl_source *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].url);
		free(v[i].pw_project);
		free(v[i].token_file);
	}
	free(v);
}

static int ctl_config_source_parse(struct ctl_source *src, const cJSON *o, const char *dir,
				   struct pg_err *err)
{
	const char *type = NULL;
	int64_t v;

	if (!cJSON_IsObject(o))
		return pg_err_set(err, PG_EINVAL, "expected an object, got %s", pg_json_type_name(o));
	if (pg_json_check_keys(o, ctl_source_fields, err) < 0 ||
	    pg_json_get_string(o, "type", 1, &type, err) < 0 ||
	    pg_config_string(o, "name", 0, dir, &src->name, err) < 0)
		return -1;
	if (!src->name)
		return pg_err_set(err, PG_EINVAL, "field 'name': missing");
	if (!ctl_name_ok(src->name))
		return pg_err_set(err, PG_EINVAL, "field 'name': '%s' must be letters, digits, "
				  "'_', '.', '-'", src->name);
	if (strcmp(type, "public-inbox") == 0)
		src->type = CTL_SOURCE_PUBLIC_INBOX;
	else if (strcmp(type, "patchwork") == 0)
		src->type = CTL_SOURCE_PATCHWORK;
	else
		return pg_err_set(err, PG_EINVAL, "field 'type': '%s' is not public-inbox or patchwork",
				  type);
	/* A local archive is a path (relative to this file); a remote one and
	 * Patchwork are URLs. */
	if (pg_config_string(o, "url", 0, dir, &src->url, err) < 0)
		return -1;
	if (!src->url)
		return pg_err_set(err, PG_EINVAL, "field 'url': missing");
	if (!strstr(src->url, "://")) {
		char *abs;

		if (src->type == CTL_SOURCE_PATCHWORK)
			return pg_err_set(err, PG_EINVAL, "field 'url': '%s' is not an http(s) URL",
					  src->url);
		abs = pg_config_resolve(dir, src->url);
		if (!abs)
			return pg_err_set(err, PG_ENOMEM, "out of memory");
		free(src->url);
		src->url = abs;
	} else if (strncmp(src->url, "http://", 7) != 0 && strncmp(src->url, "https://", 8) != 0) {
		return pg_err_set(err, PG_EINVAL, "field 'url': '%s' is not an http(s) URL or a path",
				  src->url);
	}
	if (pg_config_string(o, "project", 0, dir, &src->pw_project, err) < 0 ||
	    pg_config_string(o, "token_file", 1, dir, &src->token_file, err) < 0)
		return -1;
	if (src->type == CTL_SOURCE_PATCHWORK && !src->pw_project)
		return pg_err_set(err, PG_EINVAL, "field 'project': missing (the Patchwork project)");
	v = CTL_SOURCE_TIMEOUT_S;
	if (pg_json_get_int(o, "timeout_s", 0, 1, CTL_SOURCE_TIMEOUT_MAX_S, &v, err) < 0)
		return -1;
	/* A public-inbox archive is fetched by libgit2, which has no such
	 * bound: a field that does nothing would mislead. */
	if (src->type != CTL_SOURCE_PATCHWORK && cJSON_GetObjectItemCaseSensitive(o, "timeout_s"))
		return pg_err_set(err, PG_EINVAL, "field 'timeout_s': only a patchwork source has one");
	src->timeout_s = (int)v;
	return 0;
}

static int ctl_config_sources(struct ctl_config *c, const cJSON *root, const char *dir,
			      struct pg_err *err)
{
	const cJSON *arr = NULL, *item;
	size_t n, i = 0;
	int rc;

	rc = pg_json_get_array(root, "sources", 0, &arr, err);
	if (rc <= 0)
		return rc;
	n = (size_t)cJSON_GetArraySize(arr);
	if (n > CTL_MAX_SOURCES)
		return pg_err_set(err, PG_EINVAL, "field 'sources': more than %d", CTL_MAX_SOURCES);
	if (n == 0)
		return 0;
	c->sources = calloc(n, sizeof(*c->sources));
	if (!c->sources)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	cJSON_ArrayForEach(item, arr) {
		c->n_sources = i + 1;
		if (ctl_config_source_parse(&c->sources[i], item, dir, err) < 0) {
			pg_err_prefix(err, "field 'sources[%zu]'", i);
			return -1;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(c->sources[j].name, c->sources[i].name) == 0)
				return pg_err_set(err, PG_EINVAL, "field 'sources[%zu]': name '%s' "
						  "is used twice", i, c->sources[i].name);
		i++;
	}
	return 0;
}

static int ctl_config_intake(struct ctl_config *c, const cJSON *root, struct pg_err *err)
{
	const cJSON *o = NULL;
	const char *since = NULL;
	int64_t v;
	int rc;

	rc = pg_json_get_object(root, "intake", 0, &o, err);
	if (rc <= 0)
		return rc;
	if (pg_json_check_keys(o, ctl_intake_fields, err) < 0)
		goto fail;
	v = c->intake.interval_s;
	if (pg_json_get_int(o, "interval_s", 0, 1, 86400, &v, err) < 0)
		goto fail;
	c->intake.interval_s = (int)v;
	if (pg_json_get_int(o, "stale_after_s", 0, 60, 365 * 86400LL,
			    &c->intake.stale_after_s, err) < 0)
		goto fail;
	v = c->intake.batch;
	if (pg_json_get_int(o, "batch", 0, 1, 100000, &v, err) < 0)
		goto fail;
	c->intake.batch = (int)v;
	if (pg_json_get_int(o, "max_message_bytes", 0, 1024, 1024LL << 20,
			    &c->intake.max_message_bytes, err) < 0 ||
	    pg_json_get_string(o, "since", 0, &since, err) < 0)
		goto fail;
	if (since && pg_time_parse_utc(since, &c->intake.since_ms) < 0) {
		pg_err_set(err, PG_EINVAL, "field 'since': '%s' is not YYYY-MM-DDTHH:MM:SS (UTC)",
			   since);
		goto fail;
	}
	return 0;
fail:
	pg_err_prefix(err, "field 'intake'");
	return -1;
}

/*
 * Split "HOST:PORT" or "[IPV6]:PORT" into a malloc'd host (brackets
 * removed) and a port in 0..65535.  The host is resolved only when the
 * server starts: a name that does not resolve is a start-up error, not a
 * configuration error.
 */
static int ctl_api_listen(struct ctl_api *a, struct pg_err *err)
{
	const char *s = a->listen, *colon, *h = s;
	size_t hlen;
	char *end = NULL;
	long port;

	if (*s == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			goto bad;
		h = s + 1;
		hlen = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			goto bad;
		hlen = (size_t)(colon - s);
	}
	if (hlen == 0 || hlen > 255)
		goto bad;
	for (size_t i = 0; i < hlen; i++)
		if (!isalnum((unsigned char)h[i]) && !strchr(".-:_%", h[i]))
			goto bad;
	if (!isdigit((unsigned char)colon[1]))
		goto bad;
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (errno || *end || port < 0 || port > 65535)
		goto bad;
	a->host = strndup(h, hlen);
	if (!a->host)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	a->port = (int)port;
	return 0;
bad:
	return pg_err_set(err, PG_EINVAL, "field 'listen': '%s' is not HOST:PORT or [IPV6]:PORT "
			  "with a port of 0 to 65535", s);
}

/* An http(s) URL of printable characters; trailing slashes are dropped so
 * that links are built by appending "/api/v1/...". */
/* A mail archive's URL template: http(s), with {msgid} once. */
static int ctl_api_archive_url(const char *t, struct pg_err *err)
{
	const char *m = strstr(t, "{msgid}");

	if (strncmp(t, "http://", 7) != 0 && strncmp(t, "https://", 8) != 0)
		return pg_err_set(err, PG_EINVAL, "field 'archive_url': '%.200s' is not an "
				  "http(s) URL", t);
	if (!m || strstr(m + 1, "{msgid}"))
		return pg_err_set(err, PG_EINVAL, "field 'archive_url': '%.200s' must hold "
				  "{msgid} once", t);
	for (const char *p = t; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '"' || *p == '<' || *p == '>')
			return pg_err_set(err, PG_EINVAL, "field 'archive_url': '%.200s' has a "
					  "space, a quote or a control character", t);
	return 0;
}

static int ctl_api_public_url(char *url, struct pg_err *err)
{
	size_t n = strlen(url);

	if (n > CTL_URL_MAX)
		return pg_err_set(err, PG_EINVAL, "field 'public_url': longer than %d bytes",
				  CTL_URL_MAX);
	for (size_t i = 0; i < n; i++)
		if (!isgraph((unsigned char)url[i]))
			return pg_err_set(err, PG_EINVAL, "field 'public_url': '%s' has a space or a "
					  "control character", url);
	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
		return pg_err_set(err, PG_EINVAL, "field 'public_url': '%s' is not an http(s) URL",
				  url);
	if (strchr(url, '?') || strchr(url, '#'))
		return pg_err_set(err, PG_EINVAL, "field 'public_url': '%s' has a query or a "
				  "fragment", url);
	while (n > 8 && url[n - 1] == '/')
		url[--n] = '\0';
	if (url[n - 1] == '/')
		return pg_err_set(err, PG_EINVAL, "field 'public_url': '%s' has no host", url);
	return 0;
}

static int ctl_config_api(struct ctl_config *c, const cJSON *root, const char *dir,
			  struct pg_err *err)
{
	struct ctl_api *a = &c->api;
	const cJSON *o = NULL;
	int64_t v;
	int rc;

	rc = pg_json_get_object(root, "api", 0, &o, err);
	if (rc <= 0)
		return rc;
	a->enabled = true;
	a->listen = strdup(CTL_API_LISTEN);
	if (!a->listen)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	if (pg_json_check_keys(o, ctl_api_fields, err) < 0 ||
	    pg_config_string(o, "listen", 0, dir, &a->listen, err) < 0 ||
	    ctl_api_listen(a, err) < 0 ||
	    pg_config_string(o, "public_url", 0, dir, &a->public_url, err) < 0 ||
	    (a->public_url && ctl_api_public_url(a->public_url, err) < 0) ||
	    pg_config_string(o, "admin_token_file", 1, dir, &a->admin_token_file, err) < 0 ||
	    pg_config_string(o, "web_dir", 1, dir, &a->web_dir, err) < 0 ||
	    pg_config_string(o, "archive_url", 0, dir, &a->archive_url, err) < 0 ||
	    (a->archive_url && ctl_api_archive_url(a->archive_url, err) < 0) ||
	    pg_json_get_int(o, "lease_s", 0, CTL_API_LEASE_MIN_S, SCHED_LEASE_MAX_S,
			    &a->lease_s, err) < 0 ||
	    pg_json_get_int(o, "max_attempts", 0, 1, SCHED_MAX_ATTEMPTS, &a->max_attempts,
			    err) < 0 ||
	    pg_json_get_int(o, "max_body_bytes", 0, CTL_API_BODY_MIN, CTL_API_BODY_MAX,
			    &a->max_body_bytes, err) < 0)
		goto fail;
	v = a->threads;
	if (pg_json_get_int(o, "threads", 0, 1, CTL_API_THREADS_MAX, &v, err) < 0)
		goto fail;
	a->threads = (int)v;
	return 0;
fail:
	pg_err_prefix(err, "field 'api'");
	return -1;
}

/* A mailbox field: keep it as written, and its parts. */
static int ctl_mail_mailbox(const char *key, const char *s, char **name, char **addr,
			    struct pg_err *err)
{
	free(*name);
	free(*addr);
	*name = *addr = NULL;
	if (report_mail_parse_mailbox(s, name, addr, err) < 0) {
		pg_err_prefix(err, "field '%s'", key);
		return -1;
	}
	return 0;
}

static int ctl_config_mail(struct ctl_config *c, const cJSON *root, const char *dir,
			   struct pg_err *err)
{
	struct ctl_mail *m = &c->mail;
	const cJSON *o = NULL;
	const char *starttls = NULL, *cc = NULL;
	char url[REPORT_MAIL_URL_MAX + 1];
	bool tls = false;
	int64_t v;
	int rc;

	rc = pg_json_get_object(root, "mail", 0, &o, err);
	if (rc <= 0)
		return rc;
	if (pg_json_check_keys(o, ctl_mail_fields, err) < 0 ||
	    pg_json_get_bool(o, "enabled", 0, &m->enabled, err) < 0 ||
	    pg_config_string(o, "smtp_url", 0, dir, &m->smtp_url, err) < 0 ||
	    pg_json_get_string(o, "starttls", 0, &starttls, err) < 0 ||
	    pg_config_string(o, "username", 0, dir, &m->username, err) < 0 ||
	    pg_config_string(o, "password_file", 1, dir, &m->password_file, err) < 0 ||
	    pg_config_string(o, "ca_file", 1, dir, &m->ca_file, err) < 0 ||
	    pg_config_string(o, "from", 0, dir, &m->from, err) < 0 ||
	    pg_config_string(o, "to", 0, dir, &m->to, err) < 0 ||
	    pg_json_get_string(o, "cc_author_on", 0, &cc, err) < 0 ||
	    pg_config_string(o, "patch_url_template", 0, dir, &m->patch_url_template, err) < 0)
		goto fail;
	v = m->timeout_s;
	if (pg_json_get_int(o, "timeout_s", 0, 1, CTL_MAIL_TIMEOUT_MAX_S, &v, err) < 0)
		goto fail;
	m->timeout_s = (int)v;
	if (m->smtp_url && smtp_check_url(m->smtp_url, &tls, err) < 0) {
		pg_err_prefix(err, "field 'smtp_url'");
		goto fail;
	}
	if (starttls && smtp_starttls_parse(starttls, &m->starttls) < 0) {
		pg_err_set(err, PG_EINVAL, "field 'starttls': '%s' is not required, optional or "
			   "off", starttls);
		goto fail;
	}
	if (cc && report_cc_author_parse(cc, &m->cc_author_on) < 0) {
		pg_err_set(err, PG_EINVAL, "field 'cc_author_on': '%s' is not failure, never or "
			   "always", cc);
		goto fail;
	}
	if (!m->username != !m->password_file) {
		pg_err_set(err, PG_EINVAL, "field '%s': missing (username and password_file go "
			   "together)", m->username ? "password_file" : "username");
		goto fail;
	}
	/* "optional" would hand the password to whoever strips STARTTLS. */
	if (m->username && m->smtp_url && !tls && m->starttls != SMTP_STARTTLS_REQUIRED) {
		pg_err_set(err, PG_EINVAL, "field 'starttls': a password is only sent over TLS: "
			   "use \"required\" or an smtps:// URL");
		goto fail;
	}
	if ((m->from && ctl_mail_mailbox("from", m->from, &m->from_name, &m->from_addr,
					 err) < 0) ||
	    ctl_mail_mailbox("to", m->to, &m->to_name, &m->to_addr, err) < 0)
		goto fail;
	if (report_mail_patch_url(m->patch_url_template, 1, url, sizeof(url), err) < 0) {
		pg_err_prefix(err, "field 'patch_url_template'");
		goto fail;
	}
	if (m->enabled && (!m->smtp_url || !m->from)) {
		pg_err_set(err, PG_EINVAL, "field '%s': missing (mail is enabled)",
			   !m->smtp_url ? "smtp_url" : "from");
		goto fail;
	}
	return 0;
fail:
	pg_err_prefix(err, "field 'mail'");
	return -1;
}

/* The Patchwork API root: http(s), printable, no query or fragment;
 * trailing slashes dropped (request paths are appended to it). */
static int ctl_checks_url(char *url, struct pg_err *err)
{
	size_t n = strlen(url);

	if (n > CTL_URL_MAX)
		return pg_err_set(err, PG_EINVAL, "field 'patchwork_url': longer than %d bytes",
				  CTL_URL_MAX);
	for (size_t i = 0; i < n; i++)
		if (!isgraph((unsigned char)url[i]))
			return pg_err_set(err, PG_EINVAL, "field 'patchwork_url': '%s' has a space "
					  "or a control character", url);
	if ((strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) ||
	    strchr(url, '?') || strchr(url, '#'))
		return pg_err_set(err, PG_EINVAL, "field 'patchwork_url': '%s' is not an http(s) "
				  "URL without query or fragment", url);
	while (n > 8 && url[n - 1] == '/')
		url[--n] = '\0';
	if (url[n - 1] == '/')
		return pg_err_set(err, PG_EINVAL, "field 'patchwork_url': '%s' has no host", url);
	return 0;
}

static int ctl_config_checks(struct ctl_config *c, const cJSON *root, const char *dir,
			     struct pg_err *err)
{
	struct ctl_checks *k = &c->checks;
	const cJSON *o = NULL;
	int64_t v;
	int rc;

	rc = pg_json_get_object(root, "checks", 0, &o, err);
	if (rc <= 0)
		return rc;
	if (pg_json_check_keys(o, ctl_checks_fields, err) < 0 ||
	    pg_json_get_bool(o, "enabled", 0, &k->enabled, err) < 0 ||
	    pg_config_string(o, "patchwork_url", 0, dir, &k->patchwork_url, err) < 0 ||
	    (k->patchwork_url && ctl_checks_url(k->patchwork_url, err) < 0) ||
	    pg_config_string(o, "project", 0, dir, &k->project, err) < 0 ||
	    pg_config_string(o, "token_file", 1, dir, &k->token_file, err) < 0 ||
	    pg_config_string(o, "username", 0, dir, &k->username, err) < 0 ||
	    pg_json_get_int(o, "max_backoff_s", 0, 1, CTL_CHECKS_BACKOFF_MAX_S,
			    &k->max_backoff_s, err) < 0)
		goto fail;
	v = k->timeout_s;
	if (pg_json_get_int(o, "timeout_s", 0, 1, CTL_CHECKS_TIMEOUT_MAX_S, &v, err) < 0)
		goto fail;
	k->timeout_s = (int)v;
	if (k->project && !ctl_name_ok(k->project)) {
		pg_err_set(err, PG_EINVAL, "field 'project': '%s' must be letters, digits, '_', "
			   "'.', '-'", k->project);
		goto fail;
	}
	/* Sent in a query string and compared with Patchwork's user names. */
	if (k->username && !ctl_name_ok(k->username)) {
		pg_err_set(err, PG_EINVAL, "field 'username': '%s' must be letters, digits, '_', "
			   "'.', '-'", k->username);
		goto fail;
	}
	if (k->enabled && (!k->patchwork_url || !k->token_file)) {
		pg_err_set(err, PG_EINVAL, "field '%s': missing (checks are enabled)",
			   !k->patchwork_url ? "patchwork_url" : "token_file");
		goto fail;
	}
	return 0;
fail:
	pg_err_prefix(err, "field 'checks'");
	return -1;
}

static int ctl_config_baseline(struct ctl_config *c, const cJSON *root, struct pg_err *err)
{
	struct ctl_baseline *b = &c->baseline;
	const cJSON *o = NULL;
	int rc;

	rc = pg_json_get_object(root, "baseline", 0, &o, err);
	if (rc <= 0)
		return rc;
	if (pg_json_check_keys(o, ctl_baseline_fields, err) < 0 ||
	    pg_json_get_bool(o, "enabled", 0, &b->enabled, err) < 0 ||
	    pg_json_get_int(o, "interval_s", 0, 600, 90 * 86400, &b->interval_s, err) < 0 ||
	    pg_json_get_int(o, "poll_s", 0, 10, 86400, &b->poll_s, err) < 0 ||
	    pg_json_get_bool(o, "drain_on_drift", 0, &b->drain_on_drift, err) < 0 ||
	    pg_config_string(o, "alert_to", 0, NULL, &b->alert_to, err) < 0 ||
	    (b->alert_to &&
	     ctl_mail_mailbox("alert_to", b->alert_to, &b->alert_to_name, &b->alert_to_addr,
			      err) < 0)) {
		pg_err_prefix(err, "field 'baseline'");
		return -1;
	}
	if (b->alert_to && !c->mail.enabled)
		return pg_err_set(err, PG_EINVAL, "field 'baseline': alert_to '%s' needs the "
				  "'mail' section enabled (its server and From)", b->alert_to);
	return 0;
}

static void ctl_checks_free(struct ctl_checks *k)
{
	free(k->patchwork_url);
	free(k->project);
	free(k->token_file);
	free(k->username);
}

static void ctl_mail_free(struct ctl_mail *m)
{
	free(m->smtp_url);
	free(m->username);
	free(m->password_file);
	free(m->ca_file);
	free(m->from);
	free(m->from_name);
	free(m->from_addr);
	free(m->to);
	free(m->to_name);
	free(m->to_addr);
	free(m->patch_url_template);
}

static void ctl_api_free(struct ctl_api *a)
{
	free(a->listen);
	free(a->host);
	free(a->public_url);
	free(a->admin_token_file);
	free(a->web_dir);
	free(a->archive_url);
}

void ctl_config_free(struct ctl_config *c)
{
	free(c->path);
	free(c->db);
	free(c->data_dir);
	free(c->profiles_dir);
	pg_config_strings_free(c->profiles, c->n_profiles);
	free(c->log_level);
	free(c->project);
	ctl_sources_free(c->sources, c->n_sources);
	ctl_api_free(&c->api);
	ctl_mail_free(&c->mail);
	ctl_checks_free(&c->checks);
	free(c->baseline.alert_to);
	free(c->baseline.alert_to_name);
	free(c->baseline.alert_to_addr);
	ssh_config_free(&c->ssh);
	memset(c, 0, sizeof(*c));
}

static int ctl_config_defaults(struct ctl_config *c, struct pg_err *err)
{
	c->db = strdup(PG_LOCALSTATEDIR "/perfgate/perfgate.db");
	c->data_dir = strdup(PG_LOCALSTATEDIR "/perfgate");
	c->profiles_dir = strdup(PG_DATADIR "/perfgate/profiles");
	c->log_level = strdup("info");
	c->project = strdup("dpdk");
	c->intake.interval_s = 300;
	c->intake.stale_after_s = 2 * 86400;
	c->intake.batch = 256;
	c->intake.max_message_bytes = 32LL << 20;
	/* The API's numbers apply also without an "api" section: the daemon
	 * still sweeps expired leases with max_attempts. */
	c->api.lease_s = CTL_API_LEASE_S;
	c->api.max_attempts = CTL_API_MAX_ATTEMPTS;
	c->api.max_body_bytes = CTL_API_MAX_BODY;
	c->api.threads = CTL_API_THREADS;
	c->mail.starttls = SMTP_STARTTLS_REQUIRED;
	c->mail.cc_author_on = REPORT_CC_AUTHOR_FAILURE;
	c->mail.timeout_s = CTL_MAIL_TIMEOUT_S;
	c->mail.to = strdup(CTL_MAIL_TO);
	c->mail.to_addr = strdup(CTL_MAIL_TO);
	c->mail.patch_url_template = strdup(CTL_MAIL_PATCH_URL);
	c->checks.timeout_s = CTL_CHECKS_TIMEOUT_S;
	c->checks.max_backoff_s = CTL_CHECKS_BACKOFF_S;
	c->baseline.interval_s = CTL_BASELINE_INTERVAL_S;
	c->baseline.poll_s = CTL_BASELINE_POLL_S;
	ssh_config_defaults(&c->ssh);
	if (!c->db || !c->data_dir || !c->profiles_dir || !c->log_level || !c->project ||
	    !c->mail.to || !c->mail.to_addr || !c->mail.patch_url_template)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	return 0;
}

static int ctl_config_parse(void *cfg, const cJSON *root, const char *dir,
			    struct pg_err *err)
{
	struct ctl_config *c = cfg;

	if (pg_json_check_keys(root, ctl_config_fields, err) < 0 ||
	    pg_config_string(root, "db", 1, dir, &c->db, err) < 0 ||
	    pg_config_string(root, "data_dir", 1, dir, &c->data_dir, err) < 0 ||
	    pg_config_string(root, "profiles_dir", 1, dir, &c->profiles_dir, err) < 0 ||
	    pg_config_strings(root, "profiles", &c->profiles, &c->n_profiles, err) < 0 ||
	    pg_config_string(root, "log_level", 0, dir, &c->log_level, err) < 0 ||
	    pg_config_string(root, "project", 0, dir, &c->project, err) < 0 ||
	    ctl_config_sources(c, root, dir, err) < 0 ||
	    ctl_config_intake(c, root, err) < 0 ||
	    ctl_config_api(c, root, dir, err) < 0 ||
	    ctl_config_mail(c, root, dir, err) < 0 ||
	    ctl_config_checks(c, root, dir, err) < 0 ||
	    ctl_config_baseline(c, root, err) < 0 ||
	    ssh_config_parse(&c->ssh, root, dir, err) < 0)
		return -1;
	if (!ctl_name_ok(c->project))
		return pg_err_set(err, PG_EINVAL, "field 'project': '%s' must be letters, digits, "
				  "'_', '.', '-'", c->project);
	if (!c->checks.project) {
		c->checks.project = strdup(c->project);
		if (!c->checks.project)
			return pg_err_set(err, PG_ENOMEM, "out of memory");
	}
	if (pg_config_check_common(c->profiles, c->n_profiles, c->log_level, err) < 0)
		return -1;
	return 0;
}

int ctl_config_load(struct ctl_config *c, const char *path, struct pg_err *err)
{
	memset(c, 0, sizeof(*c));
	if (ctl_config_defaults(c, err) < 0 ||
	    pg_config_load(path, CTL_CONFIG_DEFAULT, ctl_config_parse, c, &c->path, err) < 0) {
		ctl_config_free(c);
		return -1;
	}
	return 0;
}

int ctl_config_load_text(struct ctl_config *c, const char *text, size_t len, const char *dir,
			 struct pg_err *err)
{
	memset(c, 0, sizeof(*c));
	if (ctl_config_defaults(c, err) < 0 ||
	    pg_config_load_text(text, len, dir, ctl_config_parse, c, err) < 0) {
		ctl_config_free(c);
		return -1;
	}
	return 0;
}

int ctl_config_set_db(struct ctl_config *c, const char *db, struct pg_err *err)
{
	char *abs = pg_config_absolute(db);

	if (!abs)
		return pg_err_set(err, PG_ENOMEM, "--db: out of memory");
	free(c->db);
	c->db = abs;
	return 0;
}

/* "api": null when the section is absent (no HTTP), else every member. */
static int ctl_api_to_json(cJSON *o, const struct ctl_api *a)
{
	cJSON *api;
	char *url = NULL;
	int rc = -1;

	if (!a->enabled)
		return cJSON_AddNullToObject(o, "api") ? 0 : -1;
	api = cJSON_AddObjectToObject(o, "api");
	url = ctl_api_url(a);
	if (!api || !url ||
	    !cJSON_AddStringToObject(api, "listen", a->listen) ||
	    !cJSON_AddStringToObject(api, "public_url", url) ||
	    (a->admin_token_file &&
	     !cJSON_AddStringToObject(api, "admin_token_file", a->admin_token_file)) ||
	    !cJSON_AddNumberToObject(api, "lease_s", (double)a->lease_s) ||
	    !cJSON_AddNumberToObject(api, "max_attempts", (double)a->max_attempts) ||
	    !cJSON_AddNumberToObject(api, "max_body_bytes", (double)a->max_body_bytes) ||
	    !cJSON_AddNumberToObject(api, "threads", a->threads) ||
	    !cJSON_AddStringToObject(api, "web_dir", a->web_dir ? a->web_dir : "(built in)") ||
	    (a->archive_url && !cJSON_AddStringToObject(api, "archive_url", a->archive_url)))
		goto out;
	rc = 0;
out:
	free(url);
	return rc;
}

/* "mail": every member, defaults filled in; the password is never read
 * here, only its file named. */
static int ctl_mail_to_json(cJSON *o, const struct ctl_mail *m)
{
	cJSON *mail = cJSON_AddObjectToObject(o, "mail");

	if (!mail ||
	    !cJSON_AddBoolToObject(mail, "enabled", m->enabled) ||
	    (m->smtp_url && !cJSON_AddStringToObject(mail, "smtp_url", m->smtp_url)) ||
	    !cJSON_AddStringToObject(mail, "starttls", smtp_starttls_name(m->starttls)) ||
	    (m->username && !cJSON_AddStringToObject(mail, "username", m->username)) ||
	    (m->password_file &&
	     !cJSON_AddStringToObject(mail, "password_file", m->password_file)) ||
	    (m->ca_file && !cJSON_AddStringToObject(mail, "ca_file", m->ca_file)) ||
	    (m->from && !cJSON_AddStringToObject(mail, "from", m->from)) ||
	    !cJSON_AddStringToObject(mail, "to", m->to) ||
	    !cJSON_AddStringToObject(mail, "cc_author_on",
				     report_cc_author_name(m->cc_author_on)) ||
	    !cJSON_AddNumberToObject(mail, "timeout_s", m->timeout_s) ||
	    !cJSON_AddStringToObject(mail, "patch_url_template", m->patch_url_template))
		return -1;
	return 0;
}

/* "checks": every member, defaults filled in; the token is never read
 * here, only its file named. */
static int ctl_checks_to_json(cJSON *o, const struct ctl_checks *k)
{
	cJSON *checks = cJSON_AddObjectToObject(o, "checks");

	if (!checks ||
	    !cJSON_AddBoolToObject(checks, "enabled", k->enabled) ||
	    (k->patchwork_url &&
	     !cJSON_AddStringToObject(checks, "patchwork_url", k->patchwork_url)) ||
	    !cJSON_AddStringToObject(checks, "project", k->project) ||
	    (k->token_file && !cJSON_AddStringToObject(checks, "token_file", k->token_file)) ||
	    (k->username && !cJSON_AddStringToObject(checks, "username", k->username)) ||
	    !cJSON_AddNumberToObject(checks, "timeout_s", k->timeout_s) ||
	    !cJSON_AddNumberToObject(checks, "max_backoff_s", (double)k->max_backoff_s))
		return -1;
	return 0;
}

char *ctl_api_url(const struct ctl_api *a)
{
	size_t n;
	char *url;

	if (a->public_url)
		return strdup(a->public_url);
	if (!a->listen)
		return NULL;
	n = strlen(a->listen) + sizeof("http://");
	url = malloc(n);
	if (url && pg_fmt(url, n, "http://%s", a->listen) < 0) {
		free(url);
		url = NULL;
	}
	return url;
}

cJSON *ctl_config_to_json(const struct ctl_config *c)
{
	cJSON *o = cJSON_CreateObject(), *arr, *intake, *bl;

	if (!o)
		return NULL;
	if (!cJSON_AddStringToObject(o, "config_file", c->path ? c->path : "(built-in defaults)") ||
	    !cJSON_AddStringToObject(o, "db", c->db) ||
	    !cJSON_AddStringToObject(o, "data_dir", c->data_dir) ||
	    !cJSON_AddStringToObject(o, "profiles_dir", c->profiles_dir))
		goto fail;
	arr = cJSON_AddArrayToObject(o, "profiles");
	if (!arr)
		goto fail;
	for (size_t i = 0; i < c->n_profiles; i++)
		if (!cJSON_AddItemToArray(arr, cJSON_CreateString(c->profiles[i])))
			goto fail;
	if (!cJSON_AddStringToObject(o, "log_level", c->log_level) ||
	    !cJSON_AddStringToObject(o, "project", c->project))
		goto fail;
	arr = cJSON_AddArrayToObject(o, "sources");
	if (!arr)
		goto fail;
	for (size_t i = 0; i < c->n_sources; i++) {
		const struct ctl_source *src = &c->sources[i];
		cJSON *so = cJSON_CreateObject();

		if (!so || !cJSON_AddItemToArray(arr, so) ||
		    !cJSON_AddStringToObject(so, "name", src->name) ||
		    !cJSON_AddStringToObject(so, "type", ctl_source_type_name(src->type)) ||
		    !cJSON_AddStringToObject(so, "url", src->url) ||
		    (src->pw_project && !cJSON_AddStringToObject(so, "project", src->pw_project)) ||
		    (src->token_file && !cJSON_AddStringToObject(so, "token_file", src->token_file)) ||
		    (src->type == CTL_SOURCE_PATCHWORK &&
		     !cJSON_AddNumberToObject(so, "timeout_s", src->timeout_s)))
			goto fail;
	}
	intake = cJSON_AddObjectToObject(o, "intake");
	if (!intake ||
	    !cJSON_AddNumberToObject(intake, "interval_s", c->intake.interval_s) ||
	    !cJSON_AddNumberToObject(intake, "stale_after_s", (double)c->intake.stale_after_s) ||
	    !cJSON_AddNumberToObject(intake, "batch", c->intake.batch) ||
	    !cJSON_AddNumberToObject(intake, "max_message_bytes",
				     (double)c->intake.max_message_bytes))
		goto fail;
	if (c->intake.since_ms) {
		char since[PG_TIME_UTC_MAX];

		pg_time_format_utc(c->intake.since_ms, PG_TIME_NAIVE, since, sizeof(since));
		if (!cJSON_AddStringToObject(intake, "since", since))
			goto fail;
	}
	if (ctl_api_to_json(o, &c->api) < 0 || ctl_mail_to_json(o, &c->mail) < 0 ||
	    ctl_checks_to_json(o, &c->checks) < 0)
		goto fail;
	bl = cJSON_AddObjectToObject(o, "baseline");
	if (!bl || !cJSON_AddBoolToObject(bl, "enabled", c->baseline.enabled) ||
	    !cJSON_AddNumberToObject(bl, "interval_s", (double)c->baseline.interval_s) ||
	    !cJSON_AddNumberToObject(bl, "poll_s", (double)c->baseline.poll_s) ||
	    !cJSON_AddBoolToObject(bl, "drain_on_drift", c->baseline.drain_on_drift) ||
	    !(c->baseline.alert_to ? cJSON_AddStringToObject(bl, "alert_to", c->baseline.alert_to)
				   : cJSON_AddNullToObject(bl, "alert_to")) ||
	    !cJSON_AddItemToObject(o, "ssh", ssh_config_to_json(&c->ssh)))
		goto fail;
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}
