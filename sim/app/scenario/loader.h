/* loader.h - what the files of the scenario loader share (private to
 * sim/app/scenario/; the public API is sim/app/scenario.h, the site
 * catalog's sim/app/site.h).
 *
 * Order: read -> XInclude -> --set overrides -> XSD -> semantic checks. The
 * first problem found is the one reported. Nodes that came in through
 * XInclude keep their own file and line, so errors point into the included
 * file. The loader only parses and checks: a scn_scenario holds inputs.
 *
 * Where each element is parsed:
 *   load.c          scn_load, scn_load_flags: the steps in order; <dcsim
 *                   version seed name>; scn_input_paths, scn_scenario_free
 *   xml.c           every XML read (hardened reader, <xi:include> limits and
 *                   labels, XSD validation), node_error and locations
 *   set.c           --set PATH=VALUE
 *   attrs.c         attribute helpers: quantities, ranges, booleans
 *   catalog.c       <catalog>, <gpus>/<gpu>, <models>/<model>, <servers>/
 *                   <server>, <links>/<link>; the built-in catalog files and
 *                   the scn_catalog_* API
 *   defaults.c      <gpu>/<link defaults-from defaults-rule>, the catalog-
 *                   wide fill rules, scn_defaults_used ("defaults used")
 *   site_catalog.c  the built-in sites.xml (site.h: site_lookup, site_names)
 *   cluster.c       <cluster>: <gpu>, <fabric>
 *   job.c           <job>: <model>, <training>, <parallelism>, <step>,
 *                   <straggler>; scn_memory
 *   reliability.c   <reliability>: inventory, <failure>, <restart>,
 *                   <spares>, <maintenance>, <stragglers>
 *   checkpoint.c    <checkpoint>
 *   site_costs.c    <site>, <costs>
 *   cluster_jobs.c  <cluster-jobs> (dcsim cluster): the job stream or trace,
 *                   the scheduler and the placement
 *   cluster_trace_file.c  its <trace>: the file in the dcsim layout or a
 *                   published one (helios, pai-2020, philly, columns)
 *   serving.c       <serving> (dcsim serve): <model>, <replica>, <router>,
 *                   <arrivals>, <prompt>, <output>, <slo>
 *
 * The shared helpers keep short names (node_error, child, get_quantity...):
 * they are visible only inside dcsim_app, and a clash would fail the link.
 */
#ifndef DCSIM_APP_SCENARIO_LOADER_H
#define DCSIM_APP_SCENARIO_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include <libxml/tree.h>

#include "scenario.h"
#include "units.h"

#define DEFAULT_NAME "default.xml"

/* An attribute set by --set: errors about it name the option. */
typedef struct override {
    xmlNode *elem;
    char attr[64];
    char option[600]; /* "--set PATH=VALUE", the location of errors in this value */
} override;

/* The kinds of catalog entry. Every entry type starts with char name[64], so
 * one list type serves them all: entries [0, n_builtin) came from the
 * built-in catalogs, and one replaced by a later catalog has its name
 * emptied (hidden). */
enum catalog_kind { CAT_GPU, CAT_MODEL, CAT_SERVER, CAT_LINK, CATALOG_KINDS };

typedef struct entry_list {
    char *items;      /* entry_size[kind] bytes each */
    size_t n, cap;
    size_t n_builtin;
} entry_list;

typedef struct loader {
    sim_error *err;
    const char *display_name; /* how the main document is named in errors */
    override *ovr;
    size_t n_ovr;
    entry_list lists[CATALOG_KINDS]; /* GPU types, models, servers, links */
    unsigned flags;           /* SCN_LOAD_* */
    char **files;             /* names of XInclude'd files, owned; see mark_included */
    size_t n_files;
    /* warnings found while parsing, one line each, printed once the whole
     * load succeeds (a failed load says only its one-line error) */
    char warnings[1024];
} loader;

/* ---- servetrace.c: <arrivals process="trace" file>, into s->serving */
int parse_serving_trace(loader *ld, xmlNode *n, scn_scenario *s);

/* ---- xml.c */

/* A compiler-style error about element n (attr: one of its attributes, or
 * NULL), at its file and line or at the --set that gave the value.
 * Returns SIM_ERR_INPUT. */
int node_error(loader *ld, xmlNode *n, const char *attr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The document at path (or text of len bytes when path is NULL), its
 * XIncludes checked, resolved and labelled; NULL with ld->err set. */
xmlDoc *read_doc(loader *ld, const char *path, const char *text, size_t len);
/* Validate doc against the embedded XSD. */
int validate(loader *ld, xmlDoc *doc);
/* SIM_ERR_IO naming path when it cannot be opened. */
int check_readable(loader *ld, const char *path);

/* ---- set.c */

/* Apply one --set PATH=VALUE to doc, remembering it in ld->ovr. */
int apply_set(loader *ld, xmlDoc *doc, const char *spec);

/* ---- attrs.c */

xmlNode *child(xmlNode *n, const char *name); /* the first child element of that name */
int has_attr(xmlNode *n, const char *attr);
void copy_attr(xmlNode *n, const char *attr, char *out, size_t size); /* "" when absent */
int get_quantity(loader *ld, xmlNode *n, const char *attr, enum sim_dim dim, int required,
                 double *out);
int positive(loader *ld, xmlNode *n, const char *attr, double x, double max,
             const char *unit_hint);
int non_negative(loader *ld, xmlNode *n, const char *attr, double x);
int whole(loader *ld, xmlNode *n, const char *attr, double x);
int get_fraction(loader *ld, xmlNode *n, const char *attr, double *out);
int get_uint(loader *ld, xmlNode *n, const char *attr, int required, unsigned min,
             unsigned max, unsigned *out);
int get_bool(loader *ld, xmlNode *n, const char *attr, int *out);

/* ---- catalog.c */

void *find_named(const loader *ld, int kind, const char *name); /* visible entry, or NULL */
void entry_names(const loader *ld, int kind, char *buf, size_t size); /* "A, B, C" */
int parse_arch_attrs(loader *ld, xmlNode *n, model_arch *m);
int finish_arch(loader *ld, xmlNode *n, model_arch *m);
int parse_catalog(loader *ld, xmlNode *catalog);
int load_builtin_catalog(loader *ld);
void free_lists(loader *ld);

/* ---- defaults.c: after an entry is parsed, before it is added; fill what
 * it lacks by its defaults-from sibling or a catalog-wide rule, recorded in
 * its defaults list; a link still without an efficiency is refused */
int fill_gpu_defaults(loader *ld, xmlNode *n, hw_gpu *g);
int fill_link_defaults(loader *ld, xmlNode *n, hw_link *lk);

/* ---- the sections, each filling its part of s */

int parse_cluster(loader *ld, xmlNode *root, scn_scenario *s);     /* cluster.c */
/* a <fabric> element into s->fabric, sized to s->campaign.gpu_count GPUs of
 * s->gpu (cluster.c; <cluster>'s, and a hub's own on a copy of s: hubs.c) */
int parse_fabric(loader *ld, xmlNode *n, scn_scenario *s);
/* <fabric><fidelity> into c's curves, its source attribute into source (fidelity.c) */
int parse_fidelity(loader *ld, xmlNode *fabric_node, fabric_config *c, char *source,
                   size_t source_size);
int parse_job(loader *ld, xmlNode *root, scn_scenario *s);         /* job.c */
/* a <model> element (<job>'s or <serving>'s) into s->arch, model_name (job.c) */
int parse_model_element(loader *ld, xmlNode *model, scn_scenario *s);
int parse_serving(loader *ld, xmlNode *root, scn_scenario *s);     /* serving.c */
int parse_cluster_jobs(loader *ld, xmlNode *root, scn_scenario *s); /* cluster_jobs.c */
int parse_cluster_trace(loader *ld, xmlNode *n, scn_scenario *s); /* cluster_trace_file.c */
/* add text to s->cluster_defaults ("; "-separated; cluster_jobs.c) */
void cluster_note(scn_scenario *s, const char *text);
/* <traffic>/<class> tp, pp, ep and <collective> rows into t; every job of a
 * layout class fits it (after the jobs are read): cluster_layout.c */
int traffic_layout(loader *ld, xmlNode *n, cluster_traffic *t);
int traffic_model(loader *ld, xmlNode *n, scn_scenario *s, unsigned i);
int traffic_model_check(loader *ld, xmlNode *at, const scn_scenario *s, unsigned i, uint32_t g,
                        const char *what, long class_line);
int traffic_layout_jobs(loader *ld, xmlNode *cluster_jobs, const scn_scenario *s);
int parse_cluster_disrupt(loader *ld, xmlNode *n, scn_scenario *s); /* cluster_disrupt.c */
int parse_reliability(loader *ld, xmlNode *root, scn_scenario *s); /* reliability.c */
int parse_checkpoint(loader *ld, xmlNode *root, scn_scenario *s);  /* checkpoint.c */
int parse_site(loader *ld, xmlNode *root, scn_scenario *s);        /* site_costs.c */
int parse_costs(loader *ld, xmlNode *root, scn_scenario *s);       /* site_costs.c */
int parse_throttle(loader *ld, xmlNode *root, scn_scenario *s);    /* throttle.c */
int parse_site_at(loader *ld, xmlNode *n, uint64_t seed, scn_site *site); /* site_costs.c */
/* cluster_jobs.c: a stream's parts, also read by <hubs><demand> */
int stream_sizes(loader *ld, xmlNode *n, uint32_t gpus, cluster_stream *st);
int stream_duration(loader *ld, xmlNode *n, cluster_duration *d);
int stream_arrivals(loader *ld, xmlNode *n, cluster_stream *st);
int parse_hubs(loader *ld, xmlNode *root, scn_scenario *s);        /* hubs.c */
/* <hubs><backbone>, after the hubs; the routes of the demand, after it */
int parse_hubs_backbone(loader *ld, xmlNode *hubs, scn_scenario *s); /* hubs_backbone.c */
int check_hubs_backbone(loader *ld, xmlNode *hubs, const scn_scenario *s);

#endif
