/* SPDX-License-Identifier: MIT */
/* Text files sent through the sanitiser: see api_textfile.h. */
#include "api_textfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "sanitize.h"
#include "text.h"

#define CHUNK (64 * 1024)
#define CARRY_MAX 8		/* an incomplete UTF-8 sequence and a CR */

struct textfile {
	int fd;
	bool eof;
	size_t carry;		/* bytes of in[] not sanitised yet */
	char in[CHUNK + CARRY_MAX];
	struct pg_buf out;	/* sanitised, not sent yet from out_off */
	size_t out_off;
};

/* Read and sanitise the next piece into t->out.  0, or -1 (read error). */
static int fill(struct textfile *t)
{
	size_t total, cut;
	ssize_t n;

	do {
		n = read(t->fd, t->in + t->carry, CHUNK);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	total = t->carry + (size_t)n;
	if (n == 0) {
		t->eof = true;	/* the rest, incomplete or not */
		cut = total;
	} else {
		cut = pg_utf8_cut(t->in, total);
		/* A CR is kept only before an LF: wait for the next byte. */
		if (cut && t->in[cut - 1] == '\r')
			cut--;
	}
	pg_buf_reset(&t->out);
	t->out_off = 0;
	if (pg_sanitize(&t->out, t->in, cut, PG_SAN_BLOCK) < 0)
		return -1;
	memmove(t->in, t->in + cut, total - cut);
	t->carry = total - cut;
	return 0;
}

static ssize_t textfile_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct textfile *t = cls;
	size_t n;

	(void)pos;
	while (t->out_off == t->out.len) {
		if (t->eof)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (fill(t) < 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	n = t->out.len - t->out_off;
	if (n > max)
		n = max;
	memcpy(buf, t->out.data + t->out_off, n);
	t->out_off += n;
	return (ssize_t)n;
}

static void textfile_free(void *cls)
{
	struct textfile *t = cls;

	close(t->fd);
	pg_buf_release(&t->out);
	free(t);
}

struct MHD_Response *api_textfile_response(int fd)
{
	struct textfile *t = calloc(1, sizeof(*t));
	struct MHD_Response *resp;

	if (!t) {
		close(fd);
		return NULL;
	}
	t->fd = fd;
	pg_buf_init(&t->out, (CHUNK + CARRY_MAX) * PG_SAN_GROWTH);
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, CHUNK, textfile_read, t,
						 textfile_free);
	if (!resp)
		textfile_free(t);
	return resp;
}
