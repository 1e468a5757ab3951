/* scenario.h - load a dcsim scenario: parse (libxml2), XInclude, --set
 * overrides, XSD validation, then semantic checks, into config structs.
 *
 * Errors are compiler-style with the file and line of the offending element
 * (or the --set option that produced the value):
 *   default.xml:12: error: <training tokens="-5T">: tokens must be positive
 * The schema, the GPU catalog and the default scenario are compiled in, so
 * loading works from any directory. A loaded scenario holds inputs only:
 * what a run decides (the step tier's iteration and speeds) lives in its
 * run_plan (run.h), and no command changes the scenario after loading.
 */
#ifndef DCSIM_APP_SCENARIO_H
#define DCSIM_APP_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "campaign.h"
#include "cluster.h"
#include "cluster_interf.h"
#include "hubs.h"
#include "error.h"
#include "fabric.h"
#include "fabric_fault.h"
#include "hardware.h"
#include "memory.h"
#include "model.h"
#include "precision.h"
#include "serving.h"
#include "site.h"
#include "step.h"
#include "workload.h"

#define SCN_MAX_TRAINING_RUNS 64 /* <cluster-jobs><training-runs><run> */

/* <spares elastic="true">: the most replicas the job goes on without when
 * max-missing is not given (or all but one, if fewer) */
#define SCN_ELASTIC_MAX_MISSING_DEFAULT 64u

/* <reliability><degraded cache>: iterations kept by failure state when not
 * given (A: each holds one number; 64 states cover every state of one to
 * two concurrent failures a 54-day run sees in practice) */
#define SCN_DEGRADED_CACHE_DEFAULT 64u

/* <checkpoint interval="adaptive">: the estimate's memory when adapt-window
 * is not given, in expected MTBFs of the prior (A: about ten interruptions
 * remembered, so one failure moves the rate by a tenth; docs/failures.md) */
#define SCN_ADAPT_WINDOW_MTBFS 10.0

/* <site>: where the job runs, for energy, cost and carbon (docs/energy.md) */
typedef struct scn_site {
    int given;
    site_info info;            /* from the catalog, with the scenario's overrides */
    fac_design design;         /* <site cooling>, default air-economiser */
    unsigned start_month;      /* 1..12: the run starts on the 1st at 00:00 */
    double green_share;        /* [0, 1] */
    char overrides[96];        /* the catalog values the scenario replaced */
} scn_site;

/* <costs>: unit prices in CNY (the site prices' currency), none sourced:
 * every one is the scenario's (docs/energy.md) */
typedef struct scn_costs {
    int given;
    double server, switch_, nic, transceiver, cable; /* per unit; 0 = not counted */
    double life_s;                                   /* amortisation period */
    double rent_per_gpu_hour;                        /* 0 = no rent comparison */
    unsigned n_rents;                                /* <rent gpu per-gpu-hour> rows */
    char rent_gpu[16][32];
    double rent_gpu_per_hour[16];
} scn_costs;
/* the <costs><rent> of GPU type gpu, CNY per GPU-hour; 0 when none */
double scn_costs_rent_of(const scn_costs *c, const char *gpu);

/* <job><step><straggler gpu="G" speed="S">: GPU G runs at S (0, 1] of
 * nominal speed; gpu < the cluster's GPUs, at most 1,048,576 of them */
typedef struct scn_straggler {
    uint32_t gpu;
    double speed;
} scn_straggler;

/* <job><step><fail>s at most (dcsim step --fail takes 256) */
#define SCN_MAX_STEP_FAILS 64

typedef struct scn_scenario {
    char source[512];        /* the path given, or "default.xml" for the built-in one */
    char name[64];          /* <dcsim name>, or "" */
    uint64_t seed;
    hw_gpu gpu;             /* the resolved catalog entry */
    enum precision precision;
    char model_name[64];
    int has_arch;           /* the model's architecture is known (ref or inline) */
    model_arch arch;
    int has_parallelism;    /* <parallelism> given: the workload and memory can be built */
    parallel_config par;
    double reserved_bytes;  /* per GPU, <cluster><gpu reserved-memory> */
    campaign_config campaign;
    int has_fabric;         /* <cluster><fabric> given */
    fabric_config fabric;   /* the network, checked buildable at load time (fabric_count) */
    char fidelity_source[256]; /* <fabric><fidelity source>: how the table was measured */
    uint64_t fabric_switches[5]; /* switches per tier 1..4 ([0] = 0), counted in closed form */
    uint64_t fabric_cables[5];   /* cables: [0] host-switch, [t] switch-switch up from tier t */
    uint64_t fabric_nics;        /* NICs: shared NIC nodes, else the hosts' own ports */
    int step_computes_iteration; /* no <training mfu>: the step tier times the iteration */
    long mfu_line;               /* the line of <training mfu> (0: none); with a <fabric>, the
                                    run layer warns that the fabric does not affect time */
    step_options step;      /* <job><step>; no per-GPU speeds (step.gpu_speed NULL): the
                               run layer draws them (run.h, run_plan.gpu_speed) */
    int flow_log_given;     /* --flow-log N of step and run (step.flow_log = N): the
                               concurrent iteration's flows are exported (step --json,
                               the HDF5 trace's /step/flows); not a scenario attribute */
    double straggler_spread; /* <step straggler-spread>: each GPU's speed 1 - |N(0, spread)| */
    scn_straggler *stragglers; /* <step><straggler gpu speed>, in file order; owned */
    size_t n_stragglers;    /* with straggler_spread > 0: the run draws per-GPU speeds */
    double straggler_gpu_speed; /* <reliability><stragglers speed>: a slow node's GPUs */
    /* <job><step><fail part id speed>, in file order: dcsim step's
     * one-iteration what-if with these parts down (speed 0) or slow, as
     * --fail CLASS=ID[:SPEED] (docs/failures.md); checked against the built
     * fabric at load time (ids, GPUs cut off, the packet network) */
    ff_part step_fails[SCN_MAX_STEP_FAILS];
    unsigned n_step_fails;
    /* <reliability><degraded> and the repair times of switch and cable
     * <failure>s (docs/failures.md "The campaign on a degraded fabric") */
    int has_degraded;           /* some cause has a repair time */
    int degraded_policy_given, degraded_cache_given;
    unsigned degraded_cache;    /* iterations kept (LRU) by failure state */
    int degraded_by_tier;       /* states="by-tier": a cause's parts stand for each other */
    int degraded_reshard;       /* reshard="true" (shrink): fewer pipeline stages when no
                                   whole replica is left */
    signed char cause_tier[CAMPAIGN_MAX_CAUSES]; /* switch or cable causes: their tier, -1 all */
    /* <reliability><throttle cooling above speed gpus>: the element for the
     * site's cooling design (docs/failures.md "Thermal throttling"): in the
     * site's hours above throttle_above_c, throttle_gpus GPUs (0: all) run at
     * throttle_gpu_speed; none of them sourced, all required */
    int throttle_given;
    double throttle_above_c, throttle_gpu_speed;
    uint32_t throttle_gpus;
    /* temperature="wet-bulb": throttle_above_c is the outdoor wet-bulb
     * temperature (fac_wetbulb_profile; the site needs a humidity), else the
     * dry bulb; left out: wet-bulb for the evaporative design (a default
     * used, throttle_wetbulb_default), dry-bulb for the others */
    int throttle_wetbulb, throttle_wetbulb_default;
    scn_site site;
    scn_costs costs;
    int checkpoint_auto;    /* <checkpoint interval="auto">: Daly's optimum */
    int checkpoint_adaptive; /* interval="adaptive": Daly's for the rate seen so far */
    int adapt_window_given;  /* adapt-window given (else SCN_ADAPT_WINDOW_MTBFS, printed) */
    double checkpoint_bytes; /* <checkpoint size>; 0 = not given */
    char **included;        /* the XInclude'd files' paths as opened; owned */
    size_t n_included;
    int has_job;            /* <job> given: a training run (every command but serve) */
    int has_serving;        /* <serving> given (dcsim serve) */
    serve_config serving;   /* <serving>, all but .dev (the app builds it from gpu) */
    char serving_scaleup[64]; /* the scale-up link of tp > 1 ("" with tp 1) */
    char serving_kv_links[160]; /* disaggregated: the KV transfer's links ("" otherwise) */
    char serving_kv_intra[64], serving_kv_inter[64]; /* those links inside a node and
                                                        between nodes ("": none) */
    serve_trace_row *serving_trace; /* <arrivals process="trace">: the rows, owned */
    char serving_trace_file[256];   /* its file attribute, as given */
    char serving_defaults[2048]; /* what <serving> left out and the defaults that filled it */
    int has_cluster_jobs;   /* <cluster-jobs> given (dcsim cluster) */
    cluster_config cluster_jobs; /* <cluster-jobs>; with a <trace>, .jobs is cluster_trace */
    cluster_job_spec *cluster_trace; /* the <trace>'s jobs; owned (NULL: the stream) */
    cluster_reservation *cluster_resv; /* <maintenance>'s windows; owned (NULL: none) */
    char cluster_trace_path[512]; /* the trace file as opened ("" with the stream) */
    char cluster_defaults[768]; /* what <cluster-jobs> left out and what filled it */
    /* <training-runs><run submit priority>: runs of the scenario's <job> in the
     * stream (gpus and duration_s filled by the run layer: clusterrun.c) */
    cluster_job_spec cluster_training[SCN_MAX_TRAINING_RUNS];
    unsigned n_cluster_training;
    double cluster_compute_frac; /* <cluster-jobs><power compute-fraction>: f of a busy GPU */
    int has_cluster_traffic;     /* interference: a <fabric> (and <traffic> or its defaults) */
    cluster_traffic_table cluster_traffic; /* <cluster-jobs><traffic>: profiles by size */
    uint32_t cluster_cache_entries; /* <traffic cache>: the LRU's components */
    /* <traffic model micro-batch global-batch>, per class (index as
     * cluster_traffic.t): the catalog model the step tier derives the class's
     * traffic from per job size (docs/cluster.md "Traffic from the step tier") */
    struct scn_cluster_model {
        int has;
        model_arch arch;
        unsigned micro_batch, global_batch;
        /* <parallelism>'s layout options (cp is cluster_traffic.cp, the
         * flow net's groups): 1, 0, RECOMPUTE_NONE, 0 when not given */
        unsigned vpp;
        int sequence_parallel, recompute, zero_stage;
    } cluster_model[CLUSTER_MAX_TRAFFIC];
    struct scn_hubs *hubs;  /* <hubs> (dcsim hubs; docs/hubs.md); owned, NULL when none */
    char *resolved_xml;     /* after XInclude and --set; owned, NUL-terminated */
    size_t resolved_xml_len;
} scn_scenario;

/* <hubs>: the datacenters at the hubs, the backbone, the demand (docs/hubs.md) */
#define SCN_HUBS_MAX_CLASSES 16u
typedef struct scn_hubs {
    hubs_config cfg;              /* .jobs = jobs */
    hubs_job_spec *jobs;          /* owned */
    scn_site site[HUBS_MAX];      /* each hub's site (<hub> as a <site>) */
    hw_gpu gpu[HUBS_MAX];         /* each hub's GPU (<hub gpu>; the scenario's by default) */
    int speed_given[HUBS_MAX];    /* <hub speed>: time_scale = 1 / speed, not the rule */
    char speed_rule[HUBS_MAX][200]; /* how the hub's time_scale was found ("" when 1 by
                                       default: the scenario's GPU) */
    char serving_rule[HUBS_MAX][200]; /* how its serving_scale was found ("" when 1 by
                                         default, or the time scale's given speed) */
    double *carbon[HUBS_MAX];     /* owned hourly profiles (NULL: flat) */
    hubs_routes *routes;          /* <backbone> and its routes (cfg.backbone); owned, NULL */
    double pue_target[HUBS_MAX], pue_sim[HUBS_MAX]; /* the catalog's; the facility model's */
    int pue_simulated;            /* the cheapest key uses pue_sim */
    fabric_config fabric[HUBS_MAX]; /* each hub's fabric (with a <cluster><fabric>): its own
                                     <hub><fabric>, or the scenario's; gpus the hub's */
    int own_fabric[HUBS_MAX];     /* the hub gave its own <fabric> */
    int keys_interfered;          /* <hubs keys="interfered">: the policy's keys and backlog
                                     read each hub's measured interference (hubscmd.c) */
    char trace_path[512];         /* <hubs><trace file> as opened ("" with streams) */
    int keys_size_load;           /* keys="interfered-size-load": the slowdown by job size and
                                     the hub's load (hubs_keys_size.c); keys_interfered too */
    int moves_default;            /* <hubs move="checkpoint"> without max-moves: 1 */
    unsigned n_classes;
    char classes[SCN_HUBS_MAX_CLASSES][200]; /* each <demand>, described */
} scn_hubs;
void scn_hubs_free(scn_hubs *h); /* NULL-safe; frees h */

/* Load path, or the built-in default scenario when path is NULL. sets are
 * "PATH=VALUE" strings (PATH like checkpoint/@interval, relative to <dcsim>),
 * applied in order. On success returns 0 and fills *out (free with
 * scn_scenario_free); on failure returns SIM_ERR_INPUT or SIM_ERR_IO with err
 * set and *out zeroed. */
int scn_load(const char *path, const char *const *sets, size_t n_sets, scn_scenario *out,
             sim_error *err);

/* Read an XML file (path) or text of len bytes (named name in errors) the
 * way scenarios are read: no network, no entity declarations or external
 * DTDs, XIncludes resolved within the limits of docs/scenario.md. No schema:
 * the caller checks what it reads. Returns the document (the caller frees it
 * with xmlFreeDoc) or NULL with err filled (SIM_ERR_INPUT, or SIM_ERR_NOMEM). */
struct _xmlDoc;
struct _xmlDoc *scn_read_xml(const char *path, const char *text, size_t len, const char *name,
                             sim_error *err);

/* As scn_load; flags SCN_LOAD_NO_FIT_CHECK skips refusing a workload that
 * does not fit in GPU memory (dcsim fit reports it instead). */
#define SCN_LOAD_NO_FIT_CHECK 1u
/* a scenario without <job> is accepted when it has <serving> (dcsim serve)
 * or <cluster-jobs> (dcsim cluster); without this flag a scenario must have
 * a <job> */
#define SCN_LOAD_SERVING 2u
/* the same acceptance, for dcsim cluster */
#define SCN_LOAD_CLUSTER 4u
int scn_load_flags(const char *path, const char *const *sets, size_t n_sets, unsigned flags,
                   scn_scenario *out, sim_error *err);

void scn_scenario_free(scn_scenario *s);

/* The files a run of s reads, for outpath_init to refuse as a target: the
 * scenario path as given (NULL for the built-in default), extra (a points
 * file; may be NULL) and every XInclude'd file. malloc'd array (NULL
 * entries are skipped by outpath), its length in *n; NULL when out of
 * memory. */
const char **scn_input_paths(const scn_scenario *s, const char *path, const char *extra,
                             size_t *n);

/* The compiled-in default scenario text (scenarios/examples/default.xml). */
const char *scn_default_xml(size_t *len);

/* The built-in catalogs (plus an optional catalog file whose root is <gpus>
 * or <models>), for commands that look types up by name. */
typedef struct scn_catalog scn_catalog;
int scn_catalog_load(const char *extra_path, scn_catalog **out, sim_error *err);
void scn_catalog_free(scn_catalog *cat);
const hw_gpu *scn_catalog_gpu(const scn_catalog *cat, const char *name);
const model_arch *scn_catalog_model(const scn_catalog *cat, const char *name);
const hw_server *scn_catalog_server(const scn_catalog *cat, const char *name);
size_t scn_catalog_server_count(const scn_catalog *cat);
const hw_link *scn_catalog_link(const scn_catalog *cat, const char *name);
/* "A, B, C" of the known names, for error messages */
void scn_catalog_gpu_names(const scn_catalog *cat, char *buf, size_t size);
void scn_catalog_model_names(const scn_catalog *cat, char *buf, size_t size);

/* "Defaults used": the values a run of s uses that its catalogs lacked,
 * each filled at load time by a documented rule (docs/scenario.md): its
 * GPU's (those for its precision), its fabric link's and scale-up link's,
 * and its site's. Writes at most max records to out and returns how many
 * there are (0: every value is the catalogs' own). */
#define SCN_MAX_DEFAULTS_USED 40
size_t scn_defaults_used(const scn_scenario *s, hw_default *out, size_t max);
/* The same on one line, "PART WHAT = VALUE (RULE); ...", or "". */
void scn_defaults_text(const scn_scenario *s, char *buf, size_t size);

/* Memory of every pipeline stage of a scenario with <parallelism>: builds the
 * workload (free with workload_free) and fills mem[0 .. pp-1] (caller
 * allocates pp entries). Returns 0, or the error's code with err filled (no
 * file; SIM_ERR_NOMEM when out of memory, else SIM_ERR_INPUT). */
int scn_memory(const scn_scenario *s, workload *w, stage_memory *mem, sim_error *err);

/* The parallel layout of a job of `gpus` GPUs in <cluster-jobs><traffic>
 * class cls given by a model (docs/cluster.md "Traffic from the step
 * tier"): the class's tp, pp, cp, ep, vpp, sequence-parallel, recompute and
 * zero, dp = gpus / (tp cp pp), its batches, and the precision and
 * <framework> of the scenario's <job> (bf16 and the defaults without one),
 * as parse_parallelism leaves <parallelism>. 0, or SIM_ERR_INPUT with a
 * one-line reason (no file) when gpus is not a whole number of tp x cp x
 * pp; workload_check / workload_build say whether the model takes it. */
int cluster_model_parallel(const scn_scenario *s, unsigned cls, uint32_t gpus,
                           parallel_config *p, sim_error *err);

/* The <fabric><fidelity> table in one line ("9 incast and 3 sharing rows
 * (SOURCE)") into out; returns 0 (out empty) when the fabric has none. */
int scn_fidelity_text(const scn_scenario *s, char *out, size_t size);

#endif
