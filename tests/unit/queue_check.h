/* queue_check.h - what test_queue and test_queue_compact share: a handler
 * the queue never calls, the inputs' generator and the queue's internal
 * invariants (see the header of sim/engine/queue.c).
 */
#ifndef DCSIM_TESTS_QUEUE_CHECK_H
#define DCSIM_TESTS_QUEUE_CHECK_H

#include <stdint.h>
#include <stdlib.h>

#include "queue.h"

/* Handlers are never called by the queue; distinct addresses suffice. */
static void handler_a(struct sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng, (void)ctx, (void)data;
}

/* splitmix64: a small self-contained generator for test inputs */
static uint64_t test_rand(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static unsigned qc_priority(const sim_queue *q, uint32_t slot)
{
    return q->types[sim_slot_type(&q->slots[slot])].priority;
}

/* O(n + cap): parent <= child in (time, priority, seq); the root is live;
 * every entry names a distinct live or cancelled slot of a type in use;
 * n_pending counts the live ones; the free list holds every other slot;
 * seqs are below next_seq; each type's count is its slots'. */
static int queue_is_valid(const sim_queue *q)
{
    if (q->n_heap > q->cap || q->n_pending > q->n_heap)
        return 0;
    if (q->n_heap == 0)
        return q->n_pending == 0;
    unsigned char *seen = calloc(q->cap, 1);
    size_t *refs = calloc(q->n_types ? q->n_types : 1, sizeof *refs);
    int ok = seen && refs;
    size_t n_live = 0;
    for (size_t i = 0; ok && i < q->n_heap; i++) {
        const sim_heap_entry *e = &q->heap[i];
        if (e->slot >= q->cap || seen[e->slot] || e->seq >= q->next_seq) {
            ok = 0;
            break;
        }
        seen[e->slot] = 1;
        uint32_t state = sim_slot_gen(&q->slots[e->slot]) & 3u;
        uint16_t t = sim_slot_type(&q->slots[e->slot]);
        if (state != 1 && state != 2)
            ok = 0;
        else if (t >= q->n_types || q->types[t].n_refs == UINT32_MAX)
            ok = 0;
        else
            refs[t]++;
        n_live += state == 1;
        if (i == 0 && state != 1)
            ok = 0;
        if (i > 0) {
            const sim_heap_entry *p = &q->heap[(i - 1) / 4];
            unsigned pp = qc_priority(q, p->slot), pe = qc_priority(q, e->slot);
            if (p->time_s > e->time_s)
                ok = 0;
            if (p->time_s == e->time_s && (pp > pe || (pp == pe && p->seq > e->seq)))
                ok = 0;
        }
    }
    ok = ok && n_live == q->n_pending;
    for (size_t t = 0; ok && t < q->n_types; t++)
        if (q->types[t].n_refs != UINT32_MAX && q->types[t].n_refs != refs[t])
            ok = 0;
    size_t n_free = 0;
    for (uint32_t s = q->free_slot; ok && s != UINT32_MAX; s = (uint32_t)sim_slot_data(&q->slots[s])) {
        if (s >= q->cap || seen[s] || (sim_slot_gen(&q->slots[s]) & 3u) != 0 ||
            ++n_free > q->cap)
            ok = 0;
        else
            seen[s] = 1;
    }
    ok = ok && n_free + q->n_heap == q->cap;
    free(seen);
    free(refs);
    return ok;
}

#endif
