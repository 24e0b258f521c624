/* SPDX-License-Identifier: MIT */
/*
 * The rewrite of app/test/test_mempool_perf.c for a subset (harness.h).
 *
 * The text is cut into C tokens (comments dropped, preprocessor lines
 * kept whole), the three places to edit are found and checked token by
 * token against what the known layouts hold, and each is replaced by a
 * block that keeps the upstream lines under "#if 0":
 *
 *   #if 0 /" perfgate-harness: upstream code "/
 *   ...upstream lines...
 *   #else /" perfgate-harness: subset cores=1 ... time_s=1 "/
 *   ...the subset's lines...
 *   #endif /" perfgate-harness "/
 *
 * Blocks are whole lines, so restoring is cutting the marker lines and
 * the subset's lines out again.
 */
#include "harness.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "vec.h"

#define MARK_BEGIN "#if 0 /* " HARNESS_MARK ": upstream code */\n"
#define MARK_ELSE "#else /* " HARNESS_MARK ": subset "
#define MARK_END "#endif /* " HARNESS_MARK " */\n"

/* ------------------------------------------------------------------ */
/* Tokens */

enum tok_kind { T_IDENT, T_NUMBER, T_STRING, T_CHAR, T_PUNCT, T_DIRECTIVE };

struct tok {
	enum tok_kind kind;
	size_t off, len;
};

struct toks {
	struct tok *v;
	size_t n, alloc;
};

static int is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_ident_char(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

static int toks_push(struct toks *t, enum tok_kind kind, size_t off, size_t len,
		     struct pg_err *err)
{
	if (PG_GROW(t->v, t->alloc, t->n + 1) < 0)
		return pg_err_set(err, PG_ENOMEM, "out of memory cutting tokens");
	t->v[t->n].kind = kind;
	t->v[t->n].off = off;
	t->v[t->n].len = len;
	t->n++;
	return 0;
}

/* Whether only blanks stand between the start of its line and off. */
static int line_starts_here(const char *s, size_t off)
{
	while (off > 0 && (s[off - 1] == ' ' || s[off - 1] == '\t'))
		off--;
	return off == 0 || s[off - 1] == '\n';
}

/*
 * Cut s[0..len) into tokens.  Returns 0; 1 (with err) when the text is not
 * C we can read (an unterminated comment, string or character constant, a
 * NUL byte); -1 when out of memory.
 */
static int lex(const char *s, size_t len, struct toks *t, struct pg_err *err)
{
	size_t i = 0;

	while (i < len) {
		char c = s[i];
		size_t start = i;

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
			i++;
		} else if (c == '\0') {
			pg_err_set(err, PG_EINVAL, "a NUL byte at offset %zu", i);
			return 1;
		} else if (c == '/' && i + 1 < len && s[i + 1] == '*') {
			for (i += 2; i + 1 < len && !(s[i] == '*' && s[i + 1] == '/'); i++)
				;
			if (i + 1 >= len) {
				pg_err_set(err, PG_EINVAL, "unterminated comment at offset %zu",
					   start);
				return 1;
			}
			i += 2;
		} else if (c == '/' && i + 1 < len && s[i + 1] == '/') {
			while (i < len && s[i] != '\n')
				i++;
		} else if (c == '#' && line_starts_here(s, i)) {
			/* A directive runs to the end of its line, continuations included. */
			while (i < len && s[i] != '\n') {
				if (s[i] == '\\' && i + 1 < len && s[i + 1] == '\n')
					i++;
				i++;
			}
			if (toks_push(t, T_DIRECTIVE, start, i - start, err) < 0)
				return -1;
		} else if (c == '"' || c == '\'') {
			for (i++; i < len && s[i] != c && s[i] != '\n'; i++)
				if (s[i] == '\\' && i + 1 < len)
					i++;
			if (i >= len || s[i] != c) {
				pg_err_set(err, PG_EINVAL, "unterminated %s at offset %zu",
					   c == '"' ? "string" : "character constant", start);
				return 1;
			}
			i++;
			if (toks_push(t, c == '"' ? T_STRING : T_CHAR, start, i - start, err) < 0)
				return -1;
		} else if (is_ident_start(c) || (c >= '0' && c <= '9')) {
			while (i < len && (is_ident_char(s[i]) || (!is_ident_start(c) && s[i] == '.')))
				i++;
			if (toks_push(t, is_ident_start(c) ? T_IDENT : T_NUMBER, start, i - start,
				      err) < 0)
				return -1;
		} else {
			i++;
			if (toks_push(t, T_PUNCT, start, 1, err) < 0)
				return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Matching helpers over a token vector */

struct src {
	const char *s;
	size_t len;
	struct toks t;
};

static int tok_is(const struct src *x, size_t i, const char *text)
{
	size_t n = strlen(text);

	return i < x->t.n && x->t.v[i].len == n && memcmp(x->s + x->t.v[i].off, text, n) == 0;
}

static int tok_kind_is(const struct src *x, size_t i, enum tok_kind k)
{
	return i < x->t.n && x->t.v[i].kind == k;
}

/* Whether tokens from *i spell the space-separated words of pat; moves *i
 * past them when they do. */
static int match_seq(const struct src *x, size_t *i, const char *pat)
{
	size_t j = *i;

	while (*pat) {
		size_t n = strcspn(pat, " ");

		if (j >= x->t.n || x->t.v[j].len != n || memcmp(x->s + x->t.v[j].off, pat, n) != 0)
			return 0;
		j++;
		pat += n;
		pat += strspn(pat, " ");
	}
	*i = j;
	return 1;
}

/* The index of the brace that closes the one at open (T_PUNCT "{"), or
 * SIZE_MAX when it is not closed. */
static size_t close_brace(const struct src *x, size_t open)
{
	size_t depth = 0;

	for (size_t i = open; i < x->t.n; i++) {
		if (tok_is(x, i, "{"))
			depth++;
		else if (tok_is(x, i, "}") && --depth == 0)
			return i;
	}
	return SIZE_MAX;
}

static size_t tok_end(const struct src *x, size_t i)
{
	return x->t.v[i].off + x->t.v[i].len;
}

/* Offset of the start of the line holding off. */
static size_t line_start(const char *s, size_t off)
{
	while (off > 0 && s[off - 1] != '\n')
		off--;
	return off;
}

/* Offset just past the newline ending the line at off, when only blanks
 * stand between off and it; SIZE_MAX otherwise. */
static size_t line_end_after(const struct src *x, size_t off)
{
	while (off < x->len && (x->s[off] == ' ' || x->s[off] == '\t'))
		off++;
	if (off < x->len && x->s[off] == '\n')
		return off + 1;
	return SIZE_MAX;
}

/* Where NAME ends in the directive at token i when it is
 * "#define NAME ..." (NAME not function-like); NULL otherwise. */
static const char *define_name_end(const struct src *x, size_t i, const char *name)
{
	const char *p = x->s + x->t.v[i].off, *end = p + x->t.v[i].len;
	size_t n = strlen(name);

	if (x->t.v[i].kind != T_DIRECTIVE)
		return NULL;
	p++;	/* '#' */
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if ((size_t)(end - p) < 6 || memcmp(p, "define", 6) != 0)
		return NULL;
	p += 6;
	if (p >= end || (*p != ' ' && *p != '\t'))
		return NULL;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if ((size_t)(end - p) < n || memcmp(p, name, n) != 0)
		return NULL;
	p += n;
	if (p < end && (is_ident_char(*p) || *p == '('))
		return NULL;
	return p;
}

/* Count the directives that #define NAME in *count; returns the index of
 * the last one. */
static size_t find_define(const struct src *x, const char *name, size_t *count)
{
	size_t found = SIZE_MAX;

	*count = 0;
	for (size_t i = 0; i < x->t.n; i++) {
		if (define_name_end(x, i, name)) {
			(*count)++;
			found = i;
		}
	}
	return found;
}

/* The value of "#define NAME digits" at token i; -1 when the rest of the
 * line is not exactly digits (and blanks). */
static long define_value(const struct src *x, size_t i, const char *name)
{
	const char *p = define_name_end(x, i, name);
	const char *end = x->s + x->t.v[i].off + x->t.v[i].len;
	long v = 0;
	int digits = 0;

	if (!p)
		return -1;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (p < end && *p >= '0' && *p <= '9' && digits < 9) {
		v = v * 10 + (*p++ - '0');
		digits++;
	}
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++;
	return digits && p == end ? v : -1;
}

/* Index of the identifier name starting a line (a function definition's
 * name in DPDK style), followed by "(": counts them in *count. */
static size_t find_defn(const struct src *x, const char *name, size_t *count)
{
	size_t found = SIZE_MAX;

	*count = 0;
	for (size_t i = 0; i + 1 < x->t.n; i++) {
		if (x->t.v[i].kind != T_IDENT || !tok_is(x, i, name) || !tok_is(x, i + 1, "("))
			continue;
		if (x->t.v[i].off != 0 && x->s[x->t.v[i].off - 1] != '\n')
			continue;
		(*count)++;
		found = i;
	}
	return found;
}

/* Count string tokens equal to text (quotes included). */
static size_t count_string(const struct src *x, const char *text)
{
	size_t c = 0;

	for (size_t i = 0; i < x->t.n; i++)
		if (x->t.v[i].kind == T_STRING && tok_is(x, i, text))
			c++;
	return c;
}

/* ------------------------------------------------------------------ */
/* Layouts */

struct layout {
	const char *name;
	const char *bulk_tab;		/* table elements, comma-joined */
	const char *keep_tab;
	long max_keep;
	int constant_n;			/* has use_constant_values */
	const char *fmt_tail;		/* the second piece of the result printf */
	size_t launches;		/* launch_cores calls in do_one_mempool_test */
};

static const struct layout layouts[] = {
	{ "22.03", "1,4,CACHE_LINE_BURST,32,0", "32,128,512,0", 512, 1,
	  "\"n_put_bulk=%u n_keep=%u constant_n=%u \"", 2 },
	{ "21.11", "1,4,32,0", "32,128,0", 128, 0, "\"n_put_bulk=%u n_keep=%u \"", 1 },
};

/* The identifiers do_one_mempool_test() may use: it only walks its tables,
 * sets the globals and launches. */
static const char *const do_one_idents[] = {
	"unsigned", "int", "bulk_tab_get", "bulk_tab_put", "keep_tab", "CACHE_LINE_BURST",
	"get_bulk_ptr", "put_bulk_ptr", "keep_ptr", "ret", "for", "if", "return",
	"use_constant_values", "n_get_bulk", "n_put_bulk", "n_keep", "launch_cores", "mp",
	"cores", NULL
};

enum section { SEC_NOCACHE, SEC_DEFAULT, SEC_CACHE, SEC_USER, SEC_COUNT };

/* The four header strings (quotes included), in upstream's order. */
static const char *const section_headers[SEC_COUNT] = {
	"\"start performance test (without cache)\\n\"",
	"\"start performance test for %s (without cache)\\n\"",
	"\"start performance test (with cache)\\n\"",
	"\"start performance test (with user-owned cache)\\n\"",
};

/* What the checks found: where to edit and what to reuse. */
struct found {
	const struct layout *lay;
	size_t time_from, time_to;	/* byte ranges of the three blocks */
	size_t do_from, do_to;
	size_t sec_from, sec_to;
	long max_keep;
	size_t hdr_off[SEC_COUNT], hdr_len[SEC_COUNT];	/* printf statements */
	size_t pool_off[SEC_COUNT], pool_len[SEC_COUNT];	/* their pool variable */
	size_t label_off, label_len;	/* the goto label of the section block */
};

/* The elements of "NAME [ ] = { a , b } ;" inside [from, to), comma-joined
 * into buf; 0 when found once, 1 otherwise. */
static int table_of(const struct src *x, size_t from, size_t to, const char *name,
		    char *buf, size_t len)
{
	size_t hits = 0;

	for (size_t i = from; i < to; i++) {
		size_t j = i + 1, o = 0;

		if (!tok_is(x, i, name) || !match_seq(x, &j, "[ ] = {"))
			continue;
		hits++;
		for (; j < to && !tok_is(x, j, "}"); j++) {
			size_t n = x->t.v[j].len;

			if (o + n + 1 > len)
				return 1;
			memcpy(buf + o, x->s + x->t.v[j].off, n);
			o += n;
		}
		buf[o] = '\0';
		if (!match_seq(x, &j, "} ;"))
			return 1;
	}
	return hits == 1 ? 0 : 1;
}

/* Set err to why the layout is not recognised; returns 1. */
__attribute__((format(printf, 2, 3)))
static int not_recognised(struct pg_err *err, const char *fmt, ...)
{
	char msg[PG_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	pg_vfmt_cut(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pg_err_set(err, PG_EINVAL, "%s: layout not recognised: %s", HARNESS_TEST_PATH, msg);
	return 1;
}

/* TIME_S and MAX_KEEP. */
static int check_defines(const struct src *x, struct found *f, struct pg_err *err)
{
	size_t count, i;

	i = find_define(x, "TIME_S", &count);
	if (count != 1)
		return not_recognised(err, "%s is not #defined exactly once", "TIME_S");
	if (define_value(x, i, "TIME_S") < 0)
		return not_recognised(err, "%s is not #defined to a number", "TIME_S");
	f->time_from = line_start(x->s, x->t.v[i].off);
	f->time_to = line_end_after(x, tok_end(x, i));
	if (f->time_from != x->t.v[i].off || f->time_to == SIZE_MAX)
		return not_recognised(err, "%s is not #defined on a line of its own", "TIME_S");
	i = find_define(x, "MAX_KEEP", &count);
	if (count != 1)
		return not_recognised(err, "%s is not #defined exactly once", "MAX_KEEP");
	f->max_keep = define_value(x, i, "MAX_KEEP");
	if (f->max_keep <= 0)
		return not_recognised(err, "%s is not #defined to a number", "MAX_KEEP");
	return 0;
}

/* do_one_mempool_test(): which layout, and the byte range of the function. */
static int check_do_one(const struct src *x, struct found *f, struct pg_err *err)
{
	char bulk_get[128], bulk_put[128], keep[128];
	size_t count, i, j, open, close, launches = 0, constants = 0;

	i = find_defn(x, "do_one_mempool_test", &count);
	if (count != 1 || i < 2 || !tok_is(x, i - 2, "static") || !tok_is(x, i - 1, "int") ||
	    line_start(x->s, x->t.v[i - 2].off) != x->t.v[i - 2].off)
		return not_recognised(err, "%s is not defined exactly once as \"static int\"",
				      "do_one_mempool_test()");
	j = i + 1;
	if (!match_seq(x, &j, "( struct rte_mempool * mp , unsigned int cores ) {"))
		return not_recognised(err, "%s has other parameters than (struct rte_mempool "
				      "*mp, unsigned int cores)", "do_one_mempool_test()");
	open = j - 1;
	close = close_brace(x, open);
	if (close == SIZE_MAX)
		return not_recognised(err, "%s has no closing brace", "do_one_mempool_test()");
	for (size_t k = open + 1; k < close; k++) {
		const struct tok *t = &x->t.v[k];
		size_t w;

		if (t->kind == T_STRING || t->kind == T_CHAR || t->kind == T_DIRECTIVE)
			return not_recognised(err, "%s holds a string, character or directive",
					      "do_one_mempool_test()");
		if (t->kind != T_IDENT)
			continue;
		for (w = 0; do_one_idents[w]; w++)
			if (tok_is(x, k, do_one_idents[w]))
				break;
		if (!do_one_idents[w]) {
			return not_recognised(err, "do_one_mempool_test() uses '%.*s', which no "
					      "known version's does", (int)t->len, x->s + t->off);
		}
		if (tok_is(x, k, "launch_cores")) {
			size_t m = k + 1;

			if (!match_seq(x, &m, "( mp , cores )"))
				return not_recognised(err, "%s calls launch_cores() with other "
						      "arguments than (mp, cores)",
						      "do_one_mempool_test()");
			launches++;
		}
		if (tok_is(x, k, "use_constant_values"))
			constants++;
	}
	if (table_of(x, open, close, "bulk_tab_get", bulk_get, sizeof(bulk_get)) ||
	    table_of(x, open, close, "bulk_tab_put", bulk_put, sizeof(bulk_put)) ||
	    table_of(x, open, close, "keep_tab", keep, sizeof(keep)))
		return not_recognised(err, "%s does not define bulk_tab_get, bulk_tab_put and "
				      "keep_tab once each", "do_one_mempool_test()");
	f->lay = NULL;
	for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
		const struct layout *lay = &layouts[l];

		if (strcmp(bulk_get, lay->bulk_tab) == 0 && strcmp(bulk_put, lay->bulk_tab) == 0 &&
		    strcmp(keep, lay->keep_tab) == 0 && launches == lay->launches &&
		    (constants > 0) == (lay->constant_n != 0) && f->max_keep == lay->max_keep)
			f->lay = lay;
	}
	if (!f->lay) {
		return not_recognised(err, "do_one_mempool_test() has tables get {%s} put {%s} "
				      "keep {%s}, %zu launches and MAX_KEEP %ld: no known "
				      "version's", bulk_get, bulk_put, keep, launches, f->max_keep);
	}
	f->do_from = x->t.v[i - 2].off;
	f->do_to = line_end_after(x, tok_end(x, close));
	if (f->do_to == SIZE_MAX)
		return not_recognised(err, "%s does not end on a line of its own",
				      "do_one_mempool_test()");
	return 0;
}

/* launch_cores() prints the result lines: their format must be the known one. */
static int check_format(const struct src *x, const struct found *f, struct pg_err *err)
{
	size_t count, i, j;

	if (count_string(x, "\"mempool_autotest cache=%u cores=%u n_get_bulk=%u \"") != 1 ||
	    count_string(x, f->lay->fmt_tail) != 1 ||
	    count_string(x, "\"rate_persec=%\"") != 1)
		return not_recognised(err, "%s does not print the known result format",
				      "launch_cores()");
	i = find_defn(x, "launch_cores", &count);
	j = i + 1;
	if (count != 1 || !match_seq(x, &j, "( struct rte_mempool * mp , unsigned int cores )"))
		return not_recognised(err, "%s is not defined once with (struct rte_mempool "
				      "*mp, unsigned int cores)", "launch_cores()");
	if (f->lay->constant_n) {
		size_t decl = 0;

		for (i = 0; i + 3 < x->t.n; i++) {
			j = i;
			if (match_seq(x, &j, "static int use_constant_values ;"))
				decl++;
		}
		if (decl != 1)
			return not_recognised(err, "%s is not declared once as a static int",
					      "use_constant_values");
	}
	return 0;
}

/* One "if (do_one_mempool_test(POOL, ARG) < 0) goto LABEL;" at *i: the
 * pool and label tokens, and ARG as 1, 2 or 0 for rte_lcore_count(). */
static int parse_call(const struct src *x, size_t *i, size_t *pool, size_t *label,
		      unsigned *arg)
{
	size_t j = *i;

	if (!match_seq(x, &j, "if ( do_one_mempool_test (") || !tok_kind_is(x, j, T_IDENT))
		return -1;
	*pool = j++;
	if (!match_seq(x, &j, ","))
		return -1;
	if (tok_is(x, j, "1") || tok_is(x, j, "2")) {
		*arg = tok_is(x, j, "1") ? 1 : 2;
		j++;
	} else if (match_seq(x, &j, "rte_lcore_count ( )")) {
		*arg = 0;
	} else {
		return -1;
	}
	if (!match_seq(x, &j, ") < 0 ) goto") || !tok_kind_is(x, j, T_IDENT))
		return -1;
	*label = j++;
	if (!match_seq(x, &j, ";"))
		return -1;
	*i = j;
	return 0;
}

/* The section block of test_mempool_perf(): headers, calls, the pool dump. */
static int check_sections(const struct src *x, struct found *f, struct pg_err *err)
{
	size_t count, i, j, first = SIZE_MAX, end;
	int next = 0;

	/* 21.11 also defines a stub for Windows under #ifdef: the definition
	 * that prints section headers is the one, and there must be one. */
	count = 0;
	for (i = 0; i + 1 < x->t.n; i++) {
		size_t k, hdr = SIZE_MAX;

		if (!tok_is(x, i, "test_mempool_perf") || !tok_is(x, i + 1, "(") ||
		    (x->t.v[i].off != 0 && x->s[x->t.v[i].off - 1] != '\n'))
			continue;
		j = i + 1;
		if (!match_seq(x, &j, "( void ) {"))
			return not_recognised(err, "%s has other parameters than (void)",
					      "test_mempool_perf()");
		k = close_brace(x, j - 1);
		if (k == SIZE_MAX)
			return not_recognised(err, "%s has no closing brace", "test_mempool_perf()");
		for (size_t m = j; m + 2 < k && hdr == SIZE_MAX; m++)
			if (tok_is(x, m, "printf") && tok_is(x, m + 1, "(") &&
			    tok_kind_is(x, m + 2, T_STRING) && x->t.v[m + 2].len > 23 &&
			    memcmp(x->s + x->t.v[m + 2].off, "\"start performance test", 23) == 0)
				hdr = m;
		if (hdr == SIZE_MAX)
			continue;
		count++;
		first = hdr;
	}
	if (count != 1)
		return not_recognised(err, "%s is not defined exactly once with section headers",
				      "test_mempool_perf()");

	/* Four sections in upstream's order, each with its three calls. */
	j = first;
	while (next < SEC_COUNT) {
		size_t hdr = j, pool0 = SIZE_MAX, s;
		int sec = -1;

		if (!match_seq(x, &j, "printf (") || !tok_kind_is(x, j, T_STRING))
			break;
		for (s = 0; s < SEC_COUNT; s++)
			if (tok_is(x, j, section_headers[s]))
				sec = (int)s;
		j++;
		if (sec == SEC_DEFAULT && !match_seq(x, &j, ", default_pool_ops"))
			break;
		if (sec != next || !match_seq(x, &j, ") ;"))
			break;
		f->hdr_off[sec] = x->t.v[hdr].off;
		f->hdr_len[sec] = tok_end(x, j - 1) - f->hdr_off[sec];
		if (sec == SEC_USER && !match_seq(x, &j, "use_external_cache = 1 ;"))
			break;
		for (unsigned want = 1; want <= 3; want++) {
			size_t pool, label;
			unsigned arg;

			if (parse_call(x, &j, &pool, &label, &arg) < 0 || arg != want % 3)
				goto bad;
			if (pool0 == SIZE_MAX)
				pool0 = pool;
			if (x->t.v[pool].len != x->t.v[pool0].len ||
			    memcmp(x->s + x->t.v[pool].off, x->s + x->t.v[pool0].off,
				   x->t.v[pool].len) != 0)
				goto bad;
			if (f->label_len && (x->t.v[label].len != f->label_len ||
					     memcmp(x->s + x->t.v[label].off, x->s + f->label_off,
						    f->label_len) != 0))
				goto bad;
			f->label_off = x->t.v[label].off;
			f->label_len = x->t.v[label].len;
		}
		f->pool_off[sec] = x->t.v[pool0].off;
		f->pool_len[sec] = x->t.v[pool0].len;
		next++;
	}
	if (next < SEC_COUNT || !match_seq(x, &j, "rte_mempool_list_dump ( stdout ) ;"))
		goto bad;
	end = j - 1;
	if (f->pool_len[SEC_NOCACHE] == f->pool_len[SEC_CACHE] &&
	    memcmp(x->s + f->pool_off[SEC_NOCACHE], x->s + f->pool_off[SEC_CACHE],
		   f->pool_len[SEC_CACHE]) == 0)
		goto bad;
	/* Whole lines: from the line after the statement before the first
	 * header (so that the comments above it go too) to the dump's line. */
	f->sec_from = line_end_after(x, tok_end(x, first - 1));
	while (f->sec_from != SIZE_MAX && line_end_after(x, f->sec_from) != SIZE_MAX)
		f->sec_from = line_end_after(x, f->sec_from);	/* blank lines stay */
	f->sec_to = line_end_after(x, tok_end(x, end));
	if (f->sec_from == SIZE_MAX || f->sec_to == SIZE_MAX)
		return not_recognised(err, "%s: the section block does not stand on lines of "
				      "its own", "test_mempool_perf()");
	return 0;
bad:
	return not_recognised(err, "%s: the section block is not the four known sections, "
			      "each run for 1, 2 and rte_lcore_count() cores, then "
			      "rte_mempool_list_dump(stdout)", "test_mempool_perf()");
}

/* ------------------------------------------------------------------ */
/* Output */

static int check_subset(const struct found *f, const struct harness_subset *s,
			struct pg_err *err)
{
	for (size_t i = 0; i < s->n_keep; i++)
		if (s->keep[i] > (unsigned)f->max_keep)
			return pg_err_set(err, PG_EINVAL, "subset keep %u exceeds this version's "
					  "MAX_KEEP %ld (layout %s)", s->keep[i], f->max_keep,
					  f->lay->name);
	if (s->n_constant_n == 1 && s->constant_n[0] == 0)
		return 0;
	if (!f->lay->constant_n)
		return pg_err_set(err, PG_EINVAL, "subset constant_n 1: the %s layout has no "
				  "constant_n runs (they came with DPDK 22.03)", f->lay->name);
	for (size_t i = 0; i < s->n_bulk; i++) {
		unsigned b = s->bulk[i];

		if (b != 1 && b != 4 && b != 8 && b != 16 && b != 32)
			return pg_err_set(err, PG_EINVAL, "subset bulk %u with constant_n 1: the "
					  "test has compile-time cases for 1, 4, CACHE_LINE_BURST "
					  "(8 or 16) and 32 only", b);
	}
	return 0;
}

static int add_tab(struct pg_buf *out, const char *decl, const unsigned *v, size_t n)
{
	if (pg_buf_printf(out, "\tstatic const %s[] = { ", decl) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (pg_buf_printf(out, "%s%u", i ? ", " : "", v[i]) < 0)
			return -1;
	return pg_buf_adds(out, " };\n");
}

static int add_do_one(struct pg_buf *o, const struct found *f, const struct harness_subset *s)
{
	int cn = f->lay->constant_n;

	if (pg_buf_adds(o, "static int\n"
			"do_one_mempool_test(struct rte_mempool *mp, unsigned int cores)\n"
			"{\n"
			"\t/* The subset, in upstream's order; n_get_bulk = n_put_bulk. */\n") < 0 ||
	    add_tab(o, "unsigned int bulk_tab", s->bulk, s->n_bulk) < 0 ||
	    add_tab(o, "unsigned int keep_tab", s->keep, s->n_keep) < 0 ||
	    (cn && add_tab(o, "int constant_tab", s->constant_n, s->n_constant_n) < 0) ||
	    pg_buf_adds(o, cn ? "\tunsigned int b, k, c;\n\n" : "\tunsigned int b, k;\n\n") < 0 ||
	    pg_buf_adds(o, "\tfor (b = 0; b < RTE_DIM(bulk_tab); b++) {\n"
			"\t\tfor (k = 0; k < RTE_DIM(keep_tab); k++) {\n") < 0)
		return -1;
	if (cn) {
		if (pg_buf_adds(o, "\t\t\tfor (c = 0; c < RTE_DIM(constant_tab); c++) {\n"
				"\t\t\t\tuse_constant_values = constant_tab[c];\n"
				"\t\t\t\tn_get_bulk = bulk_tab[b];\n"
				"\t\t\t\tn_put_bulk = bulk_tab[b];\n"
				"\t\t\t\tn_keep = keep_tab[k];\n"
				"\t\t\t\tif (launch_cores(mp, cores) < 0)\n"
				"\t\t\t\t\treturn -1;\n"
				"\t\t\t}\n") < 0)
			return -1;
	} else if (pg_buf_adds(o, "\t\t\tn_get_bulk = bulk_tab[b];\n"
			       "\t\t\tn_put_bulk = bulk_tab[b];\n"
			       "\t\t\tn_keep = keep_tab[k];\n"
			       "\t\t\tif (launch_cores(mp, cores) < 0)\n"
			       "\t\t\t\treturn -1;\n") < 0) {
		return -1;
	}
	return pg_buf_adds(o, "\t\t}\n\t}\n\treturn 0;\n}\n");
}

static int add_sections(struct pg_buf *o, const struct src *x, const struct found *f,
			const struct harness_subset *s)
{
	unsigned most = s->cores[s->n_cores - 1];
	int label = (int)f->label_len;
	const char *lab = x->s + f->label_off;

	if (pg_buf_adds(o, "\t/* The subset's pools and core counts only. */\n") < 0)
		return -1;
	if (most > 1 &&
	    pg_buf_printf(o, "\tif (rte_lcore_count() < %u) {\n"
			  "\t\tprintf(\"not enough lcores: the subset needs %%u\\n\", %uu);\n"
			  "\t\tgoto %.*s;\n"
			  "\t}\n", most, most, label, lab) < 0)
		return -1;
	for (size_t c = 0; c < s->n_cache; c++) {
		enum section sec = s->cache[c] ? SEC_CACHE : SEC_NOCACHE;

		if (pg_buf_printf(o, "\t%.*s\n", (int)f->hdr_len[sec], x->s + f->hdr_off[sec]) < 0)
			return -1;
		for (size_t k = 0; k < s->n_cores; k++)
			if (pg_buf_printf(o, "\tif (do_one_mempool_test(%.*s, %u) < 0)\n"
					  "\t\tgoto %.*s;\n", (int)f->pool_len[sec],
					  x->s + f->pool_off[sec], s->cores[k], label, lab) < 0)
				return -1;
	}
	return pg_buf_adds(o, "\trte_mempool_list_dump(stdout);\n");
}

/* One block: upstream lines [from, to) under #if 0, then the subset's. */
static int add_block_open(struct pg_buf *o, const struct src *x, size_t from, size_t to,
			  const struct pg_buf *desc)
{
	if (pg_buf_adds(o, MARK_BEGIN) < 0 || pg_buf_add(o, x->s + from, to - from) < 0 ||
	    pg_buf_adds(o, MARK_ELSE) < 0 || pg_buf_add(o, desc->data, desc->len) < 0 ||
	    pg_buf_adds(o, " */\n") < 0)
		return -1;
	return 0;
}

static int emit(struct pg_buf *o, const struct src *x, const struct found *f,
		const struct harness_subset *s)
{
	struct pg_buf desc = PG_BUF_INIT(1024);
	int rc = -1;

	/* The three blocks come in this order in every known layout. */
	if (harness_subset_describe(s, &desc) < 0 ||
	    pg_buf_add(o, x->s, f->time_from) < 0 ||
	    add_block_open(o, x, f->time_from, f->time_to, &desc) < 0 ||
	    pg_buf_printf(o, "#define TIME_S %u\n", s->time_s) < 0 ||
	    pg_buf_adds(o, MARK_END) < 0 ||
	    pg_buf_add(o, x->s + f->time_to, f->do_from - f->time_to) < 0 ||
	    add_block_open(o, x, f->do_from, f->do_to, &desc) < 0 ||
	    add_do_one(o, f, s) < 0 || pg_buf_adds(o, MARK_END) < 0 ||
	    pg_buf_add(o, x->s + f->do_to, f->sec_from - f->do_to) < 0 ||
	    add_block_open(o, x, f->sec_from, f->sec_to, &desc) < 0 ||
	    add_sections(o, x, f, s) < 0 || pg_buf_adds(o, MARK_END) < 0 ||
	    pg_buf_add(o, x->s + f->sec_to, x->len - f->sec_to) < 0)
		goto out;
	rc = 0;
out:
	pg_buf_release(&desc);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Markers */

static const char *find_bytes(const char *s, size_t len, const char *pat)
{
	size_t n = strlen(pat);

	for (size_t i = 0; n <= len && i <= len - n; i++)
		if (s[i] == pat[0] && memcmp(s + i, pat, n) == 0)
			return s + i;
	return NULL;
}

/* The next occurrence of pat at the start of a line in s[from, len). */
static const char *find_line(const char *s, size_t len, size_t from, const char *pat)
{
	while (from < len) {
		const char *p = find_bytes(s + from, len - from, pat);

		if (!p)
			return NULL;
		if (p == s || p[-1] == '\n')
			return p;
		from = (size_t)(p - s) + 1;
	}
	return NULL;
}

bool harness_mempool_is_applied(const char *src, size_t len)
{
	return find_bytes(src, len, HARNESS_MARK) != NULL;
}

int harness_mempool_restore(const char *src, size_t len, struct pg_buf *out,
			    struct pg_err *err)
{
	struct pg_buf b = PG_BUF_INIT(HARNESS_MAX_SOURCE);
	size_t pos = 0;
	int rc = -1;

	if (len > 2 * (size_t)HARNESS_MAX_SOURCE)
		return pg_err_set(err, PG_ETOOBIG, "%s: over %d bytes", HARNESS_TEST_PATH,
				  2 * HARNESS_MAX_SOURCE);
	for (;;) {
		const char *begin = find_line(src, len, pos, MARK_BEGIN), *mid, *end, *next;
		size_t up;

		if (!begin)
			break;
		up = (size_t)(begin - src) + strlen(MARK_BEGIN);
		mid = find_line(src, len, up, MARK_ELSE);
		next = find_line(src, len, up, MARK_BEGIN);
		end = mid ? find_line(src, len, (size_t)(mid - src), MARK_END) : NULL;
		if (!mid || !end || (next && next < end)) {
			pg_err_set(err, PG_EINVAL, "%s: a harness block at offset %zu is not "
				   "closed; restore the file from git", HARNESS_TEST_PATH,
				   (size_t)(begin - src));
			goto out;
		}
		if (pg_buf_add(&b, src + pos, (size_t)(begin - src) - pos) < 0 ||
		    pg_buf_add(&b, src + up, (size_t)(mid - src) - up) < 0)
			goto oom;
		pos = (size_t)(end - src) + strlen(MARK_END);
	}
	if (pg_buf_add(&b, src + pos, len - pos) < 0)
		goto oom;
	if (find_bytes(b.data ? b.data : "", b.len, HARNESS_MARK)) {
		pg_err_set(err, PG_EINVAL, "%s: harness markers outside a block; restore the "
			   "file from git", HARNESS_TEST_PATH);
		goto out;
	}
	if (pg_buf_add(out, b.data ? b.data : "", b.len) < 0)
		goto oom;
	rc = 0;
	goto out;
oom:
	pg_err_set(err, PG_ETOOBIG, "%s: the restored text does not fit", HARNESS_TEST_PATH);
out:
	pg_buf_release(&b);
	return rc;
}

/* ------------------------------------------------------------------ */

int harness_mempool_rewrite(const char *src, size_t len, const struct harness_subset *s,
			    struct pg_buf *out, struct pg_err *err)
{
	struct pg_buf up = PG_BUF_INIT(HARNESS_MAX_SOURCE);
	struct pg_buf o = PG_BUF_INIT(out->max);
	struct src x = { src, len, { NULL, 0, 0 } };
	struct found f;
	int rc = -1;

	if (harness_mempool_is_applied(src, len)) {
		if (harness_mempool_restore(src, len, &up, err) < 0)
			goto out;
		x.s = pg_buf_str(&up);
		x.len = up.len;
	}
	if (x.len > HARNESS_MAX_SOURCE) {
		pg_err_set(err, PG_ETOOBIG, "%s: over %d bytes", HARNESS_TEST_PATH,
			   HARNESS_MAX_SOURCE);
		goto out;
	}
	memset(&f, 0, sizeof(f));
	rc = lex(x.s, x.len, &x.t, err);
	if (rc > 0)
		rc = not_recognised(err, "%s", err->msg);
	if (rc != 0 ||
	    (rc = check_defines(&x, &f, err)) != 0 ||
	    (rc = check_do_one(&x, &f, err)) != 0 ||
	    (rc = check_format(&x, &f, err)) != 0 ||
	    (rc = check_sections(&x, &f, err)) != 0)
		goto out;
	rc = -1;
	if (!(f.time_to <= f.do_from && f.do_to <= f.sec_from)) {
		rc = not_recognised(err, "%s", "TIME_S, do_one_mempool_test() and "
				    "test_mempool_perf() are not in this order");
		goto out;
	}
	if (check_subset(&f, s, err) < 0)
		goto out;
	if (emit(&o, &x, &f, s) < 0) {
		pg_err_set(err, PG_ETOOBIG, "%s: the rewritten text does not fit",
			   HARNESS_TEST_PATH);
		goto out;
	}
	if (pg_buf_add(out, o.data, o.len) < 0) {
		pg_err_set(err, PG_ETOOBIG, "%s: the rewritten text does not fit",
			   HARNESS_TEST_PATH);
		goto out;
	}
	rc = 0;
out:
	free(x.t.v);
	pg_buf_release(&up);
	pg_buf_release(&o);
	return rc;
}
