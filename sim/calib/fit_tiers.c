/* fit_tiers.c - size tiers shared by the GEMM and the all-reduce fits
 * (contract in fit_tiers.h): thresholds from candidates, their validity, and
 * which tier's parameter a tier takes. Invariant: rep[] always maps a tier to
 * a tier that is its own representative.
 */
#include "fit_tiers.h"

#include <math.h>

unsigned calib_tiers_from(const double *candidates, size_t n_candidates, double min_bytes[4])
{
    unsigned n = 1;
    min_bytes[0] = 0.0;
    for (size_t i = 0; i < n_candidates && n < CALIB_TIERS; i++)
        if (candidates[i] > min_bytes[n - 1] && !isinf(candidates[i]))
            min_bytes[n++] = candidates[i];
    return n;
}

int calib_tiers_are_valid(unsigned n_tiers, const double *min_bytes)
{
    if (n_tiers > CALIB_TIERS || (n_tiers > 0 && min_bytes[0] != 0))
        return -1;
    for (unsigned i = 1; i < n_tiers; i++)
        if (!(min_bytes[i] > min_bytes[i - 1]) || isinf(min_bytes[i]))
            return -1;
    return 0;
}

/* Tiers without points of their own take the nearest tier's with points (the
 * lower one when two are equally near); rep[i] := the tier whose parameter
 * tier i uses. Returns the number of tiers with points. */
unsigned calib_tie_empty_tiers(const size_t *count, unsigned n_tiers, unsigned *rep)
{
    unsigned n_own = 0;
    for (unsigned i = 0; i < n_tiers; i++)
        n_own += count[i] > 0;
    for (unsigned i = 0; i < n_tiers; i++) {
        rep[i] = i;
        for (unsigned d = 1; count[i] == 0 && n_own > 0 && d < n_tiers; d++) {
            if (i >= d && count[i - d] > 0) {
                rep[i] = i - d;
                break;
            }
            if (i + d < n_tiers && count[i + d] > 0) {
                rep[i] = i + d;
                break;
            }
        }
    }
    return n_own;
}

/* Tie tier t (a tier that is its own representative) to the nearest other
 * such tier in is_ok, the one with the larger bandwidth bw when two are
 * equally near; the tiers tied to t follow. Returns 0, or -1 when none is ok. */
int calib_retie(unsigned t, const int *is_ok, const double *bw, unsigned n_tiers, unsigned *rep)
{
    for (unsigned d = 1; d < n_tiers; d++) {
        int lo = t >= d && rep[t - d] == t - d && is_ok[t - d];
        int hi = t + d < n_tiers && rep[t + d] == t + d && is_ok[t + d];
        if (!lo && !hi)
            continue;
        unsigned to = lo && hi ? (bw[t + d] > bw[t - d] ? t + d : t - d) : lo ? t - d : t + d;
        for (unsigned i = 0; i < n_tiers; i++)
            if (rep[i] == t)
                rep[i] = to;
        return 0;
    }
    return -1;
}
