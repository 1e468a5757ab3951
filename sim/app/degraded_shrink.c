/* degraded_shrink.c - the shrink policy's job shape on a degraded fabric
 * (docs/failures.md "Shrinking: restart without the GPUs cut off").
 *
 * When the parts down cut GPUs off, the job restarts on the data-parallel
 * replicas whose GPUs all still have the fabric: whole replicas only (their
 * TP x CP x PP groups intact), in whole expert groups (EP consecutive data
 * ranks, as step_gpu places them), at the same global batch, so each replica
 * runs more micro-batches. The largest such shape that the workload rules
 * accept (global batch a multiple of micro-batch x dp, the interleaved
 * schedule's micro-batches a multiple of pp) and the memory model fits
 * (ZeRO shards over fewer replicas hold more per GPU) runs; its data ranks
 * keep their GPUs (parallel_config.dp_replica), and its iteration is the
 * step tier's on the degraded fabric. No such shape: the job cannot run
 * (the campaign waits), with the reason kept for the text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "degraded.h"
#include "memory.h"

/* Set by run_degraded_speed on the thread that asked, read by
 * run_degraded_kept right after it (campaign.h: fabric_kept is called after
 * fabric_speed for the same parts, on the same thread). */
static _Thread_local double last_kept = 1;

void degraded_shrink_note_kept(double kept) { last_kept = kept; }

double run_degraded_kept(void *ctx, const campaign_part_state *parts, unsigned n)
{
    (void)ctx;
    (void)parts;
    (void)n;
    return last_kept;
}

static void refuse(run_degraded *d, const char *parts, const char *why)
{
    d->unrunnable_states++;
    if (!d->first_refusal[0])
        snprintf(d->first_refusal, sizeof d->first_refusal, "shrink with failed parts %s: %s",
                 parts, why);
}

/* Whether data rank r of the built job has a GPU cut off. */
static int replica_cut(const parallel_config *p, unsigned r, const unsigned char *cut,
                       uint32_t gpus)
{
    for (unsigned s = 0; s < p->pp; s++)
        for (unsigned c = 0; c < p->cp; c++)
            for (unsigned t = 0; t < p->tp; t++) {
                uint32_t g = step_gpu(p, s, r, c, t);
                if (g >= gpus || cut[g])
                    return 1;
            }
    return 0;
}

/* The memory model's verdict on w: 0 fits (or the GPU's memory is unknown),
 * else 1 with why filled. */
static int too_big(const run_degraded *d, const workload *w, char *why, size_t size)
{
    if (!(d->hbm_bytes > 0))
        return 0;
    for (unsigned i = 0; i < w->n_stages; i++) {
        stage_memory m;
        memory_training_stage(w, i, d->reserved_bytes, &m);
        if (m.total_bytes > d->hbm_bytes) {
            snprintf(why, size, "dp %u does not fit: pipeline stage %u needs %.1f GB per GPU, "
                     "the GPU has %.1f GB", w->par.dp, i, m.total_bytes / 1e9, d->hbm_bytes / 1e9);
            return 1;
        }
    }
    return 0;
}

/* The heaviest stage's layers at pp stages: with the job's first/last-stage
 * layers kept on the end stages (ends) or split evenly; 0 when that split
 * does not divide the layers. */
static unsigned heaviest(const model_arch *m, const parallel_config *full, unsigned pp,
                         int ends)
{
    unsigned f = full->first_stage_layers, l = full->last_stage_layers, n = m->layers;
    if (!ends)
        return n % (pp * (full->vpp ? full->vpp : 1)) ? 0 : n / pp;
    if (pp < 2 || f + l > n || (pp == 2 && f + l != n) || (pp > 2 && (f + l == n ||
                                                                       (n - f - l) % (pp - 2))))
        return 0;
    unsigned mid = pp > 2 ? (n - f - l) / (pp - 2) : 0, most = f > l ? f : l;
    return mid > most ? mid : most;
}

/* 0 when the layout with the job's end-stage layers is tried first at pp
 * stages (the k % 2 == 0 candidate), 1 when the even split is: the one whose
 * heaviest stage has fewer layers (the pipeline's pace), the ends on a tie. */
static int ends_first(const model_arch *m, const parallel_config *full, unsigned pp)
{
    unsigned a = heaviest(m, full, pp, 1), b = heaviest(m, full, pp, 0);
    return a && (!b || a <= b) ? 0 : 1;
}

/* reshard="true", when no whole replica is left: the pipeline over fewer
 * stages on the GPUs left. The GPUs go in whole TP x CP groups (the built
 * placement's aligned blocks of tp x cp GPUs, Megatron's order, none cut
 * off), in id order; pp runs from pp - 1 down to 1, and for each dp from the
 * job's down in whole expert groups, each with the job's first/last-stage
 * layers kept on the end stages (when it has them) and with the even split,
 * the one whose heaviest stage has fewer layers first (ends_first); the
 * first layout the workload accepts (the ends kept: layers - first - last a
 * multiple of pp - 2; the even split: layers a multiple of pp x vpp), the
 * GPUs left hold and the memory model fits runs. 1 with *w built and map filled
 * (step_gpu's ids onto GPUs), 0 with why set when none, -1 on an error. */
static int reshard(const run_degraded *d, const unsigned char *cut, uint32_t n_gpus,
                   uint32_t *map, workload *w, char *why, size_t size, sim_error *err)
{
    const parallel_config *full = &d->w.par;
    if (full->order[0] | full->order[1] | full->order[2] | full->order[3]) {
        snprintf(why, size, "re-sharding places in Megatron's order only (the scenario sets "
                 "its own)");
        return 0;
    }
    unsigned group = full->tp * full->cp, ep = full->ep ? full->ep : 1;
    uint32_t blocks = 0;
    for (uint32_t b = 0; group && (uint64_t)(b + 1) * group <= n_gpus; b++) {
        int whole = 1;
        for (unsigned k = 0; k < group && whole; k++)
            whole = !cut[b * group + k];
        if (whole) /* the block's GPUs take the next free ids */
            for (unsigned k = 0; k < group; k++)
                map[blocks * group + k] = b * group + k;
        blocks += whole;
    }
    snprintf(why, size, "no pipeline over fewer stages fits the %u whole TP x CP groups left",
             (unsigned)blocks);
    unsigned ways = full->first_stage_layers ? 2 : 1;
    for (unsigned pp = full->pp - 1; pp >= 1; pp--)
        for (unsigned k = full->dp / ep * ways; k > 0; k--) {
            parallel_config p = *full;
            p.pp = pp;
            p.dp = (k + ways - 1) / ways * ep;
            if (ways == 1 || (int)(k % 2) != ends_first(&d->w.model, full, pp))
                p.first_stage_layers = p.last_stage_layers = 0; /* the even split */
            p.dp_replica = NULL;
            p.dp_placed = 0;
            p.gpu_map = map;
            if ((uint64_t)pp * p.dp > blocks)
                continue; /* more groups than are left */
            sim_error e2;
            sim_error_clear(&e2);
            unsigned long long gpus = (unsigned long long)group * pp * p.dp;
            int rc = workload_build(&d->w.model, &p, gpus, w, &e2);
            if (rc == SIM_ERR_INPUT)
                continue; /* layers or the batch do not split: another layout */
            if (rc) {
                *err = e2;
                return -1;
            }
            char big[160];
            if (!too_big(d, w, big, sizeof big))
                return 1;
            workload_free(w);
            snprintf(why, size, "re-sharded to pp %u dp %u: %s", pp, p.dp, big);
        }
    return 0;
}

double degraded_simulate_shrunk(run_degraded *d, const ff_state *st, const ff_effect *e,
                                const unsigned char *cut, double *kept, sim_error *err)
{
    const parallel_config *full = &d->w.par;
    unsigned ep = full->ep ? full->ep : 1, units = full->dp / ep;
    unsigned *rank = malloc(((size_t)full->dp + 1) * sizeof *rank);
    double *speed = malloc(((size_t)e->n_gpus + 1) * sizeof *speed);
    uint32_t *map = d->reshard ? malloc(((size_t)e->n_gpus + 1) * sizeof *map) : NULL;
    char parts[200], why[256] = "";
    ff_state_text(st, parts, sizeof parts);
    if (!rank || !speed || (d->reshard && !map)) {
        free(rank);
        free(speed);
        free(map);
        sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for a shrunk job");
        return -1;
    }
    unsigned whole = 0; /* the data ranks left whole, in whole expert groups */
    for (unsigned u = 0; u < units; u++) {
        int ok = 1;
        for (unsigned k = 0; k < ep && ok; k++)
            ok = !replica_cut(full, u * ep + k, cut, e->n_gpus);
        for (unsigned k = 0; k < ep && ok; k++)
            rank[whole++] = u * ep + k;
    }
    workload w;
    int built = 0, rc = 0;
    snprintf(why, sizeof why, "no data-parallel replica keeps all its GPUs");
    for (unsigned k = whole / ep; k > 0 && !built; k--) { /* the largest shape that runs */
        parallel_config p = *full;
        p.dp = k * ep;
        p.dp_replica = rank;
        p.dp_placed = full->dp;
        sim_error e2;
        sim_error_clear(&e2);
        unsigned long long gpus = (unsigned long long)p.tp * p.cp * p.pp * p.dp;
        rc = workload_build(&d->w.model, &p, gpus, &w, &e2);
        if (rc == SIM_ERR_INPUT) { /* the batch does not split: fewer replicas */
            snprintf(why, sizeof why, "at dp %u the workload refuses: %s", p.dp, e2.msg);
            rc = 0;
            continue;
        }
        if (rc) {
            *err = e2;
            break;
        }
        if (too_big(d, &w, why, sizeof why)) { /* fewer replicas only need more */
            workload_free(&w);
            break;
        }
        built = 1;
    }
    int resharded = 0;
    if (!rc && !built && d->reshard && whole == 0) { /* no whole replica: fewer stages */
        int r = reshard(d, cut, e->n_gpus, map, &w, why, sizeof why, err);
        rc = r < 0;
        built = resharded = r > 0;
    }
    double t = 0;
    if (!rc && !built)
        refuse(d, parts, why);
    fabric deg;
    if (built && !rc)
        rc = fabric_degrade(&d->f, e, &deg, err);
    if (built && !rc) {
        for (uint32_t k = 0; k < e->n_gpus; k++)
            speed[k] = (d->o.gpu_speed && k < d->o.n_gpu_speed ? d->o.gpu_speed[k] : 1.0) *
                       (cut[k] ? 1.0 : e->gpu_speed[k]); /* cut GPUs run nothing */
        step_options so = d->o;
        so.gpu_speed = speed;
        so.n_gpu_speed = e->n_gpus;
        step_profile pr;
        sim_error e2;
        sim_error_clear(&e2);
        rc = step_simulate(&w, &d->dev, &deg, &so, &pr, &e2);
        if (!rc) {
            t = pr.iteration_s;
            *kept = resharded ? (double)w.par.pp * w.par.dp / ((double)full->pp * full->dp)
                              : (double)w.par.dp / full->dp;
            d->shrunk_states++;
            d->resharded_states += resharded;
            step_profile_free(&pr);
        } else if (rc == SIM_ERR_INPUT) { /* no route between two GPUs it keeps */
            refuse(d, parts, e2.msg);
            rc = 0;
        } else {
            *err = e2;
        }
        fabric_free(&deg);
    }
    if (built)
        workload_free(&w);
    free(rank);
    free(speed);
    free(map);
    return rc ? -1 : t;
}

int run_degraded_cuts(void *ctx, const campaign_part_state *part)
{
    run_degraded *d = ctx;
    int cuts = 0;
#pragma omp critical(dcsim_degraded_fabric)
    {
        int32_t i = part->cause;
        if (i >= 0 && i < CAMPAIGN_MAX_CAUSES && part->part < d->n_ids[i]) {
            if (!d->cuts[i] && (d->cuts[i] = malloc(d->n_ids[i] + 1)))
                memset(d->cuts[i], 2, d->n_ids[i] + 1); /* 2: not known yet */
            signed char *memo = d->cuts[i] ? &d->cuts[i][part->part] : NULL;
            if (memo && *memo != 2) {
                cuts = *memo;
            } else {
                ff_state st;
                ff_state_init(&st);
                st.cage_ports = d->cage_ports;
                ff_part p = {d->cls[i], d->ids[i][part->part], 0};
                ff_effect e = {0};
                sim_error why;
                sim_error_clear(&why);
                unsigned char *cut = malloc((size_t)d->f.gpus + 1);
                if (cut && !ff_state_add(&st, &p) && !ff_effect_compute(&d->f, &st, &e, &why))
                    cuts = ff_effect_cut_gpus(&d->f, &e, cut) > 0;
                free(cut);
                ff_effect_fini(&e);
                ff_state_fini(&st);
                if (memo)
                    *memo = (signed char)cuts;
            }
        }
    }
    return cuts;
}
