/* routing_choose.h - the ties of the adaptive rule's least-pressure choice
 * (routing.c choose): the sequential scan that defines them, and the exact
 * shortcut that finds the same ties in the usual case. Inline, and apart
 * from routing.c so that test_routing_choose can compare the two. */
#ifndef DCSIM_TOPO_ROUTING_CHOOSE_H
#define DCSIM_TOPO_ROUTING_CHOOSE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The least-pressure rule's ties, found by a sequential scan: the first
 * candidate opens a window p x (1 -+ 1e-12) around its pressure p; a later
 * one below the window opens a new window around its own (and the ties so
 * far are dropped); one inside it (at most the window's top) ties. Writes
 * the ties to tied in list order and returns their count (0: every pressure
 * NaN). Without branches (conditional moves): the comparisons of an
 * all-to-all's loads do not predict. */
static inline uint32_t routing_ties_by_scan(const double *p, const uint32_t *cand, uint32_t n,
                                            uint32_t *tied)
{
    double below = INFINITY, within = INFINITY;
    uint32_t ties = 0;
    for (uint32_t i = 0; i < n; i++) {
        int reset = p[i] < below;
        double lo = p[i] * (1 - 1e-12), hi = p[i] * (1 + 1e-12);
        below = reset ? lo : below;
        within = reset ? hi : within;
        ties = reset ? 0 : ties;
        tied[ties] = cand[i]; /* kept only when it ties: ties <= i < n, room for n */
        ties += p[i] <= within;
    }
    return ties;
}

/* The same ties, found without a division when it can be shown that they
 * are exactly the candidates whose load equals the least one (the usual
 * case: equal loads on equal links); else 0, and the caller divides and
 * scans. Writes the ties to tied in list order and returns their count.
 *
 * Why the ties are the same. The candidates' capacities must be one c (the
 * same bits), 0 < c < inf: then every pressure is fl(l / c) (an idle
 * link's, its load +-0, too), fl the rounding to double, which is
 * monotone. Let m be the least load, pm = fl(m / c) the least pressure,
 * and t a load with pt = fl(t / c) > fl(pm B) and fl(pt A) > pm, where
 * A = fl(1 - 1e-12) and B = fl(1 + 1e-12) (then t > m). When 0 <= pm < inf
 * and every load is m or at least t (so no NaN), every other pressure p is
 * at least pt, so p > fl(pm B) and fl(p A) > pm, and the scan goes: before
 * the first candidate at pm its window's bottom is inf or fl(p A) > pm for
 * the p that opened it, so that candidate opens the window
 * [fl(pm A), fl(pm B)], which holds pm (0 <= pm: fl(pm A) <= pm <=
 * fl(pm B)); no later candidate is below fl(pm A) <= pm, so the window
 * stays; the ones at pm tie, the others (> fl(pm B)) do not: the ties are
 * the candidates at m, in list order.
 *
 * One pass: a running least load m and t = m (1 + 4e-12) + c 2^-1000 (a
 * few ulps above the window's top, or for m = 0 a load whose pressure is a
 * normal double; any t whose pt passes the test will do), the candidates
 * at m (ties) and the count of loads at least t (above), the two disjoint
 * while t > m. A new least load v (rare: a list's loads differ by whole
 * connections) keeps the loads counted so far as above when the old least
 * is at least v's t, else drops them (then the counts fall short of n and
 * the caller scans). So when ties + above = n every load is m or at least
 * t, provided t > m held at every new least: it holds at the last (the
 * test below fails when t <= m: then pt <= pm), and the v >= 0 with t > v
 * are all v from some point up (c 2^-1000 > 0: all; else v (1 + 4e-12)
 * rounds above v from some subnormal v up), so it held at the earlier
 * ones, which were larger. test_routing_choose compares this with the
 * scan on adversarial loads. */
static inline uint32_t routing_ties_at_least(const double *load, const double *cap,
                                             const uint32_t *cand, uint32_t n, uint32_t *tied)
{
    double c = cap[cand[0]], m = INFINITY, t = NAN, room = c * 0x1p-1000;
    uint64_t c_bits, differ = 0;
    memcpy(&c_bits, &c, sizeof c_bits);
    uint32_t ties = 0, above = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t l = cand[i];
        double v = load[l];
        uint64_t b;
        memcpy(&b, &cap[l], sizeof b);
        differ |= b ^ c_bits;
        if (v < m) {
            double tv = v * (1 + 4e-12) + room;
            above = m >= tv ? ties + above : 0;
            ties = 0;
            m = v;
            t = tv;
        }
        tied[ties] = l; /* kept only when it ties: ties <= i < n, room for n */
        ties += v <= m; /* == m; a NaN is neither this nor above */
        above += v >= t;
    }
    if (differ || ties + above != n || !(c > 0 && c < INFINITY) || !(m >= 0 && m < INFINITY))
        return 0; /* capacities differ, a load between m and t or NaN, m < 0 or inf */
    double pm = m == 0 ? m : m / c, pt = t / c;
    if (!(pt > pm * (1 + 1e-12)) || !(pt * (1 - 1e-12) > pm))
        return 0;
    return ties;
}

#endif
