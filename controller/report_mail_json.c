/* SPDX-License-Identifier: MIT */
/* A report mail's inputs read from JSON (see report_mail.h). */
#include "report_mail.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "timeutil.h"

static const char *const input_fields[] = {
	"from", "to", "cc", "author", "cc_author", "patch_msgid", "patch_id", "patch_url",
	"patch_url_template", "subject", "label", "status", "description", "table",
	"reproduce", "msgid", "run_id", "date", NULL
};

void report_mail_input_free(struct report_mail_input *in)
{
	if (!in)
		return;
	for (size_t i = 0; i < in->n_owned; i++)
		free(in->owned[i]);
	cJSON_Delete(in->root);
	memset(in, 0, sizeof(*in));
}

/* Read the mailbox `key` (a string) into *a; the parts are owned by in. */
static int input_mailbox(struct report_mail_input *in, const cJSON *o, const char *key,
			 struct report_mail_addr *a, struct pg_err *err)
{
	const char *s = NULL;
	char *name = NULL, *addr = NULL;
	int rc = pg_json_get_string(o, key, false, &s, err);

	if (rc <= 0)
		return rc;
	if (report_mail_parse_mailbox(s, &name, &addr, err) < 0) {
		pg_err_prefix(err, "field '%s'", key);
		return -1;
	}
	in->owned[in->n_owned++] = name;	/* room: see the array's size */
	in->owned[in->n_owned++] = addr;
	a->name = name;
	a->addr = addr;
	return 1;
}

static int input_string(const cJSON *o, const char *key, const char **out, struct pg_err *err)
{
	return pg_json_get_string(o, key, false, out, err) < 0 ? -1 : 0;
}

/* A Message-ID with or without its <>. */
static int input_msgid(const cJSON *o, const char *key, char *out, size_t outlen,
		       const char **dst, struct pg_err *err)
{
	const char *s = NULL;
	int rc = pg_json_get_string(o, key, false, &s, err);
	size_t n;

	if (rc <= 0)
		return rc;
	n = strlen(s);
	if (n >= 2 && s[0] == '<' && s[n - 1] == '>') {
		s++;
		n -= 2;
	}
	if (n >= outlen)
		return pg_err_set(err, PG_EINVAL, "field '%s': longer than %zu bytes", key,
				  outlen - 1);
	memcpy(out, s, n);
	out[n] = '\0';
	*dst = out;
	return 0;
}

static int input_fill(struct report_mail_input *in, const cJSON *o, struct pg_err *err)
{
	struct report_mail *r = &in->r;
	const cJSON *cc = NULL, *item;
	const char *s = NULL, *tmpl = NULL;
	int64_t v = 0;

	if (!cJSON_IsObject(o))
		return pg_err_set(err, PG_EINVAL, "expected an object, got %s", pg_json_type_name(o));
	if (pg_json_check_keys(o, input_fields, err) < 0)
		return -1;
	r->to.addr = "test-report@dpdk.org";
	if (input_mailbox(in, o, "from", &r->from, err) < 0 ||
	    input_mailbox(in, o, "to", &r->to, err) < 0 ||
	    input_mailbox(in, o, "author", &r->author, err) < 0)
		return -1;
	if (pg_json_get_array(o, "cc", false, &cc, err) < 0)
		return -1;
	if (cc) {
		size_t i = 0;

		if (cJSON_GetArraySize(cc) > REPORT_MAIL_CC_MAX)
			return pg_err_set(err, PG_EINVAL, "field 'cc': more than %d addresses",
					  REPORT_MAIL_CC_MAX);
		cJSON_ArrayForEach(item, cc) {
			char *name = NULL, *addr = NULL;

			if (!cJSON_IsString(item))
				return pg_err_set(err, PG_EINVAL, "field 'cc[%zu]': expected a string, "
						  "got %s", i, pg_json_type_name(item));
			if (report_mail_parse_mailbox(item->valuestring, &name, &addr, err) < 0) {
				pg_err_prefix(err, "field 'cc[%zu]'", i);
				return -1;
			}
			in->owned[in->n_owned++] = name;
			in->owned[in->n_owned++] = addr;
			in->cc[i].name = name;
			in->cc[i].addr = addr;
			i++;
		}
		r->cc = in->cc;
		r->n_cc = i;
	}
	if (pg_json_get_string(o, "cc_author", false, &s, err) < 0)
		return -1;
	if (s && report_cc_author_parse(s, &r->cc_author) < 0)
		return pg_err_set(err, PG_EINVAL, "field 'cc_author': '%s' is not failure, never "
				  "or always", s);
	if (input_msgid(o, "patch_msgid", in->patch_msgid, sizeof(in->patch_msgid),
			&r->patch_msgid, err) < 0 ||
	    pg_json_get_int(o, "patch_id", false, 1, INT64_MAX, &r->patch_id, err) < 0 ||
	    input_string(o, "patch_url", &r->patch_url, err) < 0 ||
	    input_string(o, "patch_url_template", &tmpl, err) < 0 ||
	    input_string(o, "subject", &r->subject, err) < 0 ||
	    input_string(o, "label", &r->label, err) < 0 ||
	    input_string(o, "description", &r->description, err) < 0 ||
	    input_string(o, "table", &r->table, err) < 0 ||
	    input_string(o, "reproduce", &r->reproduce, err) < 0)
		return -1;
	if (tmpl && !r->patch_url) {
		if (report_mail_patch_url(tmpl, r->patch_id, in->patch_url, sizeof(in->patch_url),
					  err) < 0) {
			pg_err_prefix(err, "field 'patch_url_template'");
			return -1;
		}
		r->patch_url = in->patch_url;
	}
	s = NULL;
	if (pg_json_get_string(o, "status", false, &s, err) < 0)
		return -1;
	r->status = REPORT_FAILURE;
	if (s && report_status_from_check(s, &r->status) < 0)
		return pg_err_set(err, PG_EINVAL, "field 'status': '%s' is not success, warning "
				  "or fail", s);
	if (input_msgid(o, "msgid", in->msgid, sizeof(in->msgid), &r->msgid, err) < 0 ||
	    pg_json_get_int(o, "run_id", false, 1, INT64_MAX, &v, err) < 0)
		return -1;
	if (v > 0 && !r->msgid) {
		if (report_mail_msgid(v, r->label, report_mail_addr_domain(r->from.addr), in->msgid,
				      sizeof(in->msgid), err) < 0) {
			pg_err_prefix(err, "field 'run_id'");
			return -1;
		}
		r->msgid = in->msgid;
	}
	s = NULL;
	if (pg_json_get_string(o, "date", false, &s, err) < 0)
		return -1;
	if (s && pg_time_parse_utc(s, &r->date_ms) < 0)
		return pg_err_set(err, PG_EINVAL, "field 'date': '%s' is not an RFC 3339 date", s);
	return 0;
}

int report_mail_input_parse(struct report_mail_input *in, const char *json, size_t len,
			    struct pg_err *err)
{
	memset(in, 0, sizeof(*in));
	if (pg_json_parse(json, len, &in->root, err) < 0 || input_fill(in, in->root, err) < 0) {
		report_mail_input_free(in);
		return -1;
	}
	return 0;
}
