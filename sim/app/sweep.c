/* sweep.c - `dcsim sweep`: one scenario over many points (the cartesian
 * product of --grid lists, or the lines of a --points file), each point run
 * as `dcsim run --set ... --replicas N` would, into one HDF5 file
 * (docs/scaling.md, layout in docs/trace-format.md).
 *
 * Invariant: a point's numbers depend only on (scenario, its overrides,
 * seed, replicas). Replica r of every point runs with
 * campaign_replica_seed(seed, r) (common random numbers across points) into
 * its own slot, whatever thread, rank or run computed it; tables are
 * written in point order. The file under its final name is always a
 * complete HDF5 file: it is rewritten whole as NAME.tmp.<pid>, fsync'd and
 * renamed over NAME, at the start, every second or so, and at the end; a
 * rerun of the same sweep keeps its finished points and runs the others.
 * Under MPI, point i belongs to rank i % size; ranks send finished points to
 * rank 0, the only writer.
 */
#include "sweep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>
#include <omp.h>
#ifdef DCSIM_HAVE_MPI
#include <mpi.h>
#endif

#include "campaign.h"
#include "cli.h"
#include "scenario.h"
#include "energyrun.h"
#include "outpath.h"
#include "power.h"
#include "resources.h"
#include "run.h"
#include "trace.h"
#include "units.h"
#include "version.h"

#define SWEEP_FORMAT_VERSION 1
#define MAX_GRIDS 16
#define MAX_SETS 256
#define MAX_PARAMS 64
#define MAX_POINTS 10000000u

/* the built-in schema and catalogs (embedded.c): part of a sweep's identity */
extern const unsigned char dcsim_xsd[], dcsim_catalog_gpus[], dcsim_catalog_models[],
    dcsim_catalog_servers[], dcsim_catalog_links[], dcsim_catalog_failures[],
    dcsim_catalog_sites[];
extern const size_t dcsim_xsd_len, dcsim_catalog_gpus_len, dcsim_catalog_models_len,
    dcsim_catalog_servers_len, dcsim_catalog_links_len, dcsim_catalog_failures_len,
    dcsim_catalog_sites_len;

const char usage_sweep[] =
    "usage: dcsim sweep [SCENARIO.xml] --grid PATH=V1,V2,... [--grid ...]... -o SWEEP.h5\n"
    "                   [--replicas N] [--seed N] [--set PATH=VALUE]... [--write-every T]\n"
    "                   [--force] [--quiet]\n"
    "       dcsim sweep [SCENARIO.xml] --points FILE -o SWEEP.h5 [...]\n"
    "\n"
    "Run the scenario at every point of a sweep, each point with N Monte Carlo\n"
    "replicas, and write one HDF5 file: /sweep/points (a row per point: its\n"
    "values, mean and 95 %% confidence half-width of time to train, ETTR,\n"
    "failures, rework, ...) and /sweep/replicas (a row per replica).\n"
    "\n"
    "  --grid PATH=V1,V2,...  a --set path and its values; several --grid give\n"
    "                         their cartesian product, the first varying slowest\n"
    "  --points FILE          instead: one point per line, PATH=VALUE PATH=VALUE ...\n"
    "                         ('#' starts a comment)\n"
    "  --set PATH=VALUE       fixed overrides for every point (a point's own win)\n"
    "  --replicas N           replicas per point (default 1); replica r of every\n"
    "                         point uses the same random streams (common random\n"
    "                         numbers), so points differ by their values, not noise\n"
    "  --seed N               master random seed (overrides <dcsim seed>)\n"
    "  -o, --output FILE      the result file (required). Rewritten whole under a\n"
    "                         temporary name and renamed about every second, so it\n"
    "                         is always complete; run the same command again after\n"
    "                         an interruption and only unfinished points run\n"
    "  --write-every T        rewrite the file at most this often (default 1s; more\n"
    "                         when a write takes long)\n"
    "  --force                start over when FILE holds a different sweep\n"
    "  -q, --quiet            no progress on stderr (shown only on a terminal)\n"
    "\n"
    "Threads: OMP_NUM_THREADS. Processes: the same command under mpirun or srun\n"
    "(docs/scaling.md); the results are the same either way. "
#ifdef DCSIM_HAVE_MPI
    "MPI: built in.\n"
#else
    "MPI: not in this build.\n"
#endif
    "exit status: 0 ok, 1 internal error, 2 bad input or a failed point, 130 interrupted\n";

static volatile sig_atomic_t sweep_interrupted;

static void sweep_on_signal(int sig)
{
    (void)sig;
    sweep_interrupted = 1;
}

/* ------------------------------------------------------------ the metrics */

/* per replica, in /sweep/replicas; per point, mean and ci95 in /sweep/points */
enum { M_TTT, M_ETTR, M_FAILURES, M_RESTARTS, M_REWORK, M_REWORK_GPU_H, M_RESTART_T,
       M_CKPT_T, M_CKPT_ABORTED, M_CHECKPOINTS, M_SPARE_WAIT, M_SLOW,
       /* at a <site> (NaN without one): docs/energy.md */
       M_IT_ENERGY, M_FACILITY_ENERGY, M_PUE, M_ENERGY_COST, M_CO2, N_METRICS };
static const char *const metric_names[N_METRICS] = {
    "time_to_train_s",  "ettr_frac",         "failures",           "restarts",
    "rework_s",         "rework_gpu_hours",  "restart_time_s",     "checkpoint_time_s",
    "checkpoint_aborted_s", "checkpoints",   "spare_wait_s",       "slowdown_s",
    "it_energy_j",      "facility_energy_j", "pue_frac",           "energy_cost_cny",
    "co2_kg"};
static const char *const metric_units[N_METRICS] = {"s", "1", "1", "1", "s", "GPU h",
                                                    "s", "s", "s", "1", "s", "s",
                                                    "J", "J", "1", "CNY", "kg"};

/* per point, the same in every replica (from replica 0) */
enum { C_ITERATION, C_INTERVAL, C_MTBF, C_YOUNG, C_DALY, N_CONSTS };
static const char *const const_names[N_CONSTS] = {"iteration_time_s", "checkpoint_interval_s",
                                                  "cluster_mtbf_s", "young_interval_s",
                                                  "daly_interval_s"};

typedef struct sweep_rep {
    uint32_t point, replica;
    double m[N_METRICS];
    uint64_t event_digest;
} sweep_rep;

enum { ST_PENDING = 0, ST_DONE = 1, ST_FAILED = 2 };

static void rep_of(const campaign_result *r, uint64_t gpus, const energy_result *energy,
                   sweep_rep *out)
{
    double *m = out->m;
    m[M_IT_ENERGY] = energy ? energy->it_energy_j : NAN;
    m[M_FACILITY_ENERGY] = energy ? energy->facility_energy_j : NAN;
    m[M_PUE] = energy ? energy->pue : NAN;
    m[M_ENERGY_COST] = energy ? energy->cost : NAN;
    m[M_CO2] = energy ? energy->co2_kg : NAN;
    m[M_TTT] = r->time_to_train_s;
    m[M_ETTR] = r->ettr_frac;
    m[M_FAILURES] = (double)r->failures;
    m[M_RESTARTS] = (double)r->restarts;
    m[M_REWORK] = r->rework_s;
    m[M_REWORK_GPU_H] = r->rework_s * (double)gpus / 3600.0;
    m[M_RESTART_T] = r->restart_time_s;
    m[M_CKPT_T] = r->checkpoint_time_s;
    m[M_CKPT_ABORTED] = r->checkpoint_aborted_s;
    m[M_CHECKPOINTS] = (double)r->checkpoints;
    m[M_SPARE_WAIT] = r->spare_wait_s;
    m[M_SLOW] = r->persist_slowdown_s + r->elastic_slowdown_s + r->straggler_slowdown_s;
    out->event_digest = r->event_digest;
}

/* ------------------------------------------------------------- the points */

typedef struct grid {
    char *given;           /* PATH=V1,V2 as given (owned) */
    char *spec;            /* the same, cut at the commas (owned) */
    char path[256];
    char **sets;           /* "PATH=Vj", one per value (owned) */
    const char **values;   /* into spec */
    size_t n;
} grid;

typedef struct point {
    const char **sets;     /* fixed --set, then the point's, then --seed (owned array) */
    size_t n_sets;
    size_t first_own, n_own; /* the point's own sets: sets[first_own ..] */
    const char *values[MAX_PARAMS]; /* text per parameter column, "" when not set */
    unsigned line;         /* --points: the file's line */
    scn_scenario scn;
    int loaded;
    run_plan plan;         /* prepared (step tier, finished campaign) before its replicas run */
    int planned;
} point;

typedef struct sweep {
    /* options */
    const char *scenario, *output, *points_file;
    const char *fixed[MAX_SETS + 1];
    size_t n_fixed;
    char seed_set[64];
    grid grids[MAX_GRIDS];
    size_t n_grids;
    unsigned replicas;
    double write_every_s;  /* --write-every, default 1 s */
    int quiet, force, help;
    /* the points */
    char *points_text;     /* --points: the file, tokenised in place */
    char **owned_sets;     /* --points: per point set arrays own nothing else */
    const char *params[MAX_PARAMS];
    size_t n_params;
    point *pts;
    size_t n_points;
    char id[19];           /* sweep identity: "0x" + 16 hex digits */
    /* results (rank 0: all points; others: their own) */
    signed char *status;
    unsigned *reps_done;
    int *fail_rep;         /* lowest failing replica, or -1 */
    sim_error *fail_err;   /* its error (n_points, allocated on the first failure) */
    char **errtext;
    sweep_rep *reps;       /* n_points x replicas */
    double *consts;        /* n_points x N_CONSTS */
    size_t n_done, n_done_at_start;
    /* processes */
    int rank, size;
    size_t *send_queue, n_queued, n_sent;
    void **send_bufs;
#ifdef DCSIM_HAVE_MPI
    MPI_Request *send_reqs;
#endif
    int ranks_finished;
    /* writing and progress */
    struct timespec start;
    double last_write_s, write_cost_s, last_progress_s;
    size_t written_done;
    int shown, stop, write_failed;
    sim_error write_err;
    outpath out;           /* rank 0: the file's temporary name and lock */
} sweep;

static double now_s(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/* Usage errors are printed by rank 0 only: every rank parses the same line. */
static int usage_err(const sweep *sw, const char *fmt, const char *arg)
{
    if (sw->rank == 0)
        return cli_usage_error("sweep", fmt, arg);
    return CLI_EXIT_INPUT;
}

static int parse_grid(const char *arg, grid *g)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1] || (size_t)(eq - arg) >= sizeof g->path)
        return -1;
    memcpy(g->path, arg, (size_t)(eq - arg));
    g->path[eq - arg] = '\0';
    g->spec = strdup(arg);
    g->given = strdup(arg);
    size_t cap = 1;
    for (const char *c = eq + 1; *c; c++)
        cap += *c == ',';
    g->values = calloc(cap, sizeof *g->values);
    g->sets = calloc(cap, sizeof *g->sets);
    if (!g->spec || !g->given || !g->values || !g->sets)
        return -1;
    char *v = g->spec + (eq - arg) + 1;
    for (;;) { /* empty values are an error, not a silent skip */
        char *comma = strchr(v, ',');
        if (comma)
            *comma = '\0';
        if (!*v)
            return -1;
        g->values[g->n] = v;
        size_t len = strlen(g->path) + strlen(v) + 2;
        if (!(g->sets[g->n] = malloc(len)))
            return -1;
        snprintf(g->sets[g->n++], len, "%s=%s", g->path, v);
        if (!comma)
            break;
        v = comma + 1;
    }
    return 0;
}

static int parse_args(sweep *sw, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            sw->help = 1;
        } else if (cli_is_option(a, "--grid")) {
            if (!(v = cli_option_value(argc, argv, &i, "--grid")) || sw->n_grids == MAX_GRIDS ||
                parse_grid(v, &sw->grids[sw->n_grids++]))
                return usage_err(sw, "--grid needs PATH=V1,V2,... with no empty value (at most "
                                 "16 of them), e.g. --grid checkpoint/@interval=10min,20min%s",
                                 "");
            for (size_t k = 0; k + 1 < sw->n_grids; k++)
                if (!strcmp(sw->grids[k].path, sw->grids[sw->n_grids - 1].path))
                    return usage_err(sw, "--grid %s given twice: list all its values in one",
                                     sw->grids[k].path);
        } else if (cli_is_option(a, "--points")) {
            if (!(sw->points_file = cli_option_value(argc, argv, &i, "--points")))
                return usage_err(sw, "--points needs a file name%s", "");
        } else if (cli_is_option(a, "--set")) {
            if (!(v = cli_option_value(argc, argv, &i, "--set")) || !strchr(v, '='))
                return usage_err(sw, "--set needs PATH=VALUE%s", "");
            if (sw->n_fixed == MAX_SETS)
                return usage_err(sw, "more than 256 --set options%s", "");
            sw->fixed[sw->n_fixed++] = v;
        } else if (!strcmp(a, "-o") || cli_is_option(a, "--output")) {
            if (!(sw->output = cli_option_value(argc, argv, &i, !strcmp(a, "-o") ? "-o" : "--output")))
                return usage_err(sw, "%s needs a file name", a);
        } else if (cli_is_option(a, "--replicas")) {
            char *end = NULL;
            v = cli_option_value(argc, argv, &i, "--replicas");
            unsigned long n = v ? strtoul(v, &end, 10) : 0;
            if (!v || !*v || *end || v[0] == '-' || n < 1 || n > 1000000)
                return usage_err(sw, "--replicas %s: expected a whole number from 1 to 1000000",
                                 v ? v : "");
            sw->replicas = (unsigned)n;
        } else if (cli_is_option(a, "--seed")) {
            char *end = NULL;
            v = cli_option_value(argc, argv, &i, "--seed");
            errno = 0;
            unsigned long long seed = v ? strtoull(v, &end, 10) : 0;
            if (!v || !*v || *end || errno == ERANGE || v[0] == '-' || v[0] == '+' || v[0] == ' ')
                return usage_err(sw, "--seed %s: expected a whole number from 0 to "
                                 "18446744073709551615", v ? v : "");
            snprintf(sw->seed_set, sizeof sw->seed_set, "@seed=%llu", seed);
        } else if (cli_is_option(a, "--write-every")) {
            char why[128];
            v = cli_option_value(argc, argv, &i, "--write-every");
            if (!v || sim_units_parse(v, SIM_DIM_TIME, &sw->write_every_s, why, sizeof why) ||
                !(sw->write_every_s >= 0))
                return usage_err(sw, "--write-every %s: expected a duration, e.g. 30s or 0s",
                                 v ? v : "");
        } else if (!strcmp(a, "--force")) {
            sw->force = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            sw->quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            return usage_err(sw, "unknown option '%s'", a);
        } else if (!sw->scenario) {
            sw->scenario = a;
        } else {
            return usage_err(sw, "more than one scenario given ('%s')", a);
        }
    }
    if (sw->help)
        return 0;
    if (!sw->output)
        return usage_err(sw, "no result file: give -o SWEEP.h5%s", "");
    if (!sw->n_grids == !sw->points_file)
        return usage_err(sw, "give --grid PATH=V1,V2,... (one or more) or --points FILE, "
                         "not both%s", "");
    if (!sw->replicas)
        sw->replicas = 1;
    return 0;
}

/* Every point's set list: the fixed ones, its own, then --seed. */
static int point_sets(sweep *sw, point *p, const char *const *own, size_t n_own)
{
    p->n_sets = sw->n_fixed + n_own + (sw->seed_set[0] ? 1 : 0);
    p->sets = malloc((p->n_sets ? p->n_sets : 1) * sizeof *p->sets);
    if (!p->sets)
        return -1;
    memcpy(p->sets, sw->fixed, sw->n_fixed * sizeof *p->sets);
    memcpy(p->sets + sw->n_fixed, own, n_own * sizeof *own);
    p->first_own = sw->n_fixed;
    p->n_own = n_own;
    if (sw->seed_set[0])
        p->sets[p->n_sets - 1] = sw->seed_set;
    return 0;
}

static int param_index(sweep *sw, const char *set)
{
    size_t len = strcspn(set, "=");
    for (size_t k = 0; k < sw->n_params; k++)
        if (strcspn(sw->params[k], "=") == len && !strncmp(sw->params[k], set, len))
            return (int)k;
    return -1;
}

static int build_grid_points(sweep *sw)
{
    size_t n = 1;
    for (size_t k = 0; k < sw->n_grids; k++) {
        n *= sw->grids[k].n;
        if (n > MAX_POINTS)
            return usage_err(sw, "more than 10000000 points%s", "");
        sw->params[sw->n_params++] = sw->grids[k].path;
    }
    sw->pts = calloc(n, sizeof *sw->pts);
    if (!sw->pts)
        return EXIT_FAILURE;
    sw->n_points = n;
    const char *own[MAX_GRIDS];
    for (size_t i = 0; i < n; i++) {
        size_t idx = i;
        for (size_t k = sw->n_grids; k-- > 0;) { /* the last grid varies fastest */
            size_t j = idx % sw->grids[k].n;
            idx /= sw->grids[k].n;
            own[k] = sw->grids[k].sets[j];
            sw->pts[i].values[k] = sw->grids[k].values[j];
        }
        if (point_sets(sw, &sw->pts[i], own, sw->n_grids))
            return EXIT_FAILURE;
    }
    return 0;
}

/* --points FILE: one point per line, PATH=VALUE tokens separated by blanks. */
static int build_file_points(sweep *sw)
{
    FILE *f = fopen(sw->points_file, "rb");
    if (!f) {
        if (sw->rank == 0)
            fprintf(stderr, "%s: error: cannot read the points file: %s\n", sw->points_file,
                    strerror(errno));
        return CLI_EXIT_INPUT;
    }
    size_t cap = 0, len = 0;
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
        if (len + got + 1 > cap) {
            cap = 2 * (len + got + 1);
            char *t = realloc(sw->points_text, cap);
            if (!t) {
                fclose(f);
                return EXIT_FAILURE;
            }
            sw->points_text = t;
        }
        memcpy(sw->points_text + len, buf, got);
        len += got;
    }
    fclose(f);
    if (!sw->points_text && !(sw->points_text = malloc(1)))
        return EXIT_FAILURE;
    sw->points_text[len] = '\0';
    const char *nul = memchr(sw->points_text, '\0', len); /* would end the text early */
    if (nul) {
        unsigned ln = 1;
        for (const char *c = sw->points_text; c < nul; c++)
            ln += *c == '\n';
        if (sw->rank == 0)
            fprintf(stderr, "%s:%u: error: a NUL byte; a points file is text: one point per "
                    "line, PATH=VALUE tokens separated by blanks\n", sw->points_file, ln);
        return CLI_EXIT_INPUT;
    }
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += sw->points_text[i] == '\n';
    sw->pts = calloc(lines, sizeof *sw->pts);
    if (!sw->pts)
        return EXIT_FAILURE;
    char *line = sw->points_text;
    for (unsigned ln = 1; line; ln++) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        const char *own[MAX_PARAMS];
        size_t n_own = 0;
        for (char *save = NULL, *tok = strtok_r(line, " \t\r", &save); tok;
             tok = strtok_r(NULL, " \t\r", &save)) {
            char *eq = strchr(tok, '=');
            if (!eq || eq == tok || !eq[1]) {
                if (sw->rank == 0)
                    fprintf(stderr, "%s:%u: error: '%s': expected PATH=VALUE, e.g. "
                            "checkpoint/@interval=20min\n", sw->points_file, ln, tok);
                return CLI_EXIT_INPUT;
            }
            int k = param_index(sw, tok);
            if (k < 0 && sw->n_params == MAX_PARAMS) {
                if (sw->rank == 0)
                    fprintf(stderr, "%s:%u: error: more than %d different paths\n",
                            sw->points_file, ln, MAX_PARAMS);
                return CLI_EXIT_INPUT;
            }
            if (k < 0) { /* a new column, named by the path (NUL-terminated in place below) */
                k = (int)sw->n_params++;
                sw->params[k] = tok;
            }
            if (n_own == MAX_PARAMS) {
                if (sw->rank == 0)
                    fprintf(stderr, "%s:%u: error: more than %d PATH=VALUE tokens on one line; "
                            "at most %d per point\n", sw->points_file, ln, MAX_PARAMS,
                            MAX_PARAMS);
                return CLI_EXIT_INPUT;
            }
            own[n_own++] = tok;
            sw->pts[sw->n_points].values[k] = eq + 1;
        }
        line = next;
        if (!n_own)
            continue;
        point *p = &sw->pts[sw->n_points++];
        p->line = ln;
        if (point_sets(sw, p, own, n_own))
            return EXIT_FAILURE;
    }
    if (!sw->n_points) {
        if (sw->rank == 0)
            fprintf(stderr, "%s: error: no points in the file (one per line: PATH=VALUE ...)\n",
                    sw->points_file);
        return CLI_EXIT_INPUT;
    }
    /* the column names: the path part of the first token that named them */
    char **names = calloc(sw->n_params, sizeof *names);
    if (!names)
        return EXIT_FAILURE;
    for (size_t k = 0; k < sw->n_params; k++) {
        size_t l = strcspn(sw->params[k], "=");
        if (!(names[k] = malloc(l + 1)))
            return EXIT_FAILURE;
        memcpy(names[k], sw->params[k], l);
        names[k][l] = '\0';
        sw->params[k] = names[k];
    }
    sw->owned_sets = names;
    return 0;
}

/* ------------------------------------------------------------ identity */

static uint64_t hash_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL; /* FNV-1a */
    return h;
}

static uint64_t hash_text(uint64_t h, const char *s)
{
    return hash_bytes(h, s, strlen(s) + 1);
}

/* dcsim version, the built-in schema and catalogs, point 0's resolved
 * scenario (so the scenario file and its XIncludes), every point's
 * overrides (fixed sets, grid or file values, seed), and the replicas. */
static void sweep_identity(sweep *sw)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    h = hash_text(h, "dcsim sweep " DCSIM_VERSION);
    h = hash_bytes(h, dcsim_xsd, dcsim_xsd_len);
    h = hash_bytes(h, dcsim_catalog_gpus, dcsim_catalog_gpus_len);
    h = hash_bytes(h, dcsim_catalog_models, dcsim_catalog_models_len);
    h = hash_bytes(h, dcsim_catalog_servers, dcsim_catalog_servers_len);
    h = hash_bytes(h, dcsim_catalog_links, dcsim_catalog_links_len);
    h = hash_bytes(h, dcsim_catalog_failures, dcsim_catalog_failures_len);
    h = hash_bytes(h, dcsim_catalog_sites, dcsim_catalog_sites_len);
    h = hash_bytes(h, sw->pts[0].scn.resolved_xml, sw->pts[0].scn.resolved_xml_len);
    h = hash_bytes(h, &sw->replicas, sizeof sw->replicas);
    for (size_t i = 0; i < sw->n_points; i++) {
        h = hash_bytes(h, "\n", 1);
        for (size_t j = 0; j < sw->pts[i].n_sets; j++)
            h = hash_text(h, sw->pts[i].sets[j]);
    }
    h ^= h >> 31; /* spread the last bytes into every digit */
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 29;
    snprintf(sw->id, sizeof sw->id, "0x%016" PRIx64, h);
}

/* ----------------------------------------------------------- the file */

static hid_t status_type(void)
{
    hid_t t = H5Tenum_create(H5T_NATIVE_INT8);
    static const char *const names[] = {"pending", "done", "failed"};
    for (signed char v = 0; v < 3; v++)
        H5Tenum_insert(t, names[(int)v], &v);
    return t;
}

/* An attribute: n strings (a scalar when n == 0 and one value), or one number. */
static int attr_put(hid_t obj, const char *name, hid_t type, int scalar, size_t n, const void *v)
{
    hsize_t dims[1] = {n};
    hid_t s = scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, NULL);
    hid_t a = H5Acreate2(obj, name, type, s, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a < 0 || (n && H5Awrite(a, type, v) < 0);
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(s);
    return rc;
}

static int attr_text(hid_t obj, const char *name, const char *value)
{
    hid_t t = trace_string_type();
    int rc = attr_put(obj, name, t, 1, 1, &value);
    H5Tclose(t);
    return rc;
}

static int attr_texts(hid_t obj, const char *name, const char *const *values, size_t n)
{
    hid_t t = trace_string_type();
    int rc = attr_put(obj, name, t, 0, n, values);
    H5Tclose(t);
    return rc;
}

/* A 1-D dataset of n elements of type from buf, with units and description. */
static int dataset_put(hid_t g, const char *name, hid_t type, size_t n, const void *buf,
                       const char *const *units, size_t n_units, const char *description)
{
    hsize_t dims[1] = {n};
    hid_t s = H5Screate_simple(1, dims, NULL), dcpl = trace_untimed(H5P_DATASET_CREATE);
    hid_t d = H5Dcreate2(g, name, type, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int rc = d < 0 || (n && H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) ||
             attr_texts(d, "units", units, n_units) || attr_text(d, "description", description);
    if (d >= 0)
        H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(s);
    return rc;
}

static hid_t replica_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(sweep_rep));
    H5Tinsert(t, "point", HOFFSET(sweep_rep, point), H5T_NATIVE_UINT32);
    H5Tinsert(t, "replica", HOFFSET(sweep_rep, replica), H5T_NATIVE_UINT32);
    for (int k = 0; k < N_METRICS; k++)
        H5Tinsert(t, metric_names[k], HOFFSET(sweep_rep, m) + (size_t)k * sizeof(double),
                  H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "event_digest", HOFFSET(sweep_rep, event_digest), H5T_NATIVE_UINT64);
    return t;
}

/* /sweep/points: point, the parameters' text, status, replicas, the
 * per-point constants, then mean and ci95 of every metric. Built in a byte
 * buffer with the string widths of this sweep. */
typedef struct points_layout {
    size_t size, off_point, off_param[MAX_PARAMS], off_status, off_replicas, off_const,
        off_stats;
    size_t width[MAX_PARAMS];
    hid_t type;
} points_layout;

static void points_layout_make(const sweep *sw, points_layout *L)
{
    size_t off = 0;
    L->off_point = off;
    off += sizeof(uint32_t);
    for (size_t k = 0; k < sw->n_params; k++) {
        size_t w = 1;
        for (size_t i = 0; i < sw->n_points; i++) {
            const char *v = sw->pts[i].values[k];
            size_t l = v ? strlen(v) + 1 : 1;
            w = l > w ? l : w;
        }
        L->width[k] = w;
        L->off_param[k] = off;
        off += w;
    }
    L->off_status = off;
    off += 1;
    L->off_replicas = off;
    off += sizeof(uint32_t);
    L->off_const = off;
    off += N_CONSTS * sizeof(double);
    L->off_stats = off;
    off += 2 * N_METRICS * sizeof(double);
    L->size = off;
    L->type = H5Tcreate(H5T_COMPOUND, off);
    H5Tinsert(L->type, "point", L->off_point, H5T_NATIVE_UINT32);
    for (size_t k = 0; k < sw->n_params; k++) {
        hid_t s = H5Tcopy(H5T_C_S1);
        H5Tset_size(s, L->width[k]);
        H5Tset_strpad(s, H5T_STR_NULLTERM);
        H5Tinsert(L->type, sw->params[k], L->off_param[k], s);
        H5Tclose(s);
    }
    hid_t st = status_type();
    H5Tinsert(L->type, "status", L->off_status, st);
    H5Tclose(st);
    H5Tinsert(L->type, "replicas", L->off_replicas, H5T_NATIVE_UINT32);
    for (int c = 0; c < N_CONSTS; c++)
        H5Tinsert(L->type, const_names[c], L->off_const + (size_t)c * sizeof(double),
                  H5T_NATIVE_DOUBLE);
    for (int k = 0; k < N_METRICS; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s_mean", metric_names[k]);
        H5Tinsert(L->type, name, L->off_stats + (size_t)(2 * k) * sizeof(double),
                  H5T_NATIVE_DOUBLE);
        snprintf(name, sizeof name, "%s_ci95", metric_names[k]);
        H5Tinsert(L->type, name, L->off_stats + (size_t)(2 * k + 1) * sizeof(double),
                  H5T_NATIVE_DOUBLE);
    }
}

static void points_row(const sweep *sw, const points_layout *L, size_t i, double *scratch,
                       unsigned char *row)
{
    uint32_t idx = (uint32_t)i, reps = sw->replicas;
    memset(row, 0, L->size);
    memcpy(row + L->off_point, &idx, sizeof idx);
    for (size_t k = 0; k < sw->n_params; k++)
        if (sw->pts[i].values[k])
            memcpy(row + L->off_param[k], sw->pts[i].values[k], strlen(sw->pts[i].values[k]));
    row[L->off_status] = (unsigned char)sw->status[i];
    memcpy(row + L->off_replicas, &reps, sizeof reps);
    double c[N_CONSTS], s[2 * N_METRICS];
    int done = sw->status[i] == ST_DONE;
    for (int k = 0; k < N_CONSTS; k++)
        c[k] = done ? sw->consts[i * N_CONSTS + (size_t)k] : NAN;
    for (int k = 0; k < N_METRICS; k++) {
        campaign_stat st = {NAN, NAN, NAN};
        if (done) {
            for (unsigned r = 0; r < sw->replicas; r++)
                scratch[r] = sw->reps[i * sw->replicas + r].m[k];
            st = campaign_stat_of(scratch, sw->replicas);
        }
        s[2 * k] = st.mean;
        s[2 * k + 1] = st.ci95;
    }
    memcpy(row + L->off_const, c, sizeof c);
    memcpy(row + L->off_stats, s, sizeof s);
}

static int write_tables(const sweep *sw, hid_t g)
{
    points_layout L;
    memset(&L, 0, sizeof L);
    points_layout_make(sw, &L);
    unsigned char *rows = malloc(sw->n_points * L.size);
    double *scratch = malloc(sw->replicas * sizeof *scratch);
    size_t n_rep_rows = 0;
    for (size_t i = 0; i < sw->n_points; i++)
        n_rep_rows += sw->status[i] == ST_DONE ? sw->replicas : 0;
    sweep_rep *reps = malloc((n_rep_rows ? n_rep_rows : 1) * sizeof *reps);
    const char **errs = malloc(sw->n_points * sizeof *errs);
    int rc = !rows || !scratch || !reps || !errs;
    size_t at = 0;
    for (size_t i = 0; !rc && i < sw->n_points; i++) {
        points_row(sw, &L, i, scratch, rows + i * L.size);
        errs[i] = sw->errtext[i] ? sw->errtext[i] : "";
        if (sw->status[i] == ST_DONE)
            for (unsigned r = 0; r < sw->replicas; r++)
                reps[at++] = sw->reps[i * sw->replicas + r];
    }
    const char *units_p[3 + MAX_PARAMS + N_CONSTS + 2 * N_METRICS];
    size_t nu = 0;
    units_p[nu++] = "1";
    for (size_t k = 0; k < sw->n_params; k++)
        units_p[nu++] = "-";
    units_p[nu++] = "-";
    units_p[nu++] = "1";
    for (int c = 0; c < N_CONSTS; c++)
        units_p[nu++] = "s";
    for (int k = 0; k < N_METRICS; k++) {
        units_p[nu++] = metric_units[k];
        units_p[nu++] = metric_units[k];
    }
    const char *units_r[3 + N_METRICS];
    units_r[0] = units_r[1] = "1";
    for (int k = 0; k < N_METRICS; k++)
        units_r[2 + k] = metric_units[k];
    units_r[2 + N_METRICS] = "-";
    hid_t rt = replica_type(), vs = trace_string_type();
    if (!rc)
        rc = dataset_put(g, "points", L.type, sw->n_points, rows, units_p, nu,
                         "one row per point, in point order: its values (text, as given), "
                         "status, replicas, the point's constants (replica 0), and the mean "
                         "and 95 % confidence half-width (Student t) of every replica metric; "
                         "NaN until done");
    if (!rc)
        rc = dataset_put(g, "replicas", rt, n_rep_rows, reps, units_r, 3 + N_METRICS,
                         "one row per replica of every finished point, by (point, replica); "
                         "replica r ran with seed campaign_replica_seed(seed, r) at every point");
    if (!rc)
        rc = dataset_put(g, "errors", vs, sw->n_points, errs, (const char *const[]){"-"}, 1,
                         "per point: why it failed, or empty");
    H5Tclose(rt);
    H5Tclose(vs);
    H5Tclose(L.type);
    free(rows);
    free(scratch);
    free(reps);
    free(errs);
    return rc;
}

static int write_meta(const sweep *sw, hid_t file, hid_t g)
{
    int32_t format = SWEEP_FORMAT_VERSION;
    uint64_t seed = sw->pts[0].scn.seed, n = sw->n_points, done = 0;
    uint32_t reps = sw->replicas;
    for (size_t i = 0; i < sw->n_points; i++)
        done += sw->status[i] != ST_PENDING;
    const char *grid[MAX_GRIDS + 1];
    size_t n_grid = 0;
    char pts_line[PATH_MAX + 16];
    if (sw->points_file) {
        snprintf(pts_line, sizeof pts_line, "--points %s", sw->points_file);
        grid[n_grid++] = pts_line;
    }
    for (size_t k = 0; k < sw->n_grids; k++)
        grid[n_grid++] = sw->grids[k].given;
    const char *fixed[MAX_SETS + 1];
    size_t nf = 0;
    for (size_t k = 0; k < sw->n_fixed; k++)
        fixed[nf++] = sw->fixed[k];
    if (sw->seed_set[0])
        fixed[nf++] = sw->seed_set;
    const char *xml = sw->pts[0].scn.resolved_xml;
    hid_t vs = trace_string_type();
    int rc = attr_put(file, "format_version", H5T_NATIVE_INT32, 1, 1, &format) ||
             attr_text(file, "dcsim_version", DCSIM_VERSION) ||
             attr_text(file, "content", "dcsim sweep") ||
             attr_put(g, "format_version", H5T_NATIVE_INT32, 1, 1, &format) ||
             attr_text(g, "sweep_id", sw->id) ||
             attr_text(g, "scenario_source", sw->pts[0].scn.source) ||
             attr_text(g, "scenario_name", sw->pts[0].scn.name) ||
             attr_texts(g, "grid", grid, n_grid) || attr_texts(g, "sets", fixed, nf) ||
             attr_texts(g, "parameters", sw->params, sw->n_params) ||
             attr_put(g, "seed", H5T_NATIVE_UINT64, 1, 1, &seed) ||
             attr_put(g, "replicas", H5T_NATIVE_UINT32, 1, 1, &reps) ||
             attr_put(g, "points_total", H5T_NATIVE_UINT64, 1, 1, &n) ||
             attr_put(g, "points_finished", H5T_NATIVE_UINT64, 1, 1, &done);
    if (!rc) {
        hid_t s = H5Screate(H5S_SCALAR), dcpl = trace_untimed(H5P_DATASET_CREATE);
        hid_t d = H5Dcreate2(g, "scenario", vs, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        rc = d < 0 || H5Dwrite(d, vs, H5S_ALL, H5S_ALL, H5P_DEFAULT, &xml) < 0 ||
             attr_text(d, "description", "point 0's scenario as simulated (XML after XInclude "
                       "and its overrides); point i differs by its values");
        if (d >= 0)
            H5Dclose(d);
        H5Pclose(dcpl);
        H5Sclose(s);
    }
    H5Tclose(vs);
    return rc;
}

/* The whole file as NAME.tmp.<pid>, fsync'd, renamed over NAME: readers
 * see the old file or the new one, never a part. May run on any thread. */
static int write_file(sweep *sw, sim_error *err)
{
    trace_quiet_hdf5(); /* per thread in a thread-safe HDF5 */
    const char *tmp = sw->out.tmp;
    hid_t fcpl = trace_untimed(H5P_FILE_CREATE);
    hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    int e = f < 0 ? trace_h5_errno() : 0; /* before the next call clears it */
    H5Pclose(fcpl);
    if (f < 0) {
        int fd = e ? -1 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644); /* HDF5 did not say */
        if (!e && fd < 0)
            e = errno;
        if (fd >= 0)
            close(fd);
        outpath_discard(&sw->out);
        return sim_error_set(err, SIM_ERR_IO, sw->output, 0, "cannot write the sweep file: %s",
                             e ? strerror(e) : "H5Fcreate failed");
    }
    hid_t gcpl = trace_untimed(H5P_GROUP_CREATE);
    hid_t g = H5Gcreate2(f, "sweep", H5P_DEFAULT, gcpl, H5P_DEFAULT);
    H5Pclose(gcpl);
    int rc = g < 0 || write_meta(sw, f, g) || write_tables(sw, g);
    if (g >= 0)
        H5Gclose(g);
    e = rc ? trace_h5_errno() : 0;
    if (trace_close_file(f, &e))
        rc = 1;
    if (rc) {
        outpath_discard(&sw->out);
        return sim_error_set(err, SIM_ERR_IO, sw->output, 0, "cannot write the sweep file: %s",
                             e ? strerror(e) : "writing HDF5 failed");
    }
    return outpath_commit(&sw->out, 1, err);
}

/* ---------------------------------------------------------- resuming */

static int not_ours(const sweep *sw, const char *why)
{
    fprintf(stderr, "%s: error: %s; choose another -o, or --force to start over (it "
            "replaces the file)\n", sw->output, why);
    return CLI_EXIT_INPUT;
}

static int read_text_attr(hid_t obj, const char *name, char *out, size_t size)
{
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT), t = trace_string_type();
    char *v = NULL;
    int rc = a < 0 || H5Aread(a, t, &v) < 0 || !v;
    if (!rc)
        snprintf(out, size, "%s", v);
    H5free_memory(v);
    H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    return rc;
}

/* Read a whole 1-D dataset into buf (n elements of type) after checking its length. */
static int read_all(hid_t g, const char *name, hid_t type, size_t n, void *buf)
{
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    hid_t s = d >= 0 ? H5Dget_space(d) : -1;
    hssize_t got = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
    int rc = got != (hssize_t)n || (n && H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0);
    if (s >= 0)
        H5Sclose(s);
    if (d >= 0)
        H5Dclose(d);
    return rc;
}

static hsize_t rows_of(hid_t g, const char *name)
{
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    hid_t s = d >= 0 ? H5Dget_space(d) : -1;
    hssize_t n = s >= 0 ? H5Sget_simple_extent_npoints(s) : 0;
    if (s >= 0)
        H5Sclose(s);
    if (d >= 0)
        H5Dclose(d);
    return n > 0 ? (hsize_t)n : 0;
}

typedef struct point_back {
    uint32_t point;
    signed char status;
    double consts[N_CONSTS];
} point_back;

/* The finished points of an existing file of the same sweep. */
static int load_existing(sweep *sw)
{
    trace_quiet_hdf5();
    struct stat st;
    if (stat(sw->output, &st) != 0)
        return 0;
    if (sw->force)
        return 0;
    hid_t f = H5Fis_hdf5(sw->output) > 0 ? H5Fopen(sw->output, H5F_ACC_RDONLY, H5P_DEFAULT) : -1;
    hid_t g = f >= 0 ? H5Gopen2(f, "sweep", H5P_DEFAULT) : -1;
    char id[64] = "";
    if (g < 0 || read_text_attr(g, "sweep_id", id, sizeof id)) {
        if (g >= 0)
            H5Gclose(g);
        if (f >= 0)
            H5Fclose(f);
        return not_ours(sw, "the file exists and is not a dcsim sweep file");
    }
    int rc = 0;
    if (strcmp(id, sw->id)) {
        char why[256];
        snprintf(why, sizeof why, "the file holds a different sweep (id %s, this one %s: the "
                 "scenario, grid, --set, seed, replicas or dcsim version differ)", id, sw->id);
        rc = not_ours(sw, why);
    }
    point_back *pb = rc ? NULL : malloc(sw->n_points * sizeof *pb);
    hsize_t n_rep_rows = rc ? 0 : rows_of(g, "replicas");
    sweep_rep *reps = rc ? NULL : malloc((n_rep_rows ? n_rep_rows : 1) * sizeof *reps);
    char **errs = rc ? NULL : calloc(sw->n_points, sizeof *errs);
    if (!rc && (!pb || !reps || !errs))
        rc = EXIT_FAILURE;
    if (!rc) {
        hid_t pt = H5Tcreate(H5T_COMPOUND, sizeof(point_back)), st_t = status_type();
        H5Tinsert(pt, "point", HOFFSET(point_back, point), H5T_NATIVE_UINT32);
        H5Tinsert(pt, "status", HOFFSET(point_back, status), st_t);
        for (int c = 0; c < N_CONSTS; c++)
            H5Tinsert(pt, const_names[c], HOFFSET(point_back, consts) + (size_t)c * sizeof(double),
                      H5T_NATIVE_DOUBLE);
        hid_t rt = replica_type(), vs = trace_string_type();
        if (read_all(g, "points", pt, sw->n_points, pb) ||
            read_all(g, "replicas", rt, n_rep_rows, reps) ||
            read_all(g, "errors", vs, sw->n_points, errs))
            rc = not_ours(sw, "the sweep file cannot be read back");
        H5Tclose(pt);
        H5Tclose(st_t);
        H5Tclose(rt);
        H5Tclose(vs);
    }
    size_t at = 0;
    for (size_t i = 0; !rc && i < sw->n_points; i++) {
        if (pb[i].point != i)
            rc = not_ours(sw, "the sweep file's points are out of order");
        else if (pb[i].status == ST_DONE) {
            for (unsigned r = 0; !rc && r < sw->replicas; r++, at++) {
                if (at >= n_rep_rows || reps[at].point != i || reps[at].replica != r)
                    rc = not_ours(sw, "the sweep file's replicas do not match its points");
                else
                    sw->reps[i * sw->replicas + r] = reps[at];
            }
            memcpy(sw->consts + i * N_CONSTS, pb[i].consts, sizeof pb[i].consts);
        } else if (pb[i].status == ST_FAILED) {
            sw->errtext[i] = strdup(errs[i] ? errs[i] : "");
        }
        if (!rc && pb[i].status != ST_PENDING) {
            sw->status[i] = pb[i].status;
            sw->n_done++;
        }
    }
    if (errs) {
        hid_t vs = trace_string_type();
        hsize_t dims[1] = {sw->n_points};
        hid_t s = H5Screate_simple(1, dims, NULL);
        H5Dvlen_reclaim(vs, s, H5P_DEFAULT, errs);
        H5Sclose(s);
        H5Tclose(vs);
    }
    free(errs);
    free(pb);
    free(reps);
    H5Gclose(g);
    H5Fclose(f);
    return rc;
}

/* ------------------------------------------------------- loading points */

static void point_label(const sweep *sw, size_t i, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t j = 0; j < sw->pts[i].n_own && used < size; j++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", j ? " " : "",
                                 sw->pts[i].sets[sw->pts[i].first_own + j]);
}

/* One line naming where the bad value came from: the --grid and its value,
 * or the --points file's line; else the loader's own line and the point. */
static void print_point_error(const sweep *sw, size_t i, const sim_error *e)
{
    const point *p = &sw->pts[i];
    if (!strncmp(e->file, "--set ", 6)) {
        const char *set = e->file + 6;
        for (size_t j = p->first_own; j < p->first_own + p->n_own; j++) {
            if (strcmp(p->sets[j], set))
                continue;
            const char *eq = strchr(set, '=');
            if (sw->points_file)
                fprintf(stderr, "%s:%u: error: %s: %s\n", sw->points_file, p->line, set, e->msg);
            else
                fprintf(stderr, "dcsim sweep: error: --grid %.*s: value '%s': %s\n",
                        (int)(eq - set), set, eq + 1, e->msg);
            return;
        }
    }
    char line[2048], label[1024];
    sim_error_format(e, line, sizeof line);
    point_label(sw, i, label, sizeof label);
    if (sw->points_file)
        fprintf(stderr, "%s (point %zu, %s:%u: %s)\n", line, i, sw->points_file, p->line, label);
    else
        fprintf(stderr, "%s (point %zu: %s)\n", line, i, label);
}

static int owns(const sweep *sw, size_t i)
{
    return (int)(i % (size_t)sw->size) == sw->rank;
}

/* Load (validate) this rank's unfinished points in parallel, then time the
 * iteration on the step tier where a point needs it (one after another: the
 * step tier is not shared between threads). Returns the lowest failing
 * point, or n_points; its error in *bad_err. */
static size_t load_points(sweep *sw, sim_error *bad_err)
{
    size_t bad = sw->n_points;
    long long n = (long long)sw->n_points;
#pragma omp parallel for schedule(dynamic, 1)
    for (long long k = 0; k < n; k++) {
        size_t i = (size_t)k;
        point *p = &sw->pts[i];
        if (p->loaded || !owns(sw, i) || sw->status[i] != ST_PENDING)
            continue;
        sim_error e;
        sim_error_clear(&e);
        if (scn_load(sw->scenario, p->sets, p->n_sets, &p->scn, &e) == 0) {
            p->loaded = 1;
            free(p->scn.resolved_xml); /* only point 0's is kept (identity, /sweep/scenario) */
            p->scn.resolved_xml = NULL;
            continue;
        }
#pragma omp critical(sweep_load)
        if (i < bad) {
            bad = i;
            *bad_err = e;
        }
    }
    for (size_t i = 0; i < bad; i++) {
        point *p = &sw->pts[i];
        if (!p->loaded || !owns(sw, i) || sw->status[i] != ST_PENDING || p->planned)
            continue;
        sim_error e;
        sim_error_clear(&e);
        /* the resource guard ran once, on point 0 (cmd_sweep) */
        int rc = run_plan_prepare(&p->scn, 0, RUN_PLAN_ENERGY | RUN_PLAN_GUARD_DONE, &p->plan, &e);
        p->planned = 1;
        if (rc) {
            bad = i;
            *bad_err = e;
        }
    }
    return bad;
}

/* ------------------------------------------------------- processes */

#define TAG_POINT 1
#define TAG_DONE 2

typedef struct msg_head {
    uint32_t point;
    int32_t status;
    uint32_t replicas, err_len;
    double consts[N_CONSTS];
} msg_head;

/* How many processes a launcher started (mpirun, srun), or 0 when none. */
static long launched_size(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
                                       "SLURM_STEP_NUM_TASKS"};
    long most = 0;
    for (size_t k = 0; k < sizeof vars / sizeof *vars; k++) {
        const char *v = getenv(vars[k]);
        if (k == 3 && !getenv("SLURM_PROCID"))
            continue;
        long n = v ? strtol(v, NULL, 10) : 0;
        most = n > most ? n : most;
    }
    if (!most && (getenv("PMIX_RANK") || getenv("PMI_RANK")))
        most = 1;
    return most;
}

#ifdef DCSIM_HAVE_MPI
static void send_point(sweep *sw, size_t i)
{
    size_t elen = sw->errtext[i] ? strlen(sw->errtext[i]) : 0;
    size_t n = sizeof(msg_head) + (size_t)sw->replicas * sizeof(sweep_rep) + elen;
    unsigned char *buf = malloc(n);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    msg_head h = {(uint32_t)i, sw->status[i], sw->replicas, (uint32_t)elen, {0}};
    memcpy(h.consts, sw->consts + i * N_CONSTS, sizeof h.consts);
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, sw->reps + i * sw->replicas, (size_t)sw->replicas * sizeof(sweep_rep));
    if (elen)
        memcpy(buf + n - elen, sw->errtext[i], elen);
    sw->send_bufs[sw->n_sent] = buf;
    MPI_Isend(buf, (int)n, MPI_BYTE, 0, TAG_POINT, MPI_COMM_WORLD, &sw->send_reqs[sw->n_sent]);
    sw->n_sent++;
}

static void receive(sweep *sw, const MPI_Status *st)
{
    int n = 0;
    MPI_Get_count(st, MPI_BYTE, &n);
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    MPI_Recv(buf, n, MPI_BYTE, st->MPI_SOURCE, st->MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (st->MPI_TAG == TAG_DONE) {
        sw->ranks_finished++;
    } else {
        msg_head h;
        memcpy(&h, buf, sizeof h);
        size_t i = h.point;
        memcpy(sw->consts + i * N_CONSTS, h.consts, sizeof h.consts);
        memcpy(sw->reps + i * sw->replicas, buf + sizeof h,
               (size_t)sw->replicas * sizeof(sweep_rep));
        if (h.err_len) {
            free(sw->errtext[i]);
            sw->errtext[i] = malloc(h.err_len + 1);
            if (sw->errtext[i]) {
                memcpy(sw->errtext[i], buf + (size_t)n - h.err_len, h.err_len);
                sw->errtext[i][h.err_len] = '\0';
            }
        }
        sw->status[i] = (signed char)h.status;
        sw->n_done++;
    }
    free(buf);
}
#endif

/* On the main thread only (MPI_THREAD_FUNNELED): ranks above 0 send the
 * points they finished, rank 0 takes in what arrived. */
static void comm_poll(sweep *sw)
{
#ifdef DCSIM_HAVE_MPI
    if (sw->size == 1)
        return;
    if (sw->rank > 0) {
        while (sw->n_sent < sw->n_queued)
            send_point(sw, sw->send_queue[sw->n_sent]);
        return;
    }
    for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!flag)
            break;
        receive(sw, &st);
    }
#else
    (void)sw;
#endif
}

/* ------------------------------------------------------- running */

static void progress_show(sweep *sw, int final)
{
    if (sw->rank != 0 || sw->quiet || !isatty(STDERR_FILENO))
        return;
    double t = now_s(&sw->start);
    if (final) {
        if (sw->shown)
            fprintf(stderr, "\r\033[K");
        sw->shown = 0;
        return;
    }
    if (t < 0.5 || t - sw->last_progress_s < 0.2)
        return;
    sw->last_progress_s = t;
    size_t now = sw->n_done - sw->n_done_at_start, left = sw->n_points - sw->n_done;
    if (now)
        fprintf(stderr, "\r\033[Kpoints %zu/%zu  (%.1f s, ETA %.0f s)", sw->n_done,
                sw->n_points, t, t / (double)now * (double)left);
    else
        fprintf(stderr, "\r\033[Kpoints %zu/%zu  (%.1f s)", sw->n_done, sw->n_points, t);
    sw->shown = 1;
}

/* Rank 0: rewrite the file when points finished since the last write, at
 * most every --write-every (or ten times what a write costs, for huge
 * files), or now when final. */
static void maybe_write(sweep *sw, int final)
{
    if (sw->rank != 0 || sw->write_failed)
        return;
    double t = now_s(&sw->start);
    double every = sw->write_cost_s * 10 > sw->write_every_s ? sw->write_cost_s * 10
                                                             : sw->write_every_s;
    if (!final && (sw->n_done == sw->written_done || t - sw->last_write_s < every))
        return;
    sim_error_clear(&sw->write_err);
    size_t done = sw->n_done;
    if (write_file(sw, &sw->write_err)) {
        sw->write_failed = 1;
#pragma omp atomic write
        sw->stop = 1;
        return;
    }
    sw->written_done = done;
    sw->last_write_s = now_s(&sw->start);
    sw->write_cost_s = sw->last_write_s - t;
}

static void finish_point(sweep *sw, size_t i)
{
    sw->status[i] = sw->fail_rep[i] >= 0 ? ST_FAILED : ST_DONE;
    sw->n_done++;
    if (sw->rank > 0)
        sw->send_queue[sw->n_queued++] = i;
}

static void record(sweep *sw, size_t i, unsigned r, int rc, const campaign_result *res,
                   const energy_result *energy, const sim_error *e)
{
    if (rc == SIM_ERR_INTERRUPTED)
        return; /* the point stays pending: a rerun does it again */
    if (rc && (sw->fail_rep[i] < 0 || (int)r < sw->fail_rep[i])) {
        char line[2048];
        char *text = malloc(2100);
        if (text)
            snprintf(text, 2100, "replica %u: %s", r, sim_error_format(e, line, sizeof line));
        free(sw->errtext[i]);
        sw->errtext[i] = text;
        sw->fail_rep[i] = (int)r;
    } else if (!rc) {
        sweep_rep *x = &sw->reps[i * sw->replicas + r];
        rep_of(res, sw->pts[i].scn.campaign.gpu_count, energy, x);
        x->point = (uint32_t)i;
        x->replica = r;
        if (r == 0) {
            double *c = sw->consts + i * N_CONSTS;
            c[C_ITERATION] = res->iteration_time_s;
            c[C_INTERVAL] = res->checkpoint_interval_s;
            c[C_MTBF] = res->cluster_mtbf_s;
            c[C_YOUNG] = res->young_interval_s;
            c[C_DALY] = res->daly_interval_s;
        }
    }
    if (++sw->reps_done[i] == sw->replicas)
        finish_point(sw, i);
}

static int poll_interrupt(void *ctx, double frac, double sim_s)
{
    (void)ctx;
    (void)frac;
    (void)sim_s;
    return sweep_interrupted != 0;
}

/* Every (point, replica) of this rank's unfinished points, dynamically
 * over the threads; each result lands in its own slot. */
static void run_points(sweep *sw)
{
    size_t n_mine = 0;
    for (size_t i = 0; i < sw->n_points; i++)
        n_mine += owns(sw, i) && sw->status[i] == ST_PENDING;
    size_t *mine = malloc((n_mine ? n_mine : 1) * sizeof *mine);
    if (!mine) {
        sw->stop = 1;
        return;
    }
    n_mine = 0;
    for (size_t i = 0; i < sw->n_points; i++)
        if (owns(sw, i) && sw->status[i] == ST_PENDING)
            mine[n_mine++] = i;
    long long n_items = (long long)n_mine * sw->replicas;
#pragma omp parallel for schedule(dynamic, 1)
    for (long long it = 0; it < n_items; it++) {
        int halt;
#pragma omp atomic read
        halt = sw->stop;
        if (halt || sweep_interrupted)
            continue;
        size_t i = mine[it / sw->replicas];
        unsigned r = (unsigned)(it % sw->replicas);
        campaign_config c = sw->pts[i].plan.campaign;
        c.seed = campaign_replica_seed(c.seed, r);
        sim_error e;
        sim_error_clear(&e);
        /* at a <site>: energy, cost and CO2 of this replica's timeline */
        run_outcome out;
        int rc = run_execute(&sw->pts[i].plan, &c, NULL, poll_interrupt, NULL, &out, &e);
#pragma omp critical(sweep_results)
        {
            record(sw, i, r, rc, &out.result, out.has_energy ? &out.energy.result : NULL, &e);
            if (omp_get_thread_num() == 0)
                comm_poll(sw);
            maybe_write(sw, 0);
            progress_show(sw, 0);
        }
        run_outcome_free(&out);
    }
    free(mine);
}

/* After the loop: ranks above 0 send the rest and say so; rank 0 takes
 * everything in until every rank has. */
static void finish_ranks(sweep *sw)
{
#ifdef DCSIM_HAVE_MPI
    if (sw->size == 1)
        return;
    if (sw->rank > 0) {
        comm_poll(sw);
        MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_DONE, MPI_COMM_WORLD);
        MPI_Waitall((int)sw->n_sent, sw->send_reqs, MPI_STATUSES_IGNORE);
        return;
    }
    while (sw->ranks_finished < sw->size - 1) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (flag) {
            receive(sw, &st);
        } else {
            struct timespec nap = {0, 2000000};
            nanosleep(&nap, NULL);
        }
        maybe_write(sw, 0);
        progress_show(sw, 0);
    }
#else
    (void)sw;
#endif
}

/* ------------------------------------------------------- the table */

static void print_table(const sweep *sw)
{
    size_t w[MAX_PARAMS];
    printf("# dcsim sweep %s: %zu points x %u replicas, seed %" PRIu64 ", %s\n", sw->id,
           sw->n_points, sw->replicas, sw->pts[0].scn.seed, sw->pts[0].scn.source);
    printf("%7s", "point");
    for (size_t k = 0; k < sw->n_params; k++) {
        w[k] = strlen(sw->params[k]);
        for (size_t i = 0; i < sw->n_points; i++)
            if (sw->pts[i].values[k] && strlen(sw->pts[i].values[k]) > w[k])
                w[k] = strlen(sw->pts[i].values[k]);
        printf("  %-*s", (int)w[k], sw->params[k]);
    }
    printf("  %-7s %12s %9s %9s %8s %10s\n", "status", "train (d)", "+-95%", "ETTR", "+-95%",
           "failures");
    double *x = malloc(sw->replicas * sizeof *x);
    for (size_t i = 0; x && i < sw->n_points; i++) {
        printf("%7zu", i);
        for (size_t k = 0; k < sw->n_params; k++)
            printf("  %-*s", (int)w[k], sw->pts[i].values[k] ? sw->pts[i].values[k] : "");
        if (sw->status[i] != ST_DONE) {
            printf("  %s\n", sw->status[i] == ST_FAILED ? "failed" : "pending");
            continue;
        }
        campaign_stat s[3];
        const int which[3] = {M_TTT, M_ETTR, M_FAILURES};
        for (int k = 0; k < 3; k++) {
            for (unsigned r = 0; r < sw->replicas; r++)
                x[r] = sw->reps[i * sw->replicas + r].m[which[k]];
            s[k] = campaign_stat_of(x, sw->replicas);
        }
        printf("  %-7s %12.3f %9.3f %9.5f %8.5f %10.1f\n", "done", s[0].mean / 86400,
               s[0].ci95 / 86400, s[1].mean, s[1].ci95, s[2].mean);
    }
    free(x);
}

/* ------------------------------------------------------- the command */

static void sweep_free(sweep *sw)
{
    for (size_t i = 0; sw->pts && i < sw->n_points; i++) {
        run_plan_free(&sw->pts[i].plan);
        if (sw->pts[i].loaded)
            scn_scenario_free(&sw->pts[i].scn);
        free(sw->pts[i].sets);
    }
    for (size_t k = 0; k < sw->n_grids; k++) {
        for (size_t j = 0; j < sw->grids[k].n; j++)
            free(sw->grids[k].sets[j]);
        free(sw->grids[k].sets);
        free(sw->grids[k].values);
        free(sw->grids[k].spec);
        free(sw->grids[k].given);
    }
    for (size_t k = 0; sw->owned_sets && k < sw->n_params; k++)
        free(sw->owned_sets[k]);
    free(sw->owned_sets);
    for (size_t i = 0; sw->errtext && i < sw->n_points; i++)
        free(sw->errtext[i]);
    for (size_t i = 0; sw->send_bufs && i < sw->n_sent; i++)
        free(sw->send_bufs[i]);
    free(sw->errtext);
    free(sw->points_text);
    free(sw->pts);
    free(sw->status);
    free(sw->reps_done);
    free(sw->fail_rep);
    free(sw->reps);
    free(sw->consts);
    free(sw->send_queue);
    free(sw->send_bufs);
#ifdef DCSIM_HAVE_MPI
    free(sw->send_reqs);
#endif
}

static int alloc_results(sweep *sw)
{
    size_t n = sw->n_points;
    sw->status = calloc(n, 1);
    sw->reps_done = calloc(n, sizeof *sw->reps_done);
    sw->fail_rep = malloc(n * sizeof *sw->fail_rep);
    sw->errtext = calloc(n, sizeof *sw->errtext);
    sw->reps = calloc(n * sw->replicas, sizeof *sw->reps);
    sw->consts = calloc(n * N_CONSTS, sizeof *sw->consts);
    sw->send_queue = malloc(n * sizeof *sw->send_queue);
    sw->send_bufs = calloc(n, sizeof *sw->send_bufs);
    int bad = !sw->status || !sw->reps_done || !sw->fail_rep || !sw->errtext || !sw->reps ||
              !sw->consts || !sw->send_queue || !sw->send_bufs;
#ifdef DCSIM_HAVE_MPI
    sw->send_reqs = malloc(n * sizeof *sw->send_reqs);
    bad |= !sw->send_reqs;
#endif
    for (size_t i = 0; !bad && i < n; i++)
        sw->fail_rep[i] = -1;
    if (bad)
        fprintf(stderr, "dcsim sweep: error: out of memory for %zu points x %u replicas\n", n,
                sw->replicas);
    return bad ? EXIT_FAILURE : 0;
}

/* Every rank goes through the same steps; the collective ones are marked. */
static int sweep_main(sweep *sw, int argc, char **argv)
{
    int rc = parse_args(sw, argc, argv);
    if (rc || sw->help) {
        if (sw->help && sw->rank == 0)
            fputs(usage_sweep, stdout);
        return rc;
    }
    rc = sw->points_file ? build_file_points(sw) : build_grid_points(sw);
    if (!rc)
        rc = alloc_results(sw);
    if (rc)
        return rc;
    /* point 0 first, on every rank: the sweep's identity needs its scenario */
    sim_error err;
    sim_error_clear(&err);
    if (scn_load(sw->scenario, sw->pts[0].sets, sw->pts[0].n_sets, &sw->pts[0].scn, &err)) {
        if (sw->rank == 0)
            print_point_error(sw, 0, &err);
        return err.code == SIM_ERR_INPUT || err.code == SIM_ERR_IO ? CLI_EXIT_INPUT : EXIT_FAILURE;
    }
    sw->pts[0].loaded = 1;
    /* the resource guard, on point 0: points run in parallel, one campaign per thread */
    if (res_check(&sw->pts[0].scn, sw->pts[0].scn.step_computes_iteration ? RES_STEP : 0,
                  res_parallel_campaigns(UINT32_MAX), &err)) {
        if (sw->rank == 0)
            cli_print_error(&err);
        return CLI_EXIT_INPUT;
    }
    sweep_identity(sw);
    if (sw->rank == 0) { /* an unwritable place fails now, not after the work */
        /* never over the scenario, a file it includes or the points file */
        const scn_scenario *s0 = &sw->pts[0].scn;
        const char **inputs = malloc((s0->n_included + 2) * sizeof *inputs);
        if (!inputs)
            return EXIT_FAILURE;
        size_t n_in = 0;
        inputs[n_in++] = sw->scenario;
        inputs[n_in++] = sw->points_file;
        for (size_t i = 0; i < s0->n_included; i++)
            inputs[n_in++] = s0->included[i];
        if (outpath_init(&sw->out, sw->output, "the sweep file", inputs, n_in, &err) ||
            outpath_lock(&sw->out, &err)) {
            rc = cli_print_error(&err);
        } else {
            outpath_remove_stale(&sw->out); /* after the lock: no live sweep's */
            rc = load_existing(sw);
        }
        free(inputs);
    }
#ifdef DCSIM_HAVE_MPI
    if (sw->size > 1) { /* collective: rank 0's verdict and the finished points */
        MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!rc)
            MPI_Bcast(sw->status, (int)sw->n_points, MPI_SIGNED_CHAR, 0, MPI_COMM_WORLD);
        if (!rc && sw->rank > 0)
            for (size_t i = 0; i < sw->n_points; i++)
                sw->n_done += sw->status[i] != ST_PENDING;
    }
#endif
    if (rc)
        return rc;
    sw->n_done_at_start = sw->n_done;
    size_t bad = load_points(sw, &err);
#ifdef DCSIM_HAVE_MPI
    if (sw->size > 1) { /* collective: the lowest bad point of all, reported by its owner */
        unsigned long long mine = bad, all = bad;
        MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
        if (all < sw->n_points && all != mine)
            return CLI_EXIT_INPUT;
    }
#endif
    if (bad < sw->n_points) {
        print_point_error(sw, bad, &err);
        return err.code == SIM_ERR_INPUT || err.code == SIM_ERR_IO ? CLI_EXIT_INPUT : EXIT_FAILURE;
    }

    struct sigaction sa, old_int, old_term, old_hup;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = sweep_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup); /* a closed terminal: stop as for SIGTERM */
    clock_gettime(CLOCK_MONOTONIC, &sw->start);
    maybe_write(sw, 1); /* the file exists, complete, from the start */
    if (sw->n_done < sw->n_points)
        run_points(sw);
    finish_ranks(sw);
    comm_poll(sw);
    maybe_write(sw, 1);
    progress_show(sw, 1);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);

    if (sw->rank != 0)
        return 0;
    if (sw->write_failed)
        return cli_print_error(&sw->write_err);
    size_t failed = 0;
    for (size_t i = 0; i < sw->n_points; i++)
        if (sw->status[i] == ST_FAILED) {
            if (failed++ < 10) {
                char label[1024];
                point_label(sw, i, label, sizeof label);
                fprintf(stderr, "dcsim sweep: point %zu (%s) failed: %s\n", i, label,
                        sw->errtext[i] ? sw->errtext[i] : "");
            }
        }
    if (sw->n_done < sw->n_points) {
        fprintf(stderr, "dcsim sweep: interrupted; %zu of %zu points finished, in %s; run the "
                "same command again to do the rest\n", sw->n_done, sw->n_points, sw->output);
        return CLI_EXIT_INTERRUPTED;
    }
    print_table(sw);
    printf("# %zu points (%zu run now, %zu from the file), written to %s\n", sw->n_points,
           sw->n_points - sw->n_done_at_start, sw->n_done_at_start, sw->output);
    if (failed) {
        fprintf(stderr, "dcsim sweep: error: %zu of %zu points failed (status \"failed\" in %s, "
                "why in /sweep/errors)\n", failed, sw->n_points, sw->output);
        return CLI_EXIT_INPUT;
    }
    return 0;
}

int cmd_sweep(int argc, char **argv)
{
    sweep *sw = calloc(1, sizeof *sw);
    if (!sw) {
        fprintf(stderr, "dcsim sweep: error: out of memory\n");
        return EXIT_FAILURE;
    }
    sw->size = 1;
    sw->write_every_s = 1.0;
    sw->out.lock_fd = -1;
    long launched = launched_size();
#ifdef DCSIM_HAVE_MPI
    int use_mpi = launched > 0;
    if (use_mpi) { /* only here: no other command needs (or starts) MPI */
        int provided = 0;
        MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &sw->rank);
        MPI_Comm_size(MPI_COMM_WORLD, &sw->size);
        if (launched > 1 && sw->size == 1) {
            fprintf(stderr, "dcsim sweep: error: started as one of %ld processes, but MPI sees "
                    "only this one (srun without --mpi=pmix?); every process would write the "
                    "same file\n", launched);
            MPI_Finalize();
            free(sw);
            return CLI_EXIT_INPUT;
        }
    }
#else
    if (launched > 1) {
        fprintf(stderr, "dcsim sweep: error: started as one of %ld processes (mpirun or srun), "
                "but this dcsim was built without MPI: every process would write the same "
                "file. Run one process (threads: OMP_NUM_THREADS), or rebuild with MPI "
                "(libopenmpi-dev; docs/scaling.md)\n", launched);
        free(sw);
        return CLI_EXIT_INPUT;
    }
#endif
    int rc = sweep_main(sw, argc, argv);
#ifdef DCSIM_HAVE_MPI
    if (use_mpi) { /* every rank exits with rank 0's status */
        MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Finalize();
    }
#endif
    outpath_fini(&sw->out);
    sweep_free(sw);
    free(sw);
    fflush(stdout);
    return rc;
}
