/* netpacket.c - `dcsim netbench --tier packet`: one pattern (send, incast,
 * all-to-all; models/packet_bench.h) or one collective's plan (all-reduce,
 * all-gather, reduce-scatter; models/packet_coll.h) on the packet tier and
 * on the flow tier over the scenario's fabric; here only the options, where
 * each parameter comes from (catalog, option or a printed rule) and the
 * output.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "jsonout.h"
#include "netcmd_internal.h"
#include "packet_bench.h"
#include "packet_coll.h"
#include "packet_phenomena.h"
#include "packet_sharp.h"
#include "packet_trace.h"
#include "resources.h"
#include "units.h"

/* The default most bins of -o: 256 (a dcsim default, printed, --bins;
 * packet_trace.h). A k = 16 fat-tree's 6,144 directed links x 256 bins take
 * at most about 100 MB (every link busy; idle links take no bins). */

/* A size option: 0, or the exit status of the one-line error printed. */
static int packet_size(const char *opt, const char *text, double max, const char *max_text,
                       double *out)
{
    char msg[160];
    if (netcmd_parse_size(text, out) || !(*out >= 1)) {
        snprintf(msg, sizeof msg, "%s %%s: expected a positive size such as 4096, 64K, 1M or 1MB",
                 opt);
        return cli_usage_error("netbench", msg, text);
    }
    if (*out > max) {
        snprintf(msg, sizeof msg, "%s %%s: expected at most %s", opt, max_text);
        return cli_usage_error("netbench", msg, text);
    }
    return 0;
}

/* Every packet of the run may be queued at once (a message's packets all
 * enter its NIC FIFO when it is sent): at least hops / 2 packets of
 * pkt_packet_record_bytes each, against what this process may use.
 * Returns 0 or the exit status of the error printed. */
int packet_memory_check(const scn_scenario *s, double min_hops, double path_bytes)
{
    sim_error err;
    sim_error_clear(&err);
    if (res_check_more(s, RES_STEP, min_hops / 2 * (double)pkt_packet_record_bytes() + path_bytes,
                       path_bytes > 0 ? "packets queued at once and their messages' Valiant "
                       "paths" : "packets queued at once", &err)) {
        fprintf(stderr, "dcsim netbench: error: --tier packet: %s\n", err.msg);
        return CLI_EXIT_INPUT;
    }
    return 0;
}

/* A phenomenon's ranks and bytes by default, and the most ranks it takes
 * (docs/fabric.md "Phenomena"). Returns 0 or the exit status of the error. */
static int phen_defaults(const net_options *o, packet_spec *p, unsigned *most)
{
    if ((p->phen == PHEN_STALL || p->phen == PHEN_COLLISION) && o->ranks)
        return cli_usage_error("netbench", "--ranks %s: --op stall and --op collision run a "
                               "fixed set of flows (docs/fabric.md \"Phenomena\")", o->ranks);
    if (p->phen == PHEN_REORDER && o->ranks)
        return cli_usage_error("netbench", "--ranks %s: --op reorder runs a fixed permutation of "
                               "16 ranks (docs/fabric.md \"Reordering\")", o->ranks);
    if (p->phen == PHEN_SWEEP || p->phen == PHEN_LOSSY || p->phen == PHEN_FIDELITY)
        p->ranks = 33; /* fan-ins 2, 4, 8, 16, 32 */
    if (p->phen == PHEN_VICTIM) {
        *most = PKP_MAX_FANIN + 1; /* its own leaf-spine */
        p->ranks = 10;             /* fan-in 9 */
    }
    p->bytes = p->phen == PHEN_VICTIM || p->phen == PHEN_STALL ? 4194304
               : p->phen == PHEN_COLLISION ? 8388608
               : p->phen == PHEN_FIDELITY  ? 4194304 : 1048576;
    return 0;
}

/* --op, --algo and the flow tier's options: 0 or the exit status of the
 * error printed. */
static int packet_parse_op(const net_options *o, packet_spec *p)
{
    p->csv = o->csv;
    p->phen = o->op ? phen_parse(o->op) : PHEN_NONE;
    if (p->phen != PHEN_NONE) {
        p->op = PKB_INCAST;
    } else if (o->op && pkb_op_parse(o->op, &p->op)) {
        if (nc_collective_parse(o->op, &p->coll) ||
            (p->coll != NC_ALLREDUCE && p->coll != NC_ALLGATHER && p->coll != NC_REDUCESCATTER))
            return cli_usage_error("netbench", "--op %s: --tier packet runs send, incast, "
                                   "alltoall, allreduce, allgather, reducescatter, incast-sweep, "
                                   "victim, stall, collision, lossy, reorder or fidelity", o->op);
        p->is_coll = 1;
    }
    if (o->algo && !p->is_coll)
        return cli_usage_error("netbench", "--algo %s: --tier packet takes an algorithm only for "
                               "a collective (--op allreduce, allgather or reducescatter)",
                               o->algo);
    const char *flow_only = o->min ? "--min" : o->max ? "--max" : o->factor ? "--factor"
                            : o->analytic ? "--analytic" : NULL;
    if (flow_only)
        return cli_usage_error("netbench", "%s is an option of the flow tier, not of --tier "
                               "packet (which takes --op, --ranks, --bytes, --mtu, --buffer, "
                               "--hop-latency, and --algo for a collective)", flow_only);
    p->algo = NC_ALGO_RING;
    if (o->algo && (nc_algorithm_parse(o->algo, &p->algo) || p->algo == NC_ALGO_AUTO ||
                    p->algo == NC_ALGO_DIRECT))
        return cli_usage_error("netbench", "--algo %s: --tier packet runs ring, tree, hd, "
                               "hierarchical or in-network (SHARP; auto's protocols are "
                               "flow-tier only)", o->algo);
    if (p->algo == NC_ALGO_IN_NETWORK && p->coll != NC_ALLREDUCE)
        return cli_usage_error("netbench", "--algo %s: --tier packet runs it for --op "
                               "allreduce only", o->algo);
    return 0;
}

/* --ibcc and --dcqcn with a phenomenon: 0 or the exit status of the error
 * printed. The incast sweep and the fidelity table take them (they run
 * cfg); the others set their own flow control. */
static int packet_parse_ibcc(const net_options *o, const packet_spec *p)
{
    int takes_cc = p->phen == PHEN_NONE || p->phen == PHEN_SWEEP || p->phen == PHEN_FIDELITY;
    if (o->ibcc && !takes_cc)
        return cli_usage_error("netbench", "--ibcc %s: runs with send, incast, alltoall, the "
                               "collectives, incast-sweep and fidelity (the other phenomena set "
                               "their own flow control)", o->ibcc);
    if (o->dcqcn && !takes_cc)
        return cli_usage_error("netbench", "--dcqcn: runs with send, incast, alltoall, the "
                               "collectives, incast-sweep and fidelity (--op %s sets its own "
                               "flow control)", phen_name(p->phen));
    if (o->dcqcn && o->loss)
        return cli_usage_error("netbench", "--dcqcn with --loss %s: the packet tier runs DCQCN "
                               "over PFC only (lossy RoCE with DCQCN is not modelled)", o->loss);
    if (o->adaptive && p->phen != PHEN_NONE)
        return cli_usage_error("netbench", "--adaptive: runs with send, incast, alltoall and the "
                               "collectives (--op %s sets its own routing)", phen_name(p->phen));
    return 0; /* the values: app_packet_config */
}

/* --reorder (docs/fabric.md "Reordering"), after the tier's parameters:
 * 0 or the exit status of the error printed. */
static int packet_parse_reorder(const net_options *o, packet_spec *p)
{
    if (!o->reorder)
        return 0;
    if (p->phen != PHEN_NONE)
        return cli_usage_error("netbench", "--reorder %s: runs with send, incast, alltoall and "
                               "the collectives (--op reorder runs both receivers side by side; "
                               "the other phenomena set their own)", o->reorder);
    if (!strcmp(o->reorder, "in-order"))
        p->cfg.reorder = PKT_RX_IN_ORDER;
    else if (!strcmp(o->reorder, "out-of-order"))
        p->cfg.reorder = PKT_RX_OUT_OF_ORDER;
    else
        return cli_usage_error("netbench", "--reorder %s: expected in-order or out-of-order",
                               o->reorder);
    if (o->loss)
        return cli_usage_error("netbench", "--reorder --loss %s: a lossy mode's receiver is the "
                               "mode's (go-back-N in order, selective out of order)", o->loss);
    if (p->cfg.reorder == PKT_RX_IN_ORDER && o->ibcc)
        return cli_usage_error("netbench", "--reorder in-order --ibcc %s: not modelled (resends "
                               "would bypass the CCTI pacer)", o->ibcc);
    p->has_reorder = 1;
    return 0;
}

/* --loss and --rto (docs/fabric.md "Lossy RoCE"; the in-order receiver's
 * RTO, "Reordering"): 0 or the exit status of the error printed. The RTO
 * has no published default: the user's. */
static int packet_parse_loss(const net_options *o, packet_spec *p, const hw_link *lk)
{
    int is_lossy_op = p->phen == PHEN_LOSSY;
    int is_in_order = p->phen == PHEN_REORDER || p->cfg.reorder == PKT_RX_IN_ORDER;
    if (o->loss) {
        if (is_lossy_op)
            return cli_usage_error("netbench", "--loss %s: --op lossy runs PFC, go-back-N and "
                                   "selective side by side; --loss picks one mode for the "
                                   "other ops", o->loss);
        if (p->phen == PHEN_VICTIM || p->phen == PHEN_STALL || p->phen == PHEN_COLLISION)
            return cli_usage_error("netbench", "--loss %s: --op victim, stall and collision run "
                                   "lossless flow control only", o->loss);
        if (p->phen == PHEN_REORDER)
            return cli_usage_error("netbench", "--loss %s: --op reorder runs lossless flow "
                                   "control only (its in-order NIC goes back N on reordering)",
                                   o->loss);
        if (!strcmp(o->loss, "gbn"))
            p->cfg.loss = PKT_GO_BACK_N;
        else if (!strcmp(o->loss, "selective"))
            p->cfg.loss = PKT_SELECTIVE;
        else
            return cli_usage_error("netbench", "--loss %s: expected gbn (go-back-N) or "
                                   "selective", o->loss);
    }
    if ((o->loss || is_lossy_op) && p->cfg.technology != PKT_ROCE) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s: the fabric link %%s is InfiniBand, whose credits never "
                 "drop; lossy modes are RoCE's", o->loss ? "--loss" : "--op lossy");
        return cli_usage_error("netbench", msg, lk->name);
    }
    if (!o->loss && !is_lossy_op && !is_in_order) {
        if (o->rto)
            return cli_usage_error("netbench", "--rto %s: a retransmission timeout needs --loss "
                                   "gbn|selective, --reorder in-order, --op lossy or --op "
                                   "reorder", o->rto);
        return 0;
    }
    if (!o->rto)
        return cli_usage_error("netbench", "%s: give the retransmission timeout with --rto TIME, "
                               "e.g. --rto 100us (no published default: a GAP in "
                               "components.md 5.2)", o->loss ? "--loss" : is_lossy_op ?
                               "--op lossy" : is_in_order && p->phen == PHEN_REORDER ?
                               "--op reorder" : "--reorder in-order");
    char why[128];
    if (sim_units_parse(o->rto, SIM_DIM_TIME, &p->cfg.rto_s, why, sizeof why) ||
        !(p->cfg.rto_s > 0) || !isfinite(p->cfg.rto_s) || p->cfg.rto_s > 1)
        return cli_usage_error("netbench", "--rto %s: expected a time above 0 and at most 1s "
                               "such as 100us", o->rto);
    snprintf(p->rto_from, sizeof p->rto_from, "--rto %s", o->rto);
    return 0;
}

/* The pattern and the tier's parameters from the options and the catalog.
 * Returns 0 or the exit status of the error printed. */
static int packet_parse(const net_options *o, const scn_scenario *s, const fabric *f,
                        packet_spec *p)
{
    memset(p, 0, sizeof *p);
    int rc = packet_parse_op(o, p);
    if (rc)
        return rc;
    /* one rank per node (its first GPU): the pattern crosses the fabric only */
    p->stride = s->fabric.gpus_per_node > 1 ? s->fabric.gpus_per_node : 1;
    unsigned nodes = (f->gpus + p->stride - 1) / p->stride;
    unsigned most = nodes < PKB_MAX_RANKS ? nodes : PKB_MAX_RANKS;
    p->ranks = !p->is_coll && p->op == PKB_SEND ? 2 : 16;
    if (p->phen != PHEN_NONE && (rc = phen_defaults(o, p, &most)))
        return rc;
    if (p->ranks > most)
        p->ranks = most;
    if (o->ranks) {
        char *end;
        unsigned long n = strtoul(o->ranks, &end, 10);
        if (*end || end == o->ranks || n < 2 || n > most) {
            char msg[240];
            snprintf(msg, sizeof msg, "--ranks %%s: expected a whole number from 2 to %u (%s)",
                     most, p->phen == PHEN_VICTIM ? "--op victim: ranks - 1 incast senders "
                                                    "on its own leaf-spine"
                     : most < nodes ? "the packet tier's limit: it moves about 2-3 M "
                                      "packet-hops/s" : "the cluster's nodes, one rank each");
            return cli_usage_error("netbench", msg, o->ranks);
        }
        p->ranks = (unsigned)n;
    }
    if (p->ranks < 2)
        return cli_usage_error("netbench", "%s: the cluster has fewer than 2 GPUs", o->path);
    if (p->phen == PHEN_NONE)
        p->bytes = 1048576;
    if (o->bytes &&
        (rc = packet_size("--bytes", o->bytes, NETBENCH_MAX_BYTES, "1 TiB", &p->bytes)))
        return rc;
    if ((rc = packet_parse_ibcc(o, p)))
        return rc;
    app_packet_opts po = {.mtu = o->mtu, .buffer = o->buffer, .hop_latency = o->hop_latency,
                          .ibcc = o->ibcc, .dcqcn = o->dcqcn, .adaptive = o->adaptive,
                          .candidates = o->candidates, .ugal = o->ugal};
    if ((rc = app_packet_config("netbench", "--tier packet", s, f, &po,
                                p->phen == PHEN_VICTIM || p->phen == PHEN_STALL, &p->pc)))
        return rc;
    p->cfg = p->pc.cfg;
    p->bdp_rate_bytes_per_s = p->pc.bdp_rate_bytes_per_s;
    if ((rc = packet_parse_reorder(o, p)) || (rc = packet_parse_loss(o, p, &s->fabric.link)))
        return rc;
    if (p->cfg.loss != PKT_LOSSLESS)
        p->pc.has_pfc = 0; /* the thresholds stay set, unused: no PFC line */
    double hops = p->is_coll ? 0 : pkb_min_packet_hops(p->op, p->ranks, p->bytes,
                                                       p->cfg.mtu_bytes);
    if (p->phen == PHEN_NONE && hops > PKB_MAX_PACKET_HOPS) { /* phenomena check their own */
        char msg[320];
        snprintf(msg, sizeof msg, "--ranks %%s: %s of %.0f B would take at least %.3g "
                 "packet-hops (about %.0f s at %.3g M/s); at most %.0e: lower --ranks or --bytes, "
                 "or raise --mtu", pkb_op_name(p->op), p->bytes, hops, hops / PKB_PACKET_HOPS_PER_S,
                 PKB_PACKET_HOPS_PER_S / 1e6,
                 PKB_MAX_PACKET_HOPS);
        char ranks[16];
        snprintf(ranks, sizeof ranks, "%u", p->ranks);
        return cli_usage_error("netbench", msg, ranks);
    }
    double paths = 0; /* Dragonfly per-packet routing: every message's candidate paths */
    if (p->cfg.is_adaptive && !f->g.updown && !p->is_coll)
        paths = (double)pkb_messages(p->op, p->ranks) * PKT_DF_PATH_WORDS *
                (p->pc.candidates ? p->pc.candidates : app_packet_groups(&f->g) - 2.0) *
                sizeof(uint32_t);
    if (p->phen == PHEN_NONE && !p->is_coll && (rc = packet_memory_check(s, hops, paths)))
        return rc;
    return 0;
}

/* The -o lines of "defaults used": the first bin, the most bins, and what
 * the run ended with (the series, once it ran). */
static void packet_print_series(const packet_spec *p)
{
    if (!p->has_trace)
        return;
    printf("#   time series bin %.4g ns: %s\n", p->series.dt_s * 1e9, p->dt_from);
    printf("#   time series at most %u bins: %s\n", p->series.max_bins, p->bins_from);
    const pkt_series *ser = p->series.series;
    if (ser)
        printf("# time series  %u bins of %.4g ns (%u merge%s), %u links with traffic -> %s\n",
               pkt_series_bins(ser), pkt_series_dt(ser) * 1e9, pkt_series_merges(ser),
               pkt_series_merges(ser) == 1 ? "" : "s", pkt_series_stored(ser),
               p->trace_out.path);
}

/* -o: the series' figures in a JSON document */
static void json_series(cJSON *o, const packet_spec *p)
{
    const pkt_series *ser = p->series.series;
    if (!p->has_trace || !ser)
        return;
    cJSON *t = cJSON_AddObjectToObject(o, "trace");
    cJSON_AddStringToObject(t, "path", p->trace_out.path);
    cJSON_AddNumberToObject(t, "bins", pkt_series_bins(ser));
    cJSON_AddNumberToObject(t, "dt_s", pkt_series_dt(ser));
    cJSON_AddNumberToObject(t, "first_dt_s", p->series.dt_s);
    cJSON_AddStringToObject(t, "first_dt_from", p->dt_from);
    cJSON_AddNumberToObject(t, "max_bins", p->series.max_bins);
    cJSON_AddStringToObject(t, "max_bins_from", p->bins_from);
    cJSON_AddNumberToObject(t, "merges", pkt_series_merges(ser));
    cJSON_AddNumberToObject(t, "links", pkt_series_stored(ser));
    cJSON_AddNumberToObject(t, "fabric_links", pkt_series_links(ser));
}

/* -o FILE.h5 [--bin TIME] [--bins N]: check the target (outpath.h: as
 * `dcsim run -o`), the run (one net), the bins and their memory. Returns 0
 * or the exit status of the error printed. */
static int packet_trace_parse(const net_options *o, const scn_scenario *s, const fabric *f,
                              packet_spec *p)
{
    if (!o->output) {
        const char *opt = o->bin ? "--bin" : o->bins ? "--bins" : NULL;
        return opt ? cli_usage_error("netbench", "%s: needs -o FILE.h5 (the time series' "
                                     "file)", opt) : 0;
    }
    if (p->phen == PHEN_FIDELITY)
        return o->bin || o->bins ? cli_usage_error("netbench", "%s: --op fidelity writes a "
                                                   "table (-o FILE.xml), not a time series",
                                                   o->bin ? "--bin" : "--bins") : 0;
    if (p->phen != PHEN_NONE)
        return cli_usage_error("netbench", "-o %s: --op incast-sweep, victim, stall and "
                               "collision run several nets (one per fan-in or variant); -o "
                               "writes one run's series: use send, incast, alltoall or a "
                               "collective", o->output);
    packet_trace_bins_out bo;
    int brc = packet_trace_bins("netbench", o->bin, o->bins, p->cfg.mtu_bytes,
                                f->link_bytes_per_s, &bo);
    if (brc)
        return brc;
    p->series.dt_s = bo.dt_s;
    p->series.max_bins = bo.max_bins;
    snprintf(p->dt_from, sizeof p->dt_from, "%s", bo.dt_from);
    snprintf(p->bins_from, sizeof p->bins_from, "%s", bo.bins_from);
    sim_error err;
    sim_error_clear(&err);
    double bytes = pkt_series_bytes(f->g.n_links, p->series.max_bins);
    if (res_check_more(s, RES_STEP, bytes, "the time series of -o", &err)) {
        fprintf(stderr, "dcsim netbench: error: -o %s: %u links x %u bins: %s\n", o->output,
                f->g.n_links, p->series.max_bins, err.msg);
        return CLI_EXIT_INPUT;
    }
    size_t n_in;
    const char **inputs = scn_input_paths(s, o->path, NULL, &n_in);
    if (!inputs) {
        fprintf(stderr, "dcsim netbench: error: out of memory\n");
        return 1;
    }
    int rc = outpath_init(&p->trace_out, o->output, "the trace", inputs, n_in, &err);
    free(inputs);
    if (rc)
        return cli_print_error(&err);
    p->has_trace = 1;
    return 0;
}

int packet_trace_finish(const net_options *o, const scn_scenario *s, const fabric *f,
                        packet_spec *p, const char *op, const char *alg, uint64_t digest,
                        uint64_t events, double end_s)
{
    if (!p->has_trace)
        return 0;
    char command[4096];
    size_t used = (size_t)snprintf(command, sizeof command, "dcsim netbench");
    for (int i = 0; i < o->argc && used < sizeof command; i++)
        used += (size_t)snprintf(command + used, sizeof command - used, " %s", o->argv[i]);
    packet_trace_meta m = {command, op, alg, s->name, s->source, s->seed, digest, events,
                           end_s, &p->cfg, NULL};
    sim_error err;
    sim_error_clear(&err);
    int rc = packet_trace_write(&p->trace_out, &f->g, p->series.series, &m, &err);
    pkt_series_destroy(p->series.series);
    p->series.series = NULL;
    return rc ? cli_print_error(&err) : 0;
}

void packet_print_params(const packet_spec *p)
{
    app_packet_config_print(stdout, "# ", &p->pc);
    packet_print_series(p);
    const pkt_config *c = &p->cfg;
    if (c->loss != PKT_LOSSLESS || p->phen == PHEN_LOSSY)
        printf("# lossy RoCE   %s; tail drop above the port buffer; RTO %.4g us: %s (a GAP: no "
               "published default)\n", p->phen == PHEN_LOSSY ? "PFC vs go-back-N vs selective"
               : c->loss == PKT_GO_BACK_N ? "go-back-N, no PFC" : "selective (IRN-style), no PFC",
               c->rto_s * 1e6, p->rto_from);
    if (c->reorder == PKT_RX_IN_ORDER || p->phen == PHEN_REORDER)
        printf("# receiver     %s (classic RC: a packet ahead of the expected one is discarded "
               "and NACKed, the sender goes back N; PFC or credits stay on); RTO %.4g us: %s (a "
               "GAP: no published default)\n", p->phen == PHEN_REORDER
               ? "in-order NIC vs out-of-order NIC" : "in-order NIC", c->rto_s * 1e6,
               p->rto_from);
    else if (p->has_reorder)
        printf("# receiver     out-of-order NIC (places packets in any order: --reorder)\n");
}

/* The receiver's counters (--reorder): one text line, or JSON members. */
void packet_print_reorder(const pkt_net_stats *st)
{
    printf("reorder          %llu arrivals out of order; %llu NACKs, %llu spurious resends "
           "(%.0f B), %llu arrivals discarded, %llu timeouts\n",
           (unsigned long long)st->out_of_order, (unsigned long long)st->nacks,
           (unsigned long long)st->resent_packets, st->resent_bytes,
           (unsigned long long)st->discarded, (unsigned long long)st->timeouts);
}

void packet_json_reorder(cJSON *o, const pkt_config *c, const pkt_net_stats *st)
{
    cJSON_AddStringToObject(o, "reorder", c->reorder == PKT_RX_IN_ORDER ? "in-order"
                                                                         : "out-of-order");
    cJSON_AddNumberToObject(o, "out_of_order", (double)st->out_of_order);
    cJSON_AddNumberToObject(o, "nacks", (double)st->nacks);
    cJSON_AddNumberToObject(o, "resent_packets", (double)st->resent_packets);
    cJSON_AddNumberToObject(o, "resent_bytes", st->resent_bytes);
    cJSON_AddNumberToObject(o, "discarded", (double)st->discarded);
    cJSON_AddNumberToObject(o, "timeouts", (double)st->timeouts);
    if (c->reorder == PKT_RX_IN_ORDER)
        cJSON_AddNumberToObject(o, "rto_s", c->rto_s);
}

void packet_print_loss(const pkt_net_stats *st)
{
    printf("drops            %llu packets at switch ports; %llu resent (%.0f B), %llu NACKs, "
           "%llu timeouts, %llu arrivals discarded\n", (unsigned long long)st->drops,
           (unsigned long long)st->resent_packets, st->resent_bytes,
           (unsigned long long)st->nacks, (unsigned long long)st->timeouts,
           (unsigned long long)st->discarded);
}

void packet_json_loss(struct cJSON *o, const pkt_net_stats *st)
{
    cJSON_AddNumberToObject(o, "drops", (double)st->drops);
    cJSON_AddNumberToObject(o, "resent_packets", (double)st->resent_packets);
    cJSON_AddNumberToObject(o, "resent_bytes", st->resent_bytes);
    cJSON_AddNumberToObject(o, "nacks", (double)st->nacks);
    cJSON_AddNumberToObject(o, "timeouts", (double)st->timeouts);
    cJSON_AddNumberToObject(o, "discarded", (double)st->discarded);
}

/* IB congestion control's and a lossy mode's counters, when on (text). */
void packet_print_congestion(const pkt_config *c, const pkt_net_stats *st)
{
    if (c->ibcc.is_enabled)
        printf("IB CC            %llu FECN marks, %llu BECNs, %llu reached a sender in flight\n",
               (unsigned long long)st->ecn_marks, (unsigned long long)st->cnps,
               (unsigned long long)st->rate_cuts);
    if (c->loss != PKT_LOSSLESS)
        packet_print_loss(st);
    if (c->is_adaptive)
        printf("per packet       %llu of %llu packets took a Valiant path; %llu arrivals out "
               "of order\n", (unsigned long long)st->valiant_packets,
               (unsigned long long)st->packets_injected, (unsigned long long)st->out_of_order);
}

/* The same in JSON. */
void packet_json_congestion(cJSON *o, const pkt_config *c, const pkt_net_stats *st)
{
    if (c->ibcc.is_enabled) {
        cJSON_AddNumberToObject(o, "fecn_marks", (double)st->ecn_marks);
        cJSON_AddNumberToObject(o, "becns", (double)st->cnps);
        cJSON_AddNumberToObject(o, "becns_in_flight", (double)st->rate_cuts);
    }
    if (c->loss != PKT_LOSSLESS)
        packet_json_loss(o, st);
    if (c->is_adaptive)
        cJSON_AddNumberToObject(o, "valiant_packets", (double)st->valiant_packets);
}

static void packet_print_text(const scn_scenario *s, const packet_spec *p, const pkb_result *r)
{
    const pkt_config *c = &p->cfg;
    const pkt_net_stats *st = &r->stats;
    int roce = c->technology == PKT_ROCE;
    printf("# dcsim netbench --tier packet: %s, %u ranks (one per node: GPUs 0, %u, ...), %llu "
           "message%s of %.0f B, %s fabric of %s, %s\n", pkb_op_name(p->op), p->ranks, p->stride,
           (unsigned long long)r->messages, r->messages > 1 ? "s" : "", p->bytes, fabric_topology_name(s->fabric.topology),
           s->fabric.link.name, c->loss == PKT_GO_BACK_N ? "RoCE go-back-N, no PFC"
           : c->loss == PKT_SELECTIVE ? "RoCE selective retransmission, no PFC"
           : roce ? "RoCE PFC" : "InfiniBand credits");
    packet_print_params(p);
    printf("packet time      %.4f us\n", r->packet_time_s * 1e6);
    printf("flow time        %.4f us (max-min flow tier, same routes, hops x hop latency)\n",
           r->flow_time_s * 1e6);
    printf("packet / flow    %.4f\n", r->packet_time_s / r->flow_time_s);
    printf("goodput          %.4g GB/s min, %.4g mean, %.4g max per receiver (%u receiver%s; "
           "flow tier min %.4g)\n", r->goodput_min_bytes_per_s / 1e9,
           r->goodput_mean_bytes_per_s / 1e9, r->goodput_max_bytes_per_s / 1e9, r->receivers,
           r->receivers > 1 ? "s" : "", r->flow_goodput_min_bytes_per_s / 1e9);
    printf("max queue held   %.0f B in one switch port (buffer %.0f B)\n", st->max_held_bytes,
           c->buffer_bytes);
    printf("PFC pauses       %llu\n", (unsigned long long)st->pauses);
    packet_print_congestion(c, st);
    if (p->has_reorder)
        packet_print_reorder(st);
    printf("packets          %llu delivered, %llu packet-hops\n",
           (unsigned long long)st->packets_delivered, (unsigned long long)st->packet_hops);
    printf("events           %llu (%.3g s wall, %.3g M packet-hops/s)\n",
           (unsigned long long)st->events, r->wall_s,
           r->wall_s > 0 ? st->packet_hops / r->wall_s / 1e6 : 0.0);
}

/* The members of from that a CSV row shows (scalars and objects of scalars;
 * arrays and the envelope are left out) copied into row; a name row already
 * has is taken with prefix + "_" in front. */
static void csv_copy(cJSON *row, const cJSON *from, const char *prefix)
{
    char name[160];
    for (const cJSON *m = from->child; m; m = m->next) {
        if (cJSON_IsArray(m) || !strcmp(m->string, "schema") || !strcmp(m->string, "command") ||
            !strcmp(m->string, "dcsim_version"))
            continue;
        const char *key = m->string;
        if (cJSON_GetObjectItemCaseSensitive(row, key)) {
            snprintf(name, sizeof name, "%s_%s", prefix, key);
            key = name;
        }
        cJSON_AddItemToObject(row, key, cJSON_Duplicate(m, 1));
    }
}

/* An array whose first element is an object (a table), or NULL. */
static const cJSON *object_array(const cJSON *m)
{
    return cJSON_IsArray(m) && cJSON_IsObject(m->child) ? m : NULL;
}

/* --csv on the packet tier: every op's document as one table (docs/cli.md).
 * A row per element of each top-level table ("rows", "variants", fidelity's
 * "incast", "sharing", ...), its name in the first column `table`; an
 * element holding a table of its own (lossy's modes, stall's bins) gives a
 * row per entry of it, beside the element's scalars. A document without a
 * table (send, incast, collectives, collision) is one row of its scalars.
 * The document's own scalars (fabric, link, sizes) are on every row. */
static cJSON *packet_csv_rows(const cJSON *doc)
{
    cJSON *flat = cJSON_CreateObject(), *rows = cJSON_AddArrayToObject(flat, "rows");
    if (!rows || !cJSON_AddStringToObject(flat, "command", "netbench")) {
        cJSON_Delete(flat);
        return NULL; /* out of memory: jsonout_emit reports it */
    }
    for (const cJSON *t = doc->child; t; t = t->next) {
        if (!object_array(t))
            continue;
        for (const cJSON *e = t->child; e; e = e->next) {
            const cJSON *inner = NULL;
            for (const cJSON *m = e->child; m && !inner; m = m->next)
                inner = object_array(m);
            for (const cJSON *c = inner ? inner->child : e; c; c = inner ? c->next : NULL) {
                cJSON *row = cJSON_CreateObject();
                cJSON_AddStringToObject(row, "table", t->string);
                csv_copy(row, e, t->string);
                if (inner)
                    csv_copy(row, c, inner->string);
                csv_copy(row, doc, "run");
                cJSON_AddItemToArray(rows, row);
            }
        }
    }
    if (!rows->child) {
        cJSON *row = cJSON_CreateObject();
        csv_copy(row, doc, "run");
        cJSON_AddItemToArray(rows, row);
    }
    return flat;
}

/* Print a JSON document (or, with --csv, its table) and free it (patterns,
 * collectives, phenomena), after the envelope (jsonout.h). Returns 0 or 1
 * (the error printed). */
int packet_json_print(const packet_spec *p, struct cJSON *o)
{
    cJSON *doc = jsonout_wrap("netbench", o);
    if (!p->csv || !doc)
        return jsonout_emit(doc, JSONOUT_JSON, NULL, NULL);
    cJSON *flat = packet_csv_rows(doc);
    cJSON_Delete(doc);
    return jsonout_emit(flat, JSONOUT_CSV, "rows", NULL);
}

/* The fabric and the tier's parameters, with where each came from (the
 * JSON of a pattern and of a collective share them). */
void packet_json_params(cJSON *o, const scn_scenario *s, const packet_spec *p)
{
    const pkt_config *c = &p->cfg;
    cJSON_AddStringToObject(o, "topology", fabric_topology_name(s->fabric.topology));
    cJSON_AddStringToObject(o, "link", s->fabric.link.name);
    /* a lossy mode turns PFC off: name it, and leave the unused thresholds out */
    cJSON_AddStringToObject(o, "flow_control", c->loss == PKT_GO_BACK_N ? "gbn"
                                               : c->loss == PKT_SELECTIVE ? "selective"
                                               : c->technology == PKT_ROCE ? "pfc" : "credits");
    cJSON_AddNumberToObject(o, "mtu_bytes", c->mtu_bytes);
    cJSON_AddStringToObject(o, "mtu_from", p->pc.mtu_from);
    cJSON_AddNumberToObject(o, "buffer_bytes", c->buffer_bytes);
    cJSON_AddStringToObject(o, "buffer_from", p->pc.buffer_from);
    cJSON_AddNumberToObject(o, "hop_latency_s", c->hop_latency_s);
    cJSON_AddStringToObject(o, "hop_latency_from", p->pc.latency_from);
    app_packet_ibcc_json(o, c);
    if (c->technology == PKT_ROCE && c->loss == PKT_LOSSLESS) {
        cJSON_AddNumberToObject(o, "xoff_bytes", c->xoff_bytes);
        cJSON_AddNumberToObject(o, "xon_bytes", c->xon_bytes);
        cJSON_AddStringToObject(o, "pfc_from", p->pc.pfc_rule);
    }
    json_series(o, p);
    if (p->pc.routing[0])
        cJSON_AddStringToObject(o, "per_packet_routing", p->pc.routing);
    if (p->pc.candidates_from[0])
        cJSON_AddNumberToObject(o, "valiant_candidates", p->pc.candidates);
    if (c->loss != PKT_LOSSLESS) {
        cJSON_AddStringToObject(o, "loss", c->loss == PKT_GO_BACK_N ? "gbn" : "selective");
        cJSON_AddNumberToObject(o, "rto_s", c->rto_s);
        cJSON_AddStringToObject(o, "rto_from", p->rto_from);
    }
}

static void packet_print_json(const scn_scenario *s, const packet_spec *p, const pkb_result *r)
{
    const pkt_net_stats *st = &r->stats;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "tier", "packet");
    cJSON_AddStringToObject(o, "op", pkb_op_name(p->op));
    cJSON_AddNumberToObject(o, "ranks", p->ranks);
    cJSON_AddNumberToObject(o, "gpus_per_rank_stride", p->stride);
    cJSON_AddNumberToObject(o, "messages", (double)r->messages);
    cJSON_AddNumberToObject(o, "bytes", p->bytes);
    packet_json_params(o, s, p);
    cJSON_AddNumberToObject(o, "packet_time_s", r->packet_time_s);
    cJSON_AddNumberToObject(o, "flow_time_s", r->flow_time_s);
    cJSON_AddNumberToObject(o, "packet_over_flow", r->packet_time_s / r->flow_time_s);
    cJSON_AddNumberToObject(o, "receivers", r->receivers);
    cJSON_AddNumberToObject(o, "goodput_min_bytes_per_s", r->goodput_min_bytes_per_s);
    cJSON_AddNumberToObject(o, "goodput_mean_bytes_per_s", r->goodput_mean_bytes_per_s);
    cJSON_AddNumberToObject(o, "goodput_max_bytes_per_s", r->goodput_max_bytes_per_s);
    cJSON_AddNumberToObject(o, "flow_goodput_min_bytes_per_s", r->flow_goodput_min_bytes_per_s);
    cJSON_AddNumberToObject(o, "max_held_bytes", st->max_held_bytes);
    cJSON_AddNumberToObject(o, "pauses", (double)st->pauses);
    packet_json_congestion(o, &p->cfg, st);
    if (p->has_reorder)
        packet_json_reorder(o, &p->cfg, st);
    cJSON_AddNumberToObject(o, "packets", (double)st->packets_delivered);
    cJSON_AddNumberToObject(o, "packet_hops", (double)st->packet_hops);
    cJSON_AddNumberToObject(o, "events", (double)st->events);
    cJSON_AddNumberToObject(o, "wall_s", r->wall_s);
    (void)packet_json_print(p, o); /* an error is printed; the exit status stays 0 */
}

int netbench_packet(const net_options *o)
{
    scn_scenario s;
    fabric f;
    int rc = netcmd_load_fabric(o, &s, &f);
    if (rc)
        return rc;
    packet_spec p;
    pkb_result r;
    if (!(rc = packet_parse(o, &s, &f, &p)))
        rc = packet_trace_parse(o, &s, &f, &p);
    if (!rc && p.phen != PHEN_NONE) {
        rc = netbench_phenomenon(o, &s, &f, &p);
    } else if (!rc && p.is_coll) {
        rc = netbench_packet_coll(o, &s, &f, &p);
    } else if (!rc) {
        char why[256] = "";
        int run = pkb_run_series(&f.g, f.router, &p.cfg, p.op, p.ranks, p.stride, p.bytes,
                                 p.has_trace ? &p.series : NULL, f.nc.link_curve, &r, why,
                                 sizeof why);
        if (run == -1)
            rc = cli_usage_error("netbench", "--tier packet: %s", why);
        else if (run) {
            fprintf(stderr, "dcsim netbench: error: %s\n", why);
            rc = 1;
        } else {
            if (o->json)
                packet_print_json(&s, &p, &r);
            else
                packet_print_text(&s, &p, &r);
            rc = packet_trace_finish(o, &s, &f, &p, pkb_op_name(p.op), NULL, r.digest,
                                     r.events_fired, r.packet_time_s);
        }
    }
    fabric_free(&f);
    scn_scenario_free(&s);
    return rc;
}

