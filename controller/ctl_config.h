/* SPDX-License-Identifier: MIT */
#ifndef CTL_CONFIG_H
#define CTL_CONFIG_H

/*
 * The controller's configuration file (JSON).  Relative paths in it are
 * relative to the file's own directory.  Fields:
 *
 *   db            the SQLite store            (default LOCALSTATEDIR/perfgate/perfgate.db)
 *   data_dir      logs and other files        (default LOCALSTATEDIR/perfgate)
 *   profiles_dir  where profile files live    (default DATADIR/perfgate/profiles)
 *   profiles      which files of profiles_dir to load (default: every *.json)
 *   log_level     "info", or "warn,store=debug" per component (default info)
 *   project       the project the series belong to (default "dpdk")
 *   sources       where patches come from, each
 *                   {"name": "dpdk-dev", "type": "public-inbox",
 *                    "url": "https://inbox.dpdk.org/dev" or a local path}
 *                   {"name": "pw", "type": "patchwork",
 *                    "url": "https://patches.dpdk.org/api/1.3",
 *                    "project": "dpdk", "token_file": "..." (for checks),
 *                    "timeout_s": 30 (each request, 1..600)}
 *                 names are [A-Za-z0-9_.-]+ and unique (default: none)
 *   intake        {"interval_s": 300, "stale_after_s": 172800,
 *                  "batch": 256, "max_message_bytes": 33554432,
 *                  "since": "2026-11-01T00:00:00"}: how often the daemon
 *                 reads its sources, after how long an incomplete series is
 *                 reported as never completed, messages per transaction,
 *                 the largest mail kept, and where a new Patchwork source
 *                 starts reading events (default: 1 day before first use)
 *   api           the HTTP API (controller/api.h); without this section the
 *                 daemon serves no HTTP.  All members optional:
 *                 {"listen": "127.0.0.1:8080"   HOST:PORT or [IPV6]:PORT;
 *                                               port 0 picks a free one,
 *                  "public_url": "http://127.0.0.1:8080"   how agents and
 *                                people reach it (links; default from listen),
 *                  "admin_token_file": "..."    the admin token; without it
 *                                               admin endpoints answer 403,
 *                  "lease_s": 60, "max_attempts": 3,
 *                  "max_body_bytes": 16777216, "threads": 4,
 *                  "web_dir": "..."             the dashboard's files
 *                                  (default DATADIR/perfgate/web, else the
 *                                  source tree's web/ when run from it),
 *                  "archive_url": "https://inbox.dpdk.org/dev/{msgid}/"
 *                                  links to a mail in its archive}
 *   mail          test-report mails in DPDK's CI format (report_mail.h),
 *                 sent over SMTP (smtp.h).  All members optional; the
 *                 section is checked even when not enabled:
 *                 {"enabled": false          send them at all,
 *                  "smtp_url": "smtp://mail.example.org:587/lab.example.org"
 *                                 smtp:// (STARTTLS per starttls) or
 *                                 smtps:// (TLS at once); the path is the
 *                                 EHLO name; no user@ (required when enabled),
 *                  "starttls": "required"   or "optional", "off" (smtp://);
 *                                 a username needs "required" or smtps://,
 *                  "username": "perfgate",  AUTH (PLAIN, LOGIN... as the
 *                                 server offers), with
 *                  "password_file": "..."   whose first line is the
 *                                 password (never in this file; mode 600),
 *                  "ca_file": "..."         PEM CAs to trust instead of
 *                                 the system's (a test or private relay),
 *                  "from": "perfgate <perfgate@lab.example.org>"
 *                                 sender (envelope and From:); its domain
 *                                 names the Message-IDs (required when
 *                                 enabled),
 *                  "to": "test-report@dpdk.org",
 *                  "cc_author_on": "failure"   copy the patch's author on
 *                                 fail and warning (DPDK's labs), or
 *                                 "never", "always",
 *                  "timeout_s": 60            the whole SMTP exchange (1..600;
 *                                 connecting gets at most 10 s of it),
 *                  "patch_url_template": "http://patches.dpdk.org/patch/{id}/"
 *                                 the URL line of the report; dpdk.org's bot
 *                                 only recognises http:// URLs}
 *   checks        Patchwork checks posted from the outbox (controller/outbox.h).
 *                 All members optional; checked even when not enabled:
 *                 {"enabled": false          post them at all (rows are
 *                                 queued either way, and wait),
 *                  "patchwork_url": "https://patches.dpdk.org/api/1.3"
 *                                 the versioned API root, http(s)
 *                                 (required when enabled),
 *                  "project": "dpdk"        the Patchwork project, to find a
 *                                 patch by its Message-ID (default: the
 *                                 top-level "project"),
 *                  "token_file": "..."      whose first line is the API
 *                                 token of a user who may post checks on
 *                                 the project (a maintainer); never the
 *                                 token itself (required when enabled),
 *                  "username": "ci"         that user's name: the lookup
 *                                 before a re-post then counts only its
 *                                 checks,
 *                  "timeout_s": 30          each request (1..600),
 *                  "max_backoff_s": 900     the longest pause between two
 *                                 tries of a check or a mail (1..86400)}
 *   ssh           lab hosts without an agent daemon, driven over SSH: see
 *                 controller/ssh_config.h
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "report_mail.h"
#include "smtp.h"
#include "ssh_config.h"

enum ctl_source_type {
	CTL_SOURCE_PUBLIC_INBOX,
	CTL_SOURCE_PATCHWORK,
};

struct ctl_source {
	char *name;
	enum ctl_source_type type;
	char *url;		/* URL, or absolute path for a local archive */
	char *pw_project;	/* Patchwork project linkname */
	char *token_file;	/* NULL when not set */
	int timeout_s;		/* Patchwork: each request of intake */
};

struct ctl_intake {
	int interval_s;
	int64_t stale_after_s;
	int batch;
	int64_t max_message_bytes;
	int64_t since_ms;	/* 0: one day before a source's first use */
};

/* The "api" section; enabled is false when the section is absent. */
struct ctl_api {
	bool enabled;
	char *listen;		/* as written, e.g. "127.0.0.1:8080" */
	char *host;		/* "127.0.0.1", "::1" (no brackets) */
	int port;		/* 0..65535; 0: any free port */
	char *public_url;	/* http(s)://..., no trailing '/'; NULL when not
				 * set: "http://" + listen (the bound port when
				 * listen's port is 0) */
	char *admin_token_file;	/* absolute; NULL when not set */
	char *web_dir;		/* the dashboard's files, absolute; NULL: the
				 * installed DATADIR/perfgate/web, else web/
				 * of the source tree the binary was built in */
	char *archive_url;	/* "https://inbox.dpdk.org/dev/{msgid}/": a
				 * mail's page in the archive; NULL: none */
	int64_t lease_s;
	int64_t max_attempts;
	int64_t max_body_bytes;
	int threads;
};

/* Bounds of the "api" members. */
#define CTL_API_LEASE_MIN_S 3
#define CTL_API_THREADS_MAX 64
#define CTL_API_BODY_MIN 1024
#define CTL_API_BODY_MAX (1024LL << 20)

/* The "mail" section (see above). */
struct ctl_mail {
	bool enabled;
	char *smtp_url;		/* NULL when not set */
	enum smtp_starttls starttls;
	char *username;		/* NULL when not set */
	char *password_file;	/* absolute; NULL when not set */
	char *ca_file;		/* absolute; NULL when not set */
	char *from;		/* as written; NULL when not set */
	char *from_name;	/* its display name, NULL when none */
	char *from_addr;	/* its address, NULL when from is not set */
	char *to;		/* as written */
	char *to_name;
	char *to_addr;
	enum report_cc_author cc_author_on;
	int timeout_s;
	char *patch_url_template;
};

#define CTL_MAIL_TIMEOUT_MAX_S 600

/* The "checks" section (see above). */
struct ctl_checks {
	bool enabled;
	char *patchwork_url;	/* no trailing '/'; NULL when not set */
	char *project;		/* never NULL after loading */
	char *token_file;	/* absolute; NULL when not set */
	char *username;		/* NULL when not set */
	int timeout_s;
	int64_t max_backoff_s;
};

/*
 * The "baseline" section: scheduled baseline runs of the branches the
 * contexts test (controller/planner.h, "Baselines").  {"enabled": false,
 * "interval_s": 86400, "poll_s": 900}: when enabled, serve looks every
 * poll_s for branch heads that moved and baselines older than interval_s
 * (nightly by default).  Off by default: a baseline costs a host a job's
 * time per context and branch.  Optional: "alert_to" (an address) and
 * "drain_on_drift" (false), below.
 */
struct ctl_baseline {
	bool enabled;
	int64_t interval_s;
	int64_t poll_s;
	/* "alert_to": who gets a mail for each main-branch regression located
	 * at one commit (outbox_queue_alert_tx()); NULL: no alert mail (the
	 * dashboard, the API and /metrics still show it).  Needs the mail
	 * section enabled. */
	char *alert_to;			/* as written */
	char *alert_to_name;
	char *alert_to_addr;
	/* "drain_on_drift": a host whose baselines drift (controller/drift.h)
	 * leases nothing until an operator clears it; false: flagged only. */
	bool drain_on_drift;
};

#define CTL_BASELINE_INTERVAL_S (24 * 60 * 60)
#define CTL_BASELINE_POLL_S 900

#define CTL_CHECKS_TIMEOUT_MAX_S 600
#define CTL_SOURCE_TIMEOUT_MAX_S 600
#define CTL_CHECKS_BACKOFF_MAX_S 86400

struct ctl_config {
	char *path;		/* the file read; NULL when built-in defaults */
	char *db;
	char *data_dir;
	char *profiles_dir;
	char **profiles;	/* file names relative to profiles_dir */
	size_t n_profiles;
	char *log_level;
	char *project;
	struct ctl_source *sources;
	size_t n_sources;
	struct ctl_intake intake;
	struct ctl_api api;
	struct ctl_mail mail;
	struct ctl_checks checks;
	struct ctl_baseline baseline;
	struct ssh_cfg ssh;	/* hosts driven over SSH (ssh_config.h) */
};

/* The default configuration file, SYSCONFDIR/perfgate/controller.json. */
#define CTL_CONFIG_DEFAULT PG_SYSCONFDIR "/perfgate/controller.json"

/* Load `path`.  When `path` is NULL the default file is read if it exists,
 * else the built-in defaults apply.  Unknown fields are errors.  On error
 * *c is left empty and err names the file and the field. */
int ctl_config_load(struct ctl_config *c, const char *path, struct pg_err *err);

/* The same from a file's content (pg_config_load_text(): relative paths
 * against dir), for tests and fuzzing; c->path stays NULL. */
int ctl_config_load_text(struct ctl_config *c, const char *text, size_t len, const char *dir,
			 struct pg_err *err);

/* Replace the store path (the --db option).  Returns 0 or -1. */
int ctl_config_set_db(struct ctl_config *c, const char *db, struct pg_err *err);

void ctl_config_free(struct ctl_config *c);

/* The source named `name`, or NULL. */
const struct ctl_source *ctl_config_source(const struct ctl_config *c, const char *name);

/* The API's public URL: public_url, else "http://" + listen.  malloc'd;
 * NULL when out of memory or the section is absent. */
char *ctl_api_url(const struct ctl_api *a);

/* "public-inbox" or "patchwork". */
const char *ctl_source_type_name(enum ctl_source_type t);

/* The normalised configuration: every field, defaults filled in, absolute
 * paths.  Caller frees with cJSON_Delete; NULL when out of memory. */
cJSON *ctl_config_to_json(const struct ctl_config *c);

#endif
