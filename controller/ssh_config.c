/* SPDX-License-Identifier: MIT */
/* The "ssh" section of the controller's configuration. */
#include "ssh_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conffile.h"
#include "fmt.h"
#include "json.h"
#include "sanitize.h"

static const char *const ssh_fields[] = {
	"max_connections", "connect_timeout_s", "io_timeout_s", "keepalive_s", "max_backoff_s",
	"hosts", NULL
};
static const char *const ssh_host_fields[] = {
	"name", "host", "port", "user", "key_file", "known_hosts", "trust_on_first_use",
	"labels", "agent", "install", "agent_config", "work_dir", "spool_dir", "runner", NULL
};

void ssh_config_defaults(struct ssh_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->max_connections = SSH_MAX_CONNECTIONS;
	c->connect_timeout_s = SSH_CONNECT_TIMEOUT_S;
	c->io_timeout_s = SSH_IO_TIMEOUT_S;
	c->keepalive_s = SSH_KEEPALIVE_S;
	c->max_backoff_s = SSH_MAX_BACKOFF_S;
}

static void ssh_host_free(struct ssh_host_cfg *h)
{
	free(h->name);
	free(h->host);
	free(h->user);
	free(h->key_file);
	free(h->known_hosts);
	pg_config_strings_free(h->label_keys, h->n_labels);
	pg_config_strings_free(h->label_values, h->n_labels);
	free(h->agent);
	free(h->agent_config);
	free(h->work_dir);
	free(h->spool_dir);
	free(h->runner);
}

void ssh_config_free(struct ssh_cfg *c)
{
	for (size_t i = 0; i < c->n_hosts; i++)
		ssh_host_free(&c->hosts[i]);
	free(c->hosts);
	c->hosts = NULL;
	c->n_hosts = 0;
}

/* A string that reaches the remote shell's command line or SSH: no control
 * characters (a newline would end the command), at most 4095 bytes. */
static int ssh_text_ok(const char *key, const char *s, struct pg_err *err)
{
	if (strlen(s) > 4095)
		return pg_err_set(err, PG_EINVAL, "field '%s': longer than 4095 bytes", key);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return pg_err_set(err, PG_EINVAL, "field '%s': holds a control character",
					  key);
	return 0;
}

/* An optional absolute path on the host. */
static int ssh_remote_path(const cJSON *o, const char *key, bool required, char **out,
			   struct pg_err *err)
{
	if (pg_config_string(o, key, 0, NULL, out, err) < 0)
		return -1;
	if (!*out)
		return required ? pg_err_set(err, PG_EINVAL, "field '%s': missing", key) : 0;
	if ((*out)[0] != '/')
		return pg_err_set(err, PG_EINVAL, "field '%s': '%s' is not an absolute path on "
				  "the host", key, *out);
	return ssh_text_ok(key, *out, err);
}

static int ssh_host_parse(struct ssh_host_cfg *h, const cJSON *o, const char *dir,
			  struct pg_err *err)
{
	const char *install = NULL;

	h->port = 22;
	if (!cJSON_IsObject(o))
		return pg_err_set(err, PG_EINVAL, "expected an object, got %s", pg_json_type_name(o));
	if (pg_json_check_keys(o, ssh_host_fields, err) < 0 ||
	    pg_config_string(o, "name", 0, NULL, &h->name, err) < 0 ||
	    pg_config_string(o, "host", 0, NULL, &h->host, err) < 0 ||
	    pg_json_get_int(o, "port", false, 1, 65535, &h->port, err) < 0 ||
	    pg_config_string(o, "user", 0, NULL, &h->user, err) < 0 ||
	    pg_config_string(o, "key_file", 1, dir, &h->key_file, err) < 0 ||
	    pg_config_string(o, "known_hosts", 1, dir, &h->known_hosts, err) < 0 ||
	    pg_json_get_bool(o, "trust_on_first_use", false, &h->tofu, err) < 0 ||
	    pg_config_labels(o, "labels", &h->label_keys, &h->label_values, &h->n_labels,
			     err) < 0 ||
	    pg_json_get_string(o, "install", false, &install, err) < 0 ||
	    ssh_remote_path(o, "agent", true, &h->agent, err) < 0 ||
	    ssh_remote_path(o, "agent_config", false, &h->agent_config, err) < 0 ||
	    ssh_remote_path(o, "work_dir", false, &h->work_dir, err) < 0 ||
	    ssh_remote_path(o, "spool_dir", false, &h->spool_dir, err) < 0 ||
	    pg_config_string(o, "runner", 0, NULL, &h->runner, err) < 0)
		return -1;
	if (!h->name || !pg_config_label_ok(h->name) || strlen(h->name) > SSH_HOST_NAME_MAX)
		return pg_err_set(err, PG_EINVAL, "field 'name': %s", h->name ?
				  "must be 1..64 letters, digits, '_', '.', '-'" : "missing");
	if (!h->host)
		return pg_err_set(err, PG_EINVAL, "field 'host': missing");
	if (!h->user)
		return pg_err_set(err, PG_EINVAL, "field 'user': missing");
	if (!h->key_file)
		return pg_err_set(err, PG_EINVAL, "field 'key_file': missing (public-key "
				  "authentication is the only kind used)");
	if (!h->known_hosts)
		return pg_err_set(err, PG_EINVAL, "field 'known_hosts': missing (host keys are "
				  "always checked)");
	if (ssh_text_ok("host", h->host, err) < 0 || ssh_text_ok("user", h->user, err) < 0 ||
	    strchr(h->host, ' ') || strchr(h->user, ' ') || h->host[0] == '-' ||
	    h->user[0] == '-')
		return err->msg[0] ? -1 : pg_err_set(err, PG_EINVAL, "field 'host' or 'user': "
						     "no spaces, no leading '-'");
	if (!install || strcmp(install, "path") == 0)
		h->install_copy = false;
	else if (strcmp(install, "copy") == 0)
		h->install_copy = true;
	else
		return pg_err_set(err, PG_EINVAL, "field 'install': '%.64s' is not \"path\" or "
				  "\"copy\"", install);
	if (h->runner && strcmp(h->runner, "dpdk") != 0 && strcmp(h->runner, "builtin") != 0)
		return pg_err_set(err, PG_EINVAL, "field 'runner': '%.64s' is not \"dpdk\" or "
				  "\"builtin\"", h->runner);
	return 0;
}

int ssh_config_parse(struct ssh_cfg *c, const cJSON *root, const char *dir,
		     struct pg_err *err)
{
	const cJSON *o = NULL, *arr = NULL, *item;
	size_t n, i = 0;
	int rc;

	rc = pg_json_get_object(root, "ssh", false, &o, err);
	if (rc <= 0)
		return rc;
	if (pg_json_check_keys(o, ssh_fields, err) < 0 ||
	    pg_json_get_int(o, "max_connections", false, 1, 1024, &c->max_connections, err) < 0 ||
	    pg_json_get_int(o, "connect_timeout_s", false, 1, 600, &c->connect_timeout_s,
			    err) < 0 ||
	    pg_json_get_int(o, "io_timeout_s", false, 5, 86400, &c->io_timeout_s, err) < 0 ||
	    pg_json_get_int(o, "keepalive_s", false, 1, 3600, &c->keepalive_s, err) < 0 ||
	    pg_json_get_int(o, "max_backoff_s", false, 1, 86400, &c->max_backoff_s, err) < 0 ||
	    pg_json_get_array(o, "hosts", false, &arr, err) < 0)
		goto bad;
	n = arr ? (size_t)cJSON_GetArraySize(arr) : 0;
	if (n > SSH_MAX_HOSTS) {
		pg_err_set(err, PG_EINVAL, "field 'hosts': more than %d", SSH_MAX_HOSTS);
		goto bad;
	}
	if (n == 0)
		return 0;
	c->hosts = calloc(n, sizeof(*c->hosts));
	if (!c->hosts)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	cJSON_ArrayForEach(item, arr) {
		c->n_hosts = i + 1;
		if (ssh_host_parse(&c->hosts[i], item, dir, err) < 0) {
			pg_err_prefix(err, "field 'ssh.hosts[%zu]'", i);
			return -1;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(c->hosts[j].name, c->hosts[i].name) == 0)
				return pg_err_set(err, PG_EINVAL, "field 'ssh.hosts[%zu]': name '%s' "
						  "is used twice", i, c->hosts[i].name);
		i++;
	}
	return 0;
bad:
	pg_err_prefix(err, "field 'ssh'");
	return -1;
}

const struct ssh_host_cfg *ssh_config_host(const struct ssh_cfg *c, const char *name)
{
	for (size_t i = 0; i < c->n_hosts; i++)
		if (strcmp(c->hosts[i].name, name) == 0)
			return &c->hosts[i];
	return NULL;
}

int ssh_config_key_ok(const struct ssh_host_cfg *h, struct pg_err *err)
{
	struct stat sb;

	if (stat(h->key_file, &sb) < 0)
		return pg_err_errno(err, "host '%s': key_file %s", h->name, h->key_file);
	if (!S_ISREG(sb.st_mode))
		return pg_err_set(err, PG_EINVAL, "host '%s': key_file %s is not a regular file",
				  h->name, h->key_file);
	if (sb.st_mode & 077)
		return pg_err_set(err, PG_EINVAL, "host '%s': key_file %s has mode %04o: group or "
				  "others may read it; refused (chmod 600 it)", h->name,
				  h->key_file, (unsigned int)(sb.st_mode & 07777));
	return 0;
}

void ssh_config_target(const struct ssh_host_cfg *h, char *out, size_t size)
{
	pg_fmt_cut(out, size, "%s@%s:%lld", h->user, h->host, (long long)h->port);
}

cJSON *ssh_config_to_json(const struct ssh_cfg *c)
{
	cJSON *o = cJSON_CreateObject(), *arr;

	if (!o || !cJSON_AddNumberToObject(o, "max_connections", (double)c->max_connections) ||
	    !cJSON_AddNumberToObject(o, "connect_timeout_s", (double)c->connect_timeout_s) ||
	    !cJSON_AddNumberToObject(o, "io_timeout_s", (double)c->io_timeout_s) ||
	    !cJSON_AddNumberToObject(o, "keepalive_s", (double)c->keepalive_s) ||
	    !cJSON_AddNumberToObject(o, "max_backoff_s", (double)c->max_backoff_s) ||
	    !(arr = cJSON_AddArrayToObject(o, "hosts")))
		goto fail;
	for (size_t i = 0; i < c->n_hosts; i++) {
		const struct ssh_host_cfg *h = &c->hosts[i];
		cJSON *ho = cJSON_CreateObject(), *labels;

		if (!ho || !cJSON_AddItemToArray(arr, ho) ||
		    !cJSON_AddStringToObject(ho, "name", h->name) ||
		    !cJSON_AddStringToObject(ho, "host", h->host) ||
		    !cJSON_AddNumberToObject(ho, "port", (double)h->port) ||
		    !cJSON_AddStringToObject(ho, "user", h->user) ||
		    !cJSON_AddStringToObject(ho, "key_file", h->key_file) ||
		    !cJSON_AddStringToObject(ho, "known_hosts", h->known_hosts) ||
		    !cJSON_AddBoolToObject(ho, "trust_on_first_use", h->tofu) ||
		    !(labels = cJSON_AddObjectToObject(ho, "labels")) ||
		    !cJSON_AddStringToObject(ho, "agent", h->agent) ||
		    !cJSON_AddStringToObject(ho, "install", h->install_copy ? "copy" : "path") ||
		    (h->agent_config && !cJSON_AddStringToObject(ho, "agent_config",
								 h->agent_config)) ||
		    (h->work_dir && !cJSON_AddStringToObject(ho, "work_dir", h->work_dir)) ||
		    (h->spool_dir && !cJSON_AddStringToObject(ho, "spool_dir", h->spool_dir)) ||
		    (h->runner && !cJSON_AddStringToObject(ho, "runner", h->runner)))
			goto fail;
		for (size_t j = 0; j < h->n_labels; j++)
			if (!cJSON_AddStringToObject(labels, h->label_keys[j], h->label_values[j]))
				goto fail;
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}
