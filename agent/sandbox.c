/* SPDX-License-Identifier: MIT */
/* The sandbox for untrusted code: configuration, checks, argv wrapping. */
#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "conffile.h"
#include "fmt.h"
#include "fsutil.h"
#include "json.h"
#include "proc.h"
#include "vec.h"

#define USER_NAME_MAX 32
#define NUM_MAX 32		/* room for one "--opt=NUMBER" */
#define CHOWN_DEPTH_MAX 128	/* DPDK's build tree is about 10 deep */

static const char *const sandbox_fields[] = {
	"enabled", "user", "cpu_s", "memory_mb", "max_procs", "allow_unsandboxed",
	"ro_paths", NULL
};

/* Read-only system directories every sandbox sees; the "try" ones may be
 * missing (or symbolic links to /usr on a merged-/usr system: bwrap binds
 * their targets). */
static const char *const system_ro[] = { "/usr", "/etc", NULL };
static const char *const system_ro_try[] = {
	"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys", NULL
};

int sandbox_cfg_init(struct sandbox_cfg *c, struct pg_err *err)
{
	memset(c, 0, sizeof(*c));
	c->enabled = true;
	c->cpu_s = SANDBOX_CPU_S_DEFAULT;
	c->memory_mb = SANDBOX_MEMORY_MB_DEFAULT;
	c->max_procs = SANDBOX_MAX_PROCS_DEFAULT;
	c->user = strdup(SANDBOX_USER_DEFAULT);
	if (!c->user)
		return pg_err_set(err, PG_ENOMEM, "sandbox: out of memory");
	return 0;
}

void sandbox_cfg_free(struct sandbox_cfg *c)
{
	free(c->user);
	pg_config_strings_free(c->ro_paths, c->n_ro_paths);
	memset(c, 0, sizeof(*c));
}

/* The JSON getters name a field as "field 'KEY'..."; in this object it is
 * "field 'sandbox.KEY'...". */
static int sandbox_field_err(struct pg_err *err)
{
	return pg_json_nested_err(err, "sandbox");
}

static bool user_name_ok(const char *s)
{
	size_t n = strlen(s);

	/* What useradd accepts by default (NAME_REGEX). */
	if (n == 0 || n > USER_NAME_MAX || !strchr("abcdefghijklmnopqrstuvwxyz_", s[0]))
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

static bool abs_path_ok(const char *p)
{
	size_t n = strlen(p);

	if (p[0] != '/' || n < 2 || n >= PATH_MAX)
		return false;
	/* No ".." component: a path says plainly what it exposes. */
	for (const char *s = p; (s = strstr(s, "..")) != NULL; s += 2)
		if (s[-1] == '/' && (s[2] == '/' || s[2] == '\0'))
			return false;
	return true;
}

/* An optional integer field that is 0 (no limit) or in [min, max]. */
static int limit_field(const cJSON *obj, const char *key, int64_t min, int64_t max,
		       int64_t *out, struct pg_err *err)
{
	int64_t v;
	int rc = pg_json_get_int(obj, key, false, 0, max, &v, err);

	if (rc < 0)
		return sandbox_field_err(err);
	if (rc == 0)
		return 0;
	if (v != 0 && v < min)
		return pg_err_set(err, PG_EINVAL,
				  "field 'sandbox.%s': %lld is below %lld (0 means no limit)",
				  key, (long long)v, (long long)min);
	*out = v;
	return 0;
}

int sandbox_cfg_parse(struct sandbox_cfg *c, const cJSON *obj, struct pg_err *err)
{
	const char *user = NULL;
	int rc;

	if (!cJSON_IsObject(obj))
		return pg_err_set(err, PG_EINVAL, "field 'sandbox': expected an object, got %s",
				  pg_json_type_name(obj));
	if (pg_json_check_keys(obj, sandbox_fields, err) < 0 ||
	    pg_json_get_bool(obj, "enabled", false, &c->enabled, err) < 0 ||
	    pg_json_get_bool(obj, "allow_unsandboxed", false, &c->allow_unsandboxed, err) < 0)
		return sandbox_field_err(err);
	rc = pg_json_get_string(obj, "user", false, &user, err);
	if (rc < 0)
		return sandbox_field_err(err);
	if (rc > 0) {
		if (!user_name_ok(user))
			return pg_err_set(err, PG_EINVAL,
					  "field 'sandbox.user': '%s' is not a user name (lower-case letters, digits, '_', '-')",
					  user);
		if (strcmp(user, "root") == 0)
			return pg_err_set(err, PG_EINVAL,
					  "field 'sandbox.user': the sandbox must run as an unprivileged user, not root");
		free(c->user);
		c->user = strdup(user);
		if (!c->user)
			return pg_err_set(err, PG_ENOMEM, "sandbox: out of memory");
	}
	if (limit_field(obj, "cpu_s", 1, SANDBOX_CPU_S_MAX, &c->cpu_s, err) < 0 ||
	    limit_field(obj, "memory_mb", SANDBOX_MEMORY_MB_MIN, SANDBOX_MEMORY_MB_MAX,
			&c->memory_mb, err) < 0 ||
	    limit_field(obj, "max_procs", SANDBOX_MAX_PROCS_MIN, SANDBOX_MAX_PROCS_MAX,
			&c->max_procs, err) < 0)
		return -1;
	pg_config_strings_free(c->ro_paths, c->n_ro_paths);
	c->ro_paths = NULL;
	c->n_ro_paths = 0;
	if (pg_config_strings(obj, "ro_paths", &c->ro_paths, &c->n_ro_paths, err) < 0)
		return sandbox_field_err(err);
	if (c->n_ro_paths > SANDBOX_RO_PATHS_MAX)
		return pg_err_set(err, PG_EINVAL, "field 'sandbox.ro_paths': more than %d paths",
				  SANDBOX_RO_PATHS_MAX);
	for (size_t i = 0; i < c->n_ro_paths; i++)
		if (!abs_path_ok(c->ro_paths[i]))
			return pg_err_set(err, PG_EINVAL,
					  "field 'sandbox.ro_paths[%zu]': '%s' is not an absolute path without '..' (and not '/')",
					  i, c->ro_paths[i]);
	if (!c->enabled && !c->allow_unsandboxed)
		return pg_err_set(err, PG_EINVAL,
				  "field 'sandbox.enabled': false runs patches from the list unsandboxed; "
				  "say so with \"allow_unsandboxed\": true as well (trusted hosts only)");
	return 0;
}

cJSON *sandbox_cfg_to_json(const struct sandbox_cfg *c)
{
	cJSON *o = cJSON_CreateObject(), *arr;

	if (!o)
		return NULL;
	if (!cJSON_AddBoolToObject(o, "enabled", c->enabled) ||
	    !cJSON_AddStringToObject(o, "user", c->user) ||
	    !cJSON_AddNumberToObject(o, "cpu_s", (double)c->cpu_s) ||
	    !cJSON_AddNumberToObject(o, "memory_mb", (double)c->memory_mb) ||
	    !cJSON_AddNumberToObject(o, "max_procs", (double)c->max_procs) ||
	    !cJSON_AddBoolToObject(o, "allow_unsandboxed", c->allow_unsandboxed))
		goto fail;
	arr = cJSON_AddArrayToObject(o, "ro_paths");
	if (!arr)
		goto fail;
	for (size_t i = 0; i < c->n_ro_paths; i++)
		if (!cJSON_AddItemToArray(arr, cJSON_CreateString(c->ro_paths[i])))
			goto fail;
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

int sandbox_resolve(struct sandbox_cfg *c, struct pg_err *err)
{
	struct passwd pw, *found = NULL;
	char buf[4096];
	int rc;

	c->resolved = false;
	if (geteuid() != 0) {
		c->drop = false;
		c->uid = geteuid();
		c->gid = getegid();
		c->resolved = true;
		return 0;
	}
	rc = getpwnam_r(c->user, &pw, buf, sizeof(buf), &found);
	if (rc != 0) {
		errno = rc;
		return pg_err_errno(err, "sandbox: look up user '%s'", c->user);
	}
	if (!found)
		return pg_err_set(err, PG_ENOTFOUND,
				  "sandbox: user '%s' does not exist; create it with `useradd --system "
				  "--user-group --no-create-home --home-dir /nonexistent --shell "
				  "/usr/sbin/nologin %s` (or name another in sandbox.user)",
				  c->user, c->user);
	if (pw.pw_uid == 0)
		return pg_err_set(err, PG_EINVAL,
				  "sandbox: user '%s' has uid 0; the sandbox needs an unprivileged user",
				  c->user);
	c->drop = true;
	c->uid = pw.pw_uid;
	c->gid = pw.pw_gid;
	c->resolved = true;
	return 0;
}

/* A growing NULL-terminated vector of malloc'd strings. */
struct argvec {
	char **v;
	size_t n, alloc;
	bool nomem;
};

static void vec_add(struct argvec *a, const char *s)
{
	char *copy;

	if (a->nomem)
		return;
	if (PG_GROW(a->v, a->alloc, a->n + 2) < 0) {
		a->nomem = true;
		return;
	}
	copy = strdup(s);
	if (!copy) {
		a->nomem = true;
		return;
	}
	a->v[a->n++] = copy;
	a->v[a->n] = NULL;
}

static void vec_add3(struct argvec *a, const char *opt, const char *src, const char *dst)
{
	vec_add(a, opt);
	vec_add(a, src);
	vec_add(a, dst);
}

/* prefix followed by the number, e.g. "--cpu=" 60. */
static void vec_addnum(struct argvec *a, const char *prefix, long long v)
{
	char num[NUM_MAX];

	if (pg_fmt(num, sizeof(num), "%s%lld", prefix, v) < 0) {
		a->nomem = true;	/* cannot happen: a long long fits */
		return;
	}
	vec_add(a, num);
}

void sandbox_argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

static int check_paths(const char *const *list, const char *what, struct pg_err *err)
{
	for (size_t i = 0; list && list[i]; i++)
		if (!abs_path_ok(list[i]))
			return pg_err_set(err, PG_EINVAL,
					  "sandbox: %s path '%s' is not absolute (or is '/' or has '..')",
					  what, list[i]);
	return 0;
}

int sandbox_wrap(const struct sandbox_cfg *c, const struct sandbox_cmd *cmd, char ***out,
		 struct pg_err *err)
{
	struct argvec a = { NULL, 0, 0, false };
	const long long mib = 1024 * 1024;

	*out = NULL;
	if (!c->enabled)
		return pg_err_set(err, PG_EINVAL, "sandbox: not enabled on this host");
	if (!c->resolved)
		return pg_err_set(err, PG_EINVAL, "sandbox: user not resolved (sandbox_resolve())");
	if (!cmd->argv || !cmd->argv[0] || !*cmd->argv[0])
		return pg_err_set(err, PG_EINVAL, "sandbox: empty argument vector");
	if (check_paths(cmd->rw_paths, "read-write", err) < 0 ||
	    check_paths(cmd->ro_paths, "read-only", err) < 0 ||
	    check_paths(cmd->dev_paths, "device", err) < 0)
		return -1;
	if (cmd->dir && cmd->dir[0] != '/')
		return pg_err_set(err, PG_EINVAL, "sandbox: working directory '%s' is not absolute",
				  cmd->dir);

	if (c->cpu_s || c->memory_mb || c->max_procs) {
		vec_add(&a, SANDBOX_PRLIMIT);
		/* Soft below hard, so that the process sees SIGXCPU ("CPU
		 * time limit exceeded") before SIGKILL. */
		if (c->cpu_s) {
			char soft[NUM_MAX];

			if (pg_fmt(soft, sizeof(soft), "--cpu=%lld:", (long long)c->cpu_s) < 0)
				a.nomem = true;	/* cannot happen */
			else
				vec_addnum(&a, soft, (long long)c->cpu_s + SANDBOX_CPU_GRACE_S);
		}
		if (c->memory_mb)
			vec_addnum(&a, "--data=", (long long)c->memory_mb * mib);
		if (c->max_procs)
			vec_addnum(&a, "--nproc=", (long long)c->max_procs);
		vec_add(&a, "--");
	}
	if (c->drop) {
		vec_add(&a, SANDBOX_SETPRIV);
		vec_addnum(&a, "--reuid=", (long long)c->uid);
		vec_addnum(&a, "--regid=", (long long)c->gid);
		vec_add(&a, "--clear-groups");
		vec_add(&a, "--");
	}
	vec_add(&a, SANDBOX_BWRAP);
	vec_add(&a, "--unshare-all");
	vec_add(&a, "--unshare-user");
	vec_add(&a, "--disable-userns");
	vec_add(&a, "--die-with-parent");
	for (size_t i = 0; system_ro[i]; i++)
		vec_add3(&a, "--ro-bind", system_ro[i], system_ro[i]);
	for (size_t i = 0; system_ro_try[i]; i++)
		vec_add3(&a, "--ro-bind-try", system_ro_try[i], system_ro_try[i]);
	for (size_t i = 0; i < c->n_ro_paths; i++)
		vec_add3(&a, "--ro-bind", c->ro_paths[i], c->ro_paths[i]);
	vec_add(&a, "--dev");
	vec_add(&a, "/dev");
	vec_add(&a, "--proc");
	vec_add(&a, "/proc");
	if (c->memory_mb) {
		vec_add(&a, "--size");
		vec_addnum(&a, "", (long long)c->memory_mb * mib);
	}
	vec_add(&a, "--tmpfs");
	vec_add(&a, "/tmp");
	for (size_t i = 0; cmd->ro_paths && cmd->ro_paths[i]; i++)
		vec_add3(&a, "--ro-bind", cmd->ro_paths[i], cmd->ro_paths[i]);
	for (size_t i = 0; cmd->rw_paths && cmd->rw_paths[i]; i++)
		vec_add3(&a, "--bind", cmd->rw_paths[i], cmd->rw_paths[i]);
	for (size_t i = 0; cmd->dev_paths && cmd->dev_paths[i]; i++)
		vec_add3(&a, "--dev-bind", cmd->dev_paths[i], cmd->dev_paths[i]);
	/* Last: the root bwrap built (with the mount points above) becomes
	 * read-only too; the mounts on it keep their own modes. */
	vec_add(&a, "--remount-ro");
	vec_add(&a, "/");
	vec_add(&a, "--chdir");
	vec_add(&a, cmd->dir ? cmd->dir : "/tmp");
	vec_add(&a, "--");
	for (size_t i = 0; cmd->argv[i]; i++)
		vec_add(&a, cmd->argv[i]);
	if (a.nomem) {
		sandbox_argv_free(a.v);
		return pg_err_set(err, PG_ENOMEM, "sandbox: out of memory");
	}
	*out = a.v;
	return 0;
}

int sandbox_for_job(const struct sandbox_cfg *c, const cJSON *job,
		    const struct sandbox_cfg **use, struct pg_err *err)
{
	bool want = true;

	*use = NULL;
	if (job && pg_json_get_bool(job, "sandbox", false, &want, err) < 0) {
		pg_err_prefix(err, "job");
		return -1;
	}
	if (!want && !c->allow_unsandboxed)
		return pg_err_set(err, PG_EINVAL,
				  "job asks for \"sandbox\": false, but this host runs patches "
				  "sandboxed only (its configuration has no sandbox.allow_unsandboxed)");
	*use = want && c->enabled ? c : NULL;
	return 0;
}

/* Whether uid/gid (no supplementary groups: setpriv clears them) may do
 * `need` (bits of S_IRWXO) on st. */
static bool may(const struct stat *st, uid_t uid, gid_t gid, mode_t need)
{
	mode_t bits;

	if (st->st_uid == uid)
		bits = (st->st_mode & S_IRWXU) >> 6;
	else if (st->st_gid == gid)
		bits = (st->st_mode & S_IRWXG) >> 3;
	else
		bits = st->st_mode & S_IRWXO;
	return (bits & need) == need;
}

/* Every directory above path (not path itself) lets uid/gid through. */
static int check_ancestors(const struct sandbox_cfg *c, const char *path, struct pg_err *err)
{
	char dir[PATH_MAX];
	struct stat st;
	size_t len = strlen(path);

	if (len >= sizeof(dir))
		return pg_err_set(err, PG_EINVAL, "sandbox: path '%s' too long", path);
	memcpy(dir, path, len + 1);
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (stat(dir, &st) < 0)
			return pg_err_errno(err, "sandbox: stat '%s'", dir);
		if (!may(&st, c->uid, c->gid, S_IXOTH))
			return pg_err_set(err, PG_EINVAL,
					  "sandbox: user '%s' cannot reach '%s' through '%s' (mode %04o, "
					  "owner %ld:%ld): give the workspace's parent directories o+x",
					  c->user, path, dir, (unsigned)(st.st_mode & 07777),
					  (long)st.st_uid, (long)st.st_gid);
		*p = '/';
	}
	return 0;
}

/* chown -R without following symbolic links, on an open directory. */
static int chown_tree(int dfd, const char *path, uid_t uid, gid_t gid, int depth,
		      struct pg_err *err)
{
	DIR *d;
	struct dirent *e;
	struct stat st;
	int ret = -1;

	if (depth > CHOWN_DEPTH_MAX) {
		close(dfd);
		return pg_err_set(err, PG_EINVAL, "sandbox: '%s' is nested too deep", path);
	}
	if (fchown(dfd, uid, gid) < 0) {
		pg_err_errno(err, "sandbox: chown '%s'", path);
		close(dfd);
		return -1;
	}
	d = fdopendir(dfd);
	if (!d) {
		pg_err_errno(err, "sandbox: open directory '%s'", path);
		close(dfd);
		return -1;
	}
	for (errno = 0; (e = readdir(d)) != NULL; errno = 0) {
		int sub;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			pg_err_errno(err, "sandbox: stat '%s/%s'", path, e->d_name);
			goto out;
		}
		if (!S_ISDIR(st.st_mode)) {
			/* A hard link the sandbox made to a file of the host
			 * (possible where fs.protected_hardlinks is 0) must not
			 * be handed to it: such a file is left as it is. */
			if (S_ISREG(st.st_mode) && st.st_nlink > 1 && st.st_uid != uid)
				continue;
			if (fchownat(dirfd(d), e->d_name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0) {
				pg_err_errno(err, "sandbox: chown '%s/%s'", path, e->d_name);
				goto out;
			}
			continue;
		}
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			pg_err_errno(err, "sandbox: open '%s/%s'", path, e->d_name);
			goto out;
		}
		/* Errors inside name the top directory: enough to act on. */
		if (chown_tree(sub, path, uid, gid, depth + 1, err) < 0)
			goto out;
	}
	if (errno) {
		pg_err_errno(err, "sandbox: read directory '%s'", path);
		goto out;
	}
	ret = 0;
out:
	closedir(d);
	return ret;
}

int sandbox_prepare_dir(const struct sandbox_cfg *c, const char *path, bool writable,
			struct pg_err *err)
{
	struct stat st;
	int fd;

	if (path[0] != '/')
		return pg_err_set(err, PG_EINVAL, "sandbox: '%s' is not an absolute path", path);
	if (writable && pg_mkdir_p(path, 0755, err) < 0)
		return -1;
	/* Unsandboxed, or sandboxed as the agent's own user: whatever the
	 * agent can reach, the code can. */
	if (!c || !c->drop)
		return 0;
	if (!c->resolved)
		return pg_err_set(err, PG_EINVAL, "sandbox: user not resolved (sandbox_resolve())");
	if (check_ancestors(c, path, err) < 0)
		return -1;
	if (stat(path, &st) < 0)
		return pg_err_errno(err, "sandbox: stat '%s'", path);
	if (!S_ISDIR(st.st_mode))
		return pg_err_set(err, PG_EINVAL, "sandbox: '%s' is not a directory", path);
	if (!writable) {
		if (!may(&st, c->uid, c->gid, S_IROTH | S_IXOTH))
			return pg_err_set(err, PG_EINVAL,
					  "sandbox: user '%s' cannot read '%s' (mode %04o, owner %ld:%ld)",
					  c->user, path, (unsigned)(st.st_mode & 07777),
					  (long)st.st_uid, (long)st.st_gid);
		return 0;
	}
	if (st.st_uid == c->uid && st.st_gid == c->gid)
		return 0;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pg_err_errno(err, "sandbox: open '%s'", path);
	return chown_tree(fd, path, c->uid, c->gid, 0, err);
}

bool sandbox_setup_failed(const char *output, size_t len)
{
	static const char *const heads[] = { "bwrap: ", "setpriv: ", "prlimit: ", NULL };

	for (size_t i = 0; heads[i]; i++) {
		size_t n = strlen(heads[i]);

		if (len >= n && memcmp(output, heads[i], n) == 0)
			return true;
	}
	return false;
}

const char *sandbox_describe(const struct sandbox_cfg *c, char *buf, size_t size)
{
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	char *s;
	int rc = 0;

	if (!size)
		return "";
	if (!c) {
		pg_fmt_cut(buf, size, "unsandboxed");
		return buf;
	}
	if (c->drop)
		rc |= pg_buf_printf(&b, "bwrap as %s (uid %ld)", c->user, (long)c->uid);
	else
		rc |= pg_buf_printf(&b, "bwrap as the agent's user (uid %ld)", (long)c->uid);
	rc |= pg_buf_adds(&b, ", no network");
	if (c->cpu_s)
		rc |= pg_buf_printf(&b, ", cpu %lld s", (long long)c->cpu_s);
	if (c->memory_mb)
		rc |= pg_buf_printf(&b, ", data %lld MiB", (long long)c->memory_mb);
	if (c->max_procs)
		rc |= pg_buf_printf(&b, ", %lld processes", (long long)c->max_procs);
	s = rc ? NULL : pg_buf_detach(&b, NULL);
	pg_fmt_cut(buf, size, "%s", s ? s : "bwrap");
	free(s);
	pg_buf_release(&b);
	return buf;
}

int sandbox_check(struct sandbox_cfg *c, struct pg_err *err)
{
	static const char *const tools[][2] = {
		{ SANDBOX_BWRAP, "bubblewrap" },
		{ SANDBOX_SETPRIV, "util-linux" },
		{ SANDBOX_PRLIMIT, "util-linux" },
	};
	static const char *const env[] = { "PATH=/usr/bin:/bin", NULL };
	static const char *const probe[] = { "true", NULL };
	struct sandbox_cmd cmd = { probe, NULL, NULL, NULL, NULL };
	struct pg_proc p = PG_PROC_INIT;
	char **argv = NULL, desc[PG_PROC_DESC_MAX];
	int ret = -1;

	if (!c->enabled)
		return 0;
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (access(tools[i][0], X_OK) < 0)
			return pg_err_set(err, PG_ENOTFOUND,
					  "sandbox: %s is missing: install Debian's %s package "
					  "(or, on a trusted host only, set sandbox.enabled false "
					  "with allow_unsandboxed true)", tools[i][0], tools[i][1]);
	if (sandbox_resolve(c, err) < 0 || sandbox_wrap(c, &cmd, &argv, err) < 0)
		return -1;
	p.argv = (const char *const *)argv;
	p.clear_env = true;
	p.env_set = env;
	p.timeout_ms = SANDBOX_PROBE_TIMEOUT_MS;
	p.tail_max = 1024;
	if (pg_proc_run(&p, err) < 0) {
		pg_err_prefix(err, "sandbox: probe");
		goto out;
	}
	if (!pg_proc_succeeded(&p)) {
		const char *out = pg_buf_str(&p.tail);
		size_t n = strcspn(out, "\n");

		pg_err_set(err, PG_EIO,
			   "sandbox: bwrap cannot make a sandbox on this host (%s: %.*s); it needs "
			   "kernel user namespaces for unprivileged users (sysctl "
			   "user.max_user_namespaces > 0, and kernel.unprivileged_userns_clone = 1 "
			   "where that exists)", pg_proc_describe(&p, desc, sizeof(desc)),
			   (int)(n > 300 ? 300 : n), out);
		goto out;
	}
	ret = 0;
out:
	pg_proc_release(&p);
	sandbox_argv_free(argv);
	return ret;
}
