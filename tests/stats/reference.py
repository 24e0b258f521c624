#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Reference values for controller/stats.c, computed independently.

    /usr/bin/python3 tests/stats/reference.py      (Debian: python3-scipy;
                                                    r-base-core optional)

writes describe.txt, mannwhitney.txt, hodges_lehmann.txt and wilcoxon.txt
next to this script; tests/unit/test_stats.c reads them.  Run it again after changing a
case here, and commit its output with it.  Nothing of perfgate is used: the
numbers come from numpy, scipy.stats and, when Rscript is installed, R's
wilcox.test (which this script then cross-checks against).

What comes from where:
  median                 numpy
  mean, stddev           Python's statistics (exact rational arithmetic, so
                         even 1e300 values do not overflow; stdev is the
                         sample standard deviation, divisor n - 1)
  MAD                    scipy.stats.median_abs_deviation(scale=1.0)
  CV, robust CV          from those: sd/|mean|, MAD*1.4826/|median|, with
                         stats.h's conventions (0 when the spread is 0, NaN
                         when n < 2 or the centre is 0 and the spread is not)
  Mann-Whitney U, p      scipy.stats.mannwhitneyu(two-sided, continuity),
                         method "exact" when there are no ties and
                         nx + ny <= 60 (stats.h's rule), else "asymptotic";
                         exact p-values are also checked here against a
                         brute-force enumeration of every rank assignment
                         (small sizes) and the textbook recursion
  smallest possible p    scipy on two completely separated samples
  Hodges-Lehmann shift   numpy.median of numpy.subtract.outer(x, y)
  its interval           exact: the rank k from the null distribution of U
                         (the recursion above), R's rule (qwilcox with its
                         10*DBL_EPSILON allowance; k = 1 when it is 0);
                         R's wilcox.test(conf.int=TRUE, exact=TRUE) must
                         agree when R is present.  Normal: k = ceil(mn/2 -
                         0.5 - z*sigma) with scipy.stats.norm.ppf and the
                         tie-corrected sigma (R uses a different,
                         root-finding method there, so it is not compared).
  Wilcoxon signed-rank   scipy.stats.wilcoxon(zero_method="wilcox",
                         correction=True, two-sided), method "exact" when
                         there are no zeros, no ties among |d| and at most
                         50 nonzero d (stats.h's rule; scipy 1.10 would
                         truncate tied ranks in "exact"), else "approx";
                         W+ by scipy.stats.rankdata (checked against
                         scipy's min(W+, W-)); z is scipy's zstatistic with
                         the sign of W+ - n(n+1)/4 (R's convention); exact
                         p-values are also checked against a brute-force
                         enumeration of every sign assignment (small n) and
                         the recursion over the largest rank; R's
                         wilcox.test must agree on W+ and p when present.
                         No d (or only zeros): everything NaN (scipy gives
                         NaN for no d and raises for only zeros; R: NA).
  its smallest p         scipy on 1..n (all differences positive)
  Walsh median           the median of (d_i + d_j)/2 over i <= j in exact
                         rationals (Python's fractions), each average
                         rounded to a double as stats.c stores it; R's
                         wilcox.test(conf.int=TRUE, exact=TRUE) estimate
                         must agree on the exact cases when present

Line formats (values are Python repr(), so they read back exactly; "nan"
means undefined):
  describe.txt        NAME N X1..XN : median mad mean stddev cv cv_robust
  mannwhitney.txt     NAME NX X.. NY Y.. : u p exact|asymptotic
                      minp NX NY : p
  hodges_lehmann.txt  NAME LEVEL NX X.. NY Y.. : shift lo hi level_achieved
                      exact|asymptotic
  wilcoxon.txt        NAME N D.. : w_plus n p z walsh_median exact|approx|none
                      minp N : p
"""
import functools
import itertools
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import warnings
from fractions import Fraction

import numpy as np
import scipy
from scipy import stats

HERE = os.path.dirname(os.path.abspath(__file__))
EXACT_MAX = 60          # STATS_MW_EXACT_MAX
WSR_EXACT_MAX = 50      # STATS_WSR_EXACT_MAX
MAD_NORMAL = 1.4826     # STATS_MAD_NORMAL
DBL_EPSILON = sys.float_info.epsilon


def fmt(v):
    v = float(v)
    return "nan" if math.isnan(v) else repr(v)


def values(xs):
    return " ".join(fmt(v) for v in xs)


# ---- sample sets ----

rng = np.random.default_rng(20240611)

# Real mempool_perf rates (seed 000: constant_n=false/true at 1, 2 and 12
# cores) and testpmd-like cycles per packet.
MEMPOOL = [152620236.0, 144716595.0, 156460646.0, 142173798.0, 150118273.0]
CYCLES = [35.2, 35.9, 34.8, 36.1, 35.5, 35.2]


def draw(n, centre, cv, digits=None):
    v = rng.normal(centre, centre * cv, n)
    return [float(round(x, digits)) if digits is not None else float(x) for x in v]


DESCRIBE = [
    ("one", [7.5]),
    ("two", [3.0, 5.0]),
    ("three", [10.0, 1.0, 4.0]),
    ("even_ties", [2.0, 2.0, 3.0, 9.0]),
    ("all_equal", [42.0] * 5),
    ("all_zero", [0.0, 0.0, 0.0]),
    ("zero_centre", [-1.0, 0.0, 1.0]),
    ("negative", [-5.0, -7.0, -6.5, -5.5, -80.0]),
    ("outlier", [100.0, 101.0, 99.0, 100.5, 60.0]),
    ("mempool", MEMPOOL),
    ("cycles", CYCLES),
    ("huge", [1e300, 1.5e300, 1.2e300]),
    ("tiny", [1e-300, 3e-300, 2e-300, 2.5e-300]),
    ("normal25", draw(25, 1e9, 0.03)),
    ("normal100", draw(100, 14.88e6, 0.01)),
]


def describe(x):
    x = np.asarray(x, dtype=float)
    n = len(x)
    med = np.median(x)
    mad = stats.median_abs_deviation(x, scale=1.0)
    mean = statistics.mean(x.tolist()) if n else math.nan
    if n < 2:
        return med, mad, mean, math.nan, math.nan, math.nan
    sd = statistics.stdev(x.tolist())

    def ratio(spread, centre):
        if spread == 0:
            return 0.0
        if centre == 0:
            return math.nan
        return spread / abs(centre)
    return med, mad, mean, sd, ratio(sd, mean), ratio(mad * MAD_NORMAL, med)


# ---- the exact null distribution of U, independently of stats.c ----

@functools.lru_cache(maxsize=None)
def count_u(m, n, u):
    """Assignments of ranks with U = u (Mann & Whitney 1947 recursion)."""
    if u < 0 or u > m * n:
        return 0
    if m == 0 or n == 0:
        return 1 if u == 0 else 0
    # the largest value is an x (beats all n y's) or a y
    return count_u(m - 1, n, u - n) + count_u(m, n - 1, u)


def brute_counts(m, n):
    c = [0] * (m * n + 1)
    for xpos in itertools.combinations(range(m + n), m):
        # U = pairs (x, y) with x above y: for each x, the y's below it
        u = sum(p - i for i, p in enumerate(xpos))
        c[u] += 1
    return c


def has_ties(x, y):
    xy = list(x) + list(y)
    return len(set(xy)) != len(xy)


def use_exact(x, y):
    return not has_ties(x, y) and len(x) + len(y) <= EXACT_MAX


def mann_whitney(x, y):
    method = "exact" if use_exact(x, y) else "asymptotic"
    r = stats.mannwhitneyu(x, y, alternative="two-sided", use_continuity=True, method=method)
    if method == "exact":
        m, n = len(x), len(y)
        total = math.comb(m + n, m)
        big = max(r.statistic, m * n - r.statistic)
        tail = sum(count_u(m, n, u) for u in range(int(big), m * n + 1))
        mine = min(1.0, 2 * tail / total)
        assert math.isclose(mine, r.pvalue, rel_tol=1e-12), (x, y, mine, r.pvalue)
    return r.statistic, r.pvalue, method


def tie_term(xy):
    _, t = np.unique(xy, return_counts=True)
    return float(np.sum(t.astype(float) ** 3 - t))


def hodges_lehmann(x, y, level):
    m, n = len(x), len(y)
    mn = m * n
    d = np.sort(np.subtract.outer(np.asarray(x, float), np.asarray(y, float)).ravel())
    shift = np.median(d)
    alpha = 1 - level
    if use_exact(x, y):
        total = math.comb(m + n, m)
        cum, k = 0, 0
        while k < mn:
            cum += count_u(m, n, k)
            if cum / total >= alpha / 2 - 10 * DBL_EPSILON:
                break
            k += 1
        if k == 0:
            k, left = 1, count_u(m, n, 0) / total
        else:
            left = (cum - count_u(m, n, k)) / total
        achieved = 1 - 2 * left
        method = "exact"
    else:
        N = m + n
        s2 = mn / 12 * ((N + 1) - tie_term(list(x) + list(y)) / (N * (N - 1)))
        s = math.sqrt(s2) if s2 > 0 else 0.0
        z = stats.norm.ppf(1 - alpha / 2)
        k = math.ceil(mn / 2 - 0.5 - z * s)
        k = max(1, min(k, math.ceil(mn / 2)))
        achieved = 1.0 if s == 0 else 1 - 2 * stats.norm.cdf((k - 1 + 0.5 - mn / 2) / s)
        achieved = max(achieved, 0.0)
        method = "asymptotic"
    return shift, d[k - 1], d[mn - k], achieved, method


def r_wilcox(cases):
    """R's exact intervals for the exact cases, or None without R."""
    if not shutil.which("Rscript"):
        return None
    lines = []
    for name, level, x, y in cases:
        lines.append("x <- c(%s); y <- c(%s)" % (",".join(repr(v) for v in x),
                                                 ",".join(repr(v) for v in y)))
        lines.append("r <- suppressWarnings(wilcox.test(x, y, conf.int=TRUE, "
                     "conf.level=%r, exact=TRUE))" % level)
        lines.append('cat(sprintf("%.17g %.17g %.17g\\n", r$estimate, '
                     "r$conf.int[1], r$conf.int[2]))")
    out = subprocess.run(["Rscript", "-e", "\n".join(lines)], check=True,
                         capture_output=True, text=True).stdout.split("\n")
    return [tuple(float(v) for v in line.split()) for line in out if line.strip()]


# ---- the Wilcoxon signed-rank test, independently of stats.c ----

@functools.lru_cache(maxsize=None)
def count_w(n, w):
    """Sign assignments of ranks 1..n with W+ = w: rank n is + or -."""
    if w < 0 or w > n * (n + 1) // 2:
        return 0
    if n == 0:
        return 1 if w == 0 else 0
    return count_w(n - 1, w - n) + count_w(n - 1, w)


def brute_w_counts(n):
    c = [0] * (n * (n + 1) // 2 + 1)
    for signs in itertools.product((0, 1), repeat=n):
        c[sum(r + 1 for r in range(n) if signs[r])] += 1
    return c


def wilcoxon(d):
    """W+, n, p, z, method as stats_wilcoxon_signed_rank() defines them."""
    nz = [v for v in d if v != 0]
    n = len(nz)
    if n == 0:
        return math.nan, 0, math.nan, math.nan, "none"
    a = np.asarray(nz, dtype=float)
    ranks = stats.rankdata(np.abs(a))
    w_plus = float(np.sum(ranks[a > 0]))
    total = n * (n + 1) / 2
    ties = len(set(np.abs(a).tolist())) != n
    method = "exact" if n == len(d) and not ties and n <= WSR_EXACT_MAX else "approx"
    with warnings.catch_warnings():
        # "Sample size too small for normal approximation": we know
        warnings.simplefilter("ignore")
        r = stats.wilcoxon(d, zero_method="wilcox", correction=True,
                           alternative="two-sided", method=method)
    assert r.statistic == min(w_plus, total - w_plus), (d, r, w_plus)
    if method == "exact":
        z = math.nan
        tail = sum(count_w(n, w) for w in range(int(min(w_plus, total - w_plus)) + 1))
        mine = min(1.0, 2 * tail / 2 ** n)
        assert math.isclose(mine, r.pvalue, rel_tol=1e-14), (d, mine, r.pvalue)
    else:
        z = math.copysign(abs(r.zstatistic), w_plus - total / 2)
        if w_plus == total / 2:
            z = 0.0
    return w_plus, n, r.pvalue, z, method


def walsh_median(d):
    """In exact rationals, each average rounded once to a double (numpy's
    (a + b)/2 would overflow near DBL_MAX), then the middle one or the
    rounded mean of the middle two."""
    if len(d) == 0:
        return math.nan
    w = sorted(float((Fraction(a) + Fraction(b)) / 2)
               for i, a in enumerate(d) for b in d[i:])
    m = len(w)
    if m % 2:
        return w[m // 2] + 0.0
    return float((Fraction(w[m // 2 - 1]) + Fraction(w[m // 2])) / 2) + 0.0


def log_ratios(n, ratio, noise):
    """log(patched/base) of n pairs: a base rate and a patched one at
    ratio times it, each pair's ratio off by noise (a CV)."""
    base = np.asarray(draw(n, 14.88e6, 0.02))
    patched = base * ratio * rng.normal(1.0, noise, n)
    return [float(v) for v in np.log(patched / base)]


def r_wilcoxon_one(cases):
    """R's V, p and, for exact cases, the (pseudo)median, or None."""
    if not shutil.which("Rscript"):
        return None
    lines = []
    for d, method in cases:
        lines.append("d <- c(%s)" % ",".join(repr(v) for v in d))
        ex = "TRUE" if method == "exact" else "FALSE"
        lines.append("r <- suppressWarnings(wilcox.test(d, exact=%s, correct=TRUE, "
                     "conf.int=%s))" % (ex, ex))
        est = "r$estimate" if method == "exact" else "NaN"
        lines.append('cat(sprintf("%%.17g %%.17g %%.17g\\n", r$statistic, r$p.value, %s))'
                     % est)
    # a file, not -e: Rscript cuts -e expressions at 10000 bytes
    with tempfile.NamedTemporaryFile("w", suffix=".R") as script:
        script.write("\n".join(lines) + "\n")
        script.flush()
        out = subprocess.run(["Rscript", script.name], check=True,
                             capture_output=True, text=True).stdout.split("\n")
    return [tuple(float(v) for v in line.split()) for line in out if line.strip()]


def main():
    # the recursion against brute force, before anything relies on it
    for m in range(1, 7):
        for n in range(1, 7):
            bc = brute_counts(m, n)
            assert bc == [count_u(m, n, u) for u in range(m * n + 1)], (m, n)

    with open(os.path.join(HERE, "describe.txt"), "w") as f:
        f.write("# tests/stats/reference.py: NAME N X.. : median mad mean stddev cv cv_robust\n")
        for name, x in DESCRIBE:
            f.write("%s %d %s : %s\n" % (name, len(x), values(x), values(describe(x))))

    mw = [
        ("one_one", [2.0], [1.0]),
        ("one_five", [10.0], [1.0, 2.0, 3.0, 4.0, 5.0]),
        ("three_sep", [4.0, 5.0, 6.0], [1.0, 2.0, 3.0]),
        ("three_mixed", [1.0, 5.0, 6.0], [2.0, 3.0, 4.0]),
        ("four_sep", [10.0, 11.0, 12.0, 13.0], [1.0, 2.0, 3.0, 4.0]),
        ("five_sep", [6.0, 7.0, 8.0, 9.0, 10.0], [1.0, 2.0, 3.0, 4.0, 5.0]),
        ("five_rates", MEMPOOL, [v * 0.93 for v in MEMPOOL]),
        ("five_rand", draw(5, 100, 0.02), draw(5, 100, 0.02)),
        ("four_seven", draw(4, 50, 0.05), draw(7, 52, 0.05)),
        ("eight", draw(8, 1e6, 0.02), draw(8, 0.97e6, 0.02)),
        ("twelve_ten", draw(12, 1e6, 0.02), draw(10, 1.01e6, 0.02)),
        ("twenty", draw(20, 3e8, 0.03), draw(20, 2.9e8, 0.03)),
        ("thirty_exact", draw(30, 3e8, 0.03), draw(30, 2.95e8, 0.03)),
        ("thirty_31", draw(30, 3e8, 0.03), draw(31, 2.95e8, 0.03)),
        ("forty_approx", draw(40, 14.8e6, 0.01), draw(40, 14.7e6, 0.01)),
        ("ties_small", [1.0, 2.0, 2.0, 3.0], [2.0, 3.0, 3.0, 4.0]),
        ("ties_three", [35.2, 35.9, 35.2], [35.9, 36.4, 36.4]),
        ("ties_cycles", draw(10, 35.0, 0.01, 1), draw(10, 35.6, 0.01, 1)),
        ("ties_across", [5.0, 5.0, 5.0], [5.0, 5.0, 6.0]),
        ("all_equal", [3.0, 3.0, 3.0], [3.0, 3.0, 3.0]),
        ("ties_big", draw(50, 100, 0.02, 0), draw(60, 101, 0.02, 0)),
    ]
    with open(os.path.join(HERE, "mannwhitney.txt"), "w") as f:
        f.write("# tests/stats/reference.py: NAME NX X.. NY Y.. : u p method; "
                "minp NX NY : p\n")
        for name, x, y in mw:
            u, p, method = mann_whitney(x, y)
            f.write("%s %d %s %d %s : %s %s %s\n" % (name, len(x), values(x), len(y),
                                                      values(y), fmt(u), fmt(p), method))
        for nx, ny in [(1, 1), (2, 2), (3, 3), (3, 4), (4, 4), (5, 5), (6, 6), (10, 10),
                       (3, 57), (30, 30), (30, 31), (50, 50)]:
            x = [1000.0 + i for i in range(nx)]
            y = [float(i) for i in range(ny)]
            _, p, _ = mann_whitney(x, y)
            f.write("minp %d %d : %s\n" % (nx, ny, fmt(p)))

    hl = [
        ("one_one", 0.95, [2.0], [1.0]),
        ("three", 0.95, [4.0, 5.5, 6.0], [1.0, 2.0, 3.5]),
        ("three_90", 0.90, [4.0, 5.5, 6.0], [1.0, 2.0, 3.5]),
        ("four", 0.95, [10.0, 11.5, 12.0, 13.25], [1.0, 2.5, 3.0, 4.75]),
        ("five_rates", 0.95, MEMPOOL, [v * 0.93 + 1 for v in MEMPOOL]),
        ("five_rand", 0.95, draw(5, 100, 0.02), draw(5, 100, 0.02)),
        ("five_99", 0.99, draw(5, 100, 0.02), draw(5, 95, 0.02)),
        ("six_seven", 0.80, draw(6, 1e6, 0.02), draw(7, 0.97e6, 0.02)),
        ("ten", 0.95, draw(10, 1e6, 0.02), draw(10, 0.97e6, 0.02)),
        ("twenty", 0.95, draw(20, 3e8, 0.03), draw(20, 2.9e8, 0.03)),
        ("thirty", 0.95, draw(30, 3e8, 0.03), draw(30, 2.95e8, 0.03)),
        ("forty", 0.95, draw(40, 14.8e6, 0.01), draw(40, 14.7e6, 0.01)),
        ("big", 0.95, draw(300, 1e9, 0.02), draw(250, 0.99e9, 0.02)),
        ("ties_cycles", 0.95, draw(10, 35.0, 0.01, 1), draw(10, 35.6, 0.01, 1)),
        ("ties_small", 0.95, [1.0, 2.0, 2.0, 3.0], [2.0, 3.0, 3.0, 4.0]),
        ("all_equal", 0.95, [3.0, 3.0, 3.0], [3.0, 3.0, 3.0]),
        ("negative", 0.95, [-5.0, -4.0, -3.0], [-10.0, -9.0, -8.5, -7.0]),
        # (1 - 0.7)/2 is 0.15000000000000002 in doubles and P(U <= 2) is
        # 3/20: only qwilcox's allowance makes k = 2
        ("one_nineteen", 0.7, [9.5], [float(i) for i in range(19)]),
    ]
    rows = []
    with open(os.path.join(HERE, "hodges_lehmann.txt"), "w") as f:
        f.write("# tests/stats/reference.py: NAME LEVEL NX X.. NY Y.. : shift lo hi "
                "level_achieved method\n")
        for name, level, x, y in hl:
            shift, lo, hi, achieved, method = hodges_lehmann(x, y, level)
            rows.append((name, level, x, y, shift, lo, hi, method))
            f.write("%s %s %d %s %d %s : %s %s %s %s %s\n" % (
                name, fmt(level), len(x), values(x), len(y), values(y),
                fmt(shift), fmt(lo), fmt(hi), fmt(achieved), method))

    exact = [r for r in rows if r[7] == "exact"]
    rvals = r_wilcox([(r[0], r[1], r[2], r[3]) for r in exact])
    if rvals is None:
        rnote = "R not installed: intervals not cross-checked"
    else:
        for row, (est, lo, hi) in zip(exact, rvals):
            for mine, theirs in ((row[4], est), (row[5], lo), (row[6], hi)):
                assert math.isclose(mine, theirs, rel_tol=1e-12, abs_tol=1e-12), (row, est, lo, hi)
        rnote = "R's wilcox.test agrees on %d exact intervals" % len(exact)

    # drawn after every case above, so that adding these moved none of them
    for n in range(0, 13):
        assert brute_w_counts(n) == [count_w(n, w) for w in range(n * (n + 1) // 2 + 1)], n
    wsr = [
        ("empty", []),
        ("all_zero", [0.0, 0.0, 0.0]),
        ("one_pos", [0.5]),
        ("one_neg", [-0.3]),
        ("two_centre", [0.1, -0.2]),
        ("three_pos", [0.1, 0.2, 0.3]),
        ("three_mixed", [0.1, -0.2, 0.3]),
        ("four_centre", [1.0, -2.0, -3.0, 4.0]),
        ("six_pos", [0.01, 0.03, 0.02, 0.05, 0.04, 0.06]),
        ("seven_neg", [-0.5, -0.1, -0.7, -0.2, -0.3, -0.9, -0.4]),
        ("nine_pos", [0.11, 0.02, 0.35, 0.07, 0.19, 0.23, 0.04, 0.5, 0.13]),
        ("eight_mixed", [0.3, -0.1, 0.25, 0.6, -0.45, 0.05, 0.7, 0.15]),
        ("ten_mixed", [float(v) for v in rng.normal(0.3, 1.0, 10)]),
        ("slow10", log_ratios(10, 0.7, 0.05)),
        ("slow20", log_ratios(20, 0.7, 0.05)),
        ("same10", log_ratios(10, 1.0, 0.05)),
        ("same20", log_ratios(20, 1.0, 0.05)),
        ("same30", log_ratios(30, 1.0, 0.05)),
        ("slight50", log_ratios(50, 0.99, 0.05)),
        ("slight51", log_ratios(51, 0.99, 0.05)),
        ("same60", log_ratios(60, 1.0, 0.05)),
        ("slow60", log_ratios(60, 0.97, 0.05)),
        ("zeros", [0.0, 0.1, -0.2, 0.3, 0.4, 0.0, 0.5]),
        ("zeros_centre", [0.0, 1.0, -2.0, -3.0, 4.0]),
        ("zero_one", [0.0, 0.25]),
        ("ties", [1.0, 2.0, 2.0, -2.0, 3.0, 3.0, 3.0, -4.0, 5.0]),
        ("ties_signs", [0.5, -0.5, 0.5, -0.5, 1.0]),
        ("ties_same", [2.0, 2.0, 2.0, 2.0]),
        ("ties_zeros", [0.0, 0.0, 0.1, 0.1, -0.1, 0.2, 0.3, 0.3, 0.0, 0.4, 0.5]),
        ("ties_rounded", draw(25, 0.5, 1.0, 1)),
        ("tiny", [1e-300, -3e-300, 2e-300, 2.5e-300, -1.5e-300, 4e-300]),
        ("huge", [1e300, 1.5e300, -1.2e300, 1.7976931348623157e308, 1.7e308]),
    ]
    wrows = []
    with open(os.path.join(HERE, "wilcoxon.txt"), "w") as f:
        f.write("# tests/stats/reference.py: NAME N D.. : w_plus n p z walsh_median method; "
                "minp N : p\n")
        for name, d in wsr:
            w_plus, n, p, z, method = wilcoxon(d)
            hl1 = walsh_median(d)
            wrows.append((name, d, w_plus, p, hl1, method))
            f.write("%s %d %s : %s %d %s %s %s %s\n" % (
                name, len(d), values(d), fmt(w_plus), n, fmt(p), fmt(z), fmt(hl1), method))
        for n in [1, 2, 3, 5, 6, 9, 10, 20, 50, 51, 60, 100]:
            _, _, p, _, _ = wilcoxon([float(i + 1) for i in range(n)])
            f.write("minp %d : %s\n" % (n, fmt(p)))

    ranked = [r for r in wrows if r[5] != "none"]
    rw = r_wilcoxon_one([(r[1], r[5]) for r in ranked])
    if rw is None:
        rnote += "; R not installed: Wilcoxon not cross-checked"
    else:
        for row, (v, p, est) in zip(ranked, rw):
            assert v == row[2], (row, v)
            assert math.isclose(p, row[3], rel_tol=1e-12), (row, p)
            if row[5] == "exact":
                assert math.isclose(est, row[4], rel_tol=1e-12, abs_tol=1e-300), (row, est)
        rnote += "; R's wilcox.test agrees on %d signed-rank cases" % len(ranked)
    print("reference: numpy %s, scipy %s; %d describe, %d Mann-Whitney, %d Hodges-Lehmann, "
          "%d Wilcoxon cases; %s" % (np.__version__, scipy.__version__, len(DESCRIBE), len(mw),
                                     len(hl), len(wsr), rnote))


if __name__ == "__main__":
    main()
