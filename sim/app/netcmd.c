/* netcmd.c - `dcsim topo` and `dcsim netbench` (see netcmd.h). */
#include "netcmd.h"
#include "netcmd_internal.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "jsonout.h"
#include "outpath.h"
#include "export.h"
#include "fabric.h"
#include "nccl_tuning.h"
#include "netcoll.h"
#include "resources.h"
#include "scenario.h"
#include "stats.h"
#include "units.h"

const char usage_topo[] =
    "usage: dcsim topo [SCENARIO.xml] [--export FILE.graphml|FILE.dot] [--json | --csv]\n"
    "                  [--set PATH=VALUE]...\n"
    "\n"
    "Build the scenario's <cluster><fabric> and print what it is made of: GPUs\n"
    "and scale-up domains, switches per tier and plane, directed links, cables,\n"
    "transceivers, bisection bandwidth and diameter (docs/fabric.md).\n"
    "\n"
    "  --export FILE   also write the graph: GraphML (.graphml, .xml) or\n"
    "                  Graphviz DOT (.dot, .gv), one edge per cable\n"
    "  --json          the figures as one JSON object on stdout (docs/json.md)\n"
    "  --csv           the figures as CSV: a header and one row (the per-tier\n"
    "                  lists are in --json only)\n"
    "  --set PATH=VALUE  override a scenario value, e.g.\n"
    "                  --set cluster/fabric/@routing=ecmp\n";

const char usage_netbench[] =
    "usage: dcsim netbench [SCENARIO.xml] [--op OP] [--algo ALGO] [--ranks N]\n"
    "                      [--min SIZE] [--max SIZE] [--factor F] [--analytic]\n"
    "                      [--json | --csv] [-q] [--set PATH=VALUE]...\n"
    "\n"
    "Time one collective on the scenario's fabric for a range of sizes and print\n"
    "an nccl-tests-style table: size, count (4-byte elements), time, algbw and\n"
    "busbw with nccl-tests' definitions (busbw = algbw x 2(n-1)/n for all-reduce,\n"
    "(n-1)/n for reduce-scatter, all-gather and all-to-all, 1 otherwise), and\n"
    "busbw per NIC when the ranks span several nodes (docs/fabric.md).\n"
    "\n"
    "  --op OP       allreduce (default), reducescatter, allgather, alltoall,\n"
    "                broadcast, sendrecv\n"
    "  --algo ALGO   auto (default: NCCL's tuning model picks algorithm and\n"
    "                protocol per size; the rows show its pick), \n"
    "                ring, tree, hd (halving-doubling), hierarchical,\n"
    "                in-network, direct\n"
    "  --ranks N     the first N GPUs (default: every GPU of the cluster)\n"
    "  --min, --max  sizes (default 8 and 8G); 8G = 8 GiB as in nccl-tests\n"
    "                (K, M, G binary); 8GB = 8e9 bytes (dcsim units)\n"
    "  --factor F    size multiplier between rows (default 2)\n"
    "  --analytic    the closed-form bottleneck path instead of the flow model\n"
    "  --json        one JSON object on stdout (docs/json.md)\n"
    "  --csv         the table as CSV: a row per size (--tier packet: the --json\n"
    "                document's tables as one, named in a first column)\n"
    "  -q, --quiet   no progress on stderr (shown only on a terminal anyway)\n"
    "\n"
    "dcsim netbench SCENARIO.xml --tier packet [--op send|incast|alltoall|incast-sweep|\n"
    "                      victim|stall|collision|lossy|reorder|fidelity] [--ranks N]\n"
    "                      [--bytes SIZE] [--mtu SIZE] [--buffer SIZE]\n"
    "                      [--hop-latency TIME] [--ibcc K=V,...] [--dcqcn]\n"
    "                      [--adaptive [--valiant-candidates N|all]\n"
    "                      [--ugal local|global|progressive]]\n"
    "                      [--loss gbn|selective --rto TIME]\n"
    "                      [--reorder in-order|out-of-order [--rto TIME]] [--json]\n"
    "                      [-o FILE.h5 [--bin TIME] [--bins N]]\n"
    "dcsim netbench SCENARIO.xml --tier packet --op allreduce|allgather|reducescatter\n"
    "                      [--algo ring|tree|hd|hierarchical|in-network] [same options]\n"
    "\n"
    "  --tier packet  run one pattern on the packet tier (MTU packets, InfiniBand\n"
    "                credits or RoCE PFC) and on the flow tier over the same routes;\n"
    "                print both times and their ratio (docs/fabric.md)\n"
    "  --op          send (rank 0 to rank N-1; default), incast (ranks 1..N-1 to\n"
    "                rank 0), alltoall (every rank to every other); allreduce,\n"
    "                allgather, reducescatter: the collective's plan on both tiers\n"
    "                (--bytes is nccl-tests' S; --algo default ring); phenomena\n"
    "                (docs/fabric.md \"Phenomena\"): incast-sweep (fan-in 2, 4, .. N-1),\n"
    "                victim (PFC congestion spreading, N-1 senders), stall (a stuck\n"
    "                receiver's pause storm), collision (ECMP vs adaptive routing),\n"
    "                lossy (incast-sweep under PFC, go-back-N and selective; --rto),\n"
    "                reorder (collision's ring: ECMP, adaptive with an in-order\n"
    "                and an out-of-order receiving NIC; --rto);\n"
    "                fidelity: the multi-fidelity table (incast efficiency against\n"
    "                fan-in, sharing efficiency against flows on a fabric link)\n"
    "                for the flow tier; -o FILE.xml writes it as a <fidelity>\n"
    "                element to XInclude in <fabric> (docs/fabric.md\n"
    "                \"Multi-fidelity\")\n"
    "  --ranks N     N nodes, one rank each on its first GPU (the pattern crosses\n"
    "                the fabric only); default 2 for send, else 16; at most 4096\n"
    "  --bytes SIZE  every message (default 1M)\n"
    "  --mtu, --buffer  packet size and buffer per switch port (default: the\n"
    "                link's catalog values; --buffer is needed where it has none)\n"
    "  --hop-latency TIME  per link (default: the link's switch-latency)\n"
    "  --ibcc threshold=SIZE,marking-rate=N,increase=N,limit=N,timer=TIME,step=TIME\n"
    "                [,min=N][,victim=0|1]  InfiniBand congestion control (FECN/BECN,\n"
    "                CCTI pacing) on an InfiniBand fabric, for send, incast,\n"
    "                alltoall and the collectives; no default is published, so\n"
    "                every value but min (0) and victim (0) must be given\n"
    "  --dcqcn       RoCE: DCQCN rate control with ECN marking, the published\n"
    "                parameter set (components.md 5.1), for send, incast,\n"
    "                alltoall, the collectives, incast-sweep and fidelity\n"
    "  --adaptive    per-packet routing (send, incast, alltoall, collectives): on a\n"
    "                folded Clos the least-queued equal-cost next link at every\n"
    "                switch; on a Dragonfly, at the source router, over 3 virtual\n"
    "                channels: UGAL-L with paths=\"ugal\" (minimal or Valiant by\n"
    "                queue x links left), Valiant through a random group with\n"
    "                paths=\"valiant\", minimal with paths=\"minimal\"\n"
    "  --valiant-candidates N|all  --adaptive on a Dragonfly (ugal, valiant):\n"
    "                the intermediate groups drawn per message that its packets\n"
    "                choose among (default 4, a dcsim default); all: every\n"
    "                third group (2 (groups - 2) routes per message)\n"
    "  --ugal local|global|progressive  --adaptive on a Dragonfly with\n"
    "                paths=\"ugal\": local (default) reads the source router's\n"
    "                queues (UGAL-L); global every queue on both paths (UGAL-G,\n"
    "                an idealised bound); progressive UGAL-L at the source\n"
    "                router and again at the source group's gateway (PAR)\n"
    "  -o, --output FILE.h5\n"
    "                write every link's queue, held bytes, pauses, ECN marks and\n"
    "                bytes sent over time (docs/trace-format.md \"/packet\"); for\n"
    "                send, incast, alltoall and the collectives; `dcsim report\n"
    "                FILE.h5` draws it\n"
    "  --bin TIME    first bin width (default: one MTU on the fabric link)\n"
    "  --bins N      most bins kept, even (default 256): when full, pairs merge\n"
    "                and the width doubles\n"
    "  --loss gbn|selective  RoCE without PFC: switch ports drop on a full\n"
    "                buffer, the NICs recover by go-back-N or selective\n"
    "                retransmission (send, incast, alltoall, collectives,\n"
    "                incast-sweep; docs/fabric.md \"Lossy RoCE\")\n"
    "  --rto TIME    the retransmission timeout, required with --loss,\n"
    "                --reorder in-order, --op lossy and --op reorder (no\n"
    "                published default: a GAP)\n"
    "  --reorder in-order|out-of-order  the receiving NIC: out-of-order places\n"
    "                packets in any order (default; Spectrum-X SuperNICs,\n"
    "                ConnectX-5+); in-order is a classic RC receiver: a packet\n"
    "                ahead of the expected one is discarded and NACKed, the\n"
    "                sender goes back N (send, incast, alltoall, collectives;\n"
    "                docs/fabric.md \"Reordering\")\n";

/* ------------------------------------------------------------ shared */


#define NET_TEXT(name, member) \
    {name, 0, CLI_TEXT, offsetof(net_options, member), .missing = "%s needs a value"}
#define NET_FLAG(name, short_name, member) \
    {name, short_name, CLI_FLAG, offsetof(net_options, member), NULL, NULL}
#define NET_SET {"--set", 0, CLI_SETS_EQ, offsetof(net_options, sets), .missing = "%s needs PATH=VALUE"}

static const cli_option topo_options[] = {
    NET_TEXT("--export", export_path), NET_SET, NET_FLAG("--json", 0, json), NET_FLAG("--csv", 0, csv),
    {"--help", 'h', CLI_HELP, 0, NULL, NULL},
    {0}};

static const cli_option netbench_options[] = {
    NET_TEXT("--op", op),           NET_TEXT("--algo", algo),   NET_TEXT("--ranks", ranks),
    NET_TEXT("--min", min),         NET_TEXT("--max", max),     NET_TEXT("--factor", factor),
    NET_SET,                        NET_FLAG("--json", 0, json), NET_FLAG("--csv", 0, csv), NET_FLAG("--quiet", 'q', quiet),
    NET_FLAG("--analytic", 0, analytic),
    NET_TEXT("--tier", tier),       NET_TEXT("--bytes", bytes), NET_TEXT("--mtu", mtu),
    NET_TEXT("--buffer", buffer),   NET_TEXT("--hop-latency", hop_latency),
    NET_TEXT("--ibcc", ibcc),
    {"--output", 'o', CLI_TEXT, offsetof(net_options, output), .missing = "%s needs a value"},
    NET_TEXT("--bin", bin),         NET_TEXT("--bins", bins),
    NET_TEXT("--loss", loss),       NET_TEXT("--rto", rto),     NET_TEXT("--reorder", reorder),
    NET_FLAG("--dcqcn", 0, dcqcn),  NET_FLAG("--adaptive", 0, adaptive),
    NET_TEXT("--valiant-candidates", candidates), NET_TEXT("--ugal", ugal),
    {"--help", 'h', CLI_HELP, 0, NULL, NULL},
    {0}};

/* Returns 0, CLI_DONE (help printed) or an exit status. */
static int parse_options(const char *command, int argc, char **argv, net_options *o,
                         int netbench)
{
    const cli_command cmd = {command, netbench ? usage_netbench : usage_topo,
                             netbench ? netbench_options : topo_options, 1,
                             .too_many = "more than one scenario given ('%s')"};
    memset(o, 0, sizeof *o);
    size_t n_args;
    return cli_parse(&cmd, argc, argv, o, &o->path, &n_args);
}

/* Load the scenario and build its fabric. Returns 0 or an exit status. */
int netcmd_load_fabric(const net_options *o, scn_scenario *s, fabric *f)
{
    sim_error err;
    sim_error_clear(&err);
    if (scn_load_flags(o->path, o->sets.v, o->sets.n, SCN_LOAD_NO_FIT_CHECK, s, &err))
        return cli_print_error(&err);
    if (res_check(s, RES_STEP, 0, &err)) {
        scn_scenario_free(s);
        return cli_print_error(&err);
    }
    if (!s->has_fabric) {
        fprintf(stderr, "%s: error: the scenario has no <cluster><fabric>: add one (docs/fabric.md; "
                        "scenarios/examples/superpod-h100.xml is an example)\n", s->source);
        scn_scenario_free(s);
        return CLI_EXIT_INPUT;
    }
    if (fabric_build(&s->fabric, f, &err)) {
        fprintf(stderr, "%s: error: <fabric>: %s\n", s->source, err.msg);
        scn_scenario_free(s);
        return err.code == SIM_ERR_INPUT ? CLI_EXIT_INPUT : EXIT_FAILURE;
    }
    return 0;
}

/* ------------------------------------------------------------ topo */

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* Write the export through outpath (outpath.h): checked first (never over
 * the scenario, a file it includes or a non-regular file), written to a
 * temporary and renamed, so a failed export leaves nothing under the name. */
static int write_export(const topo_graph *g, const scn_scenario *s, const char *scenario,
                        const char *path)
{
    int dot = ends_with(path, ".dot") || ends_with(path, ".gv");
    if (!dot && !ends_with(path, ".graphml") && !ends_with(path, ".xml")) {
        fprintf(stderr, "dcsim topo: error: --export %s: the name must end in .graphml, .xml, "
                        ".dot or .gv (it chooses the format)\n", path);
        return CLI_EXIT_INPUT;
    }
    size_t n;
    const char **inputs = scn_input_paths(s, scenario, NULL, &n);
    if (!inputs) {
        fprintf(stderr, "dcsim topo: error: out of memory\n");
        return EXIT_FAILURE;
    }
    sim_error err;
    sim_error_clear(&err);
    outpath out;
    int rc = outpath_init(&out, path, "the export", inputs, n, &err);
    free(inputs);
    if (rc)
        return cli_print_error(&err);
    outpath_remove_stale(&out);
    FILE *fp = fopen(out.tmp, "w");
    if (!fp) {
        fprintf(stderr, "dcsim topo: error: --export %s: cannot write there\n", path);
        return CLI_EXIT_INPUT;
    }
    char why[256];
    rc = dot ? topo_export_dot(g, fp, why, sizeof why) : topo_export_graphml(g, fp, why, sizeof why);
    if (fclose(fp) && !rc) {
        rc = -1;
        snprintf(why, sizeof why, "write error");
    }
    if (rc) {
        outpath_discard(&out);
        fprintf(stderr, "dcsim topo: error: --export %s: %s\n", path, why);
        return CLI_EXIT_INPUT;
    }
    return outpath_commit(&out, 0, &err) ? cli_print_error(&err) : 0;
}

static void print_topo_text(const scn_scenario *s, const fabric *f, const topo_stats *st)
{
    const fabric_config *c = &s->fabric;
    printf("fabric        %s of %s links (%.4g GB/s per direction, %.4g GB/s effective)\n",
           fabric_topology_name(c->topology), c->link.name, c->link.bytes_per_s / 1e9,
           f->link_bytes_per_s / 1e9);
    printf("GPUs          %u (fabric host ports %u)\n", f->gpus, st->n_hosts);
    if (st->n_scaleup_domains)
        printf("scale-up      %u domains of %u GPUs, %s (%.4g GB/s per GPU effective)\n",
               st->n_scaleup_domains, c->gpus_per_node, c->scaleup.name,
               f->scaleup_link_bytes_per_s / 1e9);
    printf("switches      %u:", st->n_switches);
    for (int t = 1; t <= TOPO_STATS_MAX_TIER; t++)
        if (st->switches_per_tier[t])
            printf(" tier %d %u%s", t, st->switches_per_tier[t],
                   t < TOPO_STATS_MAX_TIER && st->switches_per_tier[t + 1] ? "," : "");
    printf("\n");
    if (st->n_planes > 1)
        printf("planes        %u of %u switches\n", st->n_planes, st->switches_per_plane[0]);
    printf("links         %u directed\n", st->n_links);
    printf("cables        %u fabric (host %u", st->n_fabric_cables, st->cables_per_tier[0]);
    for (int t = 1; t <= TOPO_STATS_MAX_TIER; t++)
        if (st->cables_per_tier[t])
            printf(", from tier %d %u", t, st->cables_per_tier[t]);
    printf("), %u scale-up\n", st->n_scaleup_cables);
    printf("transceivers  %u (one per end of every fabric cable; an upper bound: short runs "
           "may be copper)\n", st->n_transceivers);
    printf("bisection     %.6g TB/s one way (%.4g%% of the GPUs' injection)\n",
           st->bisection_bytes_per_s / 1e12,
           100.0 * st->bisection_bytes_per_s / (st->n_hosts / 2.0 * f->link_bytes_per_s));
    if (st->diameter_links == UINT32_MAX)
        printf("diameter      disconnected\n");
    else
        printf("diameter      %u links host to host\n", st->diameter_links);
    printf("max radix     %u ports\n", st->max_switch_radix);
    printf("routing       %s, %s paths", topo_balance_name(c->routing.balance),
           topo_path_class_name(c->routing.path_class));
    if (c->routing.balance == TOPO_BALANCE_ECMP)
        printf(", %u QP%s per connection", c->routing.qps, c->routing.qps > 1 ? "s" : "");
    printf("\n");
}

static int print_topo_json(const scn_scenario *s, const fabric *f, const topo_stats *st,
                           int csv)
{
    cJSON *o = jsonout_begin("topo");
    if (!o)
        return jsonout_emit(NULL, JSONOUT_JSON, NULL, NULL);
    cJSON_AddStringToObject(o, "topology", fabric_topology_name(s->fabric.topology));
    cJSON_AddStringToObject(o, "link", s->fabric.link.name);
    cJSON_AddNumberToObject(o, "link_bytes_per_s", f->link_bytes_per_s);
    cJSON_AddNumberToObject(o, "gpus", f->gpus);
    cJSON_AddNumberToObject(o, "hosts", st->n_hosts);
    cJSON_AddNumberToObject(o, "scaleup_domains", st->n_scaleup_domains);
    cJSON_AddNumberToObject(o, "switches", st->n_switches);
    cJSON *tiers = cJSON_AddArrayToObject(o, "switches_per_tier");
    for (int t = 1; t <= TOPO_STATS_MAX_TIER; t++)
        cJSON_AddItemToArray(tiers, cJSON_CreateNumber(st->switches_per_tier[t]));
    cJSON_AddNumberToObject(o, "planes", st->n_planes);
    cJSON_AddNumberToObject(o, "links", st->n_links);
    cJSON_AddNumberToObject(o, "fabric_cables", st->n_fabric_cables);
    cJSON *cable_tiers = cJSON_AddArrayToObject(o, "cables_per_tier");
    for (int t = 0; t <= TOPO_STATS_MAX_TIER; t++)
        cJSON_AddItemToArray(cable_tiers, cJSON_CreateNumber(st->cables_per_tier[t]));
    cJSON_AddNumberToObject(o, "scaleup_cables", st->n_scaleup_cables);
    cJSON_AddNumberToObject(o, "transceivers", st->n_transceivers);
    cJSON_AddNumberToObject(o, "bisection_bytes_per_s", st->bisection_bytes_per_s);
    cJSON_AddNumberToObject(o, "diameter_links",
                            st->diameter_links == UINT32_MAX ? -1 : (double)st->diameter_links);
    cJSON_AddNumberToObject(o, "max_switch_radix", st->max_switch_radix);
    cJSON_AddStringToObject(o, "routing", topo_balance_name(s->fabric.routing.balance));
    cJSON_AddStringToObject(o, "paths", topo_path_class_name(s->fabric.routing.path_class));
    return jsonout_emit(o, csv ? JSONOUT_CSV : JSONOUT_JSON, NULL, NULL);
}

int cmd_topo(int argc, char **argv)
{
    net_options o;
    int rc = parse_options("topo", argc, argv, &o, 0);
    if (rc)
        return rc == CLI_DONE ? 0 : rc;
    if (o.json && o.csv)
        return jsonout_one_format("topo");
    scn_scenario s;
    fabric f;
    if ((rc = netcmd_load_fabric(&o, &s, &f)))
        return rc;
    topo_stats st;
    char why[256];
    if (topo_stats_compute(&f.g, &st, why, sizeof why)) {
        fprintf(stderr, "%s: error: %s\n", s.source, why);
        rc = 1;
    } else {
        /* the export first: a refused or failed one prints no table */
        if (o.export_path)
            rc = write_export(&f.g, &s, o.path, o.export_path);
        if (!rc && (o.json || o.csv))
            rc = print_topo_json(&s, &f, &st, o.csv);
        else if (!rc)
            print_topo_text(&s, &f, &st);
    }
    fabric_free(&f);
    scn_scenario_free(&s);
    return rc;
}

/* ------------------------------------------------------------ netbench */

/* "8", "64K", "8G" (binary, nccl-tests) or a dcsim data quantity ("8GB"). */
int netcmd_parse_size(const char *text, double *out)
{
    char *end;
    double x = strtod(text, &end);
    if (end != text && x >= 0 && isfinite(x)) {
        double mult = 0;
        if (!*end)
            mult = 1;
        else if (!end[1] && (toupper((unsigned char)*end) == 'K'))
            mult = 1024.0;
        else if (!end[1] && (toupper((unsigned char)*end) == 'M'))
            mult = 1024.0 * 1024;
        else if (!end[1] && (toupper((unsigned char)*end) == 'G'))
            mult = 1024.0 * 1024 * 1024;
        if (mult) {
            *out = floor(x * mult);
            return 0;
        }
    }
    char why[128];
    return sim_units_parse(text, SIM_DIM_DATA, out, why, sizeof why) || *out < 0 ? -1 : 0;
}

typedef struct bench_spec {
    enum nc_collective op;
    enum nc_algorithm algo;
    unsigned ranks;
    double min, max, factor;
} bench_spec;

/* The most sizes (rows) one netbench prints: each is a simulation. */
#define NETBENCH_MAX_ROWS 1000

/* The next message size: size x factor in whole bytes, at least one byte
 * more, so a factor that rounds back to the same size (1 x 1.5) still
 * advances and the loop ends. */
static double next_size(double size, double factor)
{
    double next = floor(size * factor);
    return next > size ? next : size + 1;
}

static int parse_bench(const net_options *o, unsigned gpus, bench_spec *b)
{
    b->op = NC_ALLREDUCE;
    b->algo = NC_ALGO_AUTO;
    b->ranks = gpus;
    b->min = 8;
    b->max = 8.0 * 1024 * 1024 * 1024;
    b->factor = 2;
    if (o->op && nc_collective_parse(o->op, &b->op))
        return cli_usage_error("netbench", "--op %s: expected allreduce, reducescatter, "
                               "allgather, alltoall, broadcast or sendrecv", o->op);
    if (o->algo && nc_algorithm_parse(o->algo, &b->algo))
        return cli_usage_error("netbench", "--algo %s: expected auto, ring, tree, hd, "
                               "hierarchical, in-network or direct", o->algo);
    if (o->ranks) {
        char *end;
        unsigned long n = strtoul(o->ranks, &end, 10);
        if (*end || end == o->ranks || n < 2 || n > gpus) {
            char msg[160];
            snprintf(msg, sizeof msg, "--ranks %%s: expected a whole number from 2 to %u (the "
                     "cluster's GPUs)", gpus);
            return cli_usage_error("netbench", msg, o->ranks);
        }
        b->ranks = (unsigned)n;
    }
    if (o->min && netcmd_parse_size(o->min, &b->min))
        return cli_usage_error("netbench", "--min %s: expected a size such as 8, 64K, 1M or 1GB",
                               o->min);
    if (o->max && netcmd_parse_size(o->max, &b->max))
        return cli_usage_error("netbench", "--max %s: expected a size such as 8, 64K, 1M or 8G",
                               o->max);
    if (b->max < b->min)
        return cli_usage_error("netbench", "--max %s is below --min", o->max ? o->max : "8G");
    if (o->factor) {
        char *end;
        b->factor = strtod(o->factor, &end);
        if (*end || end == o->factor || !(b->factor > 1) || b->factor > 1024)
            return cli_usage_error("netbench", "--factor %s: expected a number above 1 and at "
                                   "most 1024", o->factor);
    }
    if (b->min < 1)
        return cli_usage_error("netbench", "--min %s: expected at least 1 byte",
                               o->min ? o->min : "8");
    if (b->max > NETBENCH_MAX_BYTES)
        return cli_usage_error("netbench", "--max %s: expected at most 1 TiB (1099511627776 "
                               "bytes)", o->max);
    unsigned rows = 0;
    for (double size = b->min; size <= b->max * (1 + 1e-12) && rows <= NETBENCH_MAX_ROWS;
         size = next_size(size, b->factor))
        rows++;
    if (rows > NETBENCH_MAX_ROWS) {
        char msg[200];
        snprintf(msg, sizeof msg, "--min, --max and --factor %%s give more than %d sizes; "
                 "raise --factor or narrow --min..--max", NETBENCH_MAX_ROWS);
        return cli_usage_error("netbench", msg, o->factor ? o->factor : "2");
    }
    return 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* busbw per NIC: ranks span several scale-up domains, one NIC per GPU. */
static double nic_share(const fabric *f, unsigned ranks)
{
    unsigned g = f->nc.domain_size;
    if (!g || ranks <= g)
        return 0;
    return (double)g;
}

/* One netbench: the sweep's settings and what it has printed so far. */
typedef struct bench {
    const net_options *o;
    const scn_scenario *s;
    fabric *f;
    bench_spec b;
    uint32_t *ranks;       /* 0 .. b.ranks - 1 */
    double per_nic;        /* GPUs per NIC share, 0 within one domain */
    cJSON *json, *rows;    /* --json: the object, and its rows once the header is in */
    int has_header;
    uint64_t links_used, links_colliding; /* at the largest size */
} bench;

/* The header, once the algorithm (auto's choice) is known. */
static void bench_header(bench *bn, enum nc_algorithm used)
{
    const bench_spec *b = &bn->b;
    bn->has_header = 1;
    if (bn->json) {
        cJSON_AddStringToObject(bn->json, "op", nc_collective_name(b->op));
        cJSON_AddStringToObject(bn->json, "algorithm", nc_algorithm_name(b->algo));
        cJSON_AddNumberToObject(bn->json, "ranks", b->ranks);
        cJSON_AddStringToObject(bn->json, "model", bn->o->analytic ? "analytic" : "flow");
        bn->rows = cJSON_AddArrayToObject(bn->json, "rows");
        return;
    }
    printf("# dcsim netbench: %s, algorithm %s%s, %u ranks, %s fabric of %s, %s\n",
           nc_collective_name(b->op), nc_algorithm_name(b->algo == NC_ALGO_AUTO ? b->algo : used),
           b->algo == NC_ALGO_AUTO ? " (NCCL's tuning model picks per size)" : "", b->ranks,
           fabric_topology_name(bn->s->fabric.topology), bn->s->fabric.link.name,
           bn->o->analytic ? "analytic bottleneck path" : "max-min flow model");
    char table[400];
    if (scn_fidelity_text(bn->s, table, sizeof table))
        printf("# link curves: the packet tier's fidelity table, %s\n", table);
    printf("#%13s %13s %6s %12s %9s %9s %10s  %s\n", "size", "count", "type", "time", "algbw",
           "busbw", "busbw/NIC", "expansion NCCL-pick/protocol");
    printf("#%13s %13s %6s %12s %9s %9s %10s\n", "(B)", "(elements)", "", "(us)", "(GB/s)",
           "(GB/s)", "(GB/s)");
}

static void bench_row(const bench *bn, double size, const nc_result *res, const nc_plan *plan)
{
    double nic = bn->per_nic ? res->busbw / bn->per_nic : NAN;
    int tuned = plan->nccl_algo >= 0;
    if (bn->json) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddNumberToObject(r, "bytes", size);
        cJSON_AddStringToObject(r, "expansion", nc_algorithm_name(plan->algo));
        if (tuned) {
            cJSON_AddStringToObject(r, "nccl_algorithm", nccl_algo_name(plan->nccl_algo));
            cJSON_AddStringToObject(r, "nccl_protocol", nccl_proto_name(plan->nccl_proto));
            cJSON_AddNumberToObject(r, "nccl_time_s", plan->nccl_time_s);
        }
        cJSON_AddNumberToObject(r, "time_s", res->time_s);
        cJSON_AddNumberToObject(r, "algbw_bytes_per_s", res->algbw);
        cJSON_AddNumberToObject(r, "busbw_bytes_per_s", res->busbw);
        if (bn->per_nic)
            cJSON_AddNumberToObject(r, "busbw_per_nic_bytes_per_s", nic);
        cJSON_AddNumberToObject(r, "flows", (double)res->flows);
        cJSON_AddNumberToObject(r, "recomputes", (double)res->recomputes);
        cJSON_AddNumberToObject(r, "events", (double)res->events);
        cJSON_AddItemToArray(bn->rows, r);
        return;
    }
    char nic_text[32] = "-";
    if (bn->per_nic)
        snprintf(nic_text, sizeof nic_text, "%.2f", nic / 1e9);
    char pick[64] = "";
    if (tuned)
        snprintf(pick, sizeof pick, " %s/%s", nccl_algo_name(plan->nccl_algo),
                 nccl_proto_name(plan->nccl_proto));
    printf("%14.0f %13.0f %6s %12.2f %9.2f %9.2f %10s  %s%s\n", size, floor(size / 4), "float",
           res->time_s * 1e6, res->algbw / 1e9, res->busbw / 1e9, nic_text,
           nc_algorithm_name(plan->algo), pick);
}

/* One size: its plan, its time (flow model or closed form) and row; at the
 * largest, how the routing spread it over the fabric. Returns 0 or the
 * exit status of the error printed. */
static int bench_size(bench *bn, double size)
{
    const bench_spec *b = &bn->b;
    nc_plan plan;
    nc_result res;
    sim_error err = {0};
    if (nc_plan_build(&plan, &bn->f->nc, b->op, b->algo, bn->ranks, b->ranks, size, &err)) {
        fprintf(stderr, "dcsim netbench: error: %s\n", err.msg);
        return err.code == SIM_ERR_NOMEM ? EXIT_FAILURE : CLI_EXIT_INPUT;
    }
    if (!bn->has_header)
        bench_header(bn, plan.algo);
    int rc = bn->o->analytic ? nc_analytic(&plan, &bn->f->nc, &res, &err)
                             : nc_simulate(&plan, &bn->f->nc, &res, &err);
    int last = next_size(size, b->factor) > b->max * (1 + 1e-12);
    if (!rc && last) {
        nc_result routed = res;
        if (!bn->o->analytic)
            rc = nc_analytic(&plan, &bn->f->nc, &routed, &err);
        bn->links_used = routed.fabric_links_used;
        bn->links_colliding = routed.fabric_links_colliding;
    }
    if (!rc)
        bench_row(bn, size, &res, &plan);
    nc_plan_free(&plan);
    if (rc) {
        fprintf(stderr, "dcsim netbench: error: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* After the last size: the routing line, or the JSON object (or its rows
 * as CSV). Returns 0 or 1 (the error printed). */
static int bench_footer(const bench *bn)
{
    if (!bn->json && bn->links_used)
        printf("# fabric links (switch to switch) at the largest size: %llu used, %llu (%.1f%%) "
               "carrying more than one connection (%s routing)\n",
               (unsigned long long)bn->links_used, (unsigned long long)bn->links_colliding,
               100.0 * bn->links_colliding / bn->links_used,
               topo_balance_name(bn->s->fabric.routing.balance));
    if (bn->json) {
        cJSON_AddNumberToObject(bn->json, "fabric_links_used", (double)bn->links_used);
        cJSON_AddNumberToObject(bn->json, "fabric_links_colliding", (double)bn->links_colliding);
        return bn->o->csv ? jsonout_csv(bn->json, "rows", NULL, stdout)
                          : jsonout_print(bn->json, 1, stdout);
    }
    return 0;
}

/* Every size from --min to --max, with progress on a terminal. */
static int bench_run(bench *bn)
{
    const bench_spec *b = &bn->b;
    int progress = !bn->o->quiet && isatty(STDERR_FILENO);
    double started = now_s();
    int rc = 0;
    for (double size = b->min; !rc && size <= b->max * (1 + 1e-12);
         size = next_size(size, b->factor)) {
        rc = bench_size(bn, size);
        if (!rc && progress && now_s() - started > 1.0)
            fprintf(stderr, "\rnetbench: %.0f of %.0f bytes done", size, b->max);
        fflush(stdout);
    }
    if (progress && now_s() - started > 1.0)
        fprintf(stderr, "\r%50s\r", "");
    if (!rc)
        rc = bench_footer(bn);
    return rc;
}

int cmd_netbench(int argc, char **argv)
{
    net_options o;
    int rc = parse_options("netbench", argc, argv, &o, 1);
    if (rc)
        return rc == CLI_DONE ? 0 : rc;
    o.argc = argc;
    o.argv = argv;
    if (o.json && o.csv)
        return jsonout_one_format("netbench");
    if (o.tier && !strcmp(o.tier, "packet")) {
        o.json |= o.csv; /* --csv prints the JSON document as a table */
        return netbench_packet(&o);
    }
    if (o.tier && strcmp(o.tier, "flow"))
        return cli_usage_error("netbench", "--tier %s: expected flow (default) or packet", o.tier);
    const char *packet_only = o.bytes ? "--bytes" : o.mtu ? "--mtu" : o.buffer ? "--buffer"
                              : o.hop_latency ? "--hop-latency" : o.ibcc ? "--ibcc"
                              : o.output ? "-o" : o.bin ? "--bin" : o.bins ? "--bins"
                              : o.loss ? "--loss" : o.rto ? "--rto"
                              : o.reorder ? "--reorder" : o.dcqcn ? "--dcqcn"
                              : o.adaptive ? "--adaptive"
                              : o.candidates ? "--valiant-candidates"
                              : o.ugal ? "--ugal" : NULL;
    if (packet_only)
        return cli_usage_error("netbench", "%s is an option of --tier packet", packet_only);
    scn_scenario s;
    fabric f;
    if ((rc = netcmd_load_fabric(&o, &s, &f)))
        return rc;
    bench bn = {.o = &o, .s = &s, .f = &f};
    if (!(rc = parse_bench(&o, f.gpus, &bn.b))) {
        bn.ranks = malloc((size_t)bn.b.ranks * sizeof *bn.ranks);
        bn.json = o.json || o.csv ? jsonout_begin("netbench") : NULL;
        for (unsigned i = 0; bn.ranks && i < bn.b.ranks; i++)
            bn.ranks[i] = i;
        bn.per_nic = nic_share(&f, bn.b.ranks);
        rc = bn.ranks ? bench_run(&bn) : 1;
        cJSON_Delete(bn.json);
        free(bn.ranks);
    }
    fabric_free(&f);
    scn_scenario_free(&s);
    return rc;
}
