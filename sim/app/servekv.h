/* servekv.h - the disaggregated pools' KV transfers in `dcsim serve`
 * (servekv.c): what they cross (the medium: the scenario's <fabric>, or the
 * replicas' own links) and how it shaped them, for the text, the --json
 * object "disaggregated" and the HDF5 attributes of /serve (serveh5.c). */
#ifndef DCSIM_APP_SERVEKV_H
#define DCSIM_APP_SERVEKV_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "scenario.h"
#include "serving.h"

/* The medium in words: "the leaf-spine fabric (ib-ndr links,
 * oversubscription 4:1, adaptive routing; nvlink4 inside a node)" or "the
 * replicas' links (nvlink4 inside a node, ib-ndr between nodes)". */
void serve_kv_medium(const scn_scenario *s, const serve_config *c, char *buf, size_t size);

/* "fabric" or "links" */
const char *serve_kv_medium_kind(const serve_config *c);

/* A fabric's leaf oversubscription "D:U" as given (1:1 when not given). */
void serve_kv_oversubscription(unsigned down, unsigned up, char *buf, size_t size);

/* the text's lines `transfer` (the figures) and the medium's under it */
void serve_kv_print(const scn_scenario *s, const serve_config *c, const serve_result *r);

/* the --json object "disaggregated" of root */
void serve_kv_json(cJSON *root, const scn_scenario *s, const serve_config *c,
                   const serve_result *r);

#endif
