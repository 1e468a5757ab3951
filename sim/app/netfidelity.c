/* netfidelity.c - `dcsim netbench --tier packet --op fidelity [-o FILE.xml]`:
 * the packet tier measures what the flow tier should assume (docs/fabric.md
 * "Multi-fidelity"):
 *  - incast: the incast sweep on the scenario's fabric (ranks 1..N -> rank
 *    0, one rank per node, N = 2, 4, ..., ranks - 1);
 *  - sharing: the collision phenomenon with k = 2 .. PKP_SPINES flows of one
 *    leaf on one spine link (its own leaf-spine, the scenario's link),
 * both under the run's flow and congestion control (PFC or credits, --dcqcn,
 * --ibcc, --loss). Each row becomes the capacity fraction that makes the
 * flow tier's time for the same pattern equal to the packet tier's:
 *   e = W / (T_packet - (T_flow - W))
 * with W the bottleneck's bytes over its capacity (N b / C for the incast,
 * k b / B for the shared link) and T_flow - W the flow tier's latency for
 * the pattern (its hop latencies). On InfiniBand (SHARP) also
 *  - in-network: the SHARP all-reduce of --bytes over --ranks ranks (one
 *    per node) on the packet tier (packet_sharp.c) against the flow tier's
 *    in-network algorithm with the catalog's constants (netcoll_in_network.c):
 *    W = S / min(R, C), R the reduction rate, C the host link;
 * RoCE has no SHARP: no such row. -o writes the rows as a <fidelity>
 * element that a scenario XIncludes in its <fabric>; the flow tier then
 * scales a link into a host (incast) or between switches (sharing) by the
 * curve at its demand-weighted fan-in (flow.h flow_net_set_incast).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "netcmd_internal.h"
#include "packet_coll.h"
#include "packet_phenomena.h"

#define MAX_SHARING (PKP_SPINES - 1) /* k = 2 .. PKP_SPINES */
#define MAX_INCAST 24u               /* fan-ins 2, 3, 4, 6, .. 3072, 4095 at most */

typedef struct fid_row {
    unsigned flows;
    double packet_s, flow_s, efficiency;
    double latency_s; /* in-network: the latency the flow tier adds */
} fid_row;

typedef struct fid_table {
    fid_row incast[MAX_INCAST], sharing[MAX_SHARING];
    fid_row sharp;  /* in-network: flows = ranks; 0 when not measured (no SHARP) */
    fid_row sharp_small; /* its second size (S / 4): times only */
    unsigned n_incast, n_sharing;
    char control[160]; /* the flow and congestion control measured under */
} fid_table;

/* W / (T_packet - (T_flow - W)), in (0, 1]: the packet tier is never faster
 * than the flow tier on one pattern (packet_bench.h), so at most 1. */
static double efficiency(double w, double packet_s, double flow_s)
{
    double e = w / (packet_s - (flow_s - w));
    return e > 1 ? 1 : e;
}

static void control_text(const pkt_config *c, char *out, size_t size)
{
    snprintf(out, size, "%s%s%s",
             c->loss == PKT_GO_BACK_N   ? "RoCE lossy, go-back-N"
             : c->loss == PKT_SELECTIVE ? "RoCE lossy, selective retransmission"
             : c->technology == PKT_ROCE ? "RoCE PFC" : "InfiniBand credits",
             c->dcqcn.is_enabled ? " + DCQCN (published set)" : "",
             c->ibcc.is_enabled ? " + IB congestion control (--ibcc)" : "");
}

/* One SHARP all-reduce of `bytes` on both tiers (nc: the catalog's
 * constants): *tp, *tf, and *w the flow tier's bottleneck time (bytes over
 * the reduction rate or the slowest host link). 0, or as pkc_compare_run. */
static int sharp_run(const nc_fabric *nc, const packet_spec *p, double bytes, double *tp,
                     double *tf, double *w, char *why, size_t why_size)
{
    uint32_t *ranks = malloc((size_t)p->ranks * sizeof *ranks);
    if (!ranks)
        return snprintf(why, why_size, "out of memory"), -2;
    for (unsigned i = 0; i < p->ranks; i++)
        ranks[i] = i * p->stride;
    nc_plan plan;
    sim_error err = {0};
    int rc = nc_plan_build(&plan, nc, NC_ALLREDUCE, NC_ALGO_IN_NETWORK, ranks, p->ranks, bytes,
                           &err);
    free(ranks);
    if (rc) {
        snprintf(why, why_size, "fidelity: SHARP: %s", err.msg);
        return err.code == SIM_ERR_NOMEM ? -2 : -1;
    }
    pkc_compare r;
    rc = pkc_plan_check(&plan, why, why_size);
    if (!rc)
        rc = pkc_compare_run(nc, &p->cfg, &plan, &r, why, why_size);
    if (!rc) {
        *w = bytes / plan.phase[0].rate_cap;
        for (uint32_t k = 0; k < plan.phase[0].n_conn; k++) { /* fixed links: listed */
            const nc_conn *c = &plan.conn[plan.phase[0].conn_first + k];
            if (c->dst == NC_FIXED_LINK)
                *w = fmax(*w, bytes / nc->g->link_bytes_per_s[c->src]);
        }
        *tp = r.packet.time_s;
        *tf = r.flow.time_s;
    }
    nc_plan_free(&plan);
    return rc;
}

/* SHARP's row: the all-reduce at S = --bytes and S / 4 on both tiers, the
 * flow tier with the catalog's constants (not a row the scenario may
 * carry). The packet tier's time is a line, T_p = L + S / (e X) (X the
 * flow tier's bottleneck rate): e from the slope (at most 1), the latency
 * it adds to the flow tier's, dL = T_p(S) - (T_f(S) - W) - S / (e X) >= 0;
 * where dL would be negative, dL = 0 and e as for the other rows. Both
 * sizes are then met exactly. */
static int measure_sharp(const fabric *f, const packet_spec *p, fid_table *t, char *why,
                         size_t why_size)
{
    nc_fabric nc = f->nc;
    nc.sharp_efficiency = 0;
    nc.sharp_latency_s = 0;
    double s1 = p->bytes, s2 = ceil(p->bytes / 4), tp1, tf1, w1, tp2, tf2, w2;
    int rc = sharp_run(&nc, p, s1, &tp1, &tf1, &w1, why, why_size);
    if (!rc)
        rc = sharp_run(&nc, p, s2, &tp2, &tf2, &w2, why, why_size);
    if (rc)
        return rc;
    double x = s1 / w1, e = (s1 - s2) / (tp1 - tp2) / x;
    e = e > 0 && e < 1 ? e : 1;
    double dl = tp1 - (tf1 - w1) - s1 / (e * x);
    if (!(dl >= 0)) {
        dl = 0;
        e = efficiency(w1, tp1, tf1);
    }
    t->sharp = (fid_row){p->ranks, tp1, tf1, e, dl};
    t->sharp_small = (fid_row){p->ranks, tp2, tf2, 0, 0};
    return 0;
}

static int measure(const fabric *f, const packet_spec *p, fid_table *t, char *why,
                   size_t why_size)
{
    memset(t, 0, sizeof *t);
    control_text(&p->cfg, t->control, sizeof t->control);
    /* fan-ins 2, 3, 4, 6, 8, 12, ... (powers of two and the halfway points:
     * the curve bends most at small fan-in) up to ranks - 1 */
    unsigned fanins[MAX_INCAST];
    for (unsigned k = 2; k < p->ranks - 1 && t->n_incast < MAX_INCAST - 1;
         k = (k & (k - 1)) ? k / 3 * 4 : k + k / 2)
        fanins[t->n_incast++] = k;
    fanins[t->n_incast++] = p->ranks - 1;
    pkp_incast_row rows[MAX_INCAST];
    int rc = 0;
    for (unsigned i = 0; !rc && i < t->n_incast; i += PKP_MAX_SWEEP) {
        unsigned n = t->n_incast - i < PKP_MAX_SWEEP ? t->n_incast - i : PKP_MAX_SWEEP;
        rc = pkp_incast_sweep(&f->g, f->router, &p->cfg, p->stride, p->bytes, fanins + i, n,
                              rows + i, why, why_size);
    }
    if (rc)
        return rc;
    double C = p->bdp_rate_bytes_per_s; /* the receiver's link: a fabric link */
    for (unsigned i = 0; i < t->n_incast; i++) {
        fid_row *r = &t->incast[i];
        r->flows = rows[i].fanin;
        r->packet_s = rows[i].time_s;
        r->flow_s = rows[i].flow_time_s;
        r->efficiency = efficiency(r->flows * p->bytes / C, r->packet_s, r->flow_s);
    }
    for (unsigned k = 2; k <= PKP_SPINES; k++) {
        pkp_collision_result c;
        if ((rc = pkp_collision(&p->cfg, C, k, p->bytes, &c, why, why_size)))
            return rc;
        if (!c.is_consistent)
            return snprintf(why, why_size, "fidelity: the collision run was inconsistent"), -2;
        fid_row *r = &t->sharing[t->n_sharing++];
        r->flows = c.max_flows_per_link;
        r->packet_s = c.ecmp_s;
        r->flow_s = c.ecmp_bound_lo_s + 4 * p->cfg.hop_latency_s; /* h = 4 links */
        r->efficiency = efficiency(c.ecmp_bound_lo_s, r->packet_s, r->flow_s);
    }
    if (p->cfg.technology == PKT_IB && f->nc.fabric_reduction_bytes_per_s > 0)
        return measure_sharp(f, p, t, why, why_size);
    return 0; /* RoCE: no SHARP, no in-network row */
}

static void source_text(const scn_scenario *s, const packet_spec *p, const fid_table *t,
                        char *out, size_t size)
{
    snprintf(out, size, "dcsim netbench --tier packet --op fidelity: %s fabric of %s, %s, "
             "mtu %.0f B, port buffer %.0f B, hop latency %.4g ns, messages of %.0f B, seed %llu",
             fabric_topology_name(s->fabric.topology), s->fabric.link.name, t->control,
             p->cfg.mtu_bytes, p->cfg.buffer_bytes, p->cfg.hop_latency_s * 1e9, p->bytes,
             (unsigned long long)s->seed);
}

static void xml_rows(FILE *out, const char *name, const fid_row *r, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        fprintf(out, "  <%s flows=\"%u\" efficiency=\"%.17g\" packet-time=\"%.6fus\" "
                "flow-time=\"%.6fus\"/>\n", name, r[i].flows, r[i].efficiency,
                r[i].packet_s * 1e6, r[i].flow_s * 1e6);
}

/* -o FILE.xml: the table as a <fidelity> element (temp + rename). */
static int write_table(const net_options *o, const scn_scenario *s, const packet_spec *p,
                       const fid_table *t, char *why, size_t why_size)
{
    size_t n_in;
    const char **inputs = scn_input_paths(s, o->path, NULL, &n_in); /* XIncluded tables too */
    if (!inputs)
        return snprintf(why, why_size, "out of memory"), -2;
    outpath out;
    sim_error err;
    sim_error_clear(&err);
    int rc = outpath_init(&out, o->output, "the fidelity table", inputs, n_in, &err);
    free(inputs);
    if (rc)
        return snprintf(why, why_size, "-o %s: %s", o->output, err.msg), -1;
    FILE *fp = fopen(out.tmp, "w");
    if (!fp)
        return snprintf(why, why_size, "-o %s: cannot write %s", o->output, out.tmp), -2;
    char source[512];
    source_text(s, p, t, source, sizeof source);
    fprintf(fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<!-- Measured by the packet tier (docs/fabric.md \"Multi-fidelity\"): a link's\n"
            "     capacity fraction against the flows on it, into a host (incast) and\n"
            "     between switches (sharing). Use it in a scenario's fabric:\n"
            "     <fabric ...><xi:include xmlns:xi=\"http://www.w3.org/2001/XInclude\"\n"
            "                             href=\"THIS-FILE\"/></fabric> -->\n"
            "<fidelity link=\"%s\" source=\"%s\">\n", s->fabric.link.name, source);
    xml_rows(fp, "incast", t->incast, t->n_incast);
    xml_rows(fp, "sharing", t->sharing, t->n_sharing);
    if (t->sharp.flows)
        fprintf(fp, "  <in-network ranks=\"%u\" efficiency=\"%.17g\" latency=\"%.17gns\" "
                "packet-time=\"%.6fus\" flow-time=\"%.6fus\"/>\n", t->sharp.flows,
                t->sharp.efficiency, t->sharp.latency_s * 1e9, t->sharp.packet_s * 1e6,
                t->sharp.flow_s * 1e6);
    fprintf(fp, "</fidelity>\n");
    int bad = ferror(fp);
    if (fclose(fp) || bad) {
        outpath_discard(&out);
        return snprintf(why, why_size, "-o %s: write failed", o->output), -2;
    }
    if (outpath_commit(&out, 0, &err))
        return snprintf(why, why_size, "-o %s: %s", o->output, err.msg), -2;
    outpath_fini(&out);
    return 0;
}

static void json_rows(cJSON *j, const char *name, const fid_row *r, unsigned n)
{
    cJSON *a = cJSON_AddArrayToObject(j, name);
    for (unsigned i = 0; i < n; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "flows", r[i].flows);
        cJSON_AddNumberToObject(x, "packet_time_s", r[i].packet_s);
        cJSON_AddNumberToObject(x, "flow_time_s", r[i].flow_s);
        cJSON_AddNumberToObject(x, "efficiency", r[i].efficiency);
        cJSON_AddItemToArray(a, x);
    }
}

static void text_rows(const char *name, const fid_row *r, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        printf("  %-8s %6u %13.3f %11.3f %11.5f\n", name, r[i].flows, r[i].packet_s * 1e6,
               r[i].flow_s * 1e6, r[i].efficiency);
}

int netbench_fidelity(const net_options *o, const scn_scenario *s, const fabric *f,
                      const packet_spec *p, char *why, size_t why_size)
{
    fid_table t;
    int rc = measure(f, p, &t, why, why_size);
    if (!rc && o->output)
        rc = write_table(o, s, p, &t, why, why_size);
    if (rc)
        return rc;
    if (o->json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "tier", "packet");
        cJSON_AddStringToObject(j, "op", "fidelity");
        cJSON_AddStringToObject(j, "link", s->fabric.link.name);
        cJSON_AddStringToObject(j, "control", t.control);
        cJSON_AddNumberToObject(j, "bytes", p->bytes);
        json_rows(j, "incast", t.incast, t.n_incast);
        json_rows(j, "sharing", t.sharing, t.n_sharing);
        if (t.sharp.flows) {
            json_rows(j, "in_network", &t.sharp, 1);
            cJSON *x = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "in_network"), 0);
            cJSON_AddNumberToObject(x, "latency_s", t.sharp.latency_s);
            cJSON_AddNumberToObject(x, "quarter_packet_time_s", t.sharp_small.packet_s);
            cJSON_AddNumberToObject(x, "quarter_flow_time_s", t.sharp_small.flow_s);
        }
        if (o->output)
            cJSON_AddStringToObject(j, "output", o->output);
        return packet_json_print(p, j);
    }
    printf("# dcsim netbench --tier packet: fidelity, link %s (%.4g GB/s), messages of %.0f B, "
           "%s\n", s->fabric.link.name, p->bdp_rate_bytes_per_s / 1e9, p->bytes, t.control);
    packet_print_params(p);
    printf("# incast: N -> 1 into rank 0 on the %s fabric (one rank per node); sharing: k flows "
           "of one leaf on one spine link (%u x %u leaf-spine of the same link)\n",
           fabric_topology_name(s->fabric.topology), PKP_SPINES, PKP_SPINES);
    printf("# efficiency = W / (T_packet - (T_flow - W)), W = bottleneck bytes / capacity: the "
           "capacity fraction that gives the flow tier the packet tier's time\n");
    printf("#  table    flows   packet (us)   flow (us)  efficiency\n");
    text_rows("incast", t.incast, t.n_incast);
    text_rows("sharing", t.sharing, t.n_sharing);
    if (t.sharp.flows) {
        text_rows("in-net", &t.sharp, 1); /* flows: the ranks of the SHARP all-reduce */
        printf("# in-network: SHARP all-reduce over %u ranks, %.0f B (%.3f us packet, %.3f us "
               "flow at %.0f B): efficiency from the slope, + %.4g us latency\n",
               t.sharp.flows, p->bytes, t.sharp_small.packet_s * 1e6,
               t.sharp_small.flow_s * 1e6, ceil(p->bytes / 4), t.sharp.latency_s * 1e6);
    } else
        printf("# in-network: not measured (%s)\n", p->cfg.technology == PKT_IB
               ? "the link has no SHARP reduction" : "RoCE has no SHARP");
    if (o->output)
        printf("# -> %s (XInclude it in <fabric>: docs/fabric.md \"Multi-fidelity\")\n",
               o->output);
    return 0;
}
