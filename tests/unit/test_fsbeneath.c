/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for lib/fsbeneath.c: files beneath a root, never through a
 * symbolic link.  Every test runs twice, once with openat2 and once with
 * the user-space walk (pg_beneath_set_impl()); one more forks a child whose
 * seccomp filter makes openat2 fail with ENOSYS, so that the automatic
 * fallback is tested as a kernel without openat2 would drive it.
 *
 * The tree each test gets:
 *   T/root/plain.txt        "hello\n"
 *   T/root/sub/f.txt        "in sub\n"
 *   T/root/link          -> ../outside/secret      (relative)
 *   T/root/abslink       -> T/outside/secret       (absolute)
 *   T/root/dirlink       -> ../outside             (a directory on the way)
 *   T/root/inlink        -> plain.txt              (a link that stays inside)
 *   T/root/insub         -> sub
 *   T/root/fifo             a FIFO nobody writes
 *   T/rootlink           -> root
 *   T/outside/secret        SENTINEL, mode 0600
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cmocka.h>

#include "buf.h"
#include "fsbeneath.h"
#include "fsutil.h"
#include "rmtreefx.h"

#define SENTINEL "SECRET-SENTINEL-7d1f"

struct fx {
	enum pg_beneath_impl impl, old;
	char top[64];
	char root[128];		/* short, so that paths made from them fit */
	char outside[128];
	char secret[160];
	char rootlink[128];
};

static enum pg_beneath_impl impl_openat2 = PG_BENEATH_OPENAT2;
static enum pg_beneath_impl impl_walk = PG_BENEATH_WALK;
static enum pg_beneath_impl impl_auto = PG_BENEATH_AUTO;

static void put(const char *dir, const char *name, const char *text, mode_t mode)
{
	char path[PATH_MAX];
	int fd;

	assert_true(strlen(dir) + strlen(name) < 512);
	assert_true((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) < sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(close(fd), 0);
}

static void link_at(const char *dir, const char *name, const char *target)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(symlink(target, path), 0);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char path[PATH_MAX];

	if (!f)
		return -1;
	f->impl = *(enum pg_beneath_impl *)*state;
	f->old = pg_beneath_set_impl(f->impl);
	snprintf(f->top, sizeof(f->top), "/tmp/pg-test-beneath.XXXXXX");
	if (!mkdtemp(f->top))
		return -1;
	snprintf(f->root, sizeof(f->root), "%s/root", f->top);
	snprintf(f->outside, sizeof(f->outside), "%s/outside", f->top);
	snprintf(f->secret, sizeof(f->secret), "%s/secret", f->outside);
	snprintf(f->rootlink, sizeof(f->rootlink), "%s/rootlink", f->top);
	snprintf(path, sizeof(path), "%s/sub", f->root);
	if (mkdir(f->root, 0755) < 0 || mkdir(f->outside, 0755) < 0 || mkdir(path, 0755) < 0)
		return -1;
	put(f->outside, "secret", SENTINEL "\n", 0600);
	put(f->root, "plain.txt", "hello\n", 0644);
	put(path, "f.txt", "in sub\n", 0644);
	link_at(f->root, "link", "../outside/secret");
	link_at(f->root, "abslink", f->secret);
	link_at(f->root, "dirlink", "../outside");
	link_at(f->root, "inlink", "plain.txt");
	link_at(f->root, "insub", "sub");
	snprintf(path, sizeof(path), "%s/fifo", f->root);
	if (mkfifo(path, 0644) < 0 || symlink("root", f->rootlink) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int rc = fx_rm_tree(f->top);

	pg_beneath_set_impl(f->old);
	free(f);
	return rc;
}

/* The outside directory holds exactly the secret, unchanged. */
static void assert_outside_untouched(const struct fx *f)
{
	struct pg_buf b = PG_BUF_INIT(4096);
	struct pg_err err = PG_ERR_INIT;
	struct stat st;
	char path[PATH_MAX];
	int n = 0;
	DIR *d;

	assert_int_equal(pg_read_file(f->secret, &b, &err), 0);
	assert_string_equal(pg_buf_str(&b), SENTINEL "\n");
	assert_int_equal(stat(f->secret, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	d = opendir(f->outside);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "unexpected '%s' in outside", e->d_name);
		if (strcmp(e->d_name, "secret") != 0)
			fail_msg("%s", path);
		n++;
	}
	closedir(d);
	assert_int_equal(n, 1);
	pg_buf_release(&b);
}

/* A read of rel must fail with code and a message holding want (and
 * never the secret); b stays empty. */
static void assert_read_refused(const struct fx *f, const char *root, const char *rel,
				enum pg_errcode code, const char *want)
{
	struct pg_buf b = PG_BUF_INIT(4096);
	struct pg_err err = PG_ERR_INIT;

	assert_int_equal(pg_read_file_beneath(root, rel, &b, NULL, &err), -1);
	if (err.code != code || !strstr(err.msg, want))
		fail_msg("read '%s': code %s, message '%s'; wanted %s, '%s'", rel,
			 pg_errcode_name(err.code), err.msg, pg_errcode_name(code), want);
	assert_null(strstr(err.msg, SENTINEL));
	assert_int_equal(b.len, 0);
	pg_buf_release(&b);
	(void)f;
}

static void test_plain(void **state)
{
	struct fx *f = *state;
	struct pg_buf b = PG_BUF_INIT(4096);
	struct pg_err err = PG_ERR_INIT;
	struct stat st;
	int fd;

	assert_int_equal(pg_read_file_beneath(f->root, "plain.txt", &b, &st, &err), 0);
	assert_string_equal(pg_buf_str(&b), "hello\n");
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 6);
	/* Appends, as pg_read_file() does. */
	assert_int_equal(pg_read_file_beneath(f->root, "sub/f.txt", &b, NULL, &err), 0);
	assert_string_equal(pg_buf_str(&b), "hello\nin sub\n");
	/* A directory opened as one. */
	fd = pg_open_beneath(f->root, "sub", O_RDONLY | O_DIRECTORY, 0, &err);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	close(fd);
	assert_int_equal(pg_stat_beneath(f->root, "sub/f.txt", &st, &err), 0);
	assert_true(S_ISREG(st.st_mode));
	pg_buf_release(&b);
}

static void test_link_as_file(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	struct stat st;
	char want[PATH_MAX + 64];

	snprintf(want, sizeof(want), "'%s/link' is a symbolic link: refused", f->root);
	assert_read_refused(f, f->root, "link", PG_EINVAL, want);
	assert_read_refused(f, f->root, "abslink", PG_EINVAL, "abslink' is a symbolic link: refused");
	/* Not beneath is not enough: a link that stays inside is refused too. */
	assert_read_refused(f, f->root, "inlink", PG_EINVAL, "inlink' is a symbolic link: refused");
	/* Not even O_PATH gets the link: stat refuses it too. */
	assert_int_equal(pg_stat_beneath(f->root, "link", &st, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "is a symbolic link: refused"));
	/* Nor an open for writing (O_CREAT without O_EXCL would follow). */
	assert_int_equal(pg_open_beneath(f->root, "link", O_WRONLY | O_CREAT | O_TRUNC, 0644, &err),
			 -1);
	assert_non_null(strstr(err.msg, "is a symbolic link: refused"));
	assert_outside_untouched(f);
}

static void test_link_on_the_way(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char want[PATH_MAX + 64];

	snprintf(want, sizeof(want),
		 "'%s/dirlink/secret' goes through a symbolic link ('dirlink'): refused", f->root);
	assert_read_refused(f, f->root, "dirlink/secret", PG_EINVAL, want);
	assert_int_equal(pg_open_beneath(f->root, "dirlink/new", O_WRONLY | O_CREAT | O_EXCL,
					 0644, &err), -1);
	assert_non_null(strstr(err.msg, "goes through a symbolic link ('dirlink')"));
	assert_read_refused(f, f->root, "insub/f.txt", PG_EINVAL,
			    "insub/f.txt' goes through a symbolic link ('insub'): refused");
	/* The root itself a link: refused, even though its target is fine. */
	assert_read_refused(f, f->rootlink, "plain.txt", PG_EINVAL, "is a symbolic link: refused");
	{
		char slash[PATH_MAX];

		/* With a trailing "/" the kernel would follow it. */
		snprintf(slash, sizeof(slash), "%s/", f->rootlink);
		assert_read_refused(f, slash, "plain.txt", PG_EINVAL, "must not be empty or end in");
	}
	assert_outside_untouched(f);
}

static void test_bad_rel(void **state)
{
	struct fx *f = *state;
	static const char *const bad[][2] = {
		{ "../outside/secret", "'..' component refused" },
		{ "sub/../plain.txt", "'..' component refused" },
		{ "..", "'..' component refused" },
		{ "./plain.txt", "'.' component refused" },
		{ "sub//f.txt", "empty path component" },
		{ "sub/", "empty path component" },
		{ "", "bad relative path length" },
		{ "/etc/passwd", "is absolute, not beneath it" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_read_refused(f, f->root, bad[i][0], PG_EINVAL, bad[i][1]);
	assert_outside_untouched(f);
}

static void on_alarm(int sig)
{
	(void)sig;
	/* A read that blocks on the FIFO: fail loudly rather than hang. */
	_exit(99);
}

static void test_not_regular(void **state)
{
	struct fx *f = *state;
	struct sigaction sa, old;
	char want[PATH_MAX + 64];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	alarm(5);
	snprintf(want, sizeof(want), "'%s/fifo' is not a regular file", f->root);
	assert_read_refused(f, f->root, "fifo", PG_EINVAL, want);
	alarm(0);
	assert_int_equal(sigaction(SIGALRM, &old, NULL), 0);
	assert_read_refused(f, f->root, "sub", PG_EINVAL, "sub' is not a regular file");
	assert_read_refused(f, f->root, "missing", PG_ENOTFOUND, "missing': no such file");
	assert_read_refused(f, f->root, "sub/missing/x", PG_ENOTFOUND, "no such file");
	/* A file where a directory should be. */
	assert_read_refused(f, f->root, "plain.txt/x", PG_EIO, "Not a directory");
}

static void test_bound(void **state)
{
	struct fx *f = *state;
	struct pg_buf b = PG_BUF_INIT(5);
	struct pg_err err = PG_ERR_INIT;

	assert_int_equal(pg_read_file_beneath(f->root, "plain.txt", &b, NULL, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	assert_non_null(strstr(err.msg, "plain.txt': larger than 5 bytes"));
	pg_buf_release(&b);
	b.max = 6;
	assert_int_equal(pg_read_file_beneath(f->root, "plain.txt", &b, NULL, &err), 0);
	assert_int_equal(b.len, 6);
	pg_buf_release(&b);
}

/* Names in dir other than "." and "..", as one sorted-by-readdir string. */
static void list_dir(const char *dir, char *out, size_t size)
{
	DIR *d = opendir(dir);
	size_t len = 0;

	assert_non_null(d);
	out[0] = '\0';
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		len += (size_t)snprintf(out + len, size - len, "%s ", e->d_name);
		assert_true(len < size);
	}
	closedir(d);
}

static void test_write(void **state)
{
	struct fx *f = *state;
	struct pg_buf b = PG_BUF_INIT(4096);
	struct pg_err err = PG_ERR_INIT;
	char path[PATH_MAX], names[1024], leftover[PATH_MAX];
	struct stat st;
	mode_t um;

	/* A new file, its mode exactly (no umask), then replaced. */
	um = umask(077);
	assert_int_equal(pg_write_file_beneath_atomic(f->root, "sub/new.txt", "one", 3, 0644,
						      &err), 0);
	umask(um);
	snprintf(path, sizeof(path), "%s/sub/new.txt", f->root);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	/* A leftover temporary, planted as a link to the secret: removed,
	 * never written through. */
	snprintf(leftover, sizeof(leftover), "%s/sub/.new.txt.pg-tmp.%ld", f->root,
		 (long)getpid());
	assert_int_equal(symlink(f->secret, leftover), 0);
	assert_int_equal(pg_write_file_beneath_atomic(f->root, "sub/new.txt", "two!", 4, 04755,
						      &err), 0);
	assert_int_equal(pg_read_file(path, &b, &err), 0);
	assert_string_equal(pg_buf_str(&b), "two!");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);	/* never a set-id bit */
	snprintf(path, sizeof(path), "%s/sub", f->root);
	list_dir(path, names, sizeof(names));
	if (strstr(names, "pg-tmp"))
		fail_msg("a temporary file is left: %s", names);
	/* At the top of the root. */
	assert_int_equal(pg_write_file_beneath_atomic(f->root, "top.txt", "t", 1, 0600, &err), 0);
	pg_buf_reset(&b);
	assert_int_equal(pg_read_file_beneath(f->root, "top.txt", &b, &st, &err), 0);
	assert_string_equal(pg_buf_str(&b), "t");
	assert_int_equal(st.st_mode & 0777, 0600);
	/* A link as the file itself: the link is replaced, its target untouched. */
	assert_int_equal(pg_write_file_beneath_atomic(f->root, "link", "mine", 4, 0644, &err), 0);
	snprintf(path, sizeof(path), "%s/link", f->root);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_outside_untouched(f);
	pg_buf_release(&b);
}

static void test_write_refused(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char names[1024];

	/* Through a linked parent: neither the secret replaced nor a file
	 * (final or temporary) created beside it. */
	assert_int_equal(pg_write_file_beneath_atomic(f->root, "dirlink/secret", "pwned", 5, 0644,
						      &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_non_null(strstr(err.msg, "goes through a symbolic link ('dirlink'): refused"));
	assert_int_equal(pg_write_file_beneath_atomic(f->root, "dirlink/new", "pwned", 5, 0644,
						      &err), -1);
	assert_non_null(strstr(err.msg, "goes through a symbolic link ('dirlink'): refused"));
	assert_outside_untouched(f);
	/* The root a link; "..", absolute. */
	assert_int_equal(pg_write_file_beneath_atomic(f->rootlink, "x", "x", 1, 0644, &err), -1);
	assert_non_null(strstr(err.msg, "is a symbolic link: refused"));
	assert_int_equal(pg_write_file_beneath_atomic(f->root, "../outside/secret", "x", 1, 0644,
						      &err), -1);
	assert_non_null(strstr(err.msg, "'..' component refused"));
	assert_int_equal(pg_write_file_beneath_atomic(f->root, "/tmp/x", "x", 1, 0644, &err), -1);
	assert_non_null(strstr(err.msg, "is absolute"));
	assert_outside_untouched(f);
	list_dir(f->top, names, sizeof(names));
	if (strstr(names, "pg-tmp") || strstr(names, "x "))
		fail_msg("written beside the root: %s", names);
}

/* As root, the new file belongs to the parent directory's owner (a slot
 * of the sandbox user stays replaceable by it). */
static void test_write_owner(void **state)
{
	struct fx *f = *state;
	struct pg_err err = PG_ERR_INIT;
	char dir[256], path[PATH_MAX];
	struct stat st;

	if (geteuid() != 0)
		skip();
	snprintf(dir, sizeof(dir), "%s/sub", f->root);
	assert_int_equal(chown(dir, 4242, 4243), 0);
	assert_int_equal(pg_write_file_beneath_atomic(f->root, "sub/f.txt", "x", 1, 0644, &err), 0);
	snprintf(path, sizeof(path), "%s/f.txt", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_uid, 4242);
	assert_int_equal(st.st_gid, 4243);
	assert_int_equal(st.st_mode & 07777, 0644);
}

/*
 * A kernel without openat2, as a seccomp filter makes one: in a child,
 * openat2 fails with ENOSYS; the automatic choice must fall back to the
 * walk and keep every rule.  The child's exit status says what failed.
 */
static int child_without_openat2(const struct fx *f)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };
	struct pg_buf b = PG_BUF_INIT(4096);
	struct pg_err err = PG_ERR_INIT;
	int rootfd, rc;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return 10;
	rootfd = open(f->root, O_RDONLY | O_DIRECTORY);
	errno = 0;
	rc = (int)syscall(SYS_openat2, rootfd, "plain.txt", NULL, 0);
	if (rc != -1 || errno != ENOSYS)
		return 11;	/* the filter did not take */
	close(rootfd);
	pg_beneath_set_impl(PG_BENEATH_OPENAT2);
	if (pg_read_file_beneath(f->root, "plain.txt", &b, NULL, &err) != -1 ||
	    !strstr(err.msg, "Function not implemented"))
		return 12;	/* openat2 alone must now fail */
	pg_beneath_set_impl(PG_BENEATH_AUTO);
	if (pg_read_file_beneath(f->root, "plain.txt", &b, NULL, &err) != 0 ||
	    strcmp(pg_buf_str(&b), "hello\n") != 0)
		return 13;
	if (pg_read_file_beneath(f->root, "link", &b, NULL, &err) != -1 ||
	    !strstr(err.msg, "is a symbolic link: refused"))
		return 14;
	if (pg_read_file_beneath(f->root, "dirlink/secret", &b, NULL, &err) != -1 ||
	    !strstr(err.msg, "goes through a symbolic link ('dirlink')"))
		return 15;
	if (pg_write_file_beneath_atomic(f->root, "dirlink/new", "x", 1, 0644, &err) != -1)
		return 16;
	if (pg_write_file_beneath_atomic(f->root, "sub/w.txt", "w", 1, 0644, &err) != 0)
		return 17;
	pg_buf_release(&b);
	return 0;
}

static void test_fallback_enosys(void **state)
{
	struct fx *f = *state;
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_without_openat2(f));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) != 0)
		fail_msg("child without openat2: step %d failed", WEXITSTATUS(status));
	assert_outside_untouched(f);
}

/* Each test under both implementations, named after the one it runs. */
#define BOTH(t) \
	{ #t " (openat2)", t, setup, teardown, &impl_openat2 }, \
	{ #t " (walk)", t, setup, teardown, &impl_walk }

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(test_plain),
		BOTH(test_link_as_file),
		BOTH(test_link_on_the_way),
		BOTH(test_bad_rel),
		BOTH(test_not_regular),
		BOTH(test_bound),
		BOTH(test_write),
		BOTH(test_write_refused),
		BOTH(test_write_owner),
		cmocka_unit_test_prestate_setup_teardown(test_fallback_enosys, setup, teardown,
							 &impl_auto),
	};

	return cmocka_run_group_tests_name("fsbeneath", tests, NULL, NULL);
}
