#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Regenerate the apply corpus from the DPDK 22.11 tree (not run by the tests).

    tests/apply/gen-corpus.py [DPDK_GIT]     (default: scripts/dpdk-tree.sh's)

Writes, next to this script:
  upstream/NNNN-*.patch   the "upstream moved on" commits that make-repo.sh
                          applies with git am on top of the base commit;
  corpus/NN-*.patch       the patches under test, each one `git format-patch`
                          of one commit on top of the base commit (or of a
                          private commit that is never published, for the
                          patches whose preimage blobs nobody else has).

Every commit has a fixed author, committer and date, so the files come out
the same on every run and the index lines name the same blobs.  Each edit is
a literal replacement that must match exactly once: when DPDK's text is not
what the corpus was written against, the script stops and says where.

In the edit texts below, a line's leading "\\t" sequences are tabs.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
BASE = "a358448428201a795050f6d3242f0c614f1f0058"


def C(s):
    """Leading \\t sequences of each line become tabs."""
    return re.sub(r"(?m)^((?:\\t)+)", lambda m: "\t" * (len(m.group(1)) // 2), s)


# ---- the "upstream moved on" commits (applied in this order) --------------
# (author, date, subject, body, edits); edit = (path, old, new)

UPSTREAM = [
    ("Thomas Monjalon <thomas@monjalon.net>", "2024-02-01T09:00:00+01:00",
     "net/null: add queue counter helper",
     "Group the statistics update of the null PMD queues in one helper,\n"
     "so that a later change can make it lock-free in one place.",
     [("drivers/net/null/rte_eth_null.c",
       C(r'''#define PMD_LOG(level, fmt, args...) \
\trte_log(RTE_LOG_ ## level, eth_null_logtype, \
\t\t"%s(): " fmt "\n", __func__, ##args)
'''),
       C(r'''#define PMD_LOG(level, fmt, args...) \
\trte_log(RTE_LOG_ ## level, eth_null_logtype, \
\t\t"%s(): " fmt "\n", __func__, ##args)

/* Count packets of a queue (one writer per queue). */
static inline void
null_queue_count(rte_atomic64_t *cnt, uint16_t n)
{
\trte_atomic64_add(cnt, n);
}
'''))]),
    ("Andrew Rybchenko <andrew.rybchenko@oktetlabs.ru>", "2024-02-02T10:00:00+03:00",
     "mempool: explain the cache flush threshold",
     "The multiplier of the cache flush threshold is not obvious: say why\n"
     "it is 1.5.",
     [("lib/mempool/rte_mempool.c",
       C(r'''#define CACHE_FLUSHTHRESH_MULTIPLIER 1.5
'''),
       C(r'''/*
 * The cache may hold up to 1.5 times its nominal size before it is
 * flushed to the common pool: a burst of puts then does not flush
 * right after a burst of gets refilled the cache.
 */
#define CACHE_FLUSHTHRESH_MULTIPLIER 1.5
'''))]),
    ("Honnappa Nagarahalli <honnappa.nagarahalli@arm.com>", "2024-02-03T08:30:00-06:00",
     "ring: name the limits of the ring size",
     "Give the largest ring size a name instead of repeating the mask.",
     [("lib/ring/rte_ring.c",
       C(r'''/* by default set head/tail distance as 1/8 of ring capacity */
#define HTD_MAX_DEF	8
'''),
       C(r'''/* by default set head/tail distance as 1/8 of ring capacity */
#define HTD_MAX_DEF	8

/* the largest count a ring can be created with */
#define RING_COUNT_MAX	RTE_RING_SZ_MASK
'''))]),
    ("Ferruh Yigit <ferruh.yigit@amd.com>", "2024-02-05T11:15:00+00:00",
     "app/testpmd: add option to skip the Rx flush",
     "Flushing the Rx queues before forwarding takes a second per queue\n"
     "on some NICs; let the user skip it from the command line.",
     [("app/test-pmd/testpmd.c",
       C(r'''/* use main core for command line ? */
uint8_t interactive = 0;
'''),
       C(r'''/* use main core for command line ? */
uint8_t interactive = 0;

/*
 * Skip the flush of Rx queues before forwarding starts
 * (--no-flush-rx sets no_flush_rx, this one is per run).
 */
uint8_t skip_rx_flush_once;
'''))]),
    ("Morten Brørup <mb@smartsharesystems.com>", "2024-02-06T14:00:00+01:00",
     "test/mempool: add helper to count free objects",
     "Several cases compare the free count with the mempool size; give\n"
     "them one helper.",
     [("app/test/test_mempool.c",
       C(r'''\tmemset(obj, 0, mp->elt_size);
\t*objnum = i;
}
'''),
       C(r'''\tmemset(obj, 0, mp->elt_size);
\t*objnum = i;
}

/* number of objects of mp not in use, external caches included */
static unsigned int
test_mempool_free_count(struct rte_mempool *mp,
\t\t\tstruct rte_mempool_cache *cache)
{
\tunsigned int n = rte_mempool_avail_count(mp);

\tif (cache != NULL)
\t\tn += cache->len;
\treturn n;
}
'''))]),
    ("Bruce Richardson <bruce.richardson@intel.com>", "2024-02-07T09:45:00+00:00",
     "net/ring: fix sign compare in stats",
     "RTE_ETHDEV_QUEUE_STAT_CNTRS is a plain int: cast it before comparing\n"
     "it with the unsigned queue index.",
     [("drivers/net/ring/rte_eth_ring.c",
       C(r'''\tfor (i = 0; i < RTE_ETHDEV_QUEUE_STAT_CNTRS &&
\t\t\ti < dev->data->nb_rx_queues; i++) {
'''),
       C(r'''\tfor (i = 0; i < (unsigned int)RTE_ETHDEV_QUEUE_STAT_CNTRS &&
\t\t\ti < dev->data->nb_rx_queues; i++) {
''')),
      ("drivers/net/ring/rte_eth_ring.c",
       C(r'''\tfor (i = 0; i < RTE_ETHDEV_QUEUE_STAT_CNTRS &&
\t\t\ti < dev->data->nb_tx_queues; i++) {
'''),
       C(r'''\tfor (i = 0; i < (unsigned int)RTE_ETHDEV_QUEUE_STAT_CNTRS &&
\t\t\ti < dev->data->nb_tx_queues; i++) {
'''))]),
    ("Bruce Richardson <bruce.richardson@intel.com>", "2024-02-07T10:05:00+00:00",
     "net/ring: clear stats atomically",
     "The counters are updated with atomics on multi-producer rings: reset\n"
     "them the same way.",
     [("drivers/net/ring/rte_eth_ring.c",
       C(r'''\tfor (i = 0; i < dev->data->nb_rx_queues; i++)
\t\tinternal->rx_ring_queues[i].rx_pkts.cnt = 0;
\tfor (i = 0; i < dev->data->nb_tx_queues; i++)
\t\tinternal->tx_ring_queues[i].tx_pkts.cnt = 0;
'''),
       C(r'''\tfor (i = 0; i < dev->data->nb_rx_queues; i++)
\t\trte_atomic64_clear(&internal->rx_ring_queues[i].rx_pkts);
\tfor (i = 0; i < dev->data->nb_tx_queues; i++)
\t\trte_atomic64_clear(&internal->tx_ring_queues[i].tx_pkts);
'''))]),
    ("Olivier Matz <olivier.matz@6wind.com>", "2024-02-08T16:20:00+01:00",
     "mempool: bound the ops name check",
     "strlen() of a name that is not terminated reads past the end of the\n"
     "ops structure: bound it.",
     [("lib/mempool/rte_mempool_ops.c",
       C(r'''\tif (strlen(h->name) >= sizeof(ops->name) - 1) {
'''),
       C(r'''\tif (strnlen(h->name, sizeof(ops->name)) >= sizeof(ops->name) - 1) {
'''))]),
    ("Konstantin Ananyev <konstantin.ananyev@huawei.com>", "2024-02-09T12:00:00+00:00",
     "test/ring: keep the result of the basic test",
     "Keep the return code so that the failure can be reported.",
     [("app/test/test_ring.c",
       C(r'''\t/* Some basic operations */
\tif (test_ring_basic_ex() < 0)
\t\tgoto test_fail;
'''),
       C(r'''\t/* Some basic operations */
\trc = test_ring_basic_ex();
\tif (rc < 0)
\t\tgoto test_fail;
'''))]),
    ("Anatoly Burakov <anatoly.burakov@intel.com>", "2024-02-12T09:10:00+00:00",
     "eal: log memzone not found on free",
     "Freeing a memzone that is not in the list is a bug of the caller:\n"
     "say so in the log.",
     [("lib/eal/common/eal_common_memzone.c",
       C(r'''\tif (found_mz == NULL) {
\t\tret = -EINVAL;
'''),
       C(r'''\tif (found_mz == NULL) {
\t\tRTE_LOG(ERR, EAL, "Memzone not found\n");
\t\tret = -EINVAL;
'''))]),
    ("Olivier Matz <olivier.matz@6wind.com>", "2024-02-13T15:30:00+01:00",
     "mempool/ring: use unsigned ring size",
     "The ring count is unsigned: compute it as such.",
     [("drivers/mempool/ring/rte_mempool_ring.c",
       C(r'''\tr = rte_ring_create(rg_name, rte_align32pow2(mp->size + 1),
'''),
       C(r'''\tr = rte_ring_create(rg_name, rte_align32pow2(mp->size + 1U),
'''))]),
    ("Aman Singh <aman.deep.singh@intel.com>", "2024-02-14T10:00:00+05:30",
     "app/testpmd: refuse a burst of zero packets",
     "A burst of zero packets makes the forwarding engines spin without\n"
     "doing anything.",
     [("app/test-pmd/config.c",
       C(r'''set_nb_pkt_per_burst(uint16_t nb)
{
\tif (nb > MAX_PKT_BURST) {
'''),
       C(r'''set_nb_pkt_per_burst(uint16_t nb)
{
\tif (nb == 0 || nb > MAX_PKT_BURST) {
'''))]),
    ("Olivier Matz <olivier.matz@6wind.com>", "2024-02-15T11:00:00+01:00",
     "mempool/stack: rename source file",
     "Drop the rte_ prefix of the driver's source file, as other drivers\n"
     "did.",
     [("RENAME", "drivers/mempool/stack/rte_mempool_stack.c",
       "drivers/mempool/stack/mempool_stack.c"),
      ("drivers/mempool/stack/meson.build",
       "sources = files('rte_mempool_stack.c')\n",
       "sources = files('mempool_stack.c')\n")]),
    ("Stephen Hemminger <stephen@networkplumber.org>", "2024-02-16T08:00:00-08:00",
     "log: shorten the global level line of the dump",
     "Match the format of the per-type lines below it.",
     [("lib/eal/common/eal_common_log.c",
       C(r'''\tfprintf(f, "global log level is %s\n",
'''),
       C(r'''\tfprintf(f, "global log level: %s\n",
'''))]),
    ("Morten Brørup <mb@smartsharesystems.com>", "2024-02-19T13:00:00+01:00",
     "test/mempool: shorten the perf test",
     "Five seconds per case make the whole test take an hour.",
     [("app/test/test_mempool_perf.c", "#define TIME_S 5\n", "#define TIME_S 3\n")]),
    ("Honnappa Nagarahalli <honnappa.nagarahalli@arm.com>", "2024-02-20T09:00:00-06:00",
     "test/ring: measure small bursts",
     "Small bursts are what most applications use.",
     [("app/test/test_ring_perf.c",
       "static const volatile unsigned bulk_sizes[] = { 8, 32 };\n",
       "static const volatile unsigned bulk_sizes[] = { 4, 8, 32 };\n")]),
    ("Konstantin Ananyev <konstantin.ananyev@huawei.com>", "2024-02-21T10:30:00+00:00",
     "ring: say that single-thread mode is not MT safe",
     "",
     [("lib/ring/rte_ring_core.h",
       "\tRTE_RING_SYNC_ST,     /**< single thread only */\n",
       "\tRTE_RING_SYNC_ST,     /**< single thread only (not MT safe) */\n")]),
    ("Bruce Richardson <bruce.richardson@intel.com>", "2024-02-22T11:00:00+00:00",
     "usertools: remove the legacy telemetry client",
     "The legacy telemetry library is gone; dpdk-telemetry.py is the client.",
     [("DELETE", "usertools/dpdk-telemetry-client.py")]),
]

# ---- the private commit: a developer's tree that was never published ----

PRIVATE = ("Jane Developer <jane@example.com>", "2024-03-01T09:00:00+01:00",
           "wip: local changes",
           "Not for upstream.",
           [("lib/eal/common/eal_common_options.c",
             "#define LCORE_OPT_MAP 3\n",
             "#define LCORE_OPT_MAP 3\n\n/* lcore option flags */\n#define LCORE_OPT_STRICT 0x10\n"),
            ("lib/eal/common/eal_common_options.c",
             C(r'''\t"v"  /* version */
'''),
             C(r'''\t"v"  /* version */
\t"V"  /* verbose */
''')),
            ("app/test-pmd/cmdline.c",
             "static cmdline_parse_ctx_t *main_ctx;\n",
             "static cmdline_parse_ctx_t *main_ctx;\n/* commands run in this session */\n"
             "static unsigned int cmd_count;\n"),
            ("lib/mempool/rte_mempool.h",
             "#define RTE_MEMPOOL_TRAILER_COOKIE  0xadd2e55badbadbadULL /**< Trailer cookie.*/\n",
             "#define RTE_MEMPOOL_TRAILER_COOKIE  0xadd2e55badbadbadULL /**< Trailer cookie.*/\n"
             "#define RTE_MEMPOOL_FREED_COOKIE    0xdeadf4eedeadf4eeULL /**< Freed object. */\n")])

# ---- the corpus ---------------------------------------------------------
# (file name, base "base" or "private", author, date, subject prefix,
#  subject, body, edits, options); edit kinds: (path, old, new),
#  ("ADD", path, text), ("DELETE", path), ("RENAME", old, new),
#  ("CHMOD", path), ("APPEND_BYTES", path, bytes)

SOB = "\n\nSigned-off-by: {author}"

CORPUS = [
    # -- exact: files the upstream commits did not touch
    ("01-ring-doc-memsize.patch", "base", "Ruifeng Wang <ruifeng.wang@arm.com>",
     "2024-03-04T10:00:00+08:00", "PATCH", "ring: fix memsize doc of elem ring",
     "The element size must be a multiple of 4 and the count a power of 2\n"
     "unless RING_F_EXACT_SZ is used: say so.",
     [("lib/ring/rte_ring_elem.h",
       C(r''' * @param count
 *   The number of elements in the ring (must be a power of 2).
 * @return
 *   - The memory size needed for the ring on success.
'''),
       C(r''' * @param count
 *   The number of elements in the ring (must be a power of 2, see
 *   RING_F_EXACT_SZ for other sizes).
 * @return
 *   - The memory size needed for the ring on success.
'''))], {}),
    ("02-eal-lcore-cpu-id.patch", "base", "David Marchand <david.marchand@redhat.com>",
     "2024-03-04T11:00:00+01:00", "PATCH", "eal: fix sign of lcore cpu id",
     "core_id is unsigned: convert it explicitly to the int returned.",
     [("lib/eal/common/eal_common_lcore.c",
       C(r'''\treturn lcore_config[lcore_id].core_id;
'''),
       C(r'''\treturn (int)lcore_config[lcore_id].core_id;
'''))], {}),
    ("03-testpmd-usage-cores.patch", "base", "Chengwen Feng <fengchengwen@huawei.com>",
     "2024-03-05T09:00:00+08:00", "PATCH v2", "app/testpmd: fix usage of number of cores",
     "The main lcore is not a forwarding core.\n\nv2: reword.",
     [("app/test-pmd/parameters.c",
       C(r'''\tprintf("  --nb-cores=N: set the number of forwarding cores "
\t       "(1 <= N <= %d).\n", nb_lcores);
'''),
       C(r'''\tprintf("  --nb-cores=N: set the number of forwarding cores "
\t       "(1 <= N <= %d, main lcore excluded).\n", nb_lcores);
'''))], {"from": "Patch Sender <sender@example.org>"}),
    ("04-testpmd-macfwd-prefetch.patch", "base", "Zoë Müller <zoe.mueller@example.de>",
     "2024-03-05T14:30:00+01:00", "PATCH", "app/testpmd: explain prefetch in MAC forwarding",
     "",
     [("app/test-pmd/macfwd.c",
       C(r'''\tfor (i = 0; i < nb_rx; i++) {
\t\tif (likely(i < nb_rx - 1))
'''),
       C(r'''\tfor (i = 0; i < nb_rx; i++) {
\t\t/* prefetch the next packet's header while this one is rewritten */
\t\tif (likely(i < nb_rx - 1))
'''))], {}),
    ("05-mempool-bucket-count.patch", "base", "Artem Andreev <artem.andreev@oktetlabs.ru>",
     "2024-03-06T10:00:00+03:00", "PATCH", "mempool/bucket: document the count walk",
     "",
     [("drivers/mempool/bucket/rte_mempool_bucket.c",
       C(r'''\trte_lcore_iterate(bucket_count_per_lcore, &bplc);
'''),
       C(r'''\t/* objects in the per-lcore buckets, then in underfilled ones */
\trte_lcore_iterate(bucket_count_per_lcore, &bplc);
'''))], {}),
    ("06-test-ring-stress-summary.patch", "base", "Konstantin Ananyev <konstantin.ananyev@huawei.com>",
     "2024-03-06T12:00:00+00:00", "PATCH", "test/ring: print failed stress cases count first",
     "",
     [("app/test/test_ring_stress.c",
       C(r'''\tprintf("Number of tests:\t%u\nSuccess:\t%u\nFailed:\t%u\n",
\t\tn, k, n - k);
'''),
       C(r'''\tprintf("Failed:\t%u\nNumber of tests:\t%u\nSuccess:\t%u\n",
\t\tn - k, n, k);
'''))], {}),
    ("07-test-ring-sizes-new-file.patch", "base", "Ruifeng Wang <ruifeng.wang@arm.com>",
     "2024-03-07T09:00:00+08:00", "PATCH", "test/ring: add ring size test",
     "Check the usable size of rings created with and without\nRING_F_EXACT_SZ.",
     [("ADD", "app/test/test_ring_sizes.c", C(r'''/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2024 Arm Limited
 */

#include <rte_ring.h>
#include <rte_lcore.h>

#include "test.h"

static int
test_ring_sizes(void)
{
\tstruct rte_ring *r;
\tint ret = 0;

\tr = rte_ring_create("sizes", 16, rte_socket_id(), 0);
\tif (r == NULL)
\t\treturn -1;
\tif (rte_ring_get_capacity(r) != 15)
\t\tret = -1;
\trte_ring_free(r);

\tr = rte_ring_create("sizes_exact", 16, rte_socket_id(), RING_F_EXACT_SZ);
\tif (r == NULL)
\t\treturn -1;
\tif (rte_ring_get_capacity(r) != 16)
\t\tret = -1;
\trte_ring_free(r);

\treturn ret;
}

REGISTER_TEST_COMMAND(ring_sizes_autotest, test_ring_sizes);
''')),
      ("app/test/meson.build",
       "        'test_ring.c',\n",
       "        'test_ring.c',\n        'test_ring_sizes.c',\n")], {}),
    ("08-devtools-remove-strlcpy-cocci.patch", "base", "Stephen Hemminger <stephen@networkplumber.org>",
     "2024-03-07T08:00:00-08:00", "PATCH", "devtools: remove strlcpy coccinelle script",
     "All users were converted long ago.",
     [("DELETE", "devtools/cocci/strlcpy.cocci")], {}),
    ("09-devtools-rename-cocci.patch", "base", "Stephen Hemminger <stephen@networkplumber.org>",
     "2024-03-08T08:00:00-08:00", "PATCH", "devtools: rename zero length array script",
     "Name it after what it produces.",
     [("RENAME", "devtools/cocci/zero_length_array.cocci", "devtools/cocci/flex_array.cocci"),
      ("devtools/cocci/flex_array.cocci",
       "// Replace zero-length array members with []\n",
       "// Replace zero-length array members with flexible array members []\n")], {}),
    ("10-test-hugepage-script-mode.patch", "base", "Bruce Richardson <bruce.richardson@intel.com>",
     "2024-03-08T10:00:00+00:00", "PATCH", "test: make hugepage check script executable",
     "", [("CHMOD", "app/test/has_hugepage.py")], {}),
    ("11-doc-vm-comms-image.patch", "base", "Maxime Coquelin <maxime.coquelin@redhat.com>",
     "2024-03-09T10:00:00+01:00", "PATCH", "doc: update VM to VM communication figure",
     "", [("APPEND_BYTES", "doc/guides/nics/img/vm_vm_comms.png", bytes(range(48)))], {}),
    ("12-eal-hugepage-init-doc.patch", "base", "Anatoly Burakov <anatoly.burakov@intel.com>",
     "2024-03-11T09:00:00+00:00", "PATCH 22.11", "eal/linux: fix legacy hugepage init comment",
     "The pages are sorted by physical address only in IOVA as PA mode.",
     [("lib/eal/linux/eal_memory.c",
       " *  4. sort all huge pages by physical address\n",
       " *  4. sort all huge pages by physical address (IOVA as PA only)\n")], {}),

    # -- offset: upstream inserted lines above the hunks
    ("13-net-null-copy-tx-len.patch", "base", "Tetsuya Mukawa <mukawa@igel.co.jp>",
     "2024-03-12T10:00:00+09:00", "PATCH", "net/null: use data length accessor in copy Tx",
     "",
     [("drivers/net/null/rte_eth_null.c",
       C(r'''\t\tsize_t len = RTE_MIN(h->internals->packet_size, m->data_len);
'''),
       C(r'''\t\tsize_t len = RTE_MIN(h->internals->packet_size,
\t\t\t\t     rte_pktmbuf_data_len(m));
'''))], {}),
    ("14-net-null-stats-reset.patch", "base", "Tetsuya Mukawa <mukawa@igel.co.jp>",
     "2024-03-12T11:00:00+09:00", "PATCH", "net/null: reset stats with atomics",
     "",
     [("drivers/net/null/rte_eth_null.c",
       C(r'''\tfor (i = 0; i < RTE_DIM(internal->rx_null_queues); i++)
\t\tinternal->rx_null_queues[i].rx_pkts.cnt = 0;
\tfor (i = 0; i < RTE_DIM(internal->tx_null_queues); i++)
\t\tinternal->tx_null_queues[i].tx_pkts.cnt = 0;
'''),
       C(r'''\tfor (i = 0; i < RTE_DIM(internal->rx_null_queues); i++)
\t\trte_atomic64_clear(&internal->rx_null_queues[i].rx_pkts);
\tfor (i = 0; i < RTE_DIM(internal->tx_null_queues); i++)
\t\trte_atomic64_clear(&internal->tx_null_queues[i].tx_pkts);
'''))], {}),
    ("15-mempool-cache-size-log.patch", "base", "Andrew Rybchenko <andrew.rybchenko@oktetlabs.ru>",
     "2024-03-13T10:00:00+03:00", "PATCH", "mempool: log invalid cache size",
     "",
     [("lib/mempool/rte_mempool.c",
       C(r'''\tif (size == 0 || size > RTE_MEMPOOL_CACHE_MAX_SIZE) {
\t\trte_errno = EINVAL;
'''),
       C(r'''\tif (size == 0 || size > RTE_MEMPOOL_CACHE_MAX_SIZE) {
\t\tRTE_LOG(ERR, MEMPOOL, "Invalid mempool cache size %u\n", size);
\t\trte_errno = EINVAL;
'''))], {}),
    ("16-ring-dump-null.patch", "base", "Honnappa Nagarahalli <honnappa.nagarahalli@arm.com>",
     "2024-03-13T08:00:00-06:00", "PATCH", "ring: allow dumping a NULL ring",
     "",
     [("lib/ring/rte_ring.c",
       C(r'''rte_ring_dump(FILE *f, const struct rte_ring *r)
{
\tfprintf(f, "ring <%s>@%p\n", r->name, r);
'''),
       C(r'''rte_ring_dump(FILE *f, const struct rte_ring *r)
{
\tif (r == NULL) {
\t\tfprintf(f, "ring <NULL>\n");
\t\treturn;
\t}
\tfprintf(f, "ring <%s>@%p\n", r->name, r);
'''))], {}),
    ("17-testpmd-flush-message.patch", "base", "Ferruh Yigit <ferruh.yigit@amd.com>",
     "2024-03-14T09:00:00+00:00", "PATCH", "app/testpmd: fix grammar of Rx flush message",
     "",
     [("app/test-pmd/testpmd.c",
       C(r'''\t\tprintf("multi-process not support for flushing fwd Rx queues, skip the below lines and return.\n");
'''),
       C(r'''\t\tprintf("multi-process does not support flushing fwd Rx queues, skipping.\n");
'''))], {}),
    ("18-test-mempool-basic-ex.patch", "base", "Morten Brørup <mb@smartsharesystems.com>",
     "2024-03-14T15:00:00+01:00", "PATCH", "test/mempool: fix messages of extended basic test",
     "Name the function with __func__ and the allocator that failed.",
     [("app/test/test_mempool.c",
       C(r'''\t\tprintf("test_mempool_basic_ex fail to rte_malloc\n");
'''),
       C(r'''\t\tprintf("%s: fail to rte_calloc\n", __func__);
''')),
      ("app/test/test_mempool.c",
       C(r'''\tfor (i = 0; i < MEMPOOL_SIZE; i ++) {
\t\tif (rte_mempool_get(mp, &obj[i]) < 0) {
\t\t\tprintf("test_mp_basic_ex fail to get object for [%u]\n",
'''),
       C(r'''\tfor (i = 0; i < MEMPOOL_SIZE; i++) {
\t\tif (rte_mempool_get(mp, &obj[i]) < 0) {
\t\t\tprintf("%s: fail to get object for [%u]\n", __func__,
'''))], {}),
    ("19-net-null-doc-and-rx.patch", "base", "Tetsuya Mukawa <mukawa@igel.co.jp>",
     "2024-03-15T10:00:00+09:00", "PATCH", "net/null: document and check no-rx option",
     "",
     [("drivers/net/null/rte_eth_null.c",
       C(r'''static uint16_t
eth_null_no_rx(void *q __rte_unused, struct rte_mbuf **bufs __rte_unused,
\t\tuint16_t nb_bufs __rte_unused)
{
'''),
       C(r'''/* Rx burst of the no-rx mode: nothing is ever received. */
static uint16_t
eth_null_no_rx(void *q __rte_unused, struct rte_mbuf **bufs __rte_unused,
\t\tuint16_t nb_bufs __rte_unused)
{
''')),
      ("doc/guides/nics/null.rst",
       "On Rx it returns requested number of empty packets (all zero). On Tx it just frees all sent packets.\n",
       "On Rx it returns requested number of empty packets (all zero), or none with ``no-rx``.\n"
       "On Tx it just frees all sent packets.\n")], {}),
    # -- offset, made on a private tree: their preimage blobs exist nowhere
    ("20-eal-iova-mode-log.patch", "private", "Jane Developer <jane@example.com>",
     "2024-03-18T10:00:00+01:00", "PATCH", "eal: log invalid IOVA mode",
     "",
     [("lib/eal/common/eal_common_options.c",
       C(r'''\telse if (!strcmp("va", name))
\t\tmode = RTE_IOVA_VA;
\telse
\t\treturn -1;
'''),
       C(r'''\telse if (!strcmp("va", name))
\t\tmode = RTE_IOVA_VA;
\telse {
\t\tRTE_LOG(ERR, EAL, "invalid IOVA mode '%s'\n", name);
\t\treturn -1;
\t}
'''))], {}),
    ("21-testpmd-burst-retry-print.patch", "private", "Jane Developer <jane@example.com>",
     "2024-03-18T11:00:00+01:00", "PATCH", "app/testpmd: print burst tx retry settings",
     "",
     [("app/test-pmd/cmdline.c",
       C(r'''\t\tif (!strcmp(res->retry, "retry"))
\t\t\tburst_tx_retry_num = res->retry_num;
\t}

}
'''),
       C(r'''\t\tif (!strcmp(res->retry, "retry"))
\t\t\tburst_tx_retry_num = res->retry_num;
\t\tprintf("burst tx delay %u us, %u retries\n",
\t\t       burst_tx_delay_time, burst_tx_retry_num);
\t}
}
'''))], {}),
    ("22-mempool-avail-count-doc.patch", "private", "Jane Developer <jane@example.com>",
     "2024-03-18T12:00:00+01:00", "PATCH", "mempool: clarify avail count doc",
     "",
     [("lib/mempool/rte_mempool.h",
       C(r''' * When cache is enabled, this function has to browse the length of
 * all lcores, so it should not be used in a data path, but only for
 * debug purposes. User-owned mempool caches are not accounted for.
 *
 * @param mp
 *   A pointer to the mempool structure.
 * @return
 *   The number of entries in the mempool.
'''),
       C(r''' * When cache is enabled, this function has to browse the length of
 * all lcores, so it should not be used in a data path, but only for
 * debug purposes. User-owned mempool caches are not accounted for.
 *
 * @param mp
 *   A pointer to the mempool structure.
 * @return
 *   The number of entries in the mempool and its per-lcore caches.
'''))], {}),

    # -- 3-way: upstream changed a line of the hunk's context
    ("23-net-ring-stats-atomic-read.patch", "base", "Bruce Richardson <bruce.richardson@intel.com>",
     "2024-03-19T09:00:00+00:00", "PATCH", "net/ring: read stats atomically",
     "",
     [("drivers/net/ring/rte_eth_ring.c",
       C(r'''\t\tstats->q_ipackets[i] = internal->rx_ring_queues[i].rx_pkts.cnt;
'''),
       C(r'''\t\tstats->q_ipackets[i] =
\t\t\trte_atomic64_read(&internal->rx_ring_queues[i].rx_pkts);
''')),
      ("drivers/net/ring/rte_eth_ring.c",
       C(r'''\t\tstats->q_opackets[i] = internal->tx_ring_queues[i].tx_pkts.cnt;
'''),
       C(r'''\t\tstats->q_opackets[i] =
\t\t\trte_atomic64_read(&internal->tx_ring_queues[i].tx_pkts);
'''))], {}),
    ("24-mempool-ops-name-log.patch", "base", "Olivier Matz <olivier.matz@6wind.com>",
     "2024-03-19T10:00:00+01:00", "PATCH", "mempool: log too long ops name as error",
     "",
     [("lib/mempool/rte_mempool_ops.c",
       C(r'''\t\tRTE_LOG(DEBUG, MEMPOOL, "%s(): mempool_ops <%s>: name too long\n",
'''),
       C(r'''\t\tRTE_LOG(ERR, MEMPOOL, "%s(): mempool_ops <%s>: name too long\n",
'''))], {}),
    ("25-test-ring-exact-size-msg.patch", "base", "Konstantin Ananyev <konstantin.ananyev@huawei.com>",
     "2024-03-20T09:00:00+00:00", "PATCH", "test/ring: report exact size test failure",
     "",
     [("app/test/test_ring.c",
       C(r'''\tif (test_ring_with_exact_size() < 0)
\t\tgoto test_fail;
'''),
       C(r'''\tif (test_ring_with_exact_size() < 0) {
\t\tprintf("exact size ring test failed\n");
\t\tgoto test_fail;
\t}
'''))], {}),
    ("26-eal-memzone-free-name.patch", "base", "Anatoly Burakov <anatoly.burakov@intel.com>",
     "2024-03-20T10:00:00+00:00", "PATCH", "eal: name memzone in free error",
     "",
     [("lib/eal/common/eal_common_memzone.c",
       C(r'''\t\tRTE_LOG(ERR, EAL, "Memzone is not allocated\n");
'''),
       C(r'''\t\tRTE_LOG(ERR, EAL, "Memzone %s is not allocated\n", name);
'''))], {}),
    ("27-mempool-ring-create-log.patch", "base", "Olivier Matz <olivier.matz@6wind.com>",
     "2024-03-21T10:00:00+01:00", "PATCH", "mempool/ring: log ring creation failure",
     "",
     [("drivers/mempool/ring/rte_mempool_ring.c",
       C(r'''\t\tmp->socket_id, rg_flags);
\tif (r == NULL)
\t\treturn -rte_errno;
'''),
       C(r'''\t\tmp->socket_id, rg_flags);
\tif (r == NULL) {
\t\tRTE_LOG(ERR, MEMPOOL, "Cannot create ring %s\n", rg_name);
\t\treturn -rte_errno;
\t}
'''))], {}),
    ("28-testpmd-burst-message.patch", "base", "Aman Singh <aman.deep.singh@intel.com>",
     "2024-03-21T11:00:00+05:30", "PATCH", "app/testpmd: fix double space in burst message",
     "",
     [("app/test-pmd/config.c",
       C(r'''\t\t\t"nb pkt per burst: %u > %u (maximum packet per burst)  ignored\n",
'''),
       C(r'''\t\t\t"nb pkt per burst: %u > %u (maximum packet per burst) ignored\n",
'''))], {}),
    ("29-mempool-stack-size.patch", "base", "Gage Eads <gage.eads@intel.com>",
     "2024-03-22T09:00:00-06:00", "PATCH", "mempool/stack: size the stack for all objects",
     "The stack must hold every object of the pool, cached ones included.",
     [("drivers/mempool/stack/rte_mempool_stack.c",
       C(r'''\ts = rte_stack_create(name, mp->size, mp->socket_id, flags);
'''),
       C(r'''\ts = rte_stack_create(name, rte_align32pow2(mp->size),
\t\t\t     mp->socket_id, flags);
'''))], {}),
    ("30-log-dump-type-count.patch", "base", "Stephen Hemminger <stephen@networkplumber.org>",
     "2024-03-22T08:00:00-08:00", "PATCH", "log: show number of log types in dump",
     "",
     [("lib/eal/common/eal_common_log.c",
       C(r'''\tfprintf(f, "global log level is %s\n",
\t\teal_log_level2str(rte_log_get_global_level()));
'''),
       C(r'''\tfprintf(f, "global log level is %s\n",
\t\teal_log_level2str(rte_log_get_global_level()));
\tfprintf(f, "%zu log types\n", rte_logs.dynamic_types_len);
''')),
      ("app/test/test_logs.c",
       C(r'''\tlogtype2 = rte_log_register("logtype2");
\tif (logtype2 < 0) {
\t\tprintf("Cannot register logtype2\n");
\t\treturn -1;
\t}
'''),
       C(r'''\tlogtype2 = rte_log_register("logtype2");
\tif (logtype2 < 0) {
\t\tprintf("Cannot register logtype2\n");
\t\treturn -1;
\t}
\trte_log_dump(stdout);
'''))], {}),

    # -- conflicts: upstream changed the very lines
    ("31-test-mempool-perf-time.patch", "base", "Morten Brørup <mb@smartsharesystems.com>",
     "2024-03-25T10:00:00+01:00", "PATCH", "test/mempool: run each perf case for 2 seconds",
     "", [("app/test/test_mempool_perf.c", "#define TIME_S 5\n", "#define TIME_S 2\n")], {}),
    ("32-test-ring-perf-bulk-sizes.patch", "base", "Honnappa Nagarahalli <honnappa.nagarahalli@arm.com>",
     "2024-03-25T09:00:00-06:00", "PATCH", "test/ring: measure bursts of 64",
     "",
     [("app/test/test_ring_perf.c",
       "static const volatile unsigned bulk_sizes[] = { 8, 32 };\n",
       "static const volatile unsigned bulk_sizes[] = { 8, 32, 64 };\n")], {}),
    ("33-net-ring-info-and-reset.patch", "base", "Bruce Richardson <bruce.richardson@intel.com>",
     "2024-03-26T09:00:00+00:00", "PATCH", "net/ring: report MTU limit and reset stats with set",
     "",
     [("drivers/net/ring/rte_eth_ring.c",
       C(r'''\tdev_info->max_rx_queues = (uint16_t)internals->max_rx_queues;
'''),
       C(r'''\tdev_info->max_rx_queues = (uint16_t)internals->max_rx_queues;
\tdev_info->max_mtu = RTE_ETHER_MTU;
''')),
      ("drivers/net/ring/rte_eth_ring.c",
       C(r'''\t\tinternal->rx_ring_queues[i].rx_pkts.cnt = 0;
'''),
       C(r'''\t\trte_atomic64_set(&internal->rx_ring_queues[i].rx_pkts, 0);
'''))], {}),
    ("34-ring-sync-st-doc.patch", "base", "Konstantin Ananyev <konstantin.ananyev@huawei.com>",
     "2024-03-26T10:00:00+00:00", "PATCH", "ring: document single producer/consumer mode",
     "",
     [("lib/ring/rte_ring_core.h",
       "\tRTE_RING_SYNC_ST,     /**< single thread only */\n",
       "\tRTE_RING_SYNC_ST,     /**< single producer or consumer only */\n")], {}),
    # -- a conflict on a private tree: no blobs to merge with
    ("35-eal-verbose-option-doc.patch", "private", "Jane Developer <jane@example.com>",
     "2024-03-27T10:00:00+01:00", "PATCH", "eal: describe verbose option",
     "",
     [("lib/eal/common/eal_common_options.c",
       C(r'''\t"V"  /* verbose */
'''),
       C(r'''\t"V"  /* verbose, may be repeated */
'''))], {}),
    # -- already applied: upstream has the very change (a fix backported
    #    since); git am -3 says "No changes -- Patch already applied."
    ("36-mempool-flush-threshold-already.patch", "base",
     "Andrew Rybchenko <andrew.rybchenko@oktetlabs.ru>", "2024-03-28T10:00:00+03:00",
     "PATCH 22.11", "mempool: explain the cache flush threshold",
     "The multiplier of the cache flush threshold is not obvious: say why\n"
     "it is 1.5.",
     UPSTREAM[1][4], {}),
    # -- a file upstream removed since: the 3-way merge has no file to
    #    merge into (modify/delete), and none of HEAD's other files is
    #    taken for it
    ("37-usertools-telemetry-client-close.patch", "base",
     "Ciara Power <ciara.power@intel.com>", "2024-03-28T11:00:00+00:00", "PATCH",
     "usertools: close the client socket once",
     "",
     [("usertools/dpdk-telemetry-client.py",
       "        self.socket.client_fd.close()\n",
       "        if self.socket.client_fd:\n            self.socket.client_fd.close()\n"
       "            self.socket.client_fd = None\n")], {}),
]


def git(repo, *args, env=None, out=False, data=None):
    e = dict(os.environ)
    e.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "TZ": "UTC",
              "LC_ALL": "C"})
    if env:
        e.update(env)
    r = subprocess.run(["git", "-C", repo] + list(args), env=e, check=True, input=data,
                       stdout=subprocess.PIPE if out else None)
    return r.stdout.decode() if out else None


def ident_env(author, date):
    name, email = author[:-1].split(" <")
    return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": date,
            "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email,
            "GIT_COMMITTER_DATE": date}


def apply_edits(repo, edits):
    for e in edits:
        kind = e[0]
        if kind == "ADD":
            path = os.path.join(repo, e[1])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(e[2])
            git(repo, "add", "--", e[1])
        elif kind == "DELETE":
            git(repo, "rm", "-q", "--", e[1])
        elif kind == "RENAME":
            git(repo, "mv", "--", e[1], e[2])
        elif kind == "CHMOD":
            git(repo, "update-index", "--chmod=+x", "--", e[1])
            os.chmod(os.path.join(repo, e[1]), 0o755)
        elif kind == "APPEND_BYTES":
            with open(os.path.join(repo, e[1]), "ab") as f:
                f.write(e[2])
            git(repo, "add", "--", e[1])
        else:
            path, old, new = e
            full = os.path.join(repo, path)
            with open(full, encoding="utf-8") as f:
                text = f.read()
            n = text.count(old)
            if n != 1:
                sys.exit(f"gen-corpus: {path}: the text to replace occurs {n} times:\n{old}")
            with open(full, "w", encoding="utf-8") as f:
                f.write(text.replace(old, new))
            git(repo, "add", "--", path)


def commit(repo, author, date, subject, body, edits):
    apply_edits(repo, edits)
    msg = subject + ("\n\n" + body if body else "") + SOB.format(author=author) + "\n"
    git(repo, "commit", "-q", "--no-verify", "-F", "-", env=ident_env(author, date),
        data=msg.encode())
    return git(repo, "rev-parse", "HEAD", out=True).strip()


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else subprocess.run(
        [os.path.join(TOP, "scripts", "dpdk-tree.sh")], check=True,
        stdout=subprocess.PIPE).stdout.decode().strip()
    tmp = tempfile.mkdtemp(prefix="pg-gen-corpus.")
    try:
        repo = os.path.join(tmp, "dpdk")
        subprocess.run(["git", "clone", "-q", src, repo], check=True)
        git(repo, "checkout", "-q", "-b", "upstream", BASE)
        for author, date, subject, body, edits in UPSTREAM:
            commit(repo, author, date, subject, body, edits)
        for d in ("upstream", "corpus"):
            shutil.rmtree(os.path.join(HERE, d), ignore_errors=True)
            os.makedirs(os.path.join(HERE, d))
        git(repo, "format-patch", "-q", "-o", os.path.join(HERE, "upstream"), BASE + "..upstream")
        git(repo, "checkout", "-q", "-b", "private", BASE)
        private = commit(repo, *PRIVATE)
        for name, base, author, date, prefix, subject, body, edits, opts in CORPUS:
            start = BASE if base == "base" else private
            git(repo, "checkout", "-q", "--detach", start)
            commit(repo, author, date, subject, body, edits)
            args = ["format-patch", "-1", "--stdout", "--subject-prefix=" + prefix,
                    "--base=" + start]
            if "from" in opts:
                args.append("--from=" + opts["from"])
            patch = git(repo, *args, out=True)
            with open(os.path.join(HERE, "corpus", name), "w", encoding="utf-8") as f:
                f.write(patch)
        print(f"gen-corpus: {len(UPSTREAM)} upstream commits, {len(CORPUS)} patches")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
