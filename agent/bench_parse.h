/* SPDX-License-Identifier: MIT */
#ifndef PG_BENCH_PARSE_H
#define PG_BENCH_PARSE_H

/*
 * Parsers of benchmark output: pure functions over a buffer that turn what
 * DPDK's dpdk-test (mempool_perf_autotest and its _1core/_2cores/_allcores
 * variants, 21.11 .. 25.11) and dpdk-testpmd printed into result samples.
 * The agent runs them on a finished run's output; the controller may run
 * them again on an uploaded log.  Key names are those of profile.h
 * ("Result keys").
 *
 * Reading.  The buffer is split into lines at "\n", "\r\n" or a lone "\r".
 * Each line is cleaned before it is looked at: ANSI escape sequences
 * (testpmd --stats-period clears the screen with ESC[2J ESC[1;1H) are
 * removed, other control bytes (NUL included) become '?', and the prompts
 * "RTE>>" and "testpmd> " at the start of a line are dropped (DPDK echoes
 * commands after them).  A line longer than BENCH_LINE_MAX is cut there,
 * counted in long_lines and is never a result.  A last line without its
 * end of line is incomplete: it is never interpreted (a number in it may
 * be cut) and sets truncated, unless it is empty or only a prompt.
 *
 * Strictness.  A number is digits only, checked for range; a malformed
 * number, a missing or repeated field, an unknown field or anything after
 * the last field makes the line no result, never a guessed value.
 *
 *   struct bench_output out = BENCH_OUTPUT_INIT;
 *   if (bench_parse_mempool(buf, len, &out, &err) < 0) ...
 *   for (size_t i = 0; i < out.n; i++) use(out.samples[i].key, ...);
 *   bench_output_release(&out);
 */

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "err.h"

#define BENCH_KEY_MAX 128		/* bytes in a key, with its NUL */
#define BENCH_MAX_OUTPUT (64u * 1024 * 1024)	/* bytes of output parsed */
#define BENCH_LINE_MAX 4096		/* bytes of a line looked at */
#define BENCH_ERROR_MAX 512		/* bytes of the error, with its NUL */
#define BENCH_MAX_SAMPLES 16384		/* 25.07 full run, 3 blocks: 3420 */
#define BENCH_MAX_PORTS 128		/* testpmd port ids tracked */

struct bench_sample {
	char key[BENCH_KEY_MAX];
	double value;
	/* A static string: "obj/s", "pps", "packets", "cycles/pkt", "bps". */
	const char *unit;
};

struct bench_output {
	struct bench_sample *samples;	/* in output order, keys unique */
	size_t n;
	/* Result lines recognised: mempool, complete "mempool_autotest ..."
	 * lines that parse, duplicates and unkeyed ones included (the same
	 * count as bench_mempool_count_results()); testpmd, the stats
	 * blocks and cycles lines that parse and count. */
	size_t result_lines;
	bool test_ok;		/* mempool: "Test OK"; testpmd: "Bye..." */
	bool test_failed;	/* mempool: "Test Failed" */
	bool test_skipped;	/* mempool: "Test Skipped" */
	/* malloc'd first error line recognised (trimmed, printable ASCII,
	 * at most BENCH_ERROR_MAX - 1 bytes), or NULL.  For "EAL: Error -
	 * exiting with code: N" the following "Cause: ..." line is appended
	 * after "; ". */
	char *error;
	/* The output ended mid-line, or (testpmd) inside a statistics block,
	 * or after "Telling cores to stop..." without the final statistics:
	 * results may be partial.  A mempool run stopped between lines is
	 * not truncated: it shows as !test_ok && !test_failed. */
	bool truncated;
	/* mempool: result lines that parse but cannot be keyed: no or an
	 * unknown "start performance test" header before them, or a cache
	 * size that contradicts their header. */
	size_t unkeyed;
	/* Lines that look like results (a "mempool_autotest " line, a
	 * testpmd statistics or cycles line) but fail the strict parse. */
	size_t malformed;
	size_t long_lines;	/* lines cut at BENCH_LINE_MAX */
	size_t dropped;		/* results not kept: BENCH_MAX_SAMPLES reached */

	/* private */
	size_t alloc;
	size_t *slots;		/* open addressing: index + 1, 0 = free */
	size_t nslots;
};

#define BENCH_OUTPUT_INIT { .samples = NULL, .error = NULL, .slots = NULL }

/*
 * Parse mempool_perf_autotest output: one sample per result line, key
 * mempool.SECTION.coresC.keepK.getG.putP.constN (constN 0 when the line has
 * no constant_n, as in 21.11) or mempool.SECTION.coresC.keepK.maxbulkM
 * (random-bulk rows, 25.07+), value rate_persec (objects per second, all
 * lcores together), unit "obj/s".  SECTION comes from the header before the
 * line: "start performance test [(using OPS, ]without cache)" nocache,
 * "... with cache)" cache, "... with user-owned cache)" usercache, "start
 * performance test for OPS (without cache)" default_nocache, "... for OPS
 * (with cache)" default_cache.  When a key repeats (<= 23.11 with 2 lcores
 * repeats the cores=2 block) the first value is kept.
 *
 * Errors recognised: a "mempool_autotest " line that is no result (the
 * test completes the line with its error, e.g. "... mempool is not
 * full"), "test failed at ...", "per-lcore test returned -1", "cannot
 * allocate/set/populate ...", "not enough lcores", "Test Failed", "Test
 * Skipped", "Error: invalid test command: ...", "APP: Invalid DPDK_TEST
 * value", and the EAL's fatal lines ("EAL: FATAL: ...", "EAL: Error -
 * exiting with code: N" + its cause, "PANIC in ...", getopt's
 * "unrecognized option").
 *
 * *out is overwritten (release a previous result first).  Returns 0 (out
 * filled; zero samples is not an error of the parser: the caller decides
 * that "no result" is a failed benchmark), or -1 with err set and *out
 * empty: PG_ENOMEM, PG_ETOOBIG when len > BENCH_MAX_OUTPUT, PG_EINVAL when
 * buf is NULL with len > 0.
 */
int bench_parse_mempool(const char *buf, size_t len, struct bench_output *out,
			struct pg_err *err);

/*
 * Parse testpmd output (non-interactive, interactive, --stats-period;
 * 21.11 .. 25.11).  Keys, from the final "Accumulated forward statistics"
 * block: fwd.rx_packets, fwd.tx_packets, fwd.rx_dropped, fwd.tx_dropped
 * (unit "packets"); fwd.rx_pps, fwd.tx_pps = those RX / TX packets divided
 * by fwd_seconds (unit "pps"), only when fwd_seconds > 0 and finite; from
 * the "CPU cycles/packet=..." line right after that block (needs
 * --record-core-cycles): fwd.cycles_per_pkt (unit "cycles/pkt"); from the
 * last "NIC statistics for port N" block of each port: portN.rx_pps,
 * portN.tx_pps (unit "pps"), portN.rx_bps, portN.tx_bps (unit "bps"), only
 * when the port has at least two such blocks, since testpmd measures
 * "since last show" and prints 0 in the first one.  A block counts only
 * when it is complete and every line in it parses (RX-total must equal
 * RX-packets + RX-dropped, the cycles line must agree with its own
 * figures and with the block's packets).  Order: port keys by port
 * number, then the fwd keys in the order above.
 *
 * Errors recognised: the EAL's fatal lines (as for mempool), "Fail to
 * configure port ...", "Fail to start port ...", "Invalid ... packet
 * forwarding mode".
 *
 * Returns as bench_parse_mempool().
 */
int bench_parse_testpmd(const char *buf, size_t len, double fwd_seconds,
			struct bench_output *out, struct pg_err *err);

/*
 * Count the complete mempool result lines in buf (the agent stops the
 * unmodified test after N of them).  Pure, no allocation; the same count
 * as result_lines of bench_parse_mempool() on the same bytes.  Looks at
 * no more than BENCH_MAX_OUTPUT bytes.
 */
size_t bench_mempool_count_results(const char *buf, size_t len);

/*
 * The offset just past the line that says testpmd is forwarding: "Press
 * enter to exit" (non-interactive; printed right after the forwarding
 * lcores are launched) or, with --stats-period (where that line comes
 * only at the end), the first "Port statistics ====" line (the first
 * periodic print comes right after the launch).  -1 if neither complete
 * line is (yet) in buf.  Interactive runs ("start" at the prompt) are not
 * recognised.  Pure, no allocation.
 */
long bench_testpmd_started(const char *buf, size_t len);

/* The sample with this key, or NULL. */
const struct bench_sample *bench_output_find(const struct bench_output *out, const char *key);

/*
 * A stable text dump for golden files: the counts and flags, "error
 * TEXT" or "error -", then one "KEY VALUE UNIT" line per sample (VALUE
 * with the fewest digits that read back as the same double).  Returns 0,
 * or -1 when b is full or out of memory.
 */
int bench_output_dump(const struct bench_output *out, struct pg_buf *b);

/* Free what out holds; it is empty (BENCH_OUTPUT_INIT) afterwards. */
void bench_output_release(struct bench_output *out);

#endif
