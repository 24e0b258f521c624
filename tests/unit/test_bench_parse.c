/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for agent/bench_*.c: golden dumps of real and damaged benchmark
 * outputs in tests/bench/ (mempool/NAME.in and testpmd/NAME.in -> NAME.ok,
 * see tests/bench/README), then exact keys and values read off the real
 * captures by hand, and the edges: counting and start detection on every
 * prefix of a capture, fwd_seconds, bounds, the sample cap.
 *
 * PG_UPDATE_GOLDEN=1 rewrites the .ok files instead of comparing; read
 * every changed one against its .in before keeping it.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bench_parse.h"
#include "buf.h"
#include "err.h"

#include "goldenfx.h"
#include "profile.h"

#define FIXTURES "tests/bench"
#define GOLDEN_FWD_SECONDS 10.0	/* every testpmd .ok: pps = packets / 10 */

static char *fixture(const char *name, size_t *len)
{
	char path[512];
	char *s;

	assert_true(snprintf(path, sizeof(path), FIXTURES "/%s", name) < (int)sizeof(path));
	s = gold_read_file(path, len);
	if (!s)
		fail_msg("cannot read %s", path);
	return s;
}

/* The golden text: the dump, plus what the pure helpers say of the same
 * bytes, or the parser's error (mempool's parser if *(bool *)mempoolp,
 * else testpmd's). */
static char *golden_text(const char *buf, size_t len, void *mempoolp)
{
	bool mempool = *(const bool *)mempoolp;
	struct pg_buf b = PG_BUF_INIT(1 << 22);
	struct bench_output out = BENCH_OUTPUT_INIT;
	struct pg_err err = PG_ERR_INIT;
	int rc;

	if (mempool)
		rc = bench_parse_mempool(buf, len, &out, &err);
	else
		rc = bench_parse_testpmd(buf, len, GOLDEN_FWD_SECONDS, &out, &err);
	if (rc < 0) {
		assert_int_equal(pg_buf_printf(&b, "parse error: %s\n", err.msg), 0);
	} else {
		if (mempool)
			assert_int_equal(pg_buf_printf(&b, "count_results %zu\n",
						       bench_mempool_count_results(buf, len)), 0);
		else
			assert_int_equal(pg_buf_printf(&b, "started %ld\n",
						       bench_testpmd_started(buf, len)), 0);
		assert_int_equal(bench_output_dump(&out, &b), 0);
	}
	bench_output_release(&out);
	assert_int_equal(pg_buf_grow(&b, 0), 0);
	return pg_buf_detach(&b, NULL);
}

static int golden_dir(const char *sub, bool mempool)
{
	char dir[256];

	assert_true(snprintf(dir, sizeof(dir), FIXTURES "/%s", sub) < (int)sizeof(dir));
	return gold_dir(dir, ".in", golden_text, &mempool);
}

static void test_golden_mempool(void **state)
{
	(void)state;
	assert_true(golden_dir("mempool", true) >= 25);
}

static void test_golden_testpmd(void **state)
{
	(void)state;
	assert_true(golden_dir("testpmd", false) >= 25);
}

/* ---- helpers ----------------------------------------------------------- */

static void parse_mp(const char *buf, size_t len, struct bench_output *out)
{
	struct pg_err err = PG_ERR_INIT;

	if (bench_parse_mempool(buf, len, out, &err) < 0)
		fail_msg("mempool parse failed: %s", err.msg);
}

static void parse_tp(const char *buf, size_t len, double secs, struct bench_output *out)
{
	struct pg_err err = PG_ERR_INIT;

	if (bench_parse_testpmd(buf, len, secs, out, &err) < 0)
		fail_msg("testpmd parse failed: %s", err.msg);
}

static void expect(const struct bench_output *out, const char *key, double value, const char *unit)
{
	const struct bench_sample *s = bench_output_find(out, key);

	if (!s)
		fail_msg("no sample %s", key);
	if (s->value != value)
		fail_msg("%s = %.17g, want %.17g", key, s->value, value);
	assert_string_equal(s->unit, unit);
}

/* ---- mempool, values read off the captures ----------------------------- */

static void test_mempool_ref_2211(void **state)
{
	struct bench_output out = BENCH_OUTPUT_INIT;
	size_t len;
	char *in = fixture("mempool/ref-2211.in", &len);

	(void)state;
	parse_mp(in, len, &out);
	assert_int_equal(out.n, 7);
	assert_int_equal(out.result_lines, 7);
	assert_string_equal(out.samples[0].key, "mempool.nocache.cores1.keep32.get1.put1.const0");
	assert_true(out.samples[0].value == 26135756);
	expect(&out, "mempool.nocache.cores1.keep32.get1.put1.const1", 30277632, "obj/s");
	expect(&out, "mempool.nocache.cores1.keep512.get1.put1.const1", 32427212, "obj/s");
	assert_string_equal(out.samples[6].key, "mempool.nocache.cores1.keep32.get1.put4.const0");
	assert_true(out.samples[6].value == 47605350);
	assert_false(out.test_ok);
	assert_false(out.test_failed);
	assert_false(out.truncated);
	assert_null(out.error);
	assert_int_equal(bench_mempool_count_results(in, len), 7);
	bench_output_release(&out);
	free(in);
}

static void test_mempool_ref_2511(void **state)
{
	struct bench_output out = BENCH_OUTPUT_INIT;
	size_t len;
	char *in = fixture("mempool/ref-2511-1core.in", &len);

	(void)state;
	parse_mp(in, len, &out);
	/* 30 random-bulk rows, then 37 fixed-bulk rows, all padded */
	assert_int_equal(out.n, 67);
	expect(&out, "mempool.nocache.cores1.keep32.maxbulk8", 129192138, "obj/s");
	expect(&out, "mempool.nocache.cores1.keep32768.maxbulk512", 882642419, "obj/s");
	expect(&out, "mempool.nocache.cores1.keep32.get1.put1.const1", 39288575, "obj/s");
	expect(&out, "mempool.nocache.cores1.keep128.get1.put128.const0", 78970114, "obj/s");
	expect(&out, "mempool.nocache.cores1.keep128.get8.put8.const0", 260308936, "obj/s");
	assert_null(bench_output_find(&out, "mempool.nocache.cores1.keep32.get1.put1"));
	bench_output_release(&out);
	free(in);
}

static void test_mempool_failures(void **state)
{
	struct bench_output out = BENCH_OUTPUT_INIT;
	size_t len;
	char *in;

	(void)state;
	in = fixture("mempool/cap-2211-m20.in", &len);
	parse_mp(in, len, &out);
	assert_int_equal(out.n, 0);
	assert_true(out.test_failed);
	assert_string_equal(out.error, "cannot populate ring_mp_mc mempool");
	assert_false(out.truncated);	/* it ends with the bare "RTE>>" prompt */
	bench_output_release(&out);
	free(in);

	in = fixture("mempool/cap-2211-m16.in", &len);
	parse_mp(in, len, &out);
	assert_string_equal(out.error, "Test Failed");
	bench_output_release(&out);
	free(in);

	in = fixture("mempool/cap-bogus.in", &len);
	parse_mp(in, len, &out);
	assert_int_equal(out.n, 0);
	assert_false(out.test_failed);
	assert_string_equal(out.error, "Error: invalid test command: 'bogus_autotest'");
	bench_output_release(&out);
	free(in);

	in = fixture("mempool/cap-eal-bad-option.in", &len);
	parse_mp(in, len, &out);
	assert_string_equal(out.error, "dpdk-test: unrecognized option '--bogus-eal'");
	bench_output_release(&out);
	free(in);

	in = fixture("mempool/hm-not-full.in", &len);
	parse_mp(in, len, &out);
	assert_int_equal(out.n, 1);
	assert_int_equal(out.malformed, 1);
	assert_string_equal(out.error, "mempool_autotest cache=0 cores=1 n_get_bulk=1 "
			     "n_put_bulk=1 n_keep=32 constant_n=1 mempool is not full");
	bench_output_release(&out);
	free(in);
}

static void test_mempool_first_value_kept(void **state)
{
	struct bench_output out = BENCH_OUTPUT_INIT;
	size_t len;
	char *in = fixture("mempool/hm-2211-full.in", &len);

	(void)state;
	parse_mp(in, len, &out);
	/* the "max cores" block repeats cores=2 with 2 lcores */
	expect(&out, "mempool.nocache.cores2.keep32.get1.put1.const0", 40123904, "obj/s");
	expect(&out, "mempool.default_nocache.cores2.keep32.get1.put1.const0", 40566374, "obj/s");
	expect(&out, "mempool.cache.cores1.keep128.get32.put32.const1", 1638197248, "obj/s");
	expect(&out, "mempool.usercache.cores2.keep32.get1.put1.const0", 171415142, "obj/s");
	assert_int_equal(out.result_lines, 17);
	assert_int_equal(out.n, 12);
	assert_true(out.test_ok);
	assert_false(out.truncated);
	bench_output_release(&out);
	free(in);
}

static void test_mempool_sections_2507(void **state)
{
	struct bench_output out = BENCH_OUTPUT_INIT;
	size_t len;
	char *in = fixture("mempool/hm-2507-default-ops.in", &len);

	(void)state;
	parse_mp(in, len, &out);
	expect(&out, "mempool.default_nocache.cores1.keep32.maxbulk8", 140000001, "obj/s");
	expect(&out, "mempool.default_cache.cores1.keep128.get32.put32.const1", 1710000004, "obj/s");
	expect(&out, "mempool.usercache.cores4.keep128.get32.put32.const1", 5501230006.0, "obj/s");
	expect(&out, "mempool.cache.cores1.keep512.maxbulk512", 3104512990.0, "obj/s");
	bench_output_release(&out);
	free(in);
}

/* Counting is pure and agrees with the parser on every prefix: a result
 * counts only once its line has ended. */
static void test_mempool_count_prefixes(void **state)
{
	size_t len, prev = 0;
	char *in = fixture("mempool/ref-2511-1core.in", &len);

	(void)state;
	for (size_t i = 0; i <= len; i++) {
		struct bench_output out = BENCH_OUTPUT_INIT;
		size_t c = bench_mempool_count_results(in, i);

		assert_true(c >= prev);
		prev = c;
		parse_mp(in, i, &out);
		assert_int_equal(out.result_lines, c);
		/* a prefix ending inside a result line never has that result */
		if (i && in[i - 1] != '\n') {
			const char *bol = in + i - 1;

			while (bol > in && bol[-1] != '\n')
				bol--;
			if (!strncmp(bol, "mempool_autotest", 16)) {
				assert_true(out.truncated);
				assert_int_equal(bench_mempool_count_results(in, (size_t)(bol - in)), c);
			}
		}
		bench_output_release(&out);
	}
	assert_int_equal(prev, 67);
	assert_int_equal(bench_mempool_count_results(NULL, 0), 0);
	free(in);
}

static void test_mempool_inline(void **state)
{
	struct bench_output out = BENCH_OUTPUT_INIT;
	const char *s;

	(void)state;
	/* 21.11: no constant_n, which means 0 */
	s = "start performance test (with cache)\r\n"
	    "mempool_autotest cache=512 cores=1 n_get_bulk=4 n_put_bulk=4 n_keep=32 "
	    "rate_persec=123\r\n";
	parse_mp(s, strlen(s), &out);
	assert_int_equal(out.n, 1);
	expect(&out, "mempool.cache.cores1.keep32.get4.put4.const0", 123, "obj/s");
	bench_output_release(&out);

	/* the same line, but its number cut by the end of the output */
	s = "start performance test (with cache)\n"
	    "mempool_autotest cache=512 cores=1 n_get_bulk=4 n_put_bulk=4 n_keep=32 rate_persec=12";
	parse_mp(s, strlen(s), &out);
	assert_int_equal(out.n, 0);
	assert_true(out.truncated);
	assert_null(out.error);
	assert_int_equal(bench_mempool_count_results(s, strlen(s)), 0);
	bench_output_release(&out);

	/* the largest rate there is, and one over it */
	s = "start performance test (without cache)\n"
	    "mempool_autotest cache=0 cores=1 n_get_bulk=1 n_put_bulk=1 n_keep=32 constant_n=0 "
	    "rate_persec=18446744073709551615\n"
	    "mempool_autotest cache=0 cores=1 n_get_bulk=1 n_put_bulk=1 n_keep=32 constant_n=1 "
	    "rate_persec=18446744073709551616\n";
	parse_mp(s, strlen(s), &out);
	assert_int_equal(out.n, 1);
	expect(&out, "mempool.nocache.cores1.keep32.get1.put1.const0", 18446744073709551615.0,
	       "obj/s");
	assert_int_equal(out.malformed, 1);
	bench_output_release(&out);

	/* an error line is bounded and printable */
	{
		char big[3000];

		memcpy(big, "Test Failed", 11);
		memset(big + 11, '\x01', sizeof(big) - 12);
		big[sizeof(big) - 1] = '\n';
		parse_mp(big, sizeof(big), &out);
		assert_false(out.test_failed);	/* not the exact line */
		assert_null(out.error);
		bench_output_release(&out);
		memcpy(big, "cannot populate ring_mp_mc mempool", 34);
		parse_mp(big, sizeof(big), &out);
		assert_non_null(out.error);
		assert_int_equal(strlen(out.error), BENCH_ERROR_MAX - 1);
		assert_int_equal(strncmp(out.error, "cannot populate ring_mp_mc mempool???", 37), 0);
		assert_int_equal(out.long_lines, 0);
		bench_output_release(&out);

		/* the bound falls on blanks: no trailing blank is left */
		memset(big, 'a', sizeof(big));
		memcpy(big, "cannot populate ", 16);
		memcpy(big + 509, "  ", 2);
		big[sizeof(big) - 1] = '\n';
		parse_mp(big, sizeof(big), &out);
		assert_int_equal(strlen(out.error), 509);
		bench_output_release(&out);
	}
}

/* BENCH_MAX_SAMPLES distinct keys are kept, the rest counted as dropped. */
static void test_mempool_sample_cap(void **state)
{
	struct pg_buf b = PG_BUF_INIT(PG_BUF_NOLIMIT);
	struct bench_output out = BENCH_OUTPUT_INIT;
	size_t n = BENCH_MAX_SAMPLES + 10;

	(void)state;
	assert_int_equal(pg_buf_adds(&b, "start performance test (without cache)\n"), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(pg_buf_printf(&b, "mempool_autotest cache=0 cores=1 n_get_bulk=1 "
					       "n_put_bulk=1 n_keep=%zu constant_n=0 "
					       "rate_persec=%zu\n", i + 1, i), 0);
	parse_mp(b.data, b.len, &out);
	assert_int_equal(out.n, BENCH_MAX_SAMPLES);
	assert_int_equal(out.dropped, 10);
	assert_int_equal(out.result_lines, n);
	expect(&out, "mempool.nocache.cores1.keep16384.get1.put1.const0", 16383, "obj/s");
	assert_null(bench_output_find(&out, "mempool.nocache.cores1.keep16385.get1.put1.const0"));
	assert_int_equal(bench_mempool_count_results(b.data, b.len), n);
	bench_output_release(&out);
	bench_output_release(&out);	/* harmless twice */
	pg_buf_release(&b);
}

static void test_input_bounds(void **state)
{
	struct bench_output out = BENCH_OUTPUT_INIT;
	struct pg_err err = PG_ERR_INIT;
	const char one = 'x';

	(void)state;
	/* only len is looked at before failing: no byte past the first is read */
	assert_int_equal(bench_parse_mempool(&one, (size_t)BENCH_MAX_OUTPUT + 1, &out, &err), -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	assert_int_equal(out.n, 0);
	assert_null(out.samples);
	pg_err_clear(&err);
	assert_int_equal(bench_parse_testpmd(&one, (size_t)BENCH_MAX_OUTPUT + 1, 1.0, &out, &err),
			 -1);
	assert_int_equal(err.code, PG_ETOOBIG);
	pg_err_clear(&err);
	assert_int_equal(bench_parse_mempool(NULL, 3, &out, &err), -1);
	assert_int_equal(err.code, PG_EINVAL);
	assert_int_equal(bench_parse_mempool(NULL, 0, &out, &err), 0);
	assert_int_equal(out.n, 0);
	assert_false(out.truncated);
	bench_output_release(&out);
	assert_int_equal(bench_parse_testpmd(NULL, 0, 1.0, &out, &err), 0);
	assert_int_equal(out.n, 0);
	bench_output_release(&out);
	assert_int_equal(bench_testpmd_started(NULL, 0), -1);
}

/* ---- testpmd, values read off the captures ----------------------------- */

/*
 * A "fwd" benchmark on ports: one testpmd per frame size (the arguments
 * profile_benchmark_argv() builds for one net_ring0 port), each parsed
 * alone and keyed per size as the agent keys it (profile_fwd_key()).
 */
static void test_testpmd_ports_sizes(void **state)
{
	static const struct {
		const char *file;
		unsigned size;
		double rx, cycles;
	} runs[] = {
		{ "testpmd/cap-ports-ring-64.in", 64, 346177120, 5.65 },
		{ "testpmd/cap-ports-memif-512.in", 512, 12357440, 348.63 },
		{ "testpmd/cap-ports-ring-1518.in", 1518, 827164096, 3.27 },
	};
	char key[BENCH_KEY_MAX + 16];

	(void)state;
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct bench_output out = BENCH_OUTPUT_INIT;
		const struct bench_sample *rx, *cpp;
		size_t len;
		char *in = fixture(runs[i].file, &len);
		size_t n_fwd = 0;

		parse_tp(in, len, 2.0, &out);
		assert_true(out.test_ok);
		assert_null(out.error);
		rx = bench_output_find(&out, "fwd.rx_packets");
		cpp = bench_output_find(&out, "fwd.cycles_per_pkt");
		assert_non_null(rx);
		assert_non_null(cpp);
		assert_true(rx->value == runs[i].rx);
		assert_true(fabs(cpp->value - runs[i].cycles) < 1e-9);
		for (size_t k = 0; k < out.n; k++) {
			char want[64];

			assert_int_equal(profile_fwd_key(runs[i].size, out.samples[k].key, key,
							 sizeof(key)), 0);
			snprintf(want, sizeof(want), "fwd.size%u.", runs[i].size);
			assert_true(strncmp(key, want, strlen(want)) == 0);
			n_fwd++;
		}
		assert_int_equal(profile_fwd_key(runs[i].size, "fwd.rx_pps", key, sizeof(key)), 0);
		assert_non_null(bench_output_find(&out, "fwd.rx_pps"));
		assert_true(n_fwd == 7);	/* rx/tx pps, packets, dropped, cycles */
		bench_output_release(&out);
		free(in);
	}
}

static void test_testpmd_statsperiod(void **state)
{
	struct bench_output out = BENCH_OUTPUT_INIT;
	size_t len;
	char *in = fixture("testpmd/ref-statsperiod.in", &len);
	const char *first = strstr(in, "Port statistics ====================================\n");

	(void)state;
	parse_tp(in, len, 10.0, &out);
	expect(&out, "fwd.rx_packets", 251569920, "packets");
	expect(&out, "fwd.tx_packets", 251569920, "packets");
	expect(&out, "fwd.rx_dropped", 0, "packets");
	expect(&out, "fwd.tx_dropped", 0, "packets");
	expect(&out, "fwd.rx_pps", 251569920 / 10.0, "pps");
	expect(&out, "fwd.tx_pps", 251569920 / 10.0, "pps");
	expect(&out, "fwd.cycles_per_pkt", 65.50, "cycles/pkt");
	/* the second (last) periodic print; the first one says 0 */
	expect(&out, "port0.rx_pps", 15519852, "pps");
	expect(&out, "port0.tx_pps", 15519844, "pps");
	expect(&out, "port1.rx_pps", 15519803, "pps");
	expect(&out, "port1.tx_pps", 15519803, "pps");
	expect(&out, "port0.rx_bps", 0, "bps");
	assert_int_equal(out.n, 15);
	assert_true(out.test_ok);
	assert_false(out.truncated);
	assert_null(out.error);
	/* started: just past the first periodic print's title line */
	assert_non_null(first);
	assert_int_equal(bench_testpmd_started(in, len),
			 (long)(first - in) + (long)strlen("Port statistics ======"
							   "==============================\n"));
	bench_output_release(&out);
	free(in);
}

static void test_testpmd_2511_bytes_busy(void **state)
{
	struct bench_output out = BENCH_OUTPUT_INIT;
	size_t len;
	char *in = fixture("testpmd/ref-interactive-2511.in", &len);

	(void)state;
	parse_tp(in, len, 0, &out);
	expect(&out, "fwd.rx_packets", 387435584, "packets");
	expect(&out, "fwd.cycles_per_pkt", 47.37, "cycles/pkt");
	expect(&out, "port0.rx_bps", 11014913800.0, "bps");
	expect(&out, "port1.tx_bps", 11015015816.0, "bps");
	expect(&out, "port1.rx_pps", 21513706, "pps");
	assert_null(bench_output_find(&out, "fwd.rx_pps"));	/* no fwd_seconds */
	assert_null(bench_output_find(&out, "fwd.tx_pps"));
	assert_int_equal(bench_testpmd_started(in, len), -1);	/* interactive */
	bench_output_release(&out);
	free(in);
}

static void test_testpmd_txonly_and_ring(void **state)
{
	struct bench_output out = BENCH_OUTPUT_INIT;
	size_t len;
	char *in = fixture("testpmd/cap-txonly.in", &len);

	(void)state;
	parse_tp(in, len, 4.0, &out);
	expect(&out, "fwd.rx_packets", 0, "packets");
	expect(&out, "fwd.tx_packets", 35204608, "packets");
	expect(&out, "fwd.rx_pps", 0, "pps");
	expect(&out, "fwd.tx_pps", 35204608 / 4.0, "pps");
	expect(&out, "fwd.cycles_per_pkt", 72.63, "cycles/pkt");
	assert_int_equal(out.n, 7);
	assert_int_equal(bench_testpmd_started(in, len),
			 (long)(strstr(in, "Press enter to exit\n") - in) + 20);
	bench_output_release(&out);
	free(in);

	in = fixture("testpmd/ref-ring-txfirst.in", &len);
	parse_tp(in, len, 3.0, &out);
	expect(&out, "fwd.rx_packets", 1063453120, "packets");
	expect(&out, "fwd.tx_packets", 1063453184, "packets");
	expect(&out, "fwd.cycles_per_pkt", 4.26, "cycles/pkt");
	expect(&out, "fwd.rx_pps", 1063453120 / 3.0, "pps");
	bench_output_release(&out);
	free(in);
}

static void test_testpmd_fwd_seconds(void **state)
{
	const double none[] = { 0, -1, NAN, INFINITY, -INFINITY };
	struct bench_output out = BENCH_OUTPUT_INIT;
	size_t len;
	char *in = fixture("testpmd/cap-io.in", &len);

	(void)state;
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		parse_tp(in, len, none[i], &out);
		assert_null(bench_output_find(&out, "fwd.rx_pps"));
		assert_null(bench_output_find(&out, "fwd.tx_pps"));
		expect(&out, "fwd.rx_packets", 13518016, "packets");
		assert_int_equal(out.n, 5);
		bench_output_release(&out);
	}
	parse_tp(in, len, 2.5, &out);
	expect(&out, "fwd.rx_pps", 13518016 / 2.5, "pps");
	expect(&out, "fwd.cycles_per_pkt", 99.19, "cycles/pkt");
	assert_string_equal(out.samples[0].key, "fwd.rx_pps");
	assert_string_equal(out.samples[6].key, "fwd.cycles_per_pkt");
	bench_output_release(&out);
	free(in);
}

static void test_testpmd_errors(void **state)
{
	struct bench_output out = BENCH_OUTPUT_INIT;
	size_t len;
	char *in = fixture("testpmd/cap-m16.in", &len);

	(void)state;
	parse_tp(in, len, 5.0, &out);
	assert_int_equal(out.n, 0);
	assert_false(out.test_ok);
	assert_string_equal(out.error, "EAL: Error - exiting with code: 1; Cause: Creation of "
			    "mbuf pool for socket 0 failed: Cannot allocate memory");
	bench_output_release(&out);
	free(in);

	in = fixture("testpmd/cap-badmode.in", &len);
	parse_tp(in, len, 5.0, &out);
	assert_string_equal(out.error, "Invalid bogus packet forwarding mode");
	bench_output_release(&out);
	free(in);
}

/* Start detection on every prefix of a capture: -1 until the whole line
 * is there, then always the same offset. */
static void test_testpmd_started_prefixes(void **state)
{
	size_t len;
	char *in = fixture("testpmd/cap-io.in", &len);
	const char *line = strstr(in, "Press enter to exit\n");
	long at;

	(void)state;
	assert_non_null(line);
	at = (long)(line - in) + 20;
	for (size_t i = 0; i <= len; i++) {
		long got = bench_testpmd_started(in, i);

		assert_int_equal(got, (long)i >= at ? at : -1);
	}
	free(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_mempool),
		cmocka_unit_test(test_golden_testpmd),
		cmocka_unit_test(test_mempool_ref_2211),
		cmocka_unit_test(test_mempool_ref_2511),
		cmocka_unit_test(test_mempool_failures),
		cmocka_unit_test(test_mempool_first_value_kept),
		cmocka_unit_test(test_mempool_sections_2507),
		cmocka_unit_test(test_mempool_count_prefixes),
		cmocka_unit_test(test_mempool_inline),
		cmocka_unit_test(test_mempool_sample_cap),
		cmocka_unit_test(test_input_bounds),
		cmocka_unit_test(test_testpmd_ports_sizes),
		cmocka_unit_test(test_testpmd_statsperiod),
		cmocka_unit_test(test_testpmd_2511_bytes_busy),
		cmocka_unit_test(test_testpmd_txonly_and_ring),
		cmocka_unit_test(test_testpmd_fwd_seconds),
		cmocka_unit_test(test_testpmd_errors),
		cmocka_unit_test(test_testpmd_started_prefixes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
