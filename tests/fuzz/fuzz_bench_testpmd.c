/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for bench_parse_testpmd() and bench_testpmd_started():
 * any bytes must parse without a sanitizer report, and the result must
 * keep the promises of bench_parse.h: only profile.h's keys, each with its
 * unit, unique, finite and non-negative; fwd.rx_pps/tx_pps exactly when
 * there are packets and fwd_seconds > 0; the start offset at a line end,
 * stable as output arrives.  The first byte is not output: it picks
 * fwd_seconds.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench_parse.h"
#include "buf.h"
#include "err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *unit_of(const char *key)
{
	static const struct {
		const char *key, *unit;
	} fwd[] = {
		{ "fwd.rx_pps", "pps" }, { "fwd.tx_pps", "pps" },
		{ "fwd.rx_packets", "packets" }, { "fwd.tx_packets", "packets" },
		{ "fwd.rx_dropped", "packets" }, { "fwd.tx_dropped", "packets" },
		{ "fwd.cycles_per_pkt", "cycles/pkt" },
	};
	const char *p;
	char *end;
	unsigned long port;

	for (size_t i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++)
		if (!strcmp(key, fwd[i].key))
			return fwd[i].unit;
	if (strncmp(key, "port", 4) || key[4] < '0' || key[4] > '9')
		return NULL;
	port = strtoul(key + 4, &end, 10);
	if (port >= BENCH_MAX_PORTS || *end != '.')
		return NULL;
	p = end + 1;
	if (!strcmp(p, "rx_pps") || !strcmp(p, "tx_pps"))
		return "pps";
	if (!strcmp(p, "rx_bps") || !strcmp(p, "tx_bps"))
		return "bps";
	return NULL;
}

static void check_error(const char *e)
{
	size_t n;

	if (!e)
		return;
	n = strlen(e);
	if (!n || n >= BENCH_ERROR_MAX || e[0] == ' ' || e[n - 1] == ' ')
		abort();
	for (size_t i = 0; i < n; i++)
		if (e[i] < 0x20 || e[i] > 0x7e)
			abort();
}

static double value(const struct bench_output *out, const char *key)
{
	const struct bench_sample *s = bench_output_find(out, key);

	return s ? s->value : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const double secs[] = { 0, 1, 2.5, 10, -1, 1e-9, 86400 };
	struct bench_output out = BENCH_OUTPUT_INIT;
	struct pg_err err = PG_ERR_INIT;
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	const char *buf;
	double fs;
	long at, half;

	if (!size)
		return 0;
	fs = secs[data[0] % (sizeof(secs) / sizeof(secs[0]))];
	buf = (const char *)data + 1;
	size--;
	if (bench_parse_testpmd(buf, size, fs, &out, &err) != 0)
		abort();
	for (size_t i = 0; i < out.n; i++) {
		const struct bench_sample *s = &out.samples[i];
		const char *unit = unit_of(s->key);

		if (!unit || strcmp(unit, s->unit) || bench_output_find(&out, s->key) != s)
			abort();
		if (!isfinite(s->value) || s->value < 0)
			abort();
	}
	if ((value(&out, "fwd.rx_pps") >= 0) != (fs > 0 && value(&out, "fwd.rx_packets") >= 0))
		abort();
	if (fs > 0 && value(&out, "fwd.tx_packets") >= 0 &&
	    value(&out, "fwd.tx_pps") != value(&out, "fwd.tx_packets") / fs)
		abort();
	if (value(&out, "fwd.cycles_per_pkt") >= 0 && value(&out, "fwd.rx_packets") < 0)
		abort();
	check_error(out.error);
	at = bench_testpmd_started(buf, size);
	if (at != -1 && (at <= 0 || (size_t)at > size || (buf[at - 1] != '\n' && buf[at - 1] != '\r')))
		abort();
	half = bench_testpmd_started(buf, size / 2);
	if (half != -1 && (at < half || at > half + 1))
		abort();	/* only a "\r" then "\n" can move it, by one */
	if (bench_output_dump(&out, &b) != 0)
		abort();
	pg_buf_release(&b);
	bench_output_release(&out);
	return 0;
}
