/* load.c - the loader's entry points (scenario.h): scn_load and
 * scn_load_flags run the steps in order (built-in catalog -> read and
 * XInclude -> --set -> XSD -> <dcsim version seed name> -> <catalog>,
 * <cluster>, <job>, <reliability>, <checkpoint>, <site>, <costs> -> the
 * campaign's own check), then scn_input_paths and scn_scenario_free. The
 * first problem found is the one reported.
 */
#include "loader.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

extern const unsigned char dcsim_default_scenario[];
extern const size_t dcsim_default_scenario_len;

#define DEFAULT_SEED 1

const char *scn_default_xml(size_t *len)
{
    if (len)
        *len = dcsim_default_scenario_len;
    return (const char *)dcsim_default_scenario;
}

static int parse_seed(loader *ld, xmlNode *root, uint64_t *seed)
{
    xmlChar *v = xmlGetProp(root, (const xmlChar *)"seed");
    if (!v) {
        *seed = DEFAULT_SEED;
        return 0;
    }
    const char *s = (const char *)v;
    int ok = *s != '\0';
    for (const char *q = s; *q; q++)
        ok = ok && isdigit((unsigned char)*q);
    errno = 0;
    unsigned long long x = ok ? strtoull(s, NULL, 10) : 0;
    xmlFree(v);
    if (!ok || errno == ERANGE)
        return node_error(ld, root, "seed", "seed must be a whole number from 0 to %llu",
                          (unsigned long long)UINT64_MAX);
    *seed = (uint64_t)x;
    return 0;
}

int scn_load(const char *path, const char *const *sets, size_t n_sets, scn_scenario *out,
             sim_error *err)
{
    return scn_load_flags(path, sets, n_sets, 0, out, err);
}

/* The document of path (NULL: the built-in default scenario), its root
 * <dcsim>, the --set overrides applied, validated against the schema. *out
 * is the document even on failure (NULL when none was read). */
static int read_scenario(loader *ld, const char *path, const char *const *sets, size_t n_sets,
                         xmlDoc **out)
{
    int rc = path ? check_readable(ld, path) : 0;
    xmlDoc *doc = NULL;
    if (!rc) {
        doc = read_doc(ld, path, (const char *)dcsim_default_scenario, dcsim_default_scenario_len);
        if (!doc)
            rc = SIM_ERR_INPUT;
    }
    xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
    if (!rc && (!root || !xmlStrEqual(root->name, (const xmlChar *)"dcsim")))
        rc = root ? node_error(ld, root, NULL, "the root element must be <dcsim>")
                  : sim_error_set(ld->err, SIM_ERR_INPUT, ld->display_name, 0, "empty document");
    for (size_t i = 0; !rc && i < n_sets; i++)
        rc = apply_set(ld, doc, sets[i]);
    if (!rc)
        rc = validate(ld, doc);
    *out = doc;
    return rc;
}

/* A training run (<job>, which needs a <checkpoint>), an inference fleet
 * (<serving>, read by dcsim serve) or a job stream (<cluster-jobs>, read by
 * dcsim cluster); the last two load only with SCN_LOAD_SERVING or
 * SCN_LOAD_CLUSTER, and the training sections do not apply to them. */
static int check_kind(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *job = child(root, "job"), *serving = child(root, "serving");
    xmlNode *jobs = child(root, "cluster-jobs");
    s->has_job = job != NULL;
    if (!job && !serving && !jobs)
        return node_error(ld, root, NULL, "a scenario needs <job> (a training run), <serving> "
                          "(an inference fleet) or <cluster-jobs> (a job stream)");
    if (!job && !(ld->flags & (SCN_LOAD_SERVING | SCN_LOAD_CLUSTER)))
        return serving ? node_error(ld, serving, NULL, "this scenario has no <job>: it "
                                    "describes an inference fleet; run it with dcsim serve")
                       : node_error(ld, jobs, NULL, "this scenario has no <job>: it describes "
                                    "a job stream; run it with dcsim cluster");
    if (job && !child(root, "checkpoint"))
        return node_error(ld, job, NULL, "a training <job> needs a <checkpoint> section "
                          "(docs/scenario.md)");
    static const char *const training_only[] = {"reliability", "checkpoint"};
    for (size_t i = 0; !job && i < sizeof training_only / sizeof training_only[0]; i++) {
        xmlNode *n = child(root, training_only[i]);
        if (n)
            return node_error(ld, n, NULL, "<%s> applies to a training <job>; this scenario "
                              "has only %s", training_only[i],
                              serving ? "<serving>" : "<cluster-jobs>");
    }
    return 0;
}

/* <dcsim version seed name> and its sections, in the order later ones
 * depend on earlier ones (the job on the cluster, reliability on both...) */
static int parse_sections(loader *ld, xmlNode *root, scn_scenario *s)
{
    int rc = 0;
    char version[16];
    copy_attr(root, "version", version, sizeof version);
    if (strcmp(version, "1") != 0)
        rc = node_error(ld, root, "version", "unsupported format version; this dcsim reads version 1");
    if (!rc)
        rc = parse_seed(ld, root, &s->seed);
    if (!rc) {
        copy_attr(root, "name", s->name, sizeof s->name);
        xmlNode *catalog = child(root, "catalog");
        if (catalog)
            rc = parse_catalog(ld, catalog);
    }
    if (!rc)
        rc = parse_cluster(ld, root, s);
    if (!rc)
        rc = check_kind(ld, root, s);
    if (!rc && s->has_job)
        rc = parse_job(ld, root, s);
    if (!rc && s->has_job)
        rc = parse_reliability(ld, root, s);
    if (!rc && s->has_job)
        rc = parse_checkpoint(ld, root, s);
    if (!rc)
        rc = parse_site(ld, root, s);
    if (!rc && s->has_job)
        rc = parse_throttle(ld, root, s);
    if (!rc)
        rc = parse_costs(ld, root, s);
    if (!rc)
        rc = parse_serving(ld, root, s);
    if (!rc)
        rc = parse_cluster_jobs(ld, root, s);
    if (!rc)
        rc = parse_hubs(ld, root, s);
    return rc;
}

/* the run layer gives the degraded fabric's speeds (run.c); the check
 * only needs one to be there */
static double speed_set_at_run(void *ctx, const campaign_part_state *parts, unsigned n,
                               sim_error *err)
{
    (void)ctx, (void)parts, (void)n, (void)err;
    return 1;
}

static int cuts_set_at_run(void *ctx, const campaign_part_state *part)
{
    (void)ctx, (void)part;
    return 0;
}

static double kept_set_at_run(void *ctx, const campaign_part_state *parts, unsigned n)
{
    (void)ctx, (void)parts, (void)n;
    return 1;
}

/* the campaign's own check of what the sections gave it, located at the
 * document (its messages name the setting) */
static int check_campaign(loader *ld, scn_scenario *s)
{
    s->campaign.seed = s->seed;
    sim_error check;
    sim_error_clear(&check);
    campaign_config probe = s->campaign;
    if (s->step_computes_iteration)
        probe.mfu_frac = 1; /* the step tier sets it; check the rest */
    if (s->has_degraded) {
        probe.fabric_speed = speed_set_at_run;
        probe.fabric_cuts = cuts_set_at_run;
        probe.fabric_kept = kept_set_at_run;
    }
    if (campaign_config_check(&probe, &check))
        return sim_error_set(ld->err, SIM_ERR_INPUT, ld->display_name, 0, "%s", check.msg);
    return 0;
}

/* the document after XInclude and --set, as the trace records it */
static int keep_resolved_xml(loader *ld, xmlDoc *doc, scn_scenario *s)
{
    int rc = 0;
    xmlChar *text = NULL;
    int len = 0;
    xmlDocDumpFormatMemoryEnc(doc, &text, &len, "UTF-8", 1);
    s->resolved_xml = text ? malloc((size_t)len + 1) : NULL;
    if (!s->resolved_xml) {
        rc = sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    } else {
        memcpy(s->resolved_xml, text, (size_t)len);
        s->resolved_xml[len] = '\0';
        s->resolved_xml_len = (size_t)len;
    }
    xmlFree(text);
    return rc;
}

int scn_load_flags(const char *path, const char *const *sets, size_t n_sets, unsigned flags,
                   scn_scenario *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    loader ld = {.err = err, .display_name = path ? path : DEFAULT_NAME, .flags = flags};
    scn_scenario s;
    memset(&s, 0, sizeof s);
    snprintf(s.source, sizeof s.source, "%s", ld.display_name);

    xmlDoc *doc = NULL;
    int rc = load_builtin_catalog(&ld);
    if (!rc)
        rc = read_scenario(&ld, path, sets, n_sets, &doc);
    if (!rc)
        rc = parse_sections(&ld, xmlDocGetRootElement(doc), &s);
    if (!rc && s.has_job)
        rc = check_campaign(&ld, &s);
    if (!rc)
        rc = keep_resolved_xml(&ld, doc, &s);
    xmlFreeDoc(doc);
    free(ld.ovr);
    free_lists(&ld);
    if (!rc) { /* the outputs' writers refuse to overwrite them (outpath.h) */
        s.included = ld.files;
        s.n_included = ld.n_files;
        ld.files = NULL;
        ld.n_files = 0;
    }
    for (size_t i = 0; i < ld.n_files; i++)
        free(ld.files[i]);
    free(ld.files);
    if (!rc) {
        *out = s;
        fputs(ld.warnings, stderr);
    } else {
        free(s.stragglers); /* the only allocations a failed load may have made */
        free(s.cluster_trace);
        free(s.cluster_resv);
        free(s.serving_trace);
        scn_hubs_free(s.hubs);
    }
    return rc;
}

const char **scn_input_paths(const scn_scenario *s, const char *path, const char *extra,
                             size_t *n)
{
    const char **inputs = malloc((s->n_included + 2) * sizeof *inputs);
    if (!inputs)
        return NULL;
    *n = 0;
    inputs[(*n)++] = path;
    inputs[(*n)++] = extra;
    for (size_t i = 0; i < s->n_included; i++)
        inputs[(*n)++] = s->included[i];
    return inputs;
}

void scn_scenario_free(scn_scenario *s)
{
    if (!s)
        return;
    free(s->resolved_xml);
    for (size_t i = 0; i < s->n_included; i++)
        free(s->included[i]);
    free(s->included);
    free(s->stragglers);
    free(s->cluster_trace);
    free(s->cluster_resv);
    free(s->serving_trace);
    scn_hubs_free(s->hubs);
    memset(s, 0, sizeof *s);
}
