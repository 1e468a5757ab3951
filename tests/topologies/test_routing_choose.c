/* test_routing_choose.c - the adaptive rule's ties (topologies/routing_choose.h):
 * routing_ties_at_least, which finds them from the loads without a
 * division when it can show they are the candidates at the least load,
 * must give exactly the sequential scan's ties (routing_ties_by_scan over
 * the pressures load / capacity), same count, same candidates in the same
 * order, whenever it answers. Random and adversarial loads: equal values,
 * values 1 ulp to a few 1e-12 apart (inside, at and outside the +-1e-12
 * window), +-0, subnormals, huge values, infinities, NaN, negative loads;
 * capacities equal (the usual fabric), differing in the last bit, 0, inf,
 * subnormal. And it must answer in the usual case: loads of a few distinct
 * integers on equal links (an all-to-all's). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "routing_choose.h"

#define MAX_N 64u
#define LINKS 256u

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static long compared, answered, mismatches;

/* Both on one candidate list; counts a mismatch (and CHECKs) when the
 * shortcut answers with other ties than the scan's. */
static void compare(const double *load, const double *cap, const uint32_t *cand, uint32_t n)
{
    double p[MAX_N];
    uint32_t tied[MAX_N], fast[MAX_N];
    for (uint32_t i = 0; i < n; i++) { /* the pressures as routing.c choose computes them */
        double l = load[cand[i]];
        p[i] = l == 0 ? l : l / cap[cand[i]];
    }
    uint32_t want = routing_ties_by_scan(p, cand, n, tied);
    uint32_t got = routing_ties_at_least(load, cap, cand, n, fast);
    compared++;
    if (!got)
        return;
    answered++;
    int same = got == want;
    for (uint32_t k = 1; same && k <= got; k++)
        same = fast[k - 1] == tied[k - 1];
    if (!same && mismatches++ < 5) {
        fprintf(stderr, "n %u: shortcut %u ties, scan %u; loads", n, got, want);
        for (uint32_t i = 0; i < n; i++)
            fprintf(stderr, " %a/%a", load[cand[i]], cap[cand[i]]);
        fprintf(stderr, "\n");
    }
    CHECK(same);
}

/* a load near base: equal, a few ulps off, or about the window's width off */
static double near(double base, uint64_t *s)
{
    static const double rel[] = {0,       1e-12,  -1e-12, 2e-12, -2e-12, 3e-12, -3e-12,
                                 4e-12,   5e-12,  1e-11,  1e-9,  0.5,    1.0,   -0.5,
                                 0.9e-12, 1.1e-12, 2.9e-12, 3.1e-12, 3.9e-12, 4.1e-12};
    double v = base * (1 + rel[next_random(s) % (sizeof rel / sizeof *rel)]);
    for (int steps = (int)(next_random(s) % 7) - 3; steps; steps += steps < 0 ? 1 : -1)
        v = nextafter(v, steps < 0 ? -INFINITY : INFINITY);
    return v;
}

static double odd_load(uint64_t *s)
{
    static const double odd[] = {0.0, -0.0, INFINITY, NAN, -1.0, DBL_MAX, DBL_MIN, 4.9e-324,
                                 1e-300, 1e-20, 1.0, 2.0, 3.0};
    return odd[next_random(s) % (sizeof odd / sizeof *odd)];
}

int main(void)
{
    static double load[LINKS], cap[LINKS];
    uint32_t cand[MAX_N];
    uint64_t s = 0x243F6A8885A308D3ull;
    static const double caps[] = {50e9, 1.0, 3.0, 0.1, 1e-300, 1e300, 4.9e-324, DBL_MAX};
    static const double bases[] = {1.0, 7.0, 1e-3, 123456.789, 1e-310, 1e300, 2.5e10, 0.1};
    for (int round = 0; round < 400000; round++) {
        uint32_t n = 2 + (uint32_t)(next_random(&s) % (round % 3 ? 32 : MAX_N - 1));
        double c = caps[next_random(&s) % (sizeof caps / sizeof *caps)];
        double base = bases[next_random(&s) % (sizeof bases / sizeof *bases)];
        unsigned mode = (unsigned)(next_random(&s) % 8);
        for (uint32_t i = 0; i < n; i++) {
            cand[i] = (uint32_t)(next_random(&s) % LINKS); /* repeats allowed */
            uint32_t l = cand[i];
            cap[l] = c;
            if (mode == 0 && next_random(&s) % 8 == 0) /* one capacity 1 ulp off */
                cap[l] = nextafter(c, INFINITY);
            if (mode == 1) /* an all-to-all: a few distinct integers */
                load[l] = (double)(next_random(&s) % 3);
            else if (mode == 2 && next_random(&s) % 4 == 0)
                load[l] = odd_load(&s);
            else if (mode == 3) /* all near the base, many exactly on it */
                load[l] = next_random(&s) % 2 ? base : near(base, &s);
            else if (mode == 4) /* zeros and tiny loads */
                load[l] = next_random(&s) % 2 ? 0.0 : near(4.9e-324 * (double)(1 + next_random(&s) % 4), &s);
            else
                load[l] = next_random(&s) % 3 ? base + (double)(next_random(&s) % 2) * base : near(base, &s);
        }
        compare(load, cap, cand, n);
    }
    /* the usual case answers: an all-to-all's loads on equal links */
    long usual = 0, usual_answered = 0;
    for (int round = 0; round < 10000; round++) {
        uint32_t n = 32, lo = (uint32_t)(next_random(&s) % 1000);
        for (uint32_t i = 0; i < n; i++) {
            cand[i] = i;
            cap[i] = 50e9 * 0.94;
            load[i] = lo + (double)(next_random(&s) % 2);
        }
        uint32_t fast[MAX_N];
        usual++;
        usual_answered += routing_ties_at_least(load, cap, cand, n, fast) != 0;
        compare(load, cap, cand, n);
    }
    printf("compared %ld lists, the shortcut answered %ld; all-to-all-like %ld of %ld\n",
           compared, answered, usual_answered, usual);
    CHECK(mismatches == 0);
    CHECK(answered > compared / 8); /* the comparisons exercise the shortcut */
    CHECK(answered < compared);     /* and its refusals */
    CHECK(usual_answered == usual);
    return check_report();
}
