/* fit_tiers.h - size tiers of the calibration fits: a model takes one
 * bandwidth per tier of transfer sizes, tier i from min_bytes[i] (ascending,
 * the first 0). A tier with no say in its bandwidth takes a neighbour's:
 * rep[i] is the tier whose parameter tier i uses.
 */
#ifndef DCSIM_CALIB_FIT_TIERS_H
#define DCSIM_CALIB_FIT_TIERS_H

#include <stddef.h>

#define CALIB_TIERS 4 /* = COMPUTE_MEM_TIERS = COLL_BW_TIERS */

/* Up to 4 tier thresholds from candidates: 0, then each candidate that is
 * finite and above the previous kept one; the rest are dropped. Returns the
 * number of tiers (1 + kept candidates) and fills min_bytes[0..n-1]. */
unsigned calib_tiers_from(const double *candidates, size_t n_candidates, double min_bytes[4]);

/* 0 when n_tiers (0 read as 1) and min_bytes describe valid tiers (at most
 * CALIB_TIERS, ascending from 0, finite), else -1 */
int calib_tiers_are_valid(unsigned n_tiers, const double *min_bytes);

/* Tiers without points of their own (count[i] == 0) take the nearest tier's
 * with points (the lower one when two are equally near); rep[i] := the tier
 * whose parameter tier i uses. Returns the number of tiers with points. */
unsigned calib_tie_empty_tiers(const size_t *count, unsigned n_tiers, unsigned *rep);

/* Tie tier t (a tier that is its own representative) to the nearest other
 * such tier in is_ok, the one with the larger bandwidth bw when two are
 * equally near; the tiers tied to t follow. Returns 0, or -1 when none is
 * ok (rep unchanged). */
int calib_retie(unsigned t, const int *is_ok, const double *bw, unsigned n_tiers, unsigned *rep);

#endif
