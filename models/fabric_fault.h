/* fabric_fault.h - failure states of a built fabric: parts down or slow,
 * and the degraded fabric they leave (issue 20, docs/failures.md).
 *
 * A failure state is a set of parts, each with a speed factor s in [0, 1]:
 * 0 = down, 0 < s < 1 = slow (a link retrained at a lower rate, a throttled
 * GPU), 1 = as built (a repaired part: dropped from the state). Part classes
 * (the registry ff_classes) and what each names, by the ids of the built
 * graph (`dcsim topo --export` writes node n<ID> and cable c<C> = links 2C
 * and 2C + 1; `dcsim step --concurrent` prints directed link ids):
 *   link=ID    the cable that holds directed link ID: both directions
 *   switch=ID  every cable of fabric switch node ID
 *   nic=ID     the fabric cables of node ID, a shared NIC (TOPO_NIC) or a
 *              GPU's own port (host node ID = GPU ID): its GPUs lose the fabric
 *   node=ID    server (scale-up domain) ID: its GPUs at speed s (0: gone)
 *   gpu=ID     GPU ID at speed s (0: gone; models/step.h gpu_speed)
 *   transceiver=ID  the transceiver cage at the source switch of directed
 *              link ID: every cable of that cage (a twin-port OSFP cage:
 *              two). A switch's ports are its cables ordered by the id of
 *              the directed link leaving it; cage k holds ports k x P ..
 *              k x P + P - 1, P the ports per cage (ff_cage_ports_catalog,
 *              or the state's cage_ports). Link ID leaving a GPU's own
 *              port or a shared NIC: the host-side cage, on its server
 *              (scale-up domain): the server's ports are its port nodes'
 *              cables to switches in link id order, cage k again ports
 *              k x P .. k x P + P - 1, P the state's cage_ports (required:
 *              no catalog gives a server's port form)
 * A link at speed s has capacity x s; a down link leaves the adjacency, so
 * routes avoid it by their policy (topologies/routing.h: ECMP hashes over the
 * remaining shortest paths, adaptive picks among them; Dragonfly minimal,
 * Valiant and UGAL use the global links left, and a group pair with none
 * has no minimal route: the step refuses it). Parts of one link combine by
 * the lower speed. No failed part: the fabric as built, bit for bit.
 *
 * The state's digest (ff_state_digest) is a 64-bit hash of its sorted parts
 * and speeds, the key under which a campaign caches the iteration it gives.
 */
#ifndef DCSIM_MODELS_FABRIC_FAULT_H
#define DCSIM_MODELS_FABRIC_FAULT_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "fabric.h"

enum ff_class { FF_LINK = 0, FF_SWITCH, FF_NIC, FF_NODE, FF_GPU, FF_TRANSCEIVER, FF_CLASS_COUNT };

/* The classes by enum value (name, one line of doc), then {NULL, NULL}. */
extern const topo_choice ff_classes[];

typedef struct ff_part {
    enum ff_class cls;
    uint32_t id;
    double speed; /* [0, 1): 0 down */
} ff_part;

/* Parts sorted by (class, id), each once. cage_ports: the ports of one
 * transceiver cage for transceiver= parts, 0 = the catalog's port form of
 * the fabric's switches (ff_cage_ports_catalog); part of the digest only
 * when set and a transceiver is in the state. */
typedef struct ff_state {
    ff_part *part;
    size_t n, cap;
    unsigned cage_ports;
} ff_state;

/* The most ports one cage may serve (a cage-ports override: 2 to this). */
#define FF_CAGE_PORTS_MAX 8

/* The ports per transceiver cage of the switches of link technology
 * `link` (a scenarios/catalog/links.xml name), from hardware.md 3.3: 2 for
 * ib-ndr (Quantum-2: 64 ports in 32 twin-port OSFP cages) and ib-xdr
 * (Quantum-X800: 144 ports in 72 OSFP cages), 1 for ib-hdr (QM8700: 40
 * QSFP56 ports, one per cage); 0 where the reference gives no port form.
 * *source (may be NULL) gets the citation. */
unsigned ff_cage_ports_catalog(const char *link, const char **source);

/* The transceivers (cages) of f's switches of tier `tier` (1.., or -1:
 * every switch), each named by its first port (the lowest id of a directed
 * link leaving the switch in the cage), switch by switch in node id order
 * then cage by cage: ids[0 .. *n) (ids NULL: count only). cage_ports 0:
 * the catalog's. Tier 0: the host-side cages, server by server (cage_ports
 * required). 0, or SIM_ERR_INPUT (no port form, single-port cages),
 * SIM_ERR_NOMEM. */
int ff_transceivers(const fabric *f, unsigned cage_ports, int tier, uint32_t *ids,
                    uint64_t *n, sim_error *err);

void ff_state_init(ff_state *s);
void ff_state_fini(ff_state *s); /* NULL-safe */

/* "CLASS=ID[:SPEED]" (speed omitted: 0, down) into *out. Returns 0, or -1
 * with a one-line reason in why (an unknown class, an ID that is no whole
 * number, a speed outside [0, 1]). */
int ff_part_parse(const char *text, ff_part *out, char *why, size_t why_size);

/* Add p: a part already there takes p's speed (the later word wins, so
 * "link=4" then "link=4:1" is a repair); speed 1 removes it. 0, or -1 when
 * out of memory. */
int ff_state_add(ff_state *s, const ff_part *p);

/* The digest of the state: equal states (same parts, same speeds bit for
 * bit) have equal digests; the empty state's is ff_state_digest of none. */
uint64_t ff_state_digest(const ff_state *s);

/* The parts as "switch=80, link=12:0.5" ("none" when empty) into buf. */
void ff_state_text(const ff_state *s, char *buf, size_t size);
/* One part as "switch=80" or "link=12:0.5". */
void ff_part_text(const ff_part *p, char *buf, size_t size);

/* What a state does to fabric f (built for `gpus` GPUs): per link its speed
 * (1 nominal, 0 down) and the part that set it (index into the state, or
 * UINT32_MAX), per GPU its speed. Owned arrays; ff_effect_fini frees. */
typedef struct ff_effect {
    uint32_t n_links, n_gpus;
    double *link_speed;
    uint32_t *link_part;
    double *gpu_speed;
    uint32_t links_down, links_slow; /* directed links */
} ff_effect;

/* Resolve the state on f: 0, or SIM_ERR_INPUT with a one-line reason (an id
 * that names no part of its class on this fabric, with the ids that do;
 * `node` with GPUs per domain given by f->nc.domain_size, one GPU per node
 * without a domain), or SIM_ERR_NOMEM. */
int ff_effect_compute(const fabric *f, const ff_state *s, ff_effect *out, sim_error *err);
void ff_effect_fini(ff_effect *e); /* NULL-safe */

/* The GPUs the effect leaves without the job: a GPU at speed 0 (gpu=,
 * node=), or one with every fabric cable of its port or shared NIC down.
 * 0 when none; else SIM_ERR_INPUT with one line naming the first part
 * responsible and the GPUs it takes ("0-47, 96"), since the step needs
 * every GPU (the campaign's shrink policy restarts without them). */
int ff_effect_check_gpus(const fabric *f, const ff_state *s, const ff_effect *e,
                         sim_error *err);

/* Per GPU of f, cut[k] = 1 when the effect leaves it without the job (as
 * ff_effect_check_gpus counts: speed 0, or no fabric cable left), else 0;
 * returns how many. cut has f->gpus entries. */
uint32_t ff_effect_cut_gpus(const fabric *f, const ff_effect *e, unsigned char *cut);

/* The degraded fabric: a copy of base with the effect's link speeds
 * (topo_graph_degrade), its own router (same configuration: tables rebuilt
 * over the links still up) and the same collective parameters. Free it with
 * fabric_free; out owns all it holds (base may go first). 0, or
 * SIM_ERR_NOMEM. */
int fabric_degrade(const fabric *base, const ff_effect *e, fabric *out, sim_error *err);

#endif
