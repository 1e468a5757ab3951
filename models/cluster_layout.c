/* cluster_layout.c - a job's iteration traffic from its parallel layout
 * (cluster_interf.h): every collective of its size class in every group of
 * its kind, all in one plan that starts at once. Rank r of the job is its
 * r-th GPU; the groups follow the step tier's placement (step_gpu,
 * Megatron-LM's default order tp-cp-dp-pp: rank = t + tp (c + cp (d + dp
 * s)), cp 1 but for a class given by a model), so a dp-group is (s, t)
 * fixed, a tp-group (s, d, c), a pp-group (d, c, t), a cp-group (s, d, t),
 * an expert group ep consecutive data ranks of one (s, t, c), as
 * step_comm.c's step_sc_on_net takes them, and an expert-data-parallel
 * group the data ranks d = j mod ep of one (s, t) (workload.c's
 * expert_group, dp cp / ep ranks). Rings for the all-reduce, all-gather
 * and reduce-scatter (as `dcsim netbench --algo ring`), direct for the
 * all-to-all; a send is one flow each way between the GPUs of neighbouring
 * stages (the activations forward, their gradients back), with vpp > 1
 * also between the last stage and the first ((vpp - 1) / vpp of the bytes:
 * the interleaved schedule's wrap), or in a cp-group one flow from each GPU
 * to the next in the ring (the K/V exchange).
 */
#include "cluster_interf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step.h"

static const char *const group_names[CLUSTER_GROUP_COUNT] = {
    [CLUSTER_GROUP_DP] = "dp", [CLUSTER_GROUP_TP] = "tp", [CLUSTER_GROUP_PP] = "pp",
    [CLUSTER_GROUP_EP] = "ep", [CLUSTER_GROUP_CP] = "cp", [CLUSTER_GROUP_EDP] = "edp"};

const char *cluster_group_name(int group)
{
    return group >= 0 && group < CLUSTER_GROUP_COUNT ? group_names[group] : NULL;
}

int cluster_group_parse(const char *name)
{
    for (int g = 0; g < CLUSTER_GROUP_COUNT; g++)
        if (!strcmp(group_names[g], name))
            return g;
    return -1;
}

static uint32_t dim(uint32_t v)
{
    return v ? v : 1;
}

int cluster_layout_check(const cluster_traffic *t, uint32_t n, char *why, size_t size)
{
    uint32_t tp = dim(t->tp), pp = dim(t->pp), ep = dim(t->ep), cp = dim(t->cp);
    if (cp > 1 && n % ((uint64_t)tp * cp * pp)) {
        snprintf(why, size, "%u GPUs are not a whole number of tp x cp x pp = %u x %u x %u", n,
                 tp, cp, pp);
        return -1;
    }
    if (n % ((uint64_t)tp * pp)) {
        snprintf(why, size, "%u GPUs are not a whole number of tp x pp = %u x %u", n, tp, pp);
        return -1;
    }
    uint32_t dp = n / (tp * cp * pp);
    if (cp > 1 && dp % ep) {
        snprintf(why, size, "its data-parallel degree %u (%u GPUs / (tp %u x cp %u x pp %u)) is "
                 "not a whole number of ep = %u", dp, n, tp, cp, pp, ep);
        return -1;
    }
    if (dp % ep) {
        snprintf(why, size, "its data-parallel degree %u (%u GPUs / (tp %u x pp %u)) is not a "
                 "whole number of ep = %u", dp, n, tp, pp, ep);
        return -1;
    }
    return 0;
}

/* append one collective over ranks r[0..k) of the job (k >= 2) */
static int append(nc_plan *plan, const nc_fabric *f, const cluster_coll *c, const uint32_t *gpus,
                  const uint32_t *r, unsigned k, uint32_t *hosts, sim_error *err)
{
    for (unsigned i = 0; i < k; i++)
        hosts[i] = gpus[r[i]];
    enum nc_collective coll = (enum nc_collective)c->collective;
    enum nc_algorithm algo = coll == NC_ALLTOALL || coll == NC_SENDRECV ? NC_ALGO_DIRECT
                                                                         : NC_ALGO_RING;
    return nc_plan_append(plan, f, coll, algo, hosts, k, c->bytes, err);
}

int cluster_layout_plan(nc_plan *plan, const nc_fabric *f, const cluster_traffic *t,
                        const uint32_t *gpus, uint32_t n, sim_error *err)
{
    memset(plan, 0, sizeof *plan);
    char why[160];
    if (cluster_layout_check(t, n, why, sizeof why))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "cluster: a job's layout does not "
                             "fit: %s", why);
    parallel_config p; /* only what step_gpu reads: Megatron's order, no replica map */
    memset(&p, 0, sizeof p);
    p.tp = dim(t->tp);
    p.pp = dim(t->pp);
    p.cp = dim(t->cp);
    p.dp = n / (p.tp * p.cp * p.pp);
    unsigned ep = dim(t->ep), cp = p.cp, vpp = dim(t->vpp);
    cluster_coll wrap = {0};
    uint32_t *r = malloc(2 * (size_t)n * sizeof *r); /* a group's ranks, then its hosts */
    if (!r)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "cluster: out of memory");
    int rc = 0;
    for (unsigned i = 0; !rc && i < t->n_colls; i++) {
        const cluster_coll *c = &t->coll[i];
        if (!(c->bytes > 0))
            continue;
        unsigned k = 0;
        switch (c->group) {
        case CLUSTER_GROUP_DP: /* (s, t): d = 0 .. dp - 1, c = 0 .. cp - 1 */
            for (unsigned s = 0; !rc && p.dp * cp > 1 && s < p.pp; s++)
                for (unsigned tt = 0; !rc && tt < p.tp; tt++) {
                    k = 0;
                    for (unsigned d = 0; d < p.dp; d++)
                        for (unsigned cc = 0; cc < cp; cc++)
                            r[k++] = step_gpu(&p, s, d, cc, tt);
                    rc = append(plan, f, c, gpus, r, k, r + n, err);
                }
            break;
        case CLUSTER_GROUP_EDP: /* (s, t, j): d = j, j + ep, .., c = 0 .. cp - 1 */
            for (unsigned s = 0; !rc && p.dp / ep * cp > 1 && s < p.pp; s++)
                for (unsigned tt = 0; !rc && tt < p.tp; tt++)
                    for (unsigned j = 0; !rc && j < ep; j++) {
                        k = 0;
                        for (unsigned d = j; d < p.dp; d += ep)
                            for (unsigned cc = 0; cc < cp; cc++)
                                r[k++] = step_gpu(&p, s, d, cc, tt);
                        rc = append(plan, f, c, gpus, r, k, r + n, err);
                    }
            break;
        case CLUSTER_GROUP_TP: /* (s, d, c): t = 0 .. tp - 1 */
            for (unsigned s = 0; !rc && p.tp > 1 && s < p.pp; s++)
                for (unsigned d = 0; !rc && d < p.dp; d++)
                    for (unsigned cc = 0; !rc && cc < cp; cc++) {
                        for (unsigned tt = 0; tt < p.tp; tt++)
                            r[tt] = step_gpu(&p, s, d, cc, tt);
                        rc = append(plan, f, c, gpus, r, p.tp, r + n, err);
                    }
            break;
        case CLUSTER_GROUP_CP: /* (s, d, t): c = 0 .. cp - 1; a send: each to the next */
            for (unsigned s = 0; !rc && cp > 1 && s < p.pp; s++)
                for (unsigned d = 0; !rc && d < p.dp; d++)
                    for (unsigned tt = 0; !rc && tt < p.tp; tt++) {
                        if (c->collective != NC_SENDRECV) {
                            for (unsigned cc = 0; cc < cp; cc++)
                                r[cc] = step_gpu(&p, s, d, cc, tt);
                            rc = append(plan, f, c, gpus, r, cp, r + n, err);
                            continue;
                        }
                        for (unsigned cc = 0; !rc && cc < cp; cc++) {
                            r[0] = step_gpu(&p, s, d, cc, tt);
                            r[1] = step_gpu(&p, s, d, (cc + 1) % cp, tt);
                            rc = append(plan, f, c, gpus, r, 2, r + n, err);
                        }
                    }
            break;
        case CLUSTER_GROUP_EP: /* (s, t, c, e): d = e ep .. e ep + ep - 1 */
            for (unsigned s = 0; !rc && ep > 1 && s < p.pp; s++)
                for (unsigned tt = 0; !rc && tt < p.tp; tt++)
                    for (unsigned cc = 0; !rc && cc < cp; cc++)
                        for (unsigned e = 0; !rc && e < p.dp / ep; e++) {
                            for (unsigned j = 0; j < ep; j++)
                                r[j] = step_gpu(&p, s, e * ep + j, cc, tt);
                            rc = append(plan, f, c, gpus, r, ep, r + n, err);
                        }
            break;
        default: /* CLUSTER_GROUP_PP, (d, c, t): s = 0 .. pp - 1 */
            /* interleaved: the last stage's chunks feed the first's next
             * chunk, vpp - 1 of the vpp sends a stage makes (step_pp_sends) */
            wrap = *c;
            wrap.bytes = vpp > 1 ? c->bytes * (vpp - 1) / vpp : 0;
            for (unsigned d = 0; !rc && p.pp > 1 && d < p.dp; d++)
                for (unsigned cc = 0; !rc && cc < cp; cc++)
                    for (unsigned tt = 0; !rc && tt < p.tp; tt++) {
                        if (c->collective != NC_SENDRECV) {
                            for (unsigned s = 0; s < p.pp; s++)
                                r[s] = step_gpu(&p, s, d, cc, tt);
                            rc = append(plan, f, c, gpus, r, p.pp, r + n, err);
                            continue;
                        }
                        for (unsigned s = 0; !rc && s + 1 < p.pp; s++)
                            for (int dir = 0; !rc && dir < 2; dir++) {
                                r[dir] = step_gpu(&p, s, d, cc, tt);
                                r[1 - dir] = step_gpu(&p, s + 1, d, cc, tt);
                                rc = append(plan, f, c, gpus, r, 2, r + n, err);
                            }
                        for (int dir = 0; !rc && wrap.bytes > 0 && dir < 2; dir++) {
                            r[dir] = step_gpu(&p, p.pp - 1, d, cc, tt);
                            r[1 - dir] = step_gpu(&p, 0, d, cc, tt);
                            rc = append(plan, f, &wrap, gpus, r, 2, r + n, err);
                        }
                    }
            break;
        }
    }
    free(r);
    if (rc) {
        nc_plan_free(plan);
        memset(plan, 0, sizeof *plan);
    }
    return rc;
}
