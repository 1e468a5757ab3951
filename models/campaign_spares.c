/* campaign_spares.c - the spare pool (campaign_config.spares_limited): one
 * pool for the job, or one per group of spare_group_nodes nodes (hot spares
 * per scalable unit: a failed node is replaced only from its own group's
 * pool, where a spare is already cabled into the same leaves).
 *
 * Nodes are conserved per group: in the job, in the group's pool or in
 * repair. A failure sends its nodes to a repair of Exp(repair_mean_s) (one
 * draw per group the failed nodes are in) and adds them to what the next
 * restart must swap in; the restart swaps them from their groups' pools, or
 * waits until every group it needs from has enough. With one group this is
 * exactly the single pool of earlier versions (same draws, same events).
 */
#include "campaign_internal.h"

#include <gsl/gsl_randist.h>

/* repair events carry the group in the high half, the count in the low */
#define GROUP_SHIFT 32
#define COUNT_MASK 0xffffffffull

static void on_repair(sim_engine *eng, void *ctx, uint64_t data);

static uint64_t group_of(const campaign *c, uint64_t node)
{
    uint64_t size = c->cfg->spare_group_nodes;
    uint64_t g = size ? node / size : 0;
    return g < c->n_groups ? g : c->n_groups - 1;
}

int campaign_spares_reset(campaign *c)
{
    const campaign_config *cfg = c->cfg;
    uint64_t size = cfg->spare_group_nodes;
    c->n_groups = size && c->n_nodes > size ? (c->n_nodes + size - 1) / size : 1;
    if (campaign_workspace_groups(c->ws, c->n_groups))
        return sim_error_set(c->err, SIM_ERR_NOMEM, NULL, 0,
                             "campaign: out of memory for %llu spare pools",
                             (unsigned long long)c->n_groups);
    c->pool = c->ws->pool;
    c->need = c->ws->need;
    for (uint64_t g = 0; g < c->n_groups; g++) {
        c->pool[g] = cfg->spare_nodes;
        c->need[g] = 0;
    }
    if (cfg->spares_limited)
        c->res.spares_lowest = cfg->spare_nodes;
    return 0;
}

void campaign_spares_clear(campaign *c)
{
    for (uint64_t g = 0; g < c->n_groups; g++)
        c->need[g] = 0;
}

/* count nodes of group g to repair: one draw, one event */
static void send_to_repair(campaign *c, uint64_t g, uint64_t count)
{
    double repair = c->cfg->repair_mean_s > 0
                        ? gsl_ran_exponential(c->repair_rng, c->cfg->repair_mean_s)
                        : 0;
    c->in_repair += count;
    sim_schedule_in(c->eng, repair, PRIO_FAILURE, KIND_REPAIR, on_repair, c,
                    g << GROUP_SHIFT | count);
}

void campaign_spares_lost(campaign *c, int64_t first, unsigned count, int add)
{
    if (!add)
        campaign_spares_clear(c);
    if (!count)
        return;
    uint64_t node = first >= 0 ? (uint64_t)first : 0;
    while (count) { /* a rack may straddle groups: one repair per group */
        uint64_t g = group_of(c, node), size = c->cfg->spare_group_nodes;
        uint64_t left = g + 1 < c->n_groups && size ? (g + 1) * size - node : count;
        unsigned here = left < count ? (unsigned)left : count;
        c->need[g] += here;
        if (c->cfg->spares_limited)
            send_to_repair(c, g, here);
        node += here;
        count -= here;
    }
}

void campaign_spares_need_node(campaign *c, uint64_t node)
{
    c->need[group_of(c, node)]++;
}

void campaign_spares_send_needed(campaign *c)
{
    for (uint64_t g = 0; g < c->n_groups && c->cfg->spares_limited; g++)
        if (c->need[g] || c->n_groups == 1) /* one pool: one draw, as before groups */
            send_to_repair(c, g, c->need[g]);
}

/* the pools hold what every group needs: swap them in */
static int can_swap(const campaign *c)
{
    for (uint64_t g = 0; g < c->n_groups; g++)
        if (c->pool[g] < c->need[g])
            return 0;
    return 1;
}

static void swap_in(campaign *c)
{
    for (uint64_t g = 0; g < c->n_groups; g++) {
        if (!c->need[g])
            continue;
        c->pool[g] -= c->need[g];
        c->need[g] = 0;
        if (c->pool[g] < c->res.spares_lowest)
            c->res.spares_lowest = c->pool[g];
    }
    c->restart_swap_s = c->cfg->swap_s;
}

int campaign_spares_take(campaign *c)
{
    c->restart_swap_s = 0;
    if (!c->cfg->spares_limited)
        return 1;
    uint64_t needed = 0, short_by = 0;
    for (uint64_t g = 0; g < c->n_groups; g++) {
        needed += c->need[g];
        short_by += c->need[g] > c->pool[g] ? c->need[g] - c->pool[g] : 0;
    }
    if (!needed)
        return 1;
    /* elastic (one pool only: campaign_config_check): go on without them,
     * fewer replicas, same global batch */
    if (short_by && c->cfg->elastic_replicas &&
        c->missing + short_by <= campaign_elastic_most_missing(c->cfg)) {
        c->missing += (unsigned)short_by;
        c->need[0] -= short_by;
        c->res.elastic_restarts++;
    }
    if (!can_swap(c)) {
        c->waiting = 1;
        c->wait_since = sim_now(c->eng);
        return 0;
    }
    swap_in(c);
    return 1;
}

/* Repaired nodes return to their group's pool (rejoining an elastic job
 * first); a restart waiting for them goes on once every group has enough. */
static void on_repair(sim_engine *eng, void *ctx, uint64_t data)
{
    campaign *c = ctx;
    uint64_t g = data >> GROUP_SHIFT, count = data & COUNT_MASK;
    c->res.repairs += count; /* nodes repaired together (a rack's at once) */
    c->in_repair -= count;
    c->pool[g] += count;
    unsigned rejoin = c->missing < c->pool[g] ? c->missing : (unsigned)c->pool[g];
    c->missing -= rejoin; /* back at the next checkpoint boundary */
    c->pool[g] -= rejoin;
    if (c->state != CAMPAIGN_STATE_RESTART || !c->waiting || !can_swap(c))
        return;
    c->waiting = 0;
    c->res.spare_wait_s += sim_now(eng) - c->wait_since;
    swap_in(c);
    if (!c->fabric_waiting) /* else the last repair it waits for schedules it */
        campaign_schedule_restart(c);
}
