/* campaign_workspace.c - the memory a campaign run can hand on to the next
 * (campaign.h, campaign_internal.h): the engine, the stream blocks and the
 * per-node arrays. Nothing here draws a number: a run reseeds every stream
 * it uses from its key and clears every array it reads, so what ran before
 * cannot show in its results.
 */
#include <stdlib.h>
#include <string.h>

#include "campaign.h"
#include "campaign_internal.h"

campaign_workspace *campaign_workspace_create(void)
{
    campaign_workspace *ws = calloc(1, sizeof *ws);
    if (!ws)
        return NULL;
    sim_rng_block_init(&ws->gpu);
    sim_rng_block_init(&ws->node);
    sim_rng_block_init(&ws->rack);
    sim_rng_block_init(&ws->straggler);
    sim_rng_block_init(&ws->job);
    for (unsigned k = 0; k < CAMPAIGN_MAX_CAUSES; k++)
        sim_rng_block_init(&ws->renewal[k]);
    ws->eng = sim_engine_create();
    if (!ws->eng || sim_rng_block_reserve(&ws->job, WS_SLOTS)) {
        campaign_workspace_destroy(ws);
        return NULL;
    }
    return ws;
}

void campaign_workspace_destroy(campaign_workspace *ws)
{
    if (!ws)
        return;
    sim_engine_destroy(ws->eng);
    sim_rng_block_fini(&ws->gpu);
    sim_rng_block_fini(&ws->node);
    sim_rng_block_fini(&ws->rack);
    sim_rng_block_fini(&ws->straggler);
    sim_rng_block_fini(&ws->job);
    for (unsigned k = 0; k < CAMPAIGN_MAX_CAUSES; k++)
        sim_rng_block_fini(&ws->renewal[k]);
    free(ws->slow);
    free(ws->slow_since);
    free(ws->first);
    free(ws->pool);
    free(ws->need);
    free(ws);
}

int campaign_workspace_nodes(campaign_workspace *ws, uint64_t n)
{
    n = n ? n : 1;
    if (n > ws->nodes_cap) {
        unsigned char *slow = calloc(n, 1);
        double *since = calloc(n, sizeof *since);
        if (!slow || !since) {
            free(slow);
            free(since);
            return -1;
        }
        free(ws->slow);
        free(ws->slow_since);
        ws->slow = slow;
        ws->slow_since = since;
        ws->nodes_cap = n;
        return 0;
    }
    memset(ws->slow, 0, n);
    memset(ws->slow_since, 0, n * sizeof *ws->slow_since);
    return 0;
}

int campaign_workspace_firsts(campaign_workspace *ws, uint64_t n)
{
    if (n <= ws->first_cap)
        return 0;
    double *first = calloc(n, sizeof *first);
    if (!first)
        return -1;
    free(ws->first);
    ws->first = first;
    ws->first_cap = n;
    return 0;
}

int campaign_workspace_groups(campaign_workspace *ws, uint64_t n)
{
    if (n <= ws->groups_cap)
        return 0;
    uint64_t *pool = calloc(n, sizeof *pool), *need = calloc(n, sizeof *need);
    if (!pool || !need) {
        free(pool);
        free(need);
        return -1;
    }
    free(ws->pool);
    free(ws->need);
    ws->pool = pool;
    ws->need = need;
    ws->groups_cap = n;
    return 0;
}
