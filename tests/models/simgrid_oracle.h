/* simgrid_oracle.h - SimGrid (3.32, pure max-min CM02) as an independent
 * oracle for dcsim's flow model (tests/models/test_flow_simgrid.c).
 *
 * The caller gives a set of directed links with capacities and a set of
 * flows, each with a start time, a whole number of bytes and an explicit
 * route (the links dcsim's router chose, weight 1 each); SimGrid solves the
 * same sharing problem and returns each flow's completion time. Each call
 * runs SimGrid in a child process (its engine can be created only once per
 * process) on a platform file written for that call.
 */
#ifndef DCSIM_TESTS_SIMGRID_ORACLE_H
#define DCSIM_TESTS_SIMGRID_ORACLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sg_flow_set {
    uint32_t n_links;
    const double *link_bytes_per_s; /* n_links capacities, all > 0 */
    uint32_t n_flows;
    const double *start_s;          /* n_flows start times, >= 0 */
    const double *bytes;            /* n_flows sizes, whole numbers >= 1 */
    const uint32_t *route_offset;   /* n_flows + 1: flow f's links are */
    const uint32_t *route_link;     /* route_link[route_offset[f] .. route_offset[f+1]) */
} sg_flow_set;

/* Solve s with SimGrid; writes each flow's completion time (seconds since 0)
 * to done_s[n_flows]. Returns 0, or -1 with a one-line reason in why (the
 * temporary file, fork or pipe failed, or the SimGrid child failed). */
int sg_oracle_run(const sg_flow_set *s, double *done_s, char *why, size_t why_size);

#endif
