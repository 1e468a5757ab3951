/* serve.h - `dcsim serve` (serve.c): an inference fleet request by request.
 * argv excludes the command word; returns the exit status. */
#ifndef DCSIM_APP_SERVE_H
#define DCSIM_APP_SERVE_H

int cmd_serve(int argc, char **argv);

#include "error.h"
#include "scenario.h"
#include "serving.h"

/* Ready fleet c (a copy of s->serving) to simulate as dcsim serve runs it:
 * the timing device of s's GPU (FlashAttention-2 prefill, CUDA-graph
 * decode), then the memory guard for `runs` simulations held at once
 * (their request records). 0, or an error code with err set. Used by
 * compare_serve.c, so that a variant's figures are dcsim serve's. */
int serve_prepare(const scn_scenario *s, serve_config *c, unsigned runs, sim_error *err);

extern const char usage_serve[];

#endif
