/* netphen.c - `dcsim netbench --tier packet --op incast-sweep|victim|stall|
 * collision|lossy`: the packet tier's phenomena (models/packet_phenomena.h runs
 * them; docs/fabric.md "Phenomena"). The incast sweep runs on the
 * scenario's fabric; victim, stall and collision on their own small
 * leaf-spine built with the scenario's link (rate, MTU, buffer, latency).
 * Here only the runs' arguments and the output, text or --json.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "netcmd_internal.h"
#include "packet_phenomena.h"

static const char *const names[] = {"", "incast-sweep", "victim", "stall", "collision",
                                    "lossy", "reorder", "fidelity"};
#define N_NAMES 8
static const char *const variant_names[] = {"RoCE PFC", "RoCE PFC + DCQCN", "IB credits"};

enum phen_op phen_parse(const char *name)
{
    for (int i = 1; i < N_NAMES; i++)
        if (!strcmp(name, names[i]))
            return (enum phen_op)i;
    return PHEN_NONE;
}

const char *phen_name(enum phen_op op) { return (unsigned)op < N_NAMES ? names[op] : "?"; }

static void header(const scn_scenario *s, const packet_spec *p, const char *what)
{
    printf("# dcsim netbench --tier packet: %s, %s, messages of %.0f B, link %s (%.4g GB/s)\n",
           phen_name(p->phen), what, p->bytes, s->fabric.link.name,
           p->bdp_rate_bytes_per_s / 1e9);
    packet_print_params(p);
}

static cJSON *json_header(const scn_scenario *s, const packet_spec *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "tier", "packet");
    cJSON_AddStringToObject(o, "op", phen_name(p->phen));
    cJSON_AddNumberToObject(o, "bytes", p->bytes);
    cJSON_AddStringToObject(o, "link", s->fabric.link.name);
    cJSON_AddNumberToObject(o, "link_bytes_per_s", p->bdp_rate_bytes_per_s);
    cJSON_AddNumberToObject(o, "mtu_bytes", p->cfg.mtu_bytes);
    cJSON_AddNumberToObject(o, "buffer_bytes", p->cfg.buffer_bytes);
    cJSON_AddNumberToObject(o, "hop_latency_s", p->cfg.hop_latency_s);
    cJSON_AddNumberToObject(o, "xoff_bytes", p->cfg.xoff_bytes);
    cJSON_AddNumberToObject(o, "xon_bytes", p->cfg.xon_bytes);
    return o;
}

static cJSON *json_variant(const pkp_variant *v, const char *name)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "flow_control", name);
    cJSON_AddNumberToObject(o, "victim_s", v->victim_s);
    cJSON_AddNumberToObject(o, "incast_s", v->incast_s);
    cJSON_AddNumberToObject(o, "control_s", v->control_s);
    cJSON_AddNumberToObject(o, "max_held_bytes", v->max_held_bytes);
    cJSON_AddNumberToObject(o, "pauses", (double)v->pauses);
    cJSON_AddNumberToObject(o, "ecn_marks", (double)v->ecn_marks);
    cJSON_AddNumberToObject(o, "cnps", (double)v->cnps);
    return o;
}

/* 2, 4, 8, ... and then ranks - 1; returns their number */
static unsigned sweep_fanins(const packet_spec *p, unsigned *fanins)
{
    unsigned n = 0;
    for (unsigned k = 2; k < p->ranks - 1 && n < PKP_MAX_SWEEP - 1; k *= 2)
        fanins[n++] = k;
    fanins[n++] = p->ranks - 1;
    return n;
}

static void json_loss_row(cJSON *r, const pkp_incast_row *w)
{
    cJSON_AddNumberToObject(r, "drops", (double)w->drops);
    cJSON_AddNumberToObject(r, "resent_packets", (double)w->resent_packets);
    cJSON_AddNumberToObject(r, "resent_bytes", w->resent_bytes);
    cJSON_AddNumberToObject(r, "nacks", (double)w->nacks);
    cJSON_AddNumberToObject(r, "timeouts", (double)w->timeouts);
}

static int sweep(const net_options *o, const scn_scenario *s, const fabric *f,
                 const packet_spec *p, char *why, size_t why_size)
{
    unsigned fanins[PKP_MAX_SWEEP], n = sweep_fanins(p, fanins);
    int is_lossy = p->cfg.loss != PKT_LOSSLESS;
    pkp_incast_row rows[PKP_MAX_SWEEP];
    int rc = pkp_incast_sweep(&f->g, f->router, &p->cfg, p->stride, p->bytes, fanins, n, rows,
                              why, why_size);
    if (rc)
        return rc;
    double mtu = p->cfg.mtu_bytes, B = p->bdp_rate_bytes_per_s, d = p->cfg.hop_latency_s;
    if (o->json) {
        cJSON *j = json_header(s, p), *a = cJSON_AddArrayToObject(j, "rows");
        cJSON_AddStringToObject(j, "flow_control",
                                p->cfg.loss == PKT_GO_BACK_N ? "gbn" : p->cfg.loss == PKT_SELECTIVE
                                ? "selective" : p->cfg.technology == PKT_ROCE ? "pfc" : "credits");
        if (is_lossy)
            cJSON_AddNumberToObject(j, "rto_s", p->cfg.rto_s);
        for (unsigned i = 0; i < n; i++) {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddNumberToObject(r, "fanin", rows[i].fanin);
            cJSON_AddNumberToObject(r, "time_s", rows[i].time_s);
            cJSON_AddNumberToObject(r, "flow_time_s", rows[i].flow_time_s);
            cJSON_AddNumberToObject(r, "goodput_bytes_per_s", rows[i].goodput_bytes_per_s);
            cJSON_AddNumberToObject(r, "efficiency", rows[i].efficiency);
            cJSON_AddNumberToObject(r, "max_held_bytes", rows[i].max_held_bytes);
            cJSON_AddNumberToObject(r, "pauses", (double)rows[i].pauses);
            if (is_lossy)
                json_loss_row(r, &rows[i]);
            cJSON_AddItemToArray(a, r);
        }
        return packet_json_print(p, j);
    }
    char what[160];
    snprintf(what, sizeof what, "N -> 1 into rank 0 (one rank per node), %s fabric, %s",
             fabric_topology_name(s->fabric.topology),
             p->cfg.loss == PKT_GO_BACK_N ? "RoCE go-back-N, no PFC"
             : p->cfg.loss == PKT_SELECTIVE ? "RoCE selective retransmission, no PFC"
             : p->cfg.technology == PKT_ROCE ? "RoCE PFC" : "InfiniBand credits");
    header(s, p, what);
    printf("# efficiency = goodput / receiver link; floor = N b / (N b + 4 MTU + 4 d B) "
           "(the bottleneck never idles; one pipeline added%s)\n",
           is_lossy ? "; a lossy run may fall below it" : "");
    printf("#  fan-in   time (us)  flow (us)  goodput (GB/s)  efficiency  floor   max held (B)"
           "  pauses%s\n", is_lossy ? "    drops   resent    nacks timeouts" : "");
    for (unsigned i = 0; i < n; i++) {
        double nb = rows[i].fanin * p->bytes;
        printf("%9u %11.3f %10.3f %15.4g %11.4f %6.4f %14.0f %7llu", rows[i].fanin,
               rows[i].time_s * 1e6, rows[i].flow_time_s * 1e6,
               rows[i].goodput_bytes_per_s / 1e9, rows[i].efficiency,
               nb / (nb + 4 * mtu + 4 * d * B), rows[i].max_held_bytes,
               (unsigned long long)rows[i].pauses);
        if (is_lossy)
            printf(" %8llu %8llu %8llu %8llu", (unsigned long long)rows[i].drops,
                   (unsigned long long)rows[i].resent_packets, (unsigned long long)rows[i].nacks,
                   (unsigned long long)rows[i].timeouts);
        printf("\n");
    }
    return 0;
}

static int victim(const net_options *o, const scn_scenario *s, const packet_spec *p, char *why,
                  size_t why_size)
{
    pkp_victim_result v;
    int rc = pkp_victim(&p->cfg, p->bdp_rate_bytes_per_s, p->ranks - 1, p->bytes, &v, why,
                        why_size);
    if (rc)
        return rc;
    if (o->json) {
        cJSON *j = json_header(s, p), *a = cJSON_AddArrayToObject(j, "variants");
        cJSON_AddNumberToObject(j, "fanin", v.fanin);
        cJSON_AddNumberToObject(j, "shared", v.shared);
        cJSON_AddNumberToObject(j, "victim_start_s", v.start_s);
        cJSON_AddNumberToObject(j, "solo_s", v.solo_s);
        cJSON_AddNumberToObject(j, "solo_closed_s", v.solo_closed_s);
        cJSON_AddNumberToObject(j, "fifo_bound", v.fifo_bound);
        for (int k = 0; k < PKP_VARIANTS; k++)
            cJSON_AddItemToArray(a, json_variant(&v.v[k], variant_names[k]));
        return packet_json_print(p, j);
    }
    char what[200];
    snprintf(what, sizeof what, "%u -> 1 incast on a one-spine leaf-spine (%u leaves of %u "
             "hosts) and a victim flow", v.fanin, PKP_LEAVES, PKP_DOWN);
    header(s, p, what);
    printf("#   DCQCN: pkp_dcqcn_rule (components.md 5.1): Kmin 5 KB, Kmax 200 KB, Pmax 0.2, "
           "timers 50/50/55 us, R_AI 0.2C Mb/s, R_HAI 2C Mb/s, min 1 Gb/s, BC 10 MB\n");
    printf("victim alone     %.3f us (closed form %.3f us); it starts at %.3f us and shares its "
           "leaf's uplink with %u sender%s\n", v.solo_s * 1e6, v.solo_closed_s * 1e6,
           v.start_s * 1e6, v.shared, v.shared > 1 ? "s" : "");
    printf("FIFO bound       x%.0f (sharing one FIFO with %u backlogged flow%s, no pauses)\n",
           v.fifo_bound, v.shared, v.shared > 1 ? "s" : "");
    printf("# %-18s %12s %9s %12s %8s %8s %12s\n", "flow control", "victim (us)", "slowdown",
           "incast (us)", "pauses", "marks", "max held (B)");
    for (int k = 0; k < PKP_VARIANTS; k++)
        printf("  %-18s %12.3f %9.3f %12.3f %8llu %8llu %12.0f\n", variant_names[k],
               v.v[k].victim_s * 1e6, v.v[k].victim_s / v.solo_s, v.v[k].incast_s * 1e6,
               (unsigned long long)v.v[k].pauses, (unsigned long long)v.v[k].ecn_marks,
               v.v[k].max_held_bytes);
    return 0;
}

static int stall(const net_options *o, const scn_scenario *s, const packet_spec *p, char *why,
                 size_t why_size)
{
    pkp_stall_result r;
    int rc = pkp_stall(&p->cfg, p->bdp_rate_bytes_per_s, p->bytes, &r, why, why_size);
    if (rc)
        return rc;
    static const char *const vn[] = {"RoCE PFC", "IB credits"};
    if (o->json) {
        cJSON *j = json_header(s, p), *a = cJSON_AddArrayToObject(j, "variants");
        cJSON_AddNumberToObject(j, "stall_start_s", r.start_s);
        cJSON_AddNumberToObject(j, "stall_end_s", r.end_s);
        cJSON_AddNumberToObject(j, "solo_s", r.solo_s);
        for (int k = 0; k < 2; k++) {
            cJSON *v = json_variant(&r.v[k], vn[k]), *bins = cJSON_AddArrayToObject(v, "bins");
            cJSON_AddNumberToObject(v, "other_links_paused", r.other_links_paused[k]);
            for (unsigned b = 0; b < r.n_bins && r.bins[k][b].end_s < r.v[k].incast_s + r.start_s;
                 b++) {
                const pkp_bin *w = &r.bins[k][b];
                cJSON *x = cJSON_CreateObject();
                cJSON_AddNumberToObject(x, "end_s", w->end_s);
                cJSON_AddNumberToObject(x, "pauses_to_stuck", (double)w->pauses_to_stuck);
                cJSON_AddNumberToObject(x, "pauses_other", (double)w->pauses_other);
                cJSON_AddNumberToObject(x, "links_paused_other", w->links_paused_other);
                cJSON_AddNumberToObject(x, "to_stuck_bytes", w->to_stuck_bytes);
                cJSON_AddNumberToObject(x, "to_others_bytes", w->to_others_bytes);
                cJSON_AddNumberToObject(x, "control_bytes", w->control_bytes);
                cJSON_AddItemToArray(bins, x);
            }
            cJSON_AddItemToArray(a, v);
        }
        return packet_json_print(p, j);
    }
    char what[200];
    snprintf(what, sizeof what, "host 0 stalls over [%.3f, %.3f] us on a one-spine leaf-spine "
             "(%u leaves of %u hosts)", r.start_s * 1e6, r.end_s * 1e6, PKP_LEAVES, PKP_DOWN);
    header(s, p, what);
    printf("# flows at t = 0: 2 to the stuck host, 2 to other hosts sharing a port with them, "
           "1 control sharing none; a lone message takes %.3f us\n", r.solo_s * 1e6);
    for (int k = 0; k < 2; k++) {
        const pkp_variant *v = &r.v[k];
        printf("%s: to the stuck host done %.3f us, to the others %.3f us, control %.3f us; "
               "PAUSE frames %llu; links not into the stuck host paused in the stall: %u; "
               "max held %.0f B\n", vn[k], v->incast_s * 1e6, v->victim_s * 1e6,
               v->control_s * 1e6, (unsigned long long)v->pauses, r.other_links_paused[k],
               v->max_held_bytes);
        printf("#   bin end (us)  PAUSE into stuck  PAUSE other (links)  bytes to stuck"
               "  to others  control\n");
        for (unsigned b = 0; b < r.n_bins && r.bins[k][b].end_s < v->incast_s + r.start_s; b++) {
            const pkp_bin *w = &r.bins[k][b];
            printf("  %13.3f %17llu %12llu (%4u) %15.0f %10.0f %8.0f%s\n", w->end_s * 1e6,
                   (unsigned long long)w->pauses_to_stuck, (unsigned long long)w->pauses_other,
                   w->links_paused_other, w->to_stuck_bytes, w->to_others_bytes,
                   w->control_bytes, w->end_s > r.start_s && w->end_s <= r.end_s ? "  stalled"
                                                                              : "");
        }
    }
    return 0;
}

static int collision(const net_options *o, const scn_scenario *s, const packet_spec *p,
                     char *why, size_t why_size)
{
    pkp_collision_result c;
    int rc = pkp_collision(&p->cfg, p->bdp_rate_bytes_per_s, 2, p->bytes, &c, why, why_size);
    if (rc)
        return rc;
    if (o->json) {
        cJSON *j = json_header(s, p);
        cJSON_AddStringToObject(j, "flow_control",
                                p->cfg.technology == PKT_ROCE ? "pfc" : "credits");
        cJSON_AddNumberToObject(j, "ranks", c.ranks);
        cJSON_AddNumberToObject(j, "max_flows_per_link", c.max_flows_per_link);
        cJSON_AddNumberToObject(j, "ideal_s", c.ideal_s);
        cJSON_AddNumberToObject(j, "ecmp_s", c.ecmp_s);
        cJSON_AddNumberToObject(j, "ecmp_bound_lo_s", c.ecmp_bound_lo_s);
        cJSON_AddNumberToObject(j, "ecmp_bound_hi_s", c.ecmp_bound_hi_s);
        cJSON_AddNumberToObject(j, "adaptive_s", c.adaptive_s);
        return packet_json_print(p, j);
    }
    char what[200];
    snprintf(what, sizeof what, "ring of %u ranks (rank i on leaf i mod %u) on a leaf-spine of "
             "%u leaves and %u spines, %s", c.ranks, PKP_SPINES, PKP_SPINES, PKP_SPINES,
             p->cfg.technology == PKT_ROCE ? "RoCE PFC" : "InfiniBand credits");
    header(s, p, what);
    printf("# route keys: for each flow the first key whose ECMP route takes the wanted spine; "
           "leaf 0's first %u flows all on spine 0\n", c.collide);
    printf("ideal b/B        %.3f us\n", c.ideal_s * 1e6);
    printf("ECMP             %.3f us (x%.3f; busiest link %u flows: bound %.3f .. %.3f us)\n",
           c.ecmp_s * 1e6, c.ecmp_s / c.ideal_s, c.max_flows_per_link, c.ecmp_bound_lo_s * 1e6,
           c.ecmp_bound_hi_s * 1e6);
    printf("adaptive         %.3f us (x%.4f; ideal + pipeline %.3f us)\n", c.adaptive_s * 1e6,
           c.adaptive_s / c.ideal_s, (c.ideal_s + c.pipeline_s) * 1e6);
    return 0;
}

/* --op reorder: a permutation across leaves under ECMP and adaptive
 * routing, each with an out-of-order and an in-order receiving NIC
 * (docs/fabric.md "Reordering"). */
static int reorder(const net_options *o, const scn_scenario *s, const packet_spec *p,
                   char *why, size_t why_size)
{
    static const char *const row_names[] = {"ecmp-out-of-order", "ecmp-in-order",
                                            "adaptive-in-order", "adaptive-out-of-order"};
    static const char *const row_text[] = {"ECMP, out-of-order NIC", "ECMP, in-order NIC",
                                           "adaptive, in-order NIC", "adaptive, out-of-order NIC"};
    pkp_reorder_result r;
    int rc = pkp_reorder(&p->cfg, p->bdp_rate_bytes_per_s, p->bytes, &r, why, why_size);
    if (rc)
        return rc;
    for (int i = 0; i < PKP_REORDER_RUNS; i++)
        if (!r.row[i].is_consistent) {
            snprintf(why, why_size, "--op reorder: the %s run was inconsistent", row_names[i]);
            return -2;
        }
    if (o->json) {
        cJSON *j = json_header(s, p), *a = cJSON_AddArrayToObject(j, "rows");
        cJSON_AddStringToObject(j, "flow_control",
                                p->cfg.technology == PKT_ROCE ? "pfc" : "credits");
        cJSON_AddNumberToObject(j, "rto_s", p->cfg.rto_s);
        cJSON_AddNumberToObject(j, "ranks", r.ranks);
        cJSON_AddNumberToObject(j, "ideal_s", r.ideal_s);
        for (int i = 0; i < PKP_REORDER_RUNS; i++) {
            const pkp_reorder_row *w = &r.row[i];
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "variant", row_names[i]);
            cJSON_AddNumberToObject(x, "time_s", w->time_s);
            cJSON_AddNumberToObject(x, "out_of_order", (double)w->out_of_order);
            cJSON_AddNumberToObject(x, "nacks", (double)w->nacks);
            cJSON_AddNumberToObject(x, "resent_packets", (double)w->resent_packets);
            cJSON_AddNumberToObject(x, "resent_bytes", w->resent_bytes);
            cJSON_AddNumberToObject(x, "discarded", (double)w->discarded);
            cJSON_AddNumberToObject(x, "timeouts", (double)w->timeouts);
            cJSON_AddItemToArray(a, x);
        }
        return packet_json_print(p, j);
    }
    char what[240];
    snprintf(what, sizeof what, "permutation of %u ranks across leaves (slot s of leaf L to "
             "leaf L+1+s mod 3) on a leaf-spine of %u leaves and %u spines, %s", r.ranks,
             PKP_SPINES, PKP_SPINES,
             p->cfg.technology == PKT_ROCE ? "RoCE PFC" : "InfiniBand credits");
    header(s, p, what);
    printf("# out of order = arrivals overtaken by a later packet of their message; resent = "
           "packets that left their NIC again (all spurious: nothing is dropped)\n");
    printf("# ideal b/B %.3f us\n", r.ideal_s * 1e6);
    printf("#  variant                      time (us)  x ideal  out of order    NACKs   resent"
           "  discarded timeouts\n");
    for (int i = 0; i < PKP_REORDER_RUNS; i++) {
        const pkp_reorder_row *w = &r.row[i];
        printf("   %-27s %10.3f %8.4f %13llu %8llu %8llu %10llu %8llu\n", row_text[i],
               w->time_s * 1e6, w->time_s / r.ideal_s, (unsigned long long)w->out_of_order,
               (unsigned long long)w->nacks, (unsigned long long)w->resent_packets,
               (unsigned long long)w->discarded, (unsigned long long)w->timeouts);
    }
    return 0;
}

/* --op lossy: the incast sweep under PFC, go-back-N and selective on the
 * same fabric (docs/fabric.md "Lossy RoCE"). */
static int lossy(const net_options *o, const scn_scenario *s, const fabric *f,
                 const packet_spec *p, char *why, size_t why_size)
{
    static const char *const mode_names[] = {"pfc", "gbn", "selective"};
    static const char *const mode_text[] = {"PFC", "go-back-N", "selective"};
    unsigned fanins[PKP_MAX_SWEEP], n = sweep_fanins(p, fanins);
    pkp_incast_row rows[3][PKP_MAX_SWEEP];
    for (int m = 0; m < 3; m++) {
        pkt_config c = p->cfg;
        c.loss = (enum pkt_loss_mode)m;
        if (m == 0)
            c.rto_s = 0;
        int rc = pkp_incast_sweep(&f->g, f->router, &c, p->stride, p->bytes, fanins, n, rows[m],
                                  why, why_size);
        if (rc)
            return rc;
    }
    if (o->json) {
        cJSON *j = json_header(s, p), *a = cJSON_AddArrayToObject(j, "rows");
        cJSON_AddNumberToObject(j, "rto_s", p->cfg.rto_s);
        for (unsigned i = 0; i < n; i++) {
            cJSON *r = cJSON_CreateObject(), *v = NULL;
            cJSON_AddNumberToObject(r, "fanin", fanins[i]);
            v = cJSON_AddArrayToObject(r, "modes");
            for (int m = 0; m < 3; m++) {
                const pkp_incast_row *w = &rows[m][i];
                cJSON *x = cJSON_CreateObject();
                cJSON_AddStringToObject(x, "mode", mode_names[m]);
                cJSON_AddNumberToObject(x, "time_s", w->time_s);
                cJSON_AddNumberToObject(x, "goodput_bytes_per_s", w->goodput_bytes_per_s);
                cJSON_AddNumberToObject(x, "efficiency", w->efficiency);
                cJSON_AddNumberToObject(x, "max_held_bytes", w->max_held_bytes);
                cJSON_AddNumberToObject(x, "pauses", (double)w->pauses);
                json_loss_row(x, w);
                cJSON_AddItemToArray(v, x);
            }
            cJSON_AddItemToArray(a, r);
        }
        return packet_json_print(p, j);
    }
    char what[160];
    snprintf(what, sizeof what, "N -> 1 into rank 0 (one rank per node), %s fabric, RoCE PFC vs "
             "lossy go-back-N vs selective", fabric_topology_name(s->fabric.topology));
    header(s, p, what);
    printf("# goodput = the receiver's bytes / its last arrival; resent = packets that left "
           "their NIC again\n");
    printf("#  fan-in  mode        time (us)  goodput (GB/s)  efficiency   pauses    drops   "
           "resent    nacks timeouts\n");
    for (unsigned i = 0; i < n; i++)
        for (int m = 0; m < 3; m++) {
            const pkp_incast_row *w = &rows[m][i];
            printf("%9u  %-10s %10.3f %15.4g %11.4f %8llu %8llu %8llu %8llu %8llu\n", fanins[i],
                   mode_text[m], w->time_s * 1e6, w->goodput_bytes_per_s / 1e9, w->efficiency,
                   (unsigned long long)w->pauses, (unsigned long long)w->drops,
                   (unsigned long long)w->resent_packets, (unsigned long long)w->nacks,
                   (unsigned long long)w->timeouts);
        }
    return 0;
}

int netbench_phenomenon(const net_options *o, const scn_scenario *s, const fabric *f,
                        const packet_spec *p)
{
    char why[256] = "";
    int rc = p->phen == PHEN_FIDELITY ? netbench_fidelity(o, s, f, p, why, sizeof why)
             : p->phen == PHEN_SWEEP  ? sweep(o, s, f, p, why, sizeof why)
             : p->phen == PHEN_LOSSY  ? lossy(o, s, f, p, why, sizeof why)
             : p->phen == PHEN_VICTIM ? victim(o, s, p, why, sizeof why)
             : p->phen == PHEN_STALL  ? stall(o, s, p, why, sizeof why)
             : p->phen == PHEN_REORDER ? reorder(o, s, p, why, sizeof why)
                                      : collision(o, s, p, why, sizeof why);
    if (rc == -1) {
        char msg[320];
        snprintf(msg, sizeof msg, "--tier packet --op %s: %s", phen_name(p->phen), why);
        return cli_usage_error("netbench", "%s", msg);
    }
    if (rc) {
        fprintf(stderr, "dcsim netbench: error: %s\n", why);
        return 1;
    }
    return 0;
}
