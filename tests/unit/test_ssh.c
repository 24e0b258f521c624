/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the SSH hosts' pure and store parts: the "ssh" section of
 * the controller's configuration (controller/ssh_config.c), the key
 * file's mode rule, the quoting of a remote command (ssh_conn.c), the
 * agent row of an SSH host (sched_agent_ssh) and the table of their
 * connection state (ssh_state.c).  The connection itself is tested with a
 * real sshd (tests/integration/t_ssh.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "json.h"
#include "sched.h"
#include "ssh_config.h"
#include "ssh_conn.h"
#include "ssh_state.h"

#include "storefx.h"

#define T0 1764476400

static int parse(const char *json, struct ssh_cfg *c, struct pg_err *err)
{
	cJSON *root = NULL;
	int rc;

	ssh_config_defaults(c);
	assert_int_equal(pg_json_parse(json, strlen(json), &root, err), 0);
	rc = ssh_config_parse(c, root, "/etc/perfgate", err);
	cJSON_Delete(root);
	return rc;
}

#define HOST "\"name\": \"arm1\", \"host\": \"arm1.lab\", \"user\": \"perfgate\"," \
	     " \"key_file\": \"keys/arm1\", \"known_hosts\": \"/etc/perfgate/known_hosts\"," \
	     " \"agent\": \"/usr/local/bin/perfgate-agent\""

static void test_config_host(void **state)
{
	struct pg_err err = PG_ERR_INIT;
	struct ssh_cfg c;
	char target[128];

	(void)state;
	assert_int_equal(parse("{\"ssh\": {\"max_connections\": 4, \"hosts\": [{" HOST ","
			       " \"port\": 2222, \"labels\": {\"vendor\": \"ampere\"},"
			       " \"install\": \"copy\", \"spool_dir\": \"/srv/spool\"}]}}",
			       &c, &err), 0);
	assert_int_equal(c.n_hosts, 1);
	assert_int_equal(c.max_connections, 4);
	assert_int_equal(c.io_timeout_s, SSH_IO_TIMEOUT_S);
	assert_string_equal(c.hosts[0].key_file, "/etc/perfgate/keys/arm1");
	assert_int_equal(c.hosts[0].port, 2222);
	assert_true(c.hosts[0].install_copy);
	assert_false(c.hosts[0].tofu);
	assert_string_equal(c.hosts[0].spool_dir, "/srv/spool");
	assert_null(c.hosts[0].work_dir);
	assert_int_equal(c.hosts[0].n_labels, 1);
	assert_string_equal(c.hosts[0].label_values[0], "ampere");
	assert_ptr_equal(ssh_config_host(&c, "arm1"), &c.hosts[0]);
	assert_null(ssh_config_host(&c, "arm2"));
	ssh_config_target(&c.hosts[0], target, sizeof(target));
	assert_string_equal(target, "perfgate@arm1.lab:2222");
	ssh_config_free(&c);

	/* No section: no hosts, the defaults. */
	assert_int_equal(parse("{}", &c, &err), 0);
	assert_int_equal(c.n_hosts, 0);
	assert_int_equal(c.max_connections, SSH_MAX_CONNECTIONS);
	ssh_config_free(&c);
}

static void test_config_errors(void **state)
{
	static const struct {
		const char *json, *msg;
	} bad[] = {
		{ "{\"ssh\": {\"hosts\": [{" HOST ", \"port\": 0}]}}", "'port'" },
		{ "{\"ssh\": {\"hosts\": [{" HOST ", \"install\": \"scp\"}]}}", "'install'" },
		{ "{\"ssh\": {\"hosts\": [{" HOST ", \"runner\": \"qemu\"}]}}", "'runner'" },
		{ "{\"ssh\": {\"hosts\": [{" HOST ", \"work_dir\": \"work\"}]}}",
		  "not an absolute path on the host" },
		{ "{\"ssh\": {\"hosts\": [{" HOST ", \"spool_dir\": \"/a\\nb\"}]}}",
		  "control character" },
		{ "{\"ssh\": {\"hosts\": [{\"name\": \"a b\", \"host\": \"h\", \"user\": \"u\","
		  " \"key_file\": \"k\", \"known_hosts\": \"k\", \"agent\": \"/a\"}]}}", "'name'" },
		{ "{\"ssh\": {\"hosts\": [{\"name\": \"a\", \"host\": \"-oProxyCommand=x\","
		  " \"user\": \"u\", \"key_file\": \"k\", \"known_hosts\": \"k\", \"agent\": \"/a\"}]}}",
		  "leading '-'" },
		{ "{\"ssh\": {\"hosts\": [{\"name\": \"a\", \"host\": \"h\", \"user\": \"u\","
		  " \"known_hosts\": \"k\", \"agent\": \"/a\"}]}}", "'key_file': missing" },
		{ "{\"ssh\": {\"hosts\": [{" HOST "}, {" HOST "}]}}", "used twice" },
		{ "{\"ssh\": {\"keepalive_s\": 0}}", "'keepalive_s'" },
		{ "{\"ssh\": {\"hosts\": {}}}", "'hosts'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pg_err err = PG_ERR_INIT;
		struct ssh_cfg c;

		if (parse(bad[i].json, &c, &err) == 0)
			fail_msg("accepted: %s", bad[i].json);
		if (!strstr(err.msg, bad[i].msg))
			fail_msg("%s: '%s' does not say %s", bad[i].json, err.msg, bad[i].msg);
		ssh_config_free(&c);
	}
}

static void test_key_mode(void **state)
{
	char dir[256], path[300];
	struct ssh_host_cfg h;
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/pg-test-ssh.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(dir));
	sfx_path(path, sizeof(path), dir, "key");
	sfx_write_file(path, "not really a key\n");
	memset(&h, 0, sizeof(h));
	h.name = "arm1";
	h.key_file = path;
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(ssh_config_key_ok(&h, &err), 0);
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(ssh_config_key_ok(&h, &err), -1);
	assert_non_null(strstr(err.msg, "mode 0640: group or others may read it; refused"));
	assert_int_equal(chmod(path, 0604), 0);
	assert_int_equal(ssh_config_key_ok(&h, &err), -1);
	h.key_file = dir;
	assert_int_equal(ssh_config_key_ok(&h, &err), -1);
	assert_non_null(strstr(err.msg, "not a regular file"));
	sfx_rm_dir(dir);
}

static void test_quote(void **state)
{
	const char *argv[] = { "/opt/perf gate/perfgate-agent", "run-one", "--config",
			       "/etc/it's.json", "$(reboot)", NULL };
	const char *ctl[] = { "/a", "x\ny", NULL };
	struct pg_buf b = PG_BUF_INIT(4096);
	struct pg_err err = PG_ERR_INIT;

	(void)state;
	assert_int_equal(ssh_quote_argv(argv, &b, &err), 0);
	assert_string_equal(pg_buf_str(&b), "exec '/opt/perf gate/perfgate-agent' 'run-one' "
			    "'--config' '/etc/it'\\''s.json' '$(reboot)'");
	pg_buf_reset(&b);
	assert_int_equal(ssh_quote_argv(ctl, &b, &err), -1);
	assert_non_null(strstr(err.msg, "control character"));
	pg_buf_release(&b);
}

static void test_agent_and_state(void **state)
{
	char dir[256], db[300], text[256];
	struct store *st;
	struct pg_err err = PG_ERR_INIT;
	const char *hash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	const char *hash2 = "1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	int64_t id, id2, http, counts[SSH_STATE_COUNT], patch[1], run, job;
	cJSON *o;

	(void)state;
	sfx_open(dir, sizeof(dir), db, sizeof(db), &st, "ssh");
	run = sfx_add_run(st, sfx_add_alice_series(st, 1, "t", "net", -1, patch), "new", "main",
			  "HEAD", T0);
	sfx_sql(st, "INSERT INTO jobs (run_id, context, host_class, build_mode, spec, created_at)"
		" VALUES (?1, 'c', 'arm', 'release', '{}', 1)", STORE_ARGS(STORE_INT(run)));
	job = store_last_id(st);
	assert_int_equal(sched_agent_ssh(st, "arm1", hash, T0, &id, &err), 0);
	sfx_text(st, "SELECT transport || ' ' || token_hash FROM agents WHERE id = ?1", id, text,
		 sizeof(text));
	assert_string_equal(text, "ssh 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	/* A new start: the same row, a new token. */
	assert_int_equal(sched_agent_ssh(st, "arm1", hash2, T0 + 5, &id2, &err), 0);
	assert_int_equal(id2, id);
	sfx_text(st, "SELECT token_hash FROM agents WHERE id = ?1", id, text, sizeof(text));
	assert_string_equal(text, hash2);
	/* A daemon's name is not taken over. */
	assert_int_equal(sched_agent_add(st, "intel1", NULL, hash, T0, &http, &err), 0);
	assert_int_equal(sched_agent_ssh(st, "intel1", hash, T0, &id2, &err), -1);
	assert_int_equal(err.code, PG_ECONFLICT);

	/* The state table. */
	assert_int_equal(ssh_state_json(st, id, &o, &err), 0);
	assert_true(cJSON_IsNull(o));
	cJSON_Delete(o);
	assert_int_equal(ssh_state_init(st, id, "perfgate@arm1:22", T0, &err), 0);
	assert_int_equal(ssh_state_connected(st, id, "ssh-ed25519 SHA256:abc", "perfgate-agent 1",
					     T0 + 1, &err), 0);
	assert_int_equal(ssh_state_set(st, id, SSH_STATE_RUNNING, job, 2, T0 + 2, &err), 0);
	assert_int_equal(ssh_state_json(st, id, &o, &err), 0);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "state")), "running");
	assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "job")), job);
	assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "connects")), 1);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "host_key")),
			    "ssh-ed25519 SHA256:abc");
	cJSON_Delete(o);
	/* An error from the network is shown without its control bytes; the
	 * host key seen is kept. */
	assert_int_equal(ssh_state_error(st, id, "refused\x1b[2J\nnow", NULL, T0 + 3, &err), 0);
	assert_int_equal(ssh_state_json(st, id, &o, &err), 0);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "state")), "error");
	assert_null(strchr(cJSON_GetStringValue(cJSON_GetObjectItem(o, "last_error")), 0x1b));
	assert_null(strchr(cJSON_GetStringValue(cJSON_GetObjectItem(o, "last_error")), '\n'));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "job")));
	assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "failures")), 1);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "host_key")),
			    "ssh-ed25519 SHA256:abc");
	cJSON_Delete(o);
	assert_int_equal(ssh_state_counts(st, counts, &err), 0);
	assert_int_equal(counts[SSH_STATE_ERROR], 1);
	assert_int_equal(counts[SSH_STATE_IDLE], 0);
	/* A restart keeps the counters, resets the state. */
	assert_int_equal(ssh_state_init(st, id, "perfgate@arm1:22", T0 + 9, &err), 0);
	assert_int_equal(sfx_int(st, "SELECT failures FROM ssh_hosts", NULL, 0), 1);
	assert_int_equal(ssh_state_counts(st, counts, &err), 0);
	assert_int_equal(counts[SSH_STATE_DISCONNECTED], 1);
	store_close(st);
	sfx_rm_dir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_host),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_key_mode),
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_agent_and_state),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
