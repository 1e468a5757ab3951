/* step_flows.c - the concurrent iteration's flow log (step_internal.h):
 * one record per flow the shared flow net runs, in the order they start,
 * until the cap; past it only counted (the profile says it was truncated).
 * Memory: at most cap records plus one slot per flow id in use at once. */
#include "step_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netcoll_exec.h"

const char *step_flow_kind_name(int kind)
{
    static const char *const names[STEP_FLOW_KINDS] = {"pp", "dp", "gather",
                                                        "tp", "cp", "ep"};
    return kind >= 0 && kind < STEP_FLOW_KINDS ? names[kind] : "other";
}

/* slot id exists (SIZE_MAX unless set); 0 or -1 */
static int grow_slots(step_flow_log *l, uint32_t id)
{
    if (id < l->n_slots)
        return 0;
    uint32_t cap = l->n_slots ? l->n_slots : 1024;
    while (cap <= id && cap < UINT32_MAX / 2)
        cap *= 2;
    if (cap <= id)
        return -1;
    size_t *q = realloc(l->slot, (size_t)cap * sizeof *q);
    if (!q)
        return -1;
    for (uint32_t i = l->n_slots; i < cap; i++)
        q[i] = SIZE_MAX;
    l->slot = q;
    l->n_slots = cap;
    return 0;
}

int step_flow_log_start(step_flow_log *l, uint32_t id, double now, const step_flow *who,
                        const nc_exec_flow *f)
{
    l->total++;
    if (grow_slots(l, id))
        return -1;
    l->slot[id] = SIZE_MAX;
    if (l->n == l->cap)
        return 0; /* full: counted only */
    if (l->n == l->alloc) {
        size_t cap = l->alloc ? 2 * l->alloc : 256;
        cap = cap < l->cap ? cap : l->cap;
        step_flow *q = realloc(l->flows, cap * sizeof *q);
        if (!q)
            return -1;
        l->flows = q;
        l->alloc = cap;
    }
    step_flow *r = &l->flows[l->n];
    memset(r, 0, sizeof *r); /* padding too: two runs' logs compare equal byte for byte */
    r->kind = who->kind;
    r->backward = who->backward;
    r->replica = who->replica;
    r->stage = who->stage;
    r->chunk = who->chunk;
    r->index = who->index;
    r->start_s = r->end_s = now;
    r->bytes = f->bytes;
    r->src = f->src;
    r->dst = f->dst;
    r->n_conn = f->n_conn;
    r->phase = f->phase;
    for (size_t k = 0; k < f->n_u; k++)
        r->tier_bytes[l->tier[f->u[k].link]] += f->flow_bytes * f->u[k].weight;
    l->slot[id] = l->n++;
    return 0;
}

void step_flow_log_end(step_flow_log *l, uint32_t id, double now)
{
    if (id < l->n_slots && l->slot[id] != SIZE_MAX) {
        l->flows[l->slot[id]].end_s = now;
        l->slot[id] = SIZE_MAX;
    }
}

void step_flow_log_give(step_flow_log *l, step_profile *out)
{
    out->flows = l->flows;
    out->n_flows = l->n;
    out->flows_total = l->total;
    out->flows_truncated = l->total > l->n;
    l->flows = NULL;
    l->n = l->alloc = 0;
}

void step_flow_log_free(step_flow_log *l)
{
    free(l->flows);
    free(l->slot);
    memset(l, 0, sizeof *l);
}
