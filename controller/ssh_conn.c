/* SPDX-License-Identifier: MIT */
/* One SSH connection to a lab host, over libssh (see ssh_conn.h). */
#include "ssh_conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include "fmt.h"
#include "log.h"
#include "sanitize.h"
#include "timeutil.h"

#define SSH_POLL_SLICE_MS 200
#define SSH_READ_CHUNK 65536
#define SSH_UPLOAD_CHUNK 32768

struct ssh_conn {
	ssh_session s;
	char name[SSH_HOST_NAME_MAX + 1];
};

struct ssh_cmd {
	struct ssh_conn *conn;
	ssh_channel ch;
	struct pg_buf out;	/* stdout read, not yet returned */
	struct pg_buf err;	/* a stderr line being assembled */
	char tail[SSH_STDERR_TAIL];
	bool eof;
};

int ssh_conn_global_init(struct pg_err *err)
{
	if (ssh_init() != SSH_OK)
		return pg_err_set(err, PG_EIO, "libssh: initialisation failed");
	return 0;
}

void ssh_conn_global_cleanup(void)
{
	ssh_finalize();
}

static int ssh_fail(struct ssh_conn *conn, enum pg_errcode code, struct pg_err *err,
		    const char *what)
{
	return pg_err_set(err, code, "host '%s': %s: %s", conn->name, what,
			  ssh_get_error(conn->s));
}

/* "ssh-ed25519 SHA256:..." of the server's key; -1 when unknown. */
static int ssh_server_fp(struct ssh_conn *conn, char *fp)
{
	ssh_key key = NULL;
	unsigned char *hash = NULL;
	size_t hlen = 0;
	char *text = NULL;
	int rc = -1;

	if (ssh_get_server_publickey(conn->s, &key) != SSH_OK ||
	    ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) != 0)
		goto out;
	text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
	if (!text)
		goto out;
	pg_fmt_cut(fp, SSH_FP_MAX, "%s %s", ssh_key_type_to_char(ssh_key_type(key)), text);
	rc = 0;
out:
	ssh_string_free_char(text);
	ssh_clean_pubkey_hash(&hash);
	ssh_key_free(key);
	return rc;
}

static int ssh_check_host_key(struct ssh_conn *conn, const struct ssh_host_cfg *h,
			      const char *fp, bool *trusted_now, struct pg_err *err)
{
	enum ssh_known_hosts_e known = ssh_session_is_known_server(conn->s);

	switch (known) {
	case SSH_KNOWN_HOSTS_OK:
		return 0;
	case SSH_KNOWN_HOSTS_CHANGED:
		return pg_err_set(err, PG_ECONFLICT, "host '%s' (%s:%lld): its host key CHANGED: "
				  "it now presents %s, which %s does not have for it; refused "
				  "(someone may be in the middle; if the host was reinstalled, "
				  "replace its line in that file)", h->name, h->host,
				  (long long)h->port, fp, h->known_hosts);
	case SSH_KNOWN_HOSTS_OTHER:
		return pg_err_set(err, PG_ECONFLICT, "host '%s' (%s:%lld): it presents a key of "
				  "another type (%s) than %s holds for it; refused", h->name,
				  h->host, (long long)h->port, fp, h->known_hosts);
	case SSH_KNOWN_HOSTS_UNKNOWN:
	case SSH_KNOWN_HOSTS_NOT_FOUND:
		if (!h->tofu)
			return pg_err_set(err, PG_ECONFLICT, "host '%s' (%s:%lld): its host key %s "
					  "is not in %s; refused (add it, e.g. from ssh-keyscan "
					  "checked against the host's console, or set "
					  "trust_on_first_use for this host)", h->name, h->host,
					  (long long)h->port, fp, h->known_hosts);
		if (ssh_session_update_known_hosts(conn->s) != SSH_OK)
			return ssh_fail(conn, PG_EIO, err, "adding its key to known_hosts");
		*trusted_now = true;
		pg_log_warn("ssh", "host '%s': trusted on first use: %s added to %s", h->name, fp,
			    h->known_hosts);
		return 0;
	case SSH_KNOWN_HOSTS_ERROR:
	default:
		return ssh_fail(conn, PG_EIO, err, "checking its host key");
	}
}

static void ssh_tcp_keepalive(struct ssh_conn *conn, int64_t every_s)
{
	int fd = ssh_get_fd(conn->s), on = 1, idle = (int)every_s, cnt = 3;

	/* Best effort: a connection without them still has the dispatcher's
	 * deadlines on every read. */
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on)) < 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) < 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof(idle)) < 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)) < 0)
		pg_log_debug("ssh", "host '%s': TCP keepalive not set: %s", conn->name,
			     strerror(errno));
}

int ssh_conn_open(const struct ssh_host_cfg *h, const struct ssh_cfg *c, struct ssh_conn **out,
		  char *fp, bool *trusted_now, struct pg_err *err)
{
	struct ssh_conn *conn = NULL;
	unsigned int port = (unsigned int)h->port;
	long timeout = (long)c->connect_timeout_s;
	int no = 0, rc;
	ssh_key key = NULL;

	*out = NULL;
	*fp = '\0';
	*trusted_now = false;
	conn = calloc(1, sizeof(*conn));
	if (!conn || !(conn->s = ssh_new())) {
		free(conn);
		return pg_err_set(err, PG_ENOMEM, "host '%s': out of memory", h->name);
	}
	pg_fmt_cut(conn->name, sizeof(conn->name), "%s", h->name);
	if (ssh_options_set(conn->s, SSH_OPTIONS_PROCESS_CONFIG, &no) < 0 ||
	    ssh_options_set(conn->s, SSH_OPTIONS_HOST, h->host) < 0 ||
	    ssh_options_set(conn->s, SSH_OPTIONS_PORT, &port) < 0 ||
	    ssh_options_set(conn->s, SSH_OPTIONS_USER, h->user) < 0 ||
	    ssh_options_set(conn->s, SSH_OPTIONS_KNOWNHOSTS, h->known_hosts) < 0 ||
	    ssh_options_set(conn->s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null") < 0 ||
	    ssh_options_set(conn->s, SSH_OPTIONS_TIMEOUT, &timeout) < 0) {
		ssh_fail(conn, PG_EINVAL, err, "SSH options");
		goto fail;
	}
	if (ssh_connect(conn->s) != SSH_OK) {
		ssh_fail(conn, PG_EIO, err, "connect");
		goto fail;
	}
	if (ssh_server_fp(conn, fp) < 0)
		pg_fmt_cut(fp, SSH_FP_MAX, "(unknown key)");
	if (ssh_check_host_key(conn, h, fp, trusted_now, err) < 0)
		goto fail;
	rc = ssh_pki_import_privkey_file(h->key_file, NULL, NULL, NULL, &key);
	if (rc != SSH_OK) {
		pg_err_set(err, PG_EINVAL, "host '%s': key_file %s cannot be read as a private key "
			   "without a passphrase", h->name, h->key_file);
		goto fail;
	}
	rc = ssh_userauth_publickey(conn->s, NULL, key);
	ssh_key_free(key);
	if (rc != SSH_AUTH_SUCCESS) {
		pg_err_set(err, PG_EIO, "host '%s': %s@%s refused the key %s (public-key "
			   "authentication)%s%s", h->name, h->user, h->host, h->key_file,
			   rc == SSH_AUTH_ERROR ? ": " : "",
			   rc == SSH_AUTH_ERROR ? ssh_get_error(conn->s) : "");
		goto fail;
	}
	ssh_tcp_keepalive(conn, c->keepalive_s);
	*out = conn;
	return 0;
fail:
	ssh_conn_close(conn);
	return -1;
}

void ssh_conn_close(struct ssh_conn *conn)
{
	if (!conn)
		return;
	ssh_disconnect(conn->s);
	ssh_free(conn->s);
	free(conn);
}

int ssh_conn_keepalive(struct ssh_conn *conn, struct pg_err *err)
{
	if (ssh_send_ignore(conn->s, "perfgate") != SSH_OK || !ssh_is_connected(conn->s))
		return ssh_fail(conn, PG_EIO, err, "keepalive");
	return 0;
}

int ssh_quote_argv(const char *const *argv, struct pg_buf *out, struct pg_err *err)
{
	if (pg_buf_adds(out, "exec") < 0)
		return pg_buf_err(out, err, "remote command");
	for (size_t i = 0; argv[i]; i++) {
		if (pg_buf_adds(out, " '") < 0)
			return pg_buf_err(out, err, "remote command");
		for (const char *p = argv[i]; *p; p++) {
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				return pg_err_set(err, PG_EINVAL, "remote command: argument %zu "
						  "holds a control character", i);
			if (*p == '\'' ? pg_buf_adds(out, "'\\''") < 0 : pg_buf_addch(out, *p) < 0)
				return pg_buf_err(out, err, "remote command");
		}
		if (pg_buf_addch(out, '\'') < 0)
			return pg_buf_err(out, err, "remote command");
	}
	return 0;
}

int ssh_cmd_start(struct ssh_conn *conn, const char *const *argv, struct ssh_cmd **out,
		  struct pg_err *err)
{
	struct pg_buf line = PG_BUF_INIT(64 * 1024);
	struct ssh_cmd *cmd;

	*out = NULL;
	cmd = calloc(1, sizeof(*cmd));
	if (!cmd)
		return pg_err_set(err, PG_ENOMEM, "out of memory");
	cmd->conn = conn;
	pg_buf_init(&cmd->out, PG_BUF_NOLIMIT);
	pg_buf_init(&cmd->err, 4096);
	if (ssh_quote_argv(argv, &line, err) < 0)
		goto fail;
	cmd->ch = ssh_channel_new(conn->s);
	if (!cmd->ch || ssh_channel_open_session(cmd->ch) != SSH_OK) {
		ssh_fail(conn, PG_EIO, err, "opening a channel");
		goto fail;
	}
	if (ssh_channel_request_exec(cmd->ch, pg_buf_str(&line)) != SSH_OK) {
		ssh_fail(conn, PG_EIO, err, "starting the command");
		goto fail;
	}
	pg_log_debug("ssh", "host '%s': %s", conn->name, pg_buf_str(&line));
	pg_buf_release(&line);
	*out = cmd;
	return 0;
fail:
	pg_buf_release(&line);
	ssh_cmd_free(cmd);
	return -1;
}

int ssh_cmd_write(struct ssh_cmd *cmd, const void *data, size_t len, struct pg_err *err)
{
	const char *p = data;

	while (len) {
		uint32_t n = len > SSH_READ_CHUNK ? SSH_READ_CHUNK : (uint32_t)len;
		int k = ssh_channel_write(cmd->ch, p, n);

		if (k == SSH_ERROR || k <= 0)
			return ssh_fail(cmd->conn, PG_EIO, err, "writing to the command");
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

int ssh_cmd_send_eof(struct ssh_cmd *cmd, struct pg_err *err)
{
	if (ssh_channel_send_eof(cmd->ch) != SSH_OK)
		return ssh_fail(cmd->conn, PG_EIO, err, "closing the command's input");
	return 0;
}

/* A line of the remote stderr: into the log and the tail. */
static void ssh_stderr_line(struct ssh_cmd *cmd, const char *s, size_t len)
{
	struct pg_buf clean = PG_BUF_INIT(8192);
	size_t have, add;

	if (len > 2000)
		len = 2000;
	if (pg_sanitize(&clean, s, len, PG_SAN_LINE) == 0 || clean.len) {
		pg_log_info("ssh", "host '%s': %s", cmd->conn->name, pg_buf_str(&clean));
		/* Keep the newest lines, whole. */
		have = strlen(cmd->tail);
		add = clean.len + 1;
		if (add >= sizeof(cmd->tail))
			add = sizeof(cmd->tail) - 1;
		if (have + add >= sizeof(cmd->tail)) {
			size_t drop = have + add - sizeof(cmd->tail) + 1;

			memmove(cmd->tail, cmd->tail + drop, have - drop + 1);
			have -= drop;
		}
		pg_fmt_cut(cmd->tail + have, sizeof(cmd->tail) - have, "%s%.*s", have ? "\n" : "",
			   (int)(add - 1), pg_buf_str(&clean));
	}
	pg_buf_release(&clean);
}

static int ssh_drain_stderr(struct ssh_cmd *cmd, struct pg_err *err)
{
	char buf[4096];
	int n;

	while ((n = ssh_channel_read_nonblocking(cmd->ch, buf, sizeof(buf), 1)) > 0) {
		for (int i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				ssh_stderr_line(cmd, cmd->err.data ? cmd->err.data : "", cmd->err.len);
				pg_buf_reset(&cmd->err);
			} else if (pg_buf_addch(&cmd->err, buf[i]) < 0) {
				ssh_stderr_line(cmd, cmd->err.data, cmd->err.len);
				pg_buf_reset(&cmd->err);
			}
		}
	}
	if (n == SSH_ERROR)
		return ssh_fail(cmd->conn, PG_EIO, err, "reading the command's stderr");
	return 0;
}

/* Move a complete line (or, at the end, the rest) from cmd->out to line:
 * 1 when one was moved. */
static int ssh_take_line(struct ssh_cmd *cmd, struct pg_buf *line, struct pg_err *err)
{
	const char *nl = cmd->out.len ? memchr(cmd->out.data, '\n', cmd->out.len) : NULL;
	size_t n;

	if (!nl && !(cmd->eof && cmd->out.len))
		return 0;
	n = nl ? (size_t)(nl - cmd->out.data) : cmd->out.len;
	pg_buf_reset(line);
	if (pg_buf_add(line, cmd->out.data, n) < 0)
		return pg_buf_err(line, err, "host '%s': a line of %zu bytes", cmd->conn->name, n);
	pg_buf_consume(&cmd->out, nl ? n + 1 : n);
	return 1;
}

int ssh_cmd_read_line(struct ssh_cmd *cmd, struct pg_buf *line, int64_t timeout_ms,
		      struct pg_err *err)
{
	int64_t deadline = pg_time_mono_ms() + timeout_ms, left;
	char *buf = NULL;
	int rc = -1, got;

	for (;;) {
		got = ssh_take_line(cmd, line, err);
		if (got != 0) {
			rc = got;
			break;
		}
		if (cmd->out.len > line->max) {
			pg_err_set(err, PG_ETOOBIG, "host '%s': a line over %zu bytes",
				   cmd->conn->name, line->max);
			break;
		}
		if (ssh_drain_stderr(cmd, err) < 0)
			break;
		if (cmd->eof) {
			rc = 0;
			break;
		}
		left = deadline - pg_time_mono_ms();
		if (left <= 0) {
			pg_err_set(err, PG_ETIMEOUT, "host '%s': nothing from the command for %.0f s",
				   cmd->conn->name, (double)timeout_ms / 1000.0);
			break;
		}
		got = ssh_channel_poll_timeout(cmd->ch, (int)(left < SSH_POLL_SLICE_MS ? left :
							       SSH_POLL_SLICE_MS), 0);
		if (got == SSH_EOF) {
			cmd->eof = true;
			continue;
		}
		if (got == SSH_ERROR) {
			ssh_fail(cmd->conn, PG_EIO, err, "reading from the command");
			break;
		}
		if (got == 0)
			continue;
		if (!buf && !(buf = malloc(SSH_READ_CHUNK))) {
			pg_err_set(err, PG_ENOMEM, "out of memory");
			break;
		}
		got = ssh_channel_read_nonblocking(cmd->ch, buf, SSH_READ_CHUNK, 0);
		if (got == SSH_ERROR) {
			ssh_fail(cmd->conn, PG_EIO, err, "reading from the command");
			break;
		}
		if (got > 0 && pg_buf_add(&cmd->out, buf, (size_t)got) < 0) {
			pg_buf_err(&cmd->out, err, "host '%s': output", cmd->conn->name);
			break;
		}
	}
	free(buf);
	return rc;
}

int ssh_cmd_wait(struct ssh_cmd *cmd, int64_t timeout_ms, int *status, struct pg_err *err)
{
	struct pg_buf sink = PG_BUF_INIT(PG_BUF_NOLIMIT);
	int64_t deadline = pg_time_mono_ms() + timeout_ms;
	int rc = 0;

	*status = -1;
	/* Read (and drop) what is left, so that the exit status arrives. */
	while (!cmd->eof) {
		int64_t left = deadline - pg_time_mono_ms();

		rc = ssh_cmd_read_line(cmd, &sink, left > 0 ? left : 1, err);
		if (rc < 0)
			break;
	}
	pg_buf_release(&sink);
	if (rc < 0)
		return -1;
	ssh_drain_stderr(cmd, err);
	if (cmd->err.len) {
		ssh_stderr_line(cmd, cmd->err.data, cmd->err.len);
		pg_buf_reset(&cmd->err);
	}
	*status = ssh_channel_get_exit_status(cmd->ch);
	return 0;
}

const char *ssh_cmd_stderr_tail(struct ssh_cmd *cmd)
{
	return cmd->tail;
}

void ssh_cmd_free(struct ssh_cmd *cmd)
{
	if (!cmd)
		return;
	if (cmd->ch) {
		ssh_channel_close(cmd->ch);
		ssh_channel_free(cmd->ch);
	}
	pg_buf_release(&cmd->out);
	pg_buf_release(&cmd->err);
	free(cmd);
}

int ssh_conn_upload(struct ssh_conn *conn, const char *local, const char *remote_path,
		    int mode, struct pg_err *err)
{
	struct pg_buf tmp = PG_BUF_INIT(8192);
	sftp_session sftp = NULL;
	sftp_file f = NULL;
	char *buf = NULL;
	ssize_t n;
	int fd = -1, rc = -1;

	fd = open(local, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pg_err_errno(err, "open %s", local);
		goto out;
	}
	if (pg_buf_printf(&tmp, "%s.tmp.perfgate", remote_path) < 0) {
		pg_buf_err(&tmp, err, "remote path");
		goto out;
	}
	buf = malloc(SSH_UPLOAD_CHUNK);
	sftp = sftp_new(conn->s);
	if (!buf || !sftp || sftp_init(sftp) != SSH_OK) {
		ssh_fail(conn, PG_EIO, err, "SFTP");
		goto out;
	}
	/* Its directory first, as an installer would (mkdir -p). */
	for (char *p = tmp.data + 1; (p = strchr(p, '/')); p++) {
		sftp_attributes a;

		*p = '\0';
		a = sftp_stat(sftp, tmp.data);
		if (a)
			sftp_attributes_free(a);
		else if (sftp_mkdir(sftp, tmp.data, 0755) < 0) {
			*p = '/';
			ssh_fail(conn, PG_EIO, err, "SFTP mkdir");
			goto out;
		}
		*p = '/';
	}
	f = sftp_open(sftp, pg_buf_str(&tmp), O_WRONLY | O_CREAT | O_TRUNC, (mode_t)mode);
	if (!f) {
		ssh_fail(conn, PG_EIO, err, "SFTP open");
		goto out;
	}
	while ((n = read(fd, buf, SSH_UPLOAD_CHUNK)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			pg_err_errno(err, "read %s", local);
			goto out;
		}
		if (sftp_write(f, buf, (size_t)n) != n) {
			ssh_fail(conn, PG_EIO, err, "SFTP write");
			goto out;
		}
	}
	if (sftp_close(f) != SSH_OK) {
		f = NULL;
		ssh_fail(conn, PG_EIO, err, "SFTP close");
		goto out;
	}
	f = NULL;
	/* The mode again: sftp_open()'s is cut by the server's umask. */
	if (sftp_chmod(sftp, pg_buf_str(&tmp), (mode_t)mode) < 0) {
		ssh_fail(conn, PG_EIO, err, "SFTP chmod");
		goto out;
	}
	if (sftp_rename(sftp, pg_buf_str(&tmp), remote_path) < 0 &&
	    /* A server without posix-rename will not replace a file. */
	    (sftp_unlink(sftp, remote_path) < 0 ||
	     sftp_rename(sftp, pg_buf_str(&tmp), remote_path) < 0)) {
		ssh_fail(conn, PG_EIO, err, "SFTP rename into place");
		goto out;
	}
	rc = 0;
out:
	if (f)
		sftp_close(f);
	if (sftp)
		sftp_free(sftp);
	free(buf);
	if (fd >= 0)
		close(fd);
	pg_buf_release(&tmp);
	if (rc)
		pg_err_prefix(err, "copy %s to host '%s':%s", local, conn->name, remote_path);
	return rc;
}
