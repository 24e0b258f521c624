/* SPDX-License-Identifier: MIT */
/*
 * testpmd output (app/test-pmd/testpmd.c fwd_stats_display, print_stats;
 * config.c nic_stats_display) into samples.  The blocks, each opened by a
 * banner and closed by a line of the banner's character:
 *
 *   ######## NIC statistics for port N  ########     "show port stats" and
 *     RX-packets: RX-missed: RX-bytes: / RX-errors:   --stats-period prints
 *     RX-nombuf: / TX-packets: TX-errors: TX-bytes:
 *     Throughput (since last show)
 *     Rx-pps: Rx-bps: / Tx-pps: Tx-bps:
 *   ---- Forward statistics for port N  ----        at stop, per port
 *   ++++ Accumulated forward statistics for all ports++++   at stop
 *     RX-packets: RX-dropped: RX-total: / TX-packets: TX-dropped: TX-total:
 *     [RX-nombufs:]
 *   CPU cycles/packet=F ((total|busy) cycles=C / total MODE packets=P)
 *     at M MHz Clock                                 --record-core-cycles
 *
 * "%-14" PRIu64 "RX-total:" leaves no blank before RX-total: once the
 * number has 14 digits, so a label may follow a number directly.
 */
#include "bench_int.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"

enum block { B_NONE, B_NIC, B_FWD, B_ACC };

struct port_rate {
	uint64_t rx_pps, rx_bps, tx_pps, tx_bps;
	unsigned blocks;	/* complete NIC blocks seen */
};

struct state {
	enum block block;
	bool bad;		/* the open block has a line that did not parse */
	/* the open NIC block */
	size_t port;		/* BENCH_MAX_PORTS: out of range */
	bool have_rx_rate, have_tx_rate;
	uint64_t rx_pps, rx_bps, tx_pps, tx_bps;
	/* the open Accumulated block */
	bool have_rx, have_tx;
	uint64_t rx_pkts, rx_drop, tx_pkts, tx_drop;
	/* what counts: the last complete Accumulated block, and the cycles
	 * line right after it */
	bool acc;
	uint64_t acc_rx, acc_rx_drop, acc_tx, acc_tx_drop;
	bool cycles_next;	/* the cycles line may come now */
	bool has_cycles;
	double cycles;
	bool stopping;		/* "Telling cores to stop..." without the stats yet */
	bool want_cause;
	struct port_rate ports[BENCH_MAX_PORTS];
};

/* "CH... TITLE[N] CH..." where the runs of CH reach both ends of s (a
 * trimmed line).  with_port: TITLE is followed by a port number, then
 * blanks.  Returns 0 and *port, or -1. */
static int parse_banner(const char *s, char ch, const char *title, bool with_port,
			uint64_t *port)
{
	const char *p = s;

	while (*p == ch)
		p++;
	if (p - s < 2 || *p != ' ')
		return -1;
	p++;
	if (!bench_starts(p, title))
		return -1;
	p += strlen(title);
	if (with_port) {
		if (bench_uint(&p, UINT16_MAX, port) < 0 || bench_skip_blanks(&p) == 0)
			return -1;
	}
	if (*p != ch)
		return -1;
	while (*p == ch)
		p++;
	return *p ? -1 : 0;
}

/* A closing line: only CH, at least 20 of them. */
static bool is_border(const char *s, size_t n, char ch)
{
	if (n < 20)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] != ch)
			return false;
	return true;
}

/* "L1 N1 L2 N2 ..." with the labels of labels[] in order, blanks after
 * each label, blanks or nothing after each number, nothing after the
 * last.  Returns 0 or -1. */
static int parse_fields(const char *s, const char *const *labels, size_t n, uint64_t *v)
{
	const char *p = s;

	for (size_t i = 0; i < n; i++) {
		if (i)
			bench_skip_blanks(&p);
		if (!bench_starts(p, labels[i]))
			return -1;
		p += strlen(labels[i]);
		bench_skip_blanks(&p);
		if (bench_uint(&p, UINT64_MAX, &v[i]) < 0)
			return -1;
	}
	return *p ? -1 : 0;
}

static const char *const nic_rx[] = { "RX-packets:", "RX-missed:", "RX-bytes:" };
static const char *const nic_rx_errors[] = { "RX-errors:" };
static const char *const nic_rx_nombuf[] = { "RX-nombuf:" };
static const char *const nic_tx[] = { "TX-packets:", "TX-errors:", "TX-bytes:" };
static const char *const nic_rx_rate[] = { "Rx-pps:", "Rx-bps:" };
static const char *const nic_tx_rate[] = { "Tx-pps:", "Tx-bps:" };
static const char *const acc_rx[] = { "RX-packets:", "RX-dropped:", "RX-total:" };
static const char *const acc_tx[] = { "TX-packets:", "TX-dropped:", "TX-total:" };
static const char *const acc_nombufs[] = { "RX-nombufs:" };

#define NLABELS(a) (sizeof(a) / sizeof((a)[0]))

/* A line inside an open NIC block. */
static void nic_line(struct state *st, const char *s)
{
	uint64_t v[3];

	if (bench_starts(s, "RX-packets:")) {
		if (parse_fields(s, nic_rx, NLABELS(nic_rx), v) < 0)
			st->bad = true;
	} else if (bench_starts(s, "RX-errors:")) {
		if (parse_fields(s, nic_rx_errors, 1, v) < 0)
			st->bad = true;
	} else if (bench_starts(s, "RX-nombuf:")) {
		if (parse_fields(s, nic_rx_nombuf, 1, v) < 0)
			st->bad = true;
	} else if (bench_starts(s, "TX-packets:")) {
		if (parse_fields(s, nic_tx, NLABELS(nic_tx), v) < 0)
			st->bad = true;
	} else if (bench_starts(s, "Rx-pps:")) {
		if (st->have_rx_rate || parse_fields(s, nic_rx_rate, 2, v) < 0) {
			st->bad = true;
		} else {
			st->rx_pps = v[0];
			st->rx_bps = v[1];
			st->have_rx_rate = true;
		}
	} else if (bench_starts(s, "Tx-pps:")) {
		if (st->have_tx_rate || parse_fields(s, nic_tx_rate, 2, v) < 0) {
			st->bad = true;
		} else {
			st->tx_pps = v[0];
			st->tx_bps = v[1];
			st->have_tx_rate = true;
		}
	}
	/* other lines (--display-xstats, "Throughput ...") carry nothing */
}

/* "packets dropped total" with total = packets + dropped. */
static int parse_totals(const char *s, const char *const *labels, uint64_t *pkts,
			uint64_t *drop)
{
	uint64_t v[3];

	if (parse_fields(s, labels, 3, v) < 0 || v[0] > UINT64_MAX - v[1] || v[0] + v[1] != v[2])
		return -1;
	*pkts = v[0];
	*drop = v[1];
	return 0;
}

/* A line inside an open Accumulated block. */
static void acc_line(struct state *st, const char *s)
{
	uint64_t v;

	if (bench_starts(s, "RX-packets:")) {
		if (st->have_rx || parse_totals(s, acc_rx, &st->rx_pkts, &st->rx_drop) < 0)
			st->bad = true;
		else
			st->have_rx = true;
	} else if (bench_starts(s, "TX-packets:")) {
		if (st->have_tx || parse_totals(s, acc_tx, &st->tx_pkts, &st->tx_drop) < 0)
			st->bad = true;
		else
			st->have_tx = true;
	} else if (bench_starts(s, "RX-nombufs:")) {
		if (parse_fields(s, acc_nombufs, 1, &v) < 0)
			st->bad = true;
	} else {
		st->bad = true;	/* nothing else is printed there */
	}
}

/* "CPU cycles/packet=F ((total|busy) cycles=C / total MODE packets=P) at
 * M MHz Clock", checked against itself and the block before it. */
static int parse_cycles(const struct state *st, const char *s, double *cpp)
{
	const char *p = s + strlen("CPU cycles/packet=");
	uint64_t cycles, pkts, mhz;
	const char *mode;
	size_t mode_len;
	double f;

	if (bench_fixed(&p, &f) < 0)
		return -1;
	if (bench_starts(p, " (total cycles="))
		p += strlen(" (total cycles=");
	else if (bench_starts(p, " (busy cycles="))	/* 23.03+ */
		p += strlen(" (busy cycles=");
	else
		return -1;
	if (bench_uint(&p, UINT64_MAX, &cycles) < 0 || !bench_starts(p, " / total "))
		return -1;
	p += strlen(" / total ");
	mode = p;
	while (*p && *p != ' ')
		p++;
	mode_len = (size_t)(p - mode);
	if (!mode_len || !bench_starts(p, " packets="))
		return -1;
	p += strlen(" packets=");
	if (bench_uint(&p, UINT64_MAX, &pkts) < 0 || !bench_starts(p, ") at "))
		return -1;
	p += strlen(") at ");
	if (bench_uint(&p, UINT64_MAX, &mhz) < 0 || strcmp(p, " MHz Clock"))
		return -1;
	/* txonly and flowgen count TX packets, the others RX packets */
	if (pkts == 0 || (pkts != st->acc_rx && pkts != st->acc_tx))
		return -1;
	/* %.2F of cycles / packets */
	if (fabs(f - (double)cycles / (double)pkts) > 0.0051)
		return -1;
	*cpp = f;
	return 0;
}

static bool is_testpmd_error(const char *s, size_t n)
{
	static const char mode_tail[] = " packet forwarding mode";
	size_t tl = sizeof(mode_tail) - 1;

	if (bench_starts(s, "Fail to configure port") || bench_starts(s, "Fail to start port"))
		return true;
	return bench_starts(s, "Invalid ") && n > tl && !strcmp(s + n - tl, mode_tail);
}

/* Close the open block at its border line. */
static void close_block(struct state *st, struct bench_output *out)
{
	if (st->block == B_NIC) {
		if (st->bad || !st->have_rx_rate || !st->have_tx_rate) {
			out->malformed++;
		} else if (st->port < BENCH_MAX_PORTS) {
			struct port_rate *pr = &st->ports[st->port];

			pr->rx_pps = st->rx_pps;
			pr->rx_bps = st->rx_bps;
			pr->tx_pps = st->tx_pps;
			pr->tx_bps = st->tx_bps;
			pr->blocks++;
			out->result_lines++;
		}
	} else if (st->block == B_ACC) {
		st->stopping = false;	/* the final statistics came, good or bad */
		if (st->bad || !st->have_rx || !st->have_tx) {
			out->malformed++;
		} else {
			st->acc = true;
			st->acc_rx = st->rx_pkts;
			st->acc_rx_drop = st->rx_drop;
			st->acc_tx = st->tx_pkts;
			st->acc_tx_drop = st->tx_drop;
			st->cycles_next = true;
			out->result_lines++;
		}
	}
	st->block = B_NONE;
}

/* Open a block at its banner; one still open is abandoned. */
static void open_block(struct state *st, struct bench_output *out, enum block b, uint64_t port)
{
	if (st->block != B_NONE)
		out->malformed++;
	st->block = b;
	st->bad = false;
	st->cycles_next = false;
	if (b == B_NIC) {
		st->port = port < BENCH_MAX_PORTS ? (size_t)port : BENCH_MAX_PORTS;
		st->have_rx_rate = st->have_tx_rate = false;
	} else if (b == B_ACC) {
		/* the final block counts, not an earlier start/stop's */
		st->acc = false;
		st->has_cycles = false;
		st->have_rx = st->have_tx = false;
	}
}

/* Banners and borders; true when s was one. */
static bool block_line(struct state *st, struct bench_output *out, const char *s, size_t n)
{
	static const char border_of[] = { [B_NIC] = '#', [B_FWD] = '-', [B_ACC] = '+' };
	uint64_t port = 0;

	if (st->block != B_NONE && is_border(s, n, border_of[st->block])) {
		close_block(st, out);
		return true;
	}
	if (parse_banner(s, '#', "NIC statistics for port ", true, &port) == 0)
		open_block(st, out, B_NIC, port);
	else if (parse_banner(s, '-', "Forward statistics for port ", true, &port) == 0)
		open_block(st, out, B_FWD, port);
	else if (parse_banner(s, '+', "Accumulated forward statistics for all ports", false,
			      &port) == 0)
		open_block(st, out, B_ACC, 0);
	else
		return false;
	return true;
}

static int add_u64(struct bench_output *out, const char *key, uint64_t v, const char *unit,
		   struct pg_err *err)
{
	return bench_output_add(out, key, (double)v, unit, err);
}

static int add_samples(const struct state *st, double fwd_seconds, struct bench_output *out,
		       struct pg_err *err)
{
	static const char *const port_keys[] = { "rx_pps", "tx_pps", "rx_bps", "tx_bps" };
	static const char *const port_units[] = { "pps", "pps", "bps", "bps" };

	for (size_t p = 0; p < BENCH_MAX_PORTS; p++) {
		const struct port_rate *pr = &st->ports[p];
		const uint64_t v[] = { pr->rx_pps, pr->tx_pps, pr->rx_bps, pr->tx_bps };

		/* the first block of a port has no "last show" to measure from */
		if (pr->blocks < 2)
			continue;
		for (size_t k = 0; k < 4; k++) {
			char key[BENCH_KEY_MAX];

			if (pg_fmt(key, sizeof(key), "port%zu.%s", p, port_keys[k]) < 0)
				return pg_err_set(err, PG_EINVAL, "testpmd result key too long");
			if (add_u64(out, key, v[k], port_units[k], err) < 0)
				return -1;
		}
	}
	if (!st->acc)
		return 0;
	if (fwd_seconds > 0 && isfinite(fwd_seconds)) {
		if (bench_output_add(out, "fwd.rx_pps", (double)st->acc_rx / fwd_seconds, "pps",
				     err) < 0 ||
		    bench_output_add(out, "fwd.tx_pps", (double)st->acc_tx / fwd_seconds, "pps",
				     err) < 0)
			return -1;
	}
	if (add_u64(out, "fwd.rx_packets", st->acc_rx, "packets", err) < 0 ||
	    add_u64(out, "fwd.tx_packets", st->acc_tx, "packets", err) < 0 ||
	    add_u64(out, "fwd.rx_dropped", st->acc_rx_drop, "packets", err) < 0 ||
	    add_u64(out, "fwd.tx_dropped", st->acc_tx_drop, "packets", err) < 0)
		return -1;
	if (st->has_cycles &&
	    bench_output_add(out, "fwd.cycles_per_pkt", st->cycles, "cycles/pkt", err) < 0)
		return -1;
	return 0;
}

/* One complete line. */
static int testpmd_line(struct state *st, struct bench_output *out, const char *s, size_t n,
			struct pg_err *err)
{
	bool had_error = out->error != NULL, cause = st->want_cause;
	enum bench_eal_error e;

	st->want_cause = false;
	if (cause && bench_starts(s, "Cause:"))
		return bench_output_error_append(out, s, n, err);
	if (block_line(st, out, s, n))
		return 0;
	if (st->block == B_NIC) {
		nic_line(st, s);
		return 0;
	}
	if (st->block == B_ACC && n) {
		acc_line(st, s);
		return 0;
	}
	if (bench_starts(s, "CPU cycles/packet=")) {
		double cpp;

		if (st->cycles_next && parse_cycles(st, s, &cpp) == 0) {
			st->cycles = cpp;
			st->has_cycles = true;
			out->result_lines++;
		} else {
			out->malformed++;
		}
		st->cycles_next = false;
		return 0;
	}
	if (!strcmp(s, "Telling cores to stop...")) {
		st->stopping = true;
		return 0;
	}
	if (!strcmp(s, "Bye...")) {
		out->test_ok = true;
		return 0;
	}
	e = bench_eal_error(s);
	if (e == BENCH_EAL_NONE && !is_testpmd_error(s, n))
		return 0;
	st->want_cause = e == BENCH_EAL_EXIT && !had_error;
	return bench_output_error(out, s, n, err);
}

int bench_parse_testpmd(const char *buf, size_t len, double fwd_seconds,
			struct bench_output *out, struct pg_err *err)
{
	struct bench_line line;
	struct state *st = NULL;
	size_t pos = 0;

	bench_output_begin(out);
	if (bench_check_input(buf, len, err) < 0)
		return -1;
	st = calloc(1, sizeof(*st));
	if (!st) {
		pg_err_set(err, PG_ENOMEM, "testpmd parser: out of memory");
		return -1;
	}
	while (bench_line_next(buf, len, &pos, &line)) {
		size_t n;
		const char *s = bench_line_trim(&line, &n);

		if (!line.complete) {
			if (n)
				out->truncated = true;
			break;
		}
		if (line.cut) {
			/* never a statistics line; inside a block it spoils it */
			out->long_lines++;
			if (st->block != B_NONE)
				st->bad = true;
			continue;
		}
		if (testpmd_line(st, out, s, n, err) < 0)
			goto fail;
	}
	if (st->block != B_NONE || st->stopping)
		out->truncated = true;
	if (add_samples(st, fwd_seconds, out, err) < 0)
		goto fail;
	free(st);
	return 0;
fail:
	free(st);
	bench_output_release(out);
	return -1;
}

long bench_testpmd_started(const char *buf, size_t len)
{
	struct bench_line line;
	size_t pos = 0;

	if (!buf)
		return -1;
	while (bench_line_next(buf, len, &pos, &line)) {
		size_t n;
		const char *s = bench_line_trim(&line, &n);

		if (!line.complete || line.cut)
			continue;
		if (!strcmp(s, "Press enter to exit") || bench_starts(s, "Port statistics ===="))
			return (long)pos;
	}
	return -1;
}
