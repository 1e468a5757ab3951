/* hardware.h - a GPU type as the catalog describes it (scenarios/catalog/
 * gpus.xml), and the timing device the compute kernels use for it.
 *
 * Device defaults where the catalog has no value, each stated here:
 *   CTA tile 256 x 128, 1 CTA per SM: the tile of the worked example in
 *     hardware.md 2.2 (S); cuBLAS picks per shape, see compute.h's limits.
 *   memory efficiency by transfer size, unless the catalog gives
 *     <memory efficiency-by-size>: calculon's HBM table (hardware.md 2.2,
 *     N12, V): >= 100 MB 0.90, >= 10 MB 0.75, >= 1 MB 0.60, else 0.30 (MB
 *     read as 10^6 bytes). The catalog loader fills it so (and reports it).
 *   attention efficiency = the GEMM efficiency (A: no measured figure for
 *     fused attention in shared/reference).
 *   launch overhead: the catalog's <compute launch-overhead>; the loader
 *     fills a GPU without one (docs/scenario.md, "Defaults used").
 *
 * What the catalog lacked and the loader filled by a documented rule (a
 * sibling part's value, or a catalog-wide rule) is listed in the entry's
 * `defaults` (hw_default), so every output can print it.
 */
#ifndef DCSIM_MODELS_HARDWARE_H
#define DCSIM_MODELS_HARDWARE_H

#include <stddef.h>

#include "compute.h"
#include "precision.h"
#include "workload.h"

/* One value a catalog entry lacked, filled at load time by a rule
 * (docs/scenario.md, "Defaults used"). */
#define HW_MAX_DEFAULTS 12
typedef struct hw_default {
    char part[64];    /* the entry: "A800-SXM-80GB", "roce-400g" */
    char what[40];    /* "gemm-efficiency bf16", "efficiency", "launch-overhead" */
    char value[40];   /* as written in the catalog: "0.880", "94%", "3us" */
    char rule[200];   /* why this value: "as A100-SXM-80GB: same die (hardware.md 1.1)" */
    int precision;    /* the precision it applies to (enum precision), or -1 for any */
} hw_default;

typedef struct hw_gpu {
    char name[64];
    char description[160];
    double peak_flops_per_s[PREC_COUNT]; /* dense; 0 = not in the catalog */
    double gemm_efficiency[PREC_COUNT];  /* 0 = no measurement */
    double hbm_bytes;                    /* 0 = unknown */
    double hbm_bytes_per_s;              /* 0 = unknown */
    unsigned n_mem_tiers;                /* 0: calculon's table (see above) */
    double mem_tier_min_bytes[COMPUTE_MEM_TIERS];   /* <memory efficiency-by-size> */
    double mem_tier_efficiency[COMPUTE_MEM_TIERS];
    double tdp_w;                        /* 0 = unknown */
    double idle_w;                       /* 0 = unknown */
    unsigned sms;                        /* 0 = unknown */
    double launch_overhead_s;
    double sustained_efficiency;         /* a user's end-to-end override of the roofline
                                            times (step tier); 0 = not given (1); no
                                            built-in GPU has one */
    char scaleup_kind[32];
    double scaleup_bytes_per_s;          /* per GPU, per direction; 0 = unknown */
    unsigned scaleup_domain;             /* GPUs in one scale-up domain; 0 = unknown */
    hw_default defaults[HW_MAX_DEFAULTS]; /* values the loader filled by a rule */
    unsigned n_defaults;
} hw_gpu;

/* A server (node) type of scenarios/catalog/servers.xml. */
typedef struct hw_server {
    char name[64];
    char description[160];
    char gpu[64];                 /* GPU type name (checked against the GPU catalog) */
    unsigned gpus;                /* GPUs per server */
    unsigned nics;                /* scale-out NICs per server */
    double nic_bytes_per_s;       /* per NIC */
    double system_power_w;        /* rated maximum; 0 = not recorded */
} hw_server;

/* A link technology of scenarios/catalog/links.xml. */
enum hw_link_kind { HW_LINK_INFINIBAND = 0, HW_LINK_ETHERNET = 1, HW_LINK_NVLINK = 2 };
enum hw_routing { HW_ROUTING_ADAPTIVE = 0, HW_ROUTING_ECMP = 1, HW_ROUTING_SPRAY = 2,
                  HW_ROUTING_DIRECT = 3 };

typedef struct hw_link {
    char name[64];
    int kind;                     /* enum hw_link_kind */
    double bytes_per_s;           /* data rate per direction */
    double efficiency;            /* fraction of it large transfers reach; the loader refuses
                                     a link without one or fills it by a rule (defaults) */
    double switch_latency_s;      /* one hop */
    double nic_latency_s;         /* one side; 0 = not given */
    int routing;                  /* enum hw_routing, the default */
    int has_in_network_reduction; /* SHARP / NVLS */
    double step_latency_s;        /* one collective step (NCCL's hwLat); 0 = not given */
    double reduction_efficiency;  /* in-network all-reduce algbw / rate; 0 = not measured */
    double reduction_latency_s;   /* fixed cost of one in-network all-reduce; 0 = not given */
    double incast_efficiency;     /* capacity fraction of a link into a host when two or more
                                     flows converge on it; 0 = not given (no loss) */
    double mtu_bytes;             /* packet tier: largest packet payload; 0 = not given */
    double port_buffer_bytes;     /* packet tier: buffer per switch port; 0 = not given
                                     (a GAP: the packet tier then asks for one) */
    double switch_power_w;        /* system power of one switch of this technology (not
                                     its optics); the loader fills it by a rule when not
                                     given (defaults); 0 for NVLink (inside the node) */
    hw_default defaults[HW_MAX_DEFAULTS]; /* values the loader filled by a rule */
    unsigned n_defaults;
} hw_link;

#define HW_TILE_M 256
#define HW_TILE_N 128
#define HW_MEM_EFFICIENCY 0.90 /* the largest transfers' efficiency */
/* A switch's system power where its technology's catalog entry gives none:
 * the 51.2 Tb/s Ethernet ASICs draw about 450-500 W (hardware.md 3.3, S),
 * half as much again for the management CPU, fans and power supplies (A);
 * optics apart. The same figure as models/power.c's default. */
#define HW_SWITCH_POWER_RULE_W 750.0

/* The timing device of g at one precision. Returns 0, or SIM_ERR_INPUT with
 * a reason in err naming what the catalog lacks (peak, GEMM efficiency, HBM
 * bandwidth); err may be NULL. */
int hw_compute_device(const hw_gpu *g, int precision, compute_device *out, sim_error *err);

/* The same for a training framework (the step tier): also refuses an
 * attention kernel without a measured table for g (attention.h), and sets the
 * CPU launch cost per kernel, overlapped with the GPU (time = max(launch,
 * kernel)): fw->launch_overhead_s if > 0, else 0.5 us with fw->cuda_graphs,
 * else the catalog's <compute launch-overhead>, else 7 us (kernel_table.h,
 * components.md 3.4). hw_compute_device is this with fw NULL: no attention
 * check, the catalog's launch cost (0 if none) added to each kernel. */
int hw_compute_device_fw(const hw_gpu *g, int precision, const framework_config *fw,
                         compute_device *out, sim_error *err);

#endif
