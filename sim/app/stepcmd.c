/* stepcmd.c - `dcsim step`: one iteration's profile printed as a table or
 * JSON (see stepcmd.h; the profile itself comes from steptier.c). */
#include "stepcmd.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "jsonout.h"
#include "compute.h"
#include "fabric.h"
#include "hardware.h"
#include "outpath.h"
#include "packetcfg.h"
#include "perfetto.h"
#include "packet_trace.h"
#include "progress.h"
#include "resources.h"
#include "run.h"
#include "stepclasses.h"
#include "stepfail.h"
#include "stepjson.h"
#include "steptier.h"
#include "workload.h"

const char usage_step[] =
    "usage: dcsim step [SCENARIO.xml] [--analytic | --concurrent [--no-fold] [--sm-stage-end]]\n"
    "                  [--network flow|analytic|concurrent|packet [--mtu SIZE] [--buffer SIZE]\n"
    "                  [--hop-latency TIME] [--ibcc K=V,...]\n"
    "                  [-o FILE.h5 [--bin TIME] [--bins N]]]\n"
    "                  [--json | --csv] [--perfetto FILE.json] [--flow-log N] [--quiet]\n"
    "                  [--fail PART]... [--cage-ports N] [--fail-classes [--fail-slow SPEED]]\n"
    "                  [--set PATH=VALUE]...\n"
    "\n"
    "Simulate one training iteration of the scenario's job on its cluster and\n"
    "print where the time goes: iteration time, tokens/s, model TFLOP/s per GPU,\n"
    "MFU and HFU (Megatron-Core FLOP counting), the critical pipeline stage's\n"
    "breakdown (compute, exposed TP / PP / DP / CP / EP communication, bubble,\n"
    "optimizer), every stage's, the fabric's bytes and peak link utilisation\n"
    "per tier, the critical stage's compute by kernel class and each\n"
    "collective's total, exposed and hidden time, and stragglers\n"
    "(docs/step.md). Needs <cluster><fabric> and\n"
    "<job><parallelism>.\n"
    "\n"
    "  --analytic   the analytic network path instead of the flow model\n"
    "               (same as --set job/step/@network=analytic)\n"
    "  --concurrent the iteration as a discrete-event simulation: every PP send\n"
    "               and DP bucket of every replica on one shared flow net, at\n"
    "               the moments they overlap (same as network=\"concurrent\")\n"
    "  --no-fold    with --concurrent: simulate every data-parallel replica even\n"
    "               where they are provably alike (by default they are folded\n"
    "               into one, exactly; same as fold=\"off\")\n"
    "  --sm-stage-end with --concurrent: add the compute that DP's kernels take\n"
    "               SMs from at each stage's end, the isolated iteration's rule,\n"
    "               instead of slowing the tasks they overlap as they run (same\n"
    "               as sm-sharing=\"stage-end\")\n"
    "  --network M  the network model: flow (default), analytic, concurrent (as\n"
    "               the options above) or packet: the concurrent iteration with\n"
    "               every PP send, DP bucket, gather and cross-domain TP/CP/EP\n"
    "               collective as packets on the packet tier (docs/step.md\n"
    "               \"Packet network\"; small jobs only: at most 1e9\n"
    "               packet-hops; no flow log, overlap links or folding); same\n"
    "               as network=\"packet\"\n"
    "  --mtu SIZE, --buffer SIZE, --hop-latency TIME\n"
    "               with --network packet: the packet tier's MTU, switch port\n"
    "               buffer and per-hop latency instead of the link catalog's\n"
    "               (as dcsim netbench --tier packet); --ibcc: InfiniBand\n"
    "               congestion control, as dcsim netbench --tier packet --ibcc\n"
    "  -o, --output FILE.h5\n"
    "               with --network packet: write the iteration's per-link time\n"
    "               series (bytes, packets, PAUSE frames, ECN marks, queue and\n"
    "               held bytes per bin; the links that carried traffic) as\n"
    "               netbench --tier packet -o does (docs/trace-format.md)\n"
    "  --bin TIME   with -o: the first bin (default one MTU on the fabric link)\n"
    "  --bins N     with -o: most bins kept, even (default 256): pairs merge\n"
    "  --json       the profile as one JSON object (docs/json.md)\n"
    "  --csv        the stage table as CSV: a row per pipeline stage\n"
    "  --perfetto FILE.json\n"
    "               also write the iteration as a Trace Event Format file for\n"
    "               ui.perfetto.dev or chrome://tracing: a process per stage\n"
    "               with its forwards and backwards, its DP reduction and\n"
    "               optimizer; per-tier link utilisation counters; with\n"
    "               --concurrent, every flow of the shared net (PP sends, DP\n"
    "               reductions, parameter gathers) up to the flow log's cap\n"
    "  --flow-log N the concurrent iteration logs at most N flows (default\n"
    "               100000) and exports them: --json's \"flows\", a line in the\n"
    "               text (dcsim run --flow-log N: /step/flows); past N it\n"
    "               says \"flow log truncated at N flows\"\n"
    "  -q, --quiet  no progress on stderr (the concurrent iteration shows its\n"
    "               simulated time and events after a second, on a terminal only)\n"
    "  --fail PART  the iteration with PART down or slow, after the one as built:\n"
    "               link=ID (the cable of directed link ID), switch=ID, nic=ID\n"
    "               (node ids: dcsim topo --export names them n<ID>), node=ID\n"
    "               (server), gpu=ID, transceiver=ID (the cage at the switch,\n"
    "               or the server, directed link ID leaves: every cable of the\n"
    "               cage; the ports per cage from the catalog for a switch, or\n"
    "               --cage-ports N, 2 to 8, which a server's cage needs);\n"
    "               :SPEED in [0, 1] makes it slow (default\n"
    "               0, down; 1 repairs it). Repeatable. Prints the failed parts,\n"
    "               the iteration before and after and the links whose load\n"
    "               changed most (docs/failures.md); not with --network packet\n"
    "  --fail-classes one part of each class the fabric has failed in turn (a\n"
    "               switch per tier, a cable per tier pair or Dragonfly local and\n"
    "               global, a host cable; a NIC and a GPU slow): a table of the\n"
    "               iteration and the busiest link's utilisation (docs/failures.md)\n"
    "  --fail-slow SPEED  the slow rows' speed: 50% or 0.5 (default: a fail-slow\n"
    "               <failure speed>, else 50%, printed as a default used)\n";

/* where the critical stage's time goes: compute by kernel class, each
 * collective's total, exposed and hidden time (docs/step.md) */
static void print_attribution(const step_profile *p)
{
    printf("compute by kernel class (critical stage, optimizer step included):\n");
    for (int k = 0; k < OP_KIND_COUNT; k++)
        printf("  %-14s %12.6g s %6.1f %%\n", step_kernel_name(k), p->kernel_s[k],
               100 * p->kernel_s[k] / p->iteration_s);
    printf("  %-14s %12.6g s %6.1f %%%s\n", "sm-contention", p->sm_contention_s,
           100 * p->sm_contention_s / p->iteration_s,
           p->sm_contention_unpriced ? " (not priced: the GPU gives no SM count)" : "");
    printf("  %-14s %12.6g s %6.1f %% (counted in dp: the SMs of the overlapped DP "
           "reduction, %s)\n", "sm-contention-dp", p->dp_sm_contention_s,
           100 * p->dp_sm_contention_s / p->iteration_s,
           p->dp_sm_in_schedule ? "slowing the tasks it overlapped" : "added at the stage's end");
    printf("collectives (critical stage, s):\n  %-18s %12s %12s %12s\n", "kind", "total",
           "exposed", "hidden");
    for (int k = 0; k < COMM_KIND_COUNT; k++)
        if (p->coll_total_s[k] > 0)
            printf("  %-18s %12.6g %12.6g %12.6g\n", comm_kind_name(k), p->coll_total_s[k],
                   p->coll_exposed_s[k], p->coll_hidden_s[k]);
    printf("  %-18s %12s %12.6g\n", "bubble", "", p->part_s[STEP_BUBBLE]);
}

/* what the flow log holds, and whether it stopped at its cap */
static void flow_log_line(FILE *out, const char *lead, const step_profile *p)
{
    if (p->flows_truncated)
        fprintf(out, "%sflow log truncated at %zu flows (of %llu; --flow-log N raises the cap)\n",
                lead, p->n_flows, (unsigned long long)p->flows_total);
    else
        fprintf(out, "%s%zu flows logged (every one)\n", lead, p->n_flows);
}

static void print_text(const scn_scenario *s, const step_profile *p)
{
    printf("iteration       %.6g s (%s network model)\n", p->iteration_s,
           s->step.analytic ? "analytic" : s->step.packet ? "packet"
           : s->step.concurrent ? "concurrent flow" : "flow");
    printf("tokens/s        %.6g\n", p->tokens_per_s);
    char defaults[4096]; /* what the catalogs lacked (docs/scenario.md) */
    scn_defaults_text(s, defaults, sizeof defaults);
    printf("defaults used   %s\n", defaults[0] ? defaults : "none");
    char table[400];
    if (scn_fidelity_text(s, table, sizeof table))
        printf("fidelity table  %s\n", table);
    printf("model TFLOP/s   %.1f per GPU: MFU %.1f %%, HFU %.1f %% (Megatron-Core FLOP counting, "
           "%s peak %.4g TFLOP/s)\n", p->model_flops_per_gpu_s / 1e12, 100 * p->mfu,
           100 * p->hfu, precision_name(s->precision),
           s->gpu.peak_flops_per_s[s->precision] / 1e12);
    printf("critical stage  %u of %u; where its iteration goes:\n", p->critical_stage,
           p->n_stages);
    for (int k = 0; k < STEP_PART_COUNT; k++)
        printf("  %-10s %12.6g s %6.1f %%\n", step_part_name(k), p->part_s[k],
               100 * p->part_s[k] / p->iteration_s);
    printf("per stage (s):\n  %5s", "stage");
    for (int k = 0; k < STEP_PART_COUNT; k++)
        printf(" %10s", step_part_name(k));
    printf(" %10s\n", "end");
    for (unsigned i = 0; i < p->n_stages; i++) {
        printf("  %5u", i);
        for (int k = 0; k < STEP_PART_COUNT; k++)
            printf(" %10.4g", p->stage[i].part_s[k]);
        printf(" %10.4g\n", p->stage[i].end_s);
    }
    printf("fabric per iteration:\n  %-18s %14s %18s\n", "tier", "bytes", "peak utilisation");
    for (int t = 0; t < STEP_TIERS; t++)
        printf("  %-18s %14.4g %17.1f%%\n", step_tier_name(t), p->tier_bytes[t],
               100 * p->tier_peak_utilisation[t]);
    print_attribution(p);
    if (p->n_hot) {
        printf("links where kinds of traffic overlapped (concurrent iteration, the longest "
               "%u; s per iteration; tp/cp/ep: their flows across scale-up domains):\n"
               "  %-7s %-8s %-8s %-18s %9s %9s %9s %9s %12s\n",
               p->n_hot, "link", "from", "to", "tier", "pp", "dp", "tp/cp/ep", "both",
               "utilisation");
        for (unsigned k = 0; k < p->n_hot; k++) {
            const step_hot_link *h = &p->hot[k];
            printf("  %-7u %-8u %-8u %-18s %9.4g %9.4g %9.4g %9.4g %11.1f%%\n", h->link, h->src,
                   h->dst, step_tier_name(h->tier), h->pp_s, h->dp_s, h->coll_s, h->both_s,
                   100 * h->utilisation);
        }
    }
    if (p->coll_on_net) {
        static const char *const names[3] = {"TP", "CP", "EP"};
        printf("task flows      ");
        for (int k = 0, n = 0; k < 3; k++)
            if (p->coll_on_net >> k & 1)
                printf("%s%s", n++ ? ", " : "", names[k]);
        printf(" collectives cross scale-up domains: flows inside the tasks, at most %u "
               "segments a task (docs/step.md)\n", p->coll_segments);
    }
    if (s->step.concurrent && p->fold_note)
        printf("symmetry folding %s%s\n", p->fold_note,
               p->fold_replicas ? "" : " (every replica simulated)");
    if (p->fold_replicas)
        printf("                %u data-parallel replicas simulated as one; the iteration's %u "
               "flows moved as %u\n", p->fold_replicas, p->fold_flows, p->fold_cells);
    if (p->slowest_gpu != UINT32_MAX)
        printf("stragglers      slowest GPU %u at %.1f %% speed; the other replicas waited %.4g s "
               "for it at the gradient reduction\n", p->slowest_gpu, 100 * p->slowest_speed,
               p->wait_s);
    if (s->flow_log_given && s->step.concurrent && !p->is_packet)
        flow_log_line(stdout, "flows           ", p);
}

/* the packet network's counters and parameters (--network packet) */
static void print_packet(const step_profile *p, const app_packet_cfg *pc, const step_trace *t)
{
    const pkt_net_stats *st = &p->packet_stats;
    printf("packet network  %llu plans, %llu messages, %llu packets, %llu packet-hops (estimated "
           "at least %.4g before the run), %llu events\n", (unsigned long long)p->packet_plans,
           (unsigned long long)st->messages_sent, (unsigned long long)st->packets_delivered,
           (unsigned long long)st->packet_hops, p->packet_hops_estimate,
           (unsigned long long)st->events);
    printf("                %.4g s wall (%.3g M packet-hops/s); %llu PFC pauses; most held in "
           "one switch port %.0f B (buffer %.0f B)\n", p->packet_wall_s,
           p->packet_wall_s > 0 ? st->packet_hops / p->packet_wall_s / 1e6 : 0.0,
           (unsigned long long)st->pauses, st->max_held_bytes, pc->cfg.buffer_bytes);
    printf("                %s, %s\n", pc->cfg.technology == PKT_ROCE ? "RoCE PFC"
           : "InfiniBand credits", "parameters:");
    app_packet_config_print(stdout, "                  ", pc);
    const pkt_series *ser = p->packet_series;
    if (t->has && ser) {
        printf("                  time series bin %.4g ns: %s\n", t->bins.dt_s * 1e9,
               t->bins.dt_from);
        printf("                  time series at most %u bins: %s\n", t->bins.max_bins,
               t->bins.bins_from);
        printf("                time series %u bins of %.4g ns (%u merge%s), %u links with "
               "traffic (of %u) -> %s\n", pkt_series_bins(ser), pkt_series_dt(ser) * 1e9,
               pkt_series_merges(ser), pkt_series_merges(ser) == 1 ? "" : "s",
               pkt_series_stored(ser), pkt_series_links(ser), t->out.path);
    }
    printf("                not on the packet network: the flow log and the overlap links "
           "(flow-net link tracking); every replica simulated (no folding)\n");
}

typedef struct step_args {
    const char *path;
    const char *perfetto; /* --perfetto FILE.json, or NULL */
    size_t flow_log;      /* --flow-log N */
    int has_flow_log;
    cli_sets sets;
    int json, csv, analytic, concurrent, no_fold, sm_stage_end, quiet;
    const char *network, *mtu, *buffer, *hop_latency, *ibcc; /* --network, its packet options */
    const char *output, *bin, *bins;                          /* -o FILE.h5 and its bins */
    const char *fails[STEP_MAX_FAILS];                        /* --fail PART, in order */
    size_t n_fails;
    int fail_classes;      /* --fail-classes (stepclasses.h) */
    const char *fail_slow; /* --fail-slow SPEED */
    const char *cage_ports; /* --cage-ports N (transceiver= parts) */
    int argc;
    char **argv;
} step_args;

int step_parse_flow_log(const char *command, const char *v, size_t *out)
{
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end || n > STEP_FLOW_LOG_MAX)
        return cli_usage_error(command, "%s needs a whole number from 0 to 10000000",
                               "--flow-log");
    *out = (size_t)n;
    return 0;
}

static int opt_flow_log(void *ctx, const char *v)
{
    step_args *o = ctx;
    o->has_flow_log = 1;
    return step_parse_flow_log("step", v, &o->flow_log);
}

static int opt_fail(void *ctx, const char *v)
{
    step_args *o = ctx;
    if (o->n_fails == STEP_MAX_FAILS)
        return cli_usage_error("step", "--fail %s: at most 256 parts", v);
    o->fails[o->n_fails++] = v;
    return 0;
}

static const cli_option step_table[] = {
    {"--fail", 0, CLI_CALL_EACH, 0, opt_fail, .missing = "%s needs CLASS=ID[:SPEED]"},
    {"--fail-classes", 0, CLI_FLAG, offsetof(step_args, fail_classes), NULL, NULL},
    {"--fail-slow", 0, CLI_TEXT, offsetof(step_args, fail_slow), .missing = "%s needs a speed"},
    {"--cage-ports", 0, CLI_TEXT, offsetof(step_args, cage_ports),
     .missing = "%s needs a whole number (2 to 8)"},
    {"--set", 0, CLI_SETS_EQ, offsetof(step_args, sets), .missing = "%s needs PATH=VALUE"},
    {"--json", 0, CLI_FLAG, offsetof(step_args, json), NULL, NULL},
    {"--csv", 0, CLI_FLAG, offsetof(step_args, csv), NULL, NULL},
    {"--analytic", 0, CLI_FLAG, offsetof(step_args, analytic), NULL, NULL},
    {"--concurrent", 0, CLI_FLAG, offsetof(step_args, concurrent), NULL, NULL},
    {"--no-fold", 0, CLI_FLAG, offsetof(step_args, no_fold), NULL, NULL},
    {"--sm-stage-end", 0, CLI_FLAG, offsetof(step_args, sm_stage_end), NULL, NULL},
    {"--perfetto", 0, CLI_TEXT, offsetof(step_args, perfetto), .missing = "%s needs a file name"},
    {"--flow-log", 0, CLI_CALL, 0, opt_flow_log,
     .missing = "%s needs a whole number from 0 to 10000000"},
    {"--quiet", 'q', CLI_FLAG, offsetof(step_args, quiet), NULL, NULL},
    {"--network", 0, CLI_TEXT, offsetof(step_args, network),
     .missing = "%s needs flow, analytic, concurrent or packet"},
    {"--mtu", 0, CLI_TEXT, offsetof(step_args, mtu), .missing = "%s needs a size"},
    {"--buffer", 0, CLI_TEXT, offsetof(step_args, buffer), .missing = "%s needs a size"},
    {"--hop-latency", 0, CLI_TEXT, offsetof(step_args, hop_latency),
     .missing = "%s needs a time"},
    {"--ibcc", 0, CLI_TEXT, offsetof(step_args, ibcc), .missing = "%s needs K=V,..."},
    {"--output", 'o', CLI_TEXT, offsetof(step_args, output), .missing = "%s needs a file name"},
    {"--bin", 0, CLI_TEXT, offsetof(step_args, bin), .missing = "%s needs a time"},
    {"--bins", 0, CLI_TEXT, offsetof(step_args, bins), .missing = "%s needs a number"},
    {"--help", 'h', CLI_HELP, 0, NULL, NULL},
    {0}};

/* Progress of the concurrent iteration on a terminal (progress.h). */
static int on_step_poll(void *ctx, double sim_time_s, uint64_t events)
{
    double wall;
    if (progress_due(ctx, 0.25, &wall)) {
        fprintf(stderr, "\r\033[K  concurrent iteration: %.4g s simulated, %.1fM events, %.0f s",
                sim_time_s, (double)events / 1e6, wall);
        fflush(stderr);
    }
    return 0;
}

/* --network: the flags' model, or one of the four names; 0 or the exit
 * status of the error printed */
static int network_option(step_args *o)
{
    static const char *const names[] = {"flow", "analytic", "concurrent", "packet"};
    if (!o->network) {
        const char *opt = o->mtu ? "--mtu" : o->buffer ? "--buffer"
                          : o->hop_latency ? "--hop-latency" : o->ibcc ? "--ibcc" : NULL;
        return opt ? cli_usage_error("step", "%s is an option of --network packet", opt) : 0;
    }
    int k = 0;
    while (k < 4 && strcmp(o->network, names[k]))
        k++;
    if (k == 4)
        return cli_usage_error("step", "--network %s: expected flow, analytic, concurrent or "
                               "packet", o->network);
    if ((o->analytic && k != 1) || (o->concurrent && k != 2))
        return cli_usage_error("step", "%s: choose one network model",
                               o->analytic ? "--analytic and --network" : "--concurrent and --network");
    if (k != 3 && (o->mtu || o->buffer || o->hop_latency || o->ibcc))
        return cli_usage_error("step", "%s is an option of --network packet",
                               o->mtu ? "--mtu" : o->buffer ? "--buffer"
                               : o->hop_latency ? "--hop-latency" : "--ibcc");
    o->analytic = k == 1;
    o->concurrent = k >= 2;
    return 0;
}

/* --fail-classes and --fail-slow: 0 or the exit status of the error printed */
static int classes_option(const step_args *o, const scn_scenario *s)
{
    if (o->fail_slow && !o->fail_classes)
        return cli_usage_error("step", "%s is an option of --fail-classes", "--fail-slow");
    if (o->fail_classes && (o->n_fails || s->n_step_fails || o->perfetto || o->output))
        return cli_usage_error("step", "%s fails one part at a time from the fabric as built: "
                               "not with --fail, <step><fail>, --perfetto or -o",
                               "--fail-classes");
    return 0;
}

/* -o FILE.h5: the bins (netbench's rule and options), their memory at
 * most (every link busy) and the target, all before the run (outpath.h:
 * as dcsim run -o). 0 or the exit status of the error printed. */
static int trace_setup(const step_args *o, const scn_scenario *s, const fabric *f,
                       const app_packet_cfg *pc, step_trace *t)
{
    int rc = packet_trace_bins("step", o->bin, o->bins, pc->cfg.mtu_bytes, f->link_bytes_per_s,
                               &t->bins);
    if (rc)
        return rc;
    sim_error err;
    sim_error_clear(&err);
    if (res_check_more(s, RES_STEP, pkt_series_bytes(f->g.n_links, t->bins.max_bins),
                       "the time series of -o", &err)) {
        fprintf(stderr, "dcsim step: error: -o %s: %u links x %u bins: %s\n", o->output,
                f->g.n_links, t->bins.max_bins, err.msg);
        return CLI_EXIT_INPUT;
    }
    size_t n;
    const char **inputs = scn_input_paths(s, o->path, NULL, &n);
    if (!inputs) {
        fprintf(stderr, "dcsim step: error: out of memory\n");
        return 1;
    }
    rc = outpath_init(&t->out, o->output, "the trace", inputs, n, &err);
    free(inputs);
    if (rc)
        return cli_print_error(&err);
    t->has = 1;
    return 0;
}

/* the packet tier's parameters (packetcfg.h) when the network is packet,
 * and -o's bins and target: 0 or the exit status of the error printed */
static int packet_setup(const step_args *o, const scn_scenario *s, app_packet_cfg *pc,
                        step_trace *t)
{
    memset(pc, 0, sizeof *pc);
    memset(t, 0, sizeof *t);
    if (!s->step.packet) {
        const char *opt = o->output ? "-o" : o->bin ? "--bin" : o->bins ? "--bins" : NULL;
        return opt ? cli_usage_error("step", "%s is an option of --network packet", opt) : 0;
    }
    if (!o->output && (o->bin || o->bins))
        return cli_usage_error("step", "%s: needs -o FILE.h5 (the time series' file)",
                               o->bin ? "--bin" : "--bins");
    if (!s->has_fabric)
        return 0; /* the step tier's own error names what is missing */
    fabric f;
    sim_error err;
    sim_error_clear(&err);
    if (fabric_build(&s->fabric, &f, &err))
        return cli_print_error(&err);
    app_packet_opts po = {.mtu = o->mtu, .buffer = o->buffer, .hop_latency = o->hop_latency,
                          .ibcc = o->ibcc};
    int rc = app_packet_config("step", "--network packet", s, &f, &po, 0, pc);
    if (!rc && o->output)
        rc = trace_setup(o, s, &f, pc, t);
    fabric_free(&f);
    return rc;
}

/* -o: the series into the file (the fabric's graph built again for the
 * links' ends, tiers and rates); 0 or an error code in err */
static int write_trace(const step_args *o, const scn_scenario *s, const step_profile *p,
                       const app_packet_cfg *pc, step_trace *t, sim_error *err)
{
    char command[4096];
    size_t used = (size_t)snprintf(command, sizeof command, "dcsim step");
    for (int i = 0; i < o->argc && used < sizeof command; i++)
        used += (size_t)snprintf(command + used, sizeof command - used, " %s", o->argv[i]);
    packet_trace_meta m = {command, "step", NULL, s->name, s->source, s->seed, p->packet_digest,
                           p->packet_events, p->packet_end_s, &pc->cfg,
                           "step --network packet"};
    fabric f;
    int rc = fabric_build(&s->fabric, &f, err);
    if (rc) {
        outpath_discard(&t->out);
        return rc;
    }
    rc = packet_trace_write(&t->out, &f.g, p->packet_series, &m, err);
    fabric_free(&f);
    return rc;
}

/* every packet of the iteration may be queued at once (a message's packets
 * all enter its NIC FIFO when it is sent): they must fit what this process
 * may use (res_check_more), as netbench --tier packet's */
static int packet_admit(void *ctx, double packets, double packet_hops, sim_error *err)
{
    (void)packet_hops; /* the step tier checks STEP_PACKET_MAX_HOPS */
    return res_check_more(ctx, RES_STEP, packets * (double)pkt_packet_record_bytes(),
                          "packets queued at once", err);
}

/* --perfetto: checked before the simulation (never over the scenario, a
 * file it includes or a non-regular file), so a bad name fails at once */
static int check_perfetto(const step_args *o, const scn_scenario *s, outpath *op,
                          sim_error *err)
{
    size_t n;
    const char **inputs = scn_input_paths(s, o->path, NULL, &n);
    if (!inputs)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    int rc = outpath_init(op, o->perfetto, "the Perfetto trace", inputs, n, err);
    free(inputs);
    return rc;
}

int cmd_step(int argc, char **argv)
{
    static const cli_command cmd = {"step", usage_step, step_table, 1,
                                    .too_many = "more than one scenario given ('%s')"};
    step_args o = {.argc = argc, .argv = argv};
    size_t n_args;
    int rc = cli_parse(&cmd, argc, argv, &o, &o.path, &n_args);
    if (rc)
        return rc == CLI_DONE ? 0 : rc;
    if (o.json && o.csv)
        return jsonout_one_format("step");
    if (o.analytic && o.concurrent) /* before the scenario: a usage error */
        return cli_usage_error("step", "%s: choose one network model", "--analytic and --concurrent");
    sim_error err;
    sim_error_clear(&err);
    scn_scenario s;
    if (scn_load(o.path, o.sets.v, o.sets.n, &s, &err))
        return cli_print_error(&err);
    if ((rc = network_option(&o)) != 0 || (rc = classes_option(&o, &s)) != 0) {
        scn_scenario_free(&s);
        return rc;
    }
    if (o.has_flow_log) {
        s.step.flow_log = o.flow_log;
        s.flow_log_given = 1;
    }
    if (o.analytic || o.concurrent || o.network) { /* before the guard: the concurrent
                                                      iteration needs more */
        s.step.analytic = o.analytic;
        s.step.concurrent = o.concurrent;
        s.step.packet = o.network && !strcmp(o.network, "packet");
    }
    ff_state st; /* --fail: the profile is the failed one (stepfail.h) */
    ff_state_init(&st);
    app_step_failure fx;
    memset(&fx, 0, sizeof fx);
    rc = step_fail_setup(&s, o.fails, o.n_fails, o.cage_ports, &st);
    int failing = o.n_fails || s.n_step_fails; /* the comparison: as built, then st */
    app_packet_cfg pc;
    step_trace tr;
    if (rc || (rc = packet_setup(&o, &s, &pc, &tr)) != 0) {
        ff_state_fini(&st);
        scn_scenario_free(&s);
        return rc;
    }
    s.step.no_fold = s.step.no_fold || o.no_fold;
    s.step.sm_stage_end = s.step.sm_stage_end || o.sm_stage_end;
    outpath trace;
    if (res_check(&s, RES_STEP, 0, &err) ||
        (o.perfetto && check_perfetto(&o, &s, &trace, &err))) {
        if (tr.has)
            outpath_discard(&tr.out);
        ff_state_fini(&st);
        scn_scenario_free(&s);
        return cli_print_error(&err);
    }
    run_plan plan; /* the per-GPU speeds of the scenario's stragglers */
    if (run_plan_prepare(&s, 0, RUN_PLAN_STEP_INPUTS, &plan, &err)) {
        if (tr.has)
            outpath_discard(&tr.out);
        run_plan_free(&plan);
        ff_state_fini(&st);
        scn_scenario_free(&s);
        return cli_print_error(&err);
    }
    if (o.fail_classes) { /* the packet network was refused with the state */
        rc = step_fail_classes_cmd(&s, plan.gpu_speed, plan.n_gpu_speed, o.fail_slow, o.csv ? 2 : o.json);
        run_plan_free(&plan);
        ff_state_fini(&st);
        scn_scenario_free(&s);
        return rc;
    }
    step_profile prof;
    sim_error e; /* the step tier's, printed as the scenario's */
    sim_error_clear(&e);
    progress prog;
    progress_start(&prog, o.quiet);
    app_step_packet pk = {.cfg = &pc.cfg, .admit = packet_admit, .admit_ctx = &s,
                          .series_dt_s = tr.has ? tr.bins.dt_s : 0,
                          .series_bins = tr.has ? tr.bins.max_bins : 0};
    if (failing) {
        rc = app_step_failed(&s, plan.gpu_speed, plan.n_gpu_speed,
                             prog.enabled ? on_step_poll : NULL, &prog, &st, &fx, &e);
        prof = fx.after;
    } else
        rc = app_step_profile_packet(&s, plan.gpu_speed, plan.n_gpu_speed,
                                     prog.enabled ? on_step_poll : NULL, &prog,
                                     s.step.packet ? &pk : NULL, &prof, &e);
    progress_clear(&prog);
    if (rc) {
        if (tr.has)
            outpath_discard(&tr.out);
        sim_error_set(&err, e.code, s.source, 0, "%s", e.msg);
        rc = cli_print_error(&err);
    } else {
        if (tr.has && write_trace(&o, &s, &prof, &pc, &tr, &err))
            rc = cli_print_error(&err);
        else if (o.perfetto && perfetto_write_step(&trace, &prof, &err))
            rc = cli_print_error(&err);
        else if (o.json || o.csv)
            rc = step_json_emit(&prof, s.flow_log_given && s.step.concurrent, &pc, &tr, &st,
                                failing ? &fx : NULL, o.csv);
        else {
            print_text(&s, &prof);
            if (prof.is_packet)
                print_packet(&prof, &pc, &tr);
            if (failing)
                step_fail_print(&st, &fx);
        }
        if (!rc && prof.flows_truncated && (o.perfetto || (o.json && s.flow_log_given)))
            flow_log_line(stderr, "dcsim step: note: ", &prof); /* never silently */
        if (failing)
            app_step_failure_free(&fx);
        else
            step_profile_free(&prof);
    }
    ff_state_fini(&st);
    run_plan_free(&plan);
    scn_scenario_free(&s);
    return rc;
}
