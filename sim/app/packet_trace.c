/* packet_trace.c - the HDF5 file of `dcsim netbench --tier packet -o` (see
 * packet_trace.h; layout in docs/trace-format.md "/packet"). Object
 * timestamps are off: the same run gives the same bytes.
 */
#include "packet_trace.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "cli.h"
#include "h5util.h"
#include "units.h"

#define PACKET_FORMAT_VERSION 1 /* the run trace's format_version: same root attributes */
#define PACKET_LAYOUT_VERSION "2" /* 2: only the links that carried traffic */
#define DEFLATE_LEVEL 4

/* one row of /packet/links */
typedef struct link_row {
    uint32_t id, src, dst, src_tier, dst_tier;
    double rate_bytes_per_s;
    uint64_t packets_sent;
    double bytes_sent;
    uint64_t pauses, ecn_marks;
    double max_queued_bytes, max_held_bytes;
} link_row;

static const char *const link_units[] = {"-", "-", "-", "-", "-", "B/s", "1", "B", "1", "1",
                                         "B", "B"};

static int put_links(hid_t g, const topo_graph *tg, const pkt_series *s)
{
    uint32_t n = pkt_series_stored(s);
    link_row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows)
        return -1;
    for (uint32_t j = 0; j < n; j++) {
        uint32_t l = pkt_series_stored_link(s, j);
        pkt_link_stats e = pkt_series_link_end(s, l);
        rows[j] = (link_row){l, tg->link_src[l], tg->link_dst[l], tg->node_tier[tg->link_src[l]],
                             tg->node_tier[tg->link_dst[l]], tg->link_bytes_per_s[l],
                             e.packets_sent, e.bytes_sent, e.pauses, e.ecn_marks,
                             e.max_queued_bytes, e.max_held_bytes};
    }
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(link_row));
    H5Tinsert(t, "link", HOFFSET(link_row, id), H5T_NATIVE_UINT32);
    H5Tinsert(t, "src", HOFFSET(link_row, src), H5T_NATIVE_UINT32);
    H5Tinsert(t, "dst", HOFFSET(link_row, dst), H5T_NATIVE_UINT32);
    H5Tinsert(t, "src_tier", HOFFSET(link_row, src_tier), H5T_NATIVE_UINT32);
    H5Tinsert(t, "dst_tier", HOFFSET(link_row, dst_tier), H5T_NATIVE_UINT32);
    H5Tinsert(t, "rate_bytes_per_s", HOFFSET(link_row, rate_bytes_per_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "packets_sent", HOFFSET(link_row, packets_sent), H5T_NATIVE_UINT64);
    H5Tinsert(t, "bytes_sent", HOFFSET(link_row, bytes_sent), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "pauses", HOFFSET(link_row, pauses), H5T_NATIVE_UINT64);
    H5Tinsert(t, "ecn_marks", HOFFSET(link_row, ecn_marks), H5T_NATIVE_UINT64);
    H5Tinsert(t, "max_queued_bytes", HOFFSET(link_row, max_queued_bytes), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "max_held_bytes", HOFFSET(link_row, max_held_bytes), H5T_NATIVE_DOUBLE);
    int rc = h5_put_table(g, "links", t, n, rows, link_units,
                          sizeof link_units / sizeof *link_units,
                          "one row per directed link that carried traffic (the others: "
                          "zeros in every column and bin), by ascending id: its ends (node ids), their tiers "
                          "(0 host, 1 leaf/edge, 2, ...), its rate, and its end-of-run counters "
                          "(pkt_link_stats): packets and bytes sent, PAUSE frames its "
                          "transmitter received, ECN marks on entering its FIFO, most bytes in "
                          "its egress FIFO and held at the ingress port it feeds");
    H5Tclose(t);
    free(rows);
    return rc;
}

/* A [bins x stored links] column, chunked by rows and deflated. */
static int put_column(hid_t g, const char *name, hid_t type, const pkt_series *s, int is_count,
                      int field, const char *units, const char *description)
{
    hsize_t bins = pkt_series_bins(s), links = pkt_series_stored(s);
    uint64_t *v = malloc(((size_t)(bins * links) + 1) * sizeof *v); /* 8-byte cells */
    if (!v)
        return -1;
    for (hsize_t j = 0; j < links; j++) {
        uint32_t l = pkt_series_stored_link(s, (uint32_t)j);
        const double *dv = is_count ? NULL : pkt_series_link_values(s, field, l);
        const uint64_t *cv = is_count ? pkt_series_link_counts(s, field, l) : NULL;
        for (hsize_t k = 0; k < bins; k++)
            if (is_count)
                v[k * links + j] = cv[k];
            else
                memcpy(&v[k * links + j], &dv[k], sizeof(double));
    }
    hsize_t dims[2] = {bins, links};
    hsize_t chunk[2] = {bins < 16 ? bins : 16, links};
    hid_t sp = H5Screate_simple(2, dims, NULL), dcpl = h5_untimed(H5P_DATASET_CREATE);
    if (bins && links && H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
        H5Pset_chunk(dcpl, 2, chunk);
        H5Pset_deflate(dcpl, DEFLATE_LEVEL);
    }
    hid_t d = H5Dcreate2(g, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int rc = d < 0 || (bins && links && H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) ||
             h5_attr_text(d, "units", units) || h5_attr_text(d, "description", description);
    if (d >= 0)
        H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(sp);
    free(v);
    return rc;
}

static int put_series(hid_t g, const pkt_series *s)
{
    hsize_t nb = pkt_series_bins(s);
    double *edges = malloc((size_t)(nb + 1) * sizeof *edges);
    if (!edges)
        return -1;
    for (hsize_t k = 0; k <= nb; k++)
        edges[k] = pkt_series_t0(s) + (double)k * pkt_series_dt(s);
    hsize_t dims[1] = {nb + 1};
    hid_t sp = H5Screate_simple(1, dims, NULL), dcpl = h5_untimed(H5P_DATASET_CREATE);
    hid_t d = H5Dcreate2(g, "t_edges_s", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int rc = d < 0 || H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, edges) < 0 ||
             h5_attr_text(d, "units", "s") ||
             h5_attr_text(d, "description", "bin edges: bin k covers (t_edges_s[k], "
                                            "t_edges_s[k+1]] (bin 0 also its start)");
    if (d >= 0)
        H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(sp);
    free(edges);
    static const struct {
        const char *name, *units, *description;
        int is_count, field;
    } cols[] = {
        {"sent_bytes", "B", "bytes the link finished sending in the bin", 0, PKS_SENT_BYTES},
        {"packets", "1", "packets the link finished sending in the bin", 1, PKS_PACKETS},
        {"pauses", "1", "PAUSE frames the link's transmitter received in the bin", 1,
         PKS_PAUSES},
        {"ecn_marks", "1", "packets ECN-marked on entering the link's FIFO in the bin", 1,
         PKS_MARKS},
        {"queue_end_bytes", "B", "bytes in the link's egress FIFO (in service included) at "
                                 "the bin's end", 0, PKS_QUEUE_END},
        {"queue_max_bytes", "B", "most bytes in the link's egress FIFO during the bin", 0,
         PKS_QUEUE_MAX},
        {"held_end_bytes", "B", "bytes held at the ingress port the link feeds at the bin's "
                                "end", 0, PKS_HELD_END},
        {"held_max_bytes", "B", "most bytes held at the ingress port the link feeds during the "
                                "bin", 0, PKS_HELD_MAX},
    };
    for (size_t i = 0; !rc && i < sizeof cols / sizeof *cols; i++)
        rc = put_column(g, cols[i].name, cols[i].is_count ? H5T_NATIVE_UINT64 : H5T_NATIVE_DOUBLE,
                        s, cols[i].is_count, cols[i].field, cols[i].units, cols[i].description);
    if (!rc)
        rc = h5_attr_text(g, "layout", "bins x links; column j is /packet/links[j]") ||
             h5_attr_text(g, "description",
                          "per directed link that carried traffic and time bin: deltas of the link's counters "
                          "(their sums over the bins are /packet/links' totals exactly), and "
                          "the egress queue and ingress held bytes at each bin's end and their "
                          "most during it");
    return rc;
}

static int put_packet_attrs(hid_t g, const pkt_series *s, const packet_trace_meta *m)
{
    const pkt_config *c = m->cfg;
    double dt = pkt_series_dt(s), t0 = pkt_series_t0(s);
    uint32_t bins = pkt_series_bins(s), links = pkt_series_stored(s),
             fabric_links = pkt_series_links(s), merges = pkt_series_merges(s);
    int dcqcn = c->dcqcn.is_enabled != 0;
    int rc = h5_attr_text(g, "op", m->op) ||
             (m->algo && h5_attr_text(g, "algo", m->algo)) ||
             h5_attr_text(g, "flow_control", c->technology == PKT_ROCE ? "pfc" : "credits") ||
             h5_attr_scalar(g, "mtu_bytes", H5T_NATIVE_DOUBLE, &c->mtu_bytes) ||
             h5_attr_scalar(g, "buffer_bytes", H5T_NATIVE_DOUBLE, &c->buffer_bytes) ||
             h5_attr_scalar(g, "hop_latency_s", H5T_NATIVE_DOUBLE, &c->hop_latency_s) ||
             h5_attr_scalar(g, "dcqcn", H5T_NATIVE_INT32, &dcqcn) ||
             h5_attr_scalar(g, "dt_s", H5T_NATIVE_DOUBLE, &dt) ||
             h5_attr_scalar(g, "t0_s", H5T_NATIVE_DOUBLE, &t0) ||
             h5_attr_scalar(g, "end_s", H5T_NATIVE_DOUBLE, &m->end_s) ||
             h5_attr_scalar(g, "bins", H5T_NATIVE_UINT32, &bins) ||
             h5_attr_scalar(g, "links", H5T_NATIVE_UINT32, &links) ||
             h5_attr_scalar(g, "fabric_links", H5T_NATIVE_UINT32, &fabric_links) ||
             h5_attr_scalar(g, "merges", H5T_NATIVE_UINT32, &merges) ||
             h5_attr_text(g, "layout_version", PACKET_LAYOUT_VERSION);
    if (!rc && c->technology == PKT_ROCE)
        rc = h5_attr_scalar(g, "xoff_bytes", H5T_NATIVE_DOUBLE, &c->xoff_bytes) ||
             h5_attr_scalar(g, "xon_bytes", H5T_NATIVE_DOUBLE, &c->xon_bytes);
    return rc;
}

static int put_root(hid_t f, const packet_trace_meta *m)
{
    int32_t format = PACKET_FORMAT_VERSION;
    char digest[24];
    snprintf(digest, sizeof digest, "0x%016llx", (unsigned long long)m->digest);
    h5_root root = {format, m->seed, digest, m->events, m->scenario_name, m->scenario_source};
    return h5_put_root(f, &root) || h5_attr_text(f, "command", m->command) ||
           h5_attr_text(f, "kind", m->kind ? m->kind : "netbench --tier packet");
}

const char *packet_trace_put(hid_t f, const topo_graph *g, const pkt_series *s,
                             const packet_trace_meta *m)
{
    const char *failed = NULL;
    hid_t gcpl = h5_untimed(H5P_GROUP_CREATE);
    hid_t pg = H5Gcreate2(f, "packet", H5P_DEFAULT, gcpl, H5P_DEFAULT);
    hid_t sg = pg < 0 ? -1 : H5Gcreate2(pg, "series", H5P_DEFAULT, gcpl, H5P_DEFAULT);
    H5Pclose(gcpl);
    if (pg < 0 || sg < 0)
        failed = "creating /packet";
    else if (put_packet_attrs(pg, s, m))
        failed = "writing /packet's attributes";
    else if (put_links(pg, g, s))
        failed = "writing /packet/links";
    else if (put_series(sg, s))
        failed = "writing /packet/series";
    if (sg >= 0)
        H5Gclose(sg);
    if (pg >= 0)
        H5Gclose(pg);
    return failed;
}

int packet_trace_bins(const char *command, const char *bin, const char *bins, double mtu_bytes,
                      double link_bytes_per_s, packet_trace_bins_out *out)
{
    out->dt_s = mtu_bytes / link_bytes_per_s;
    snprintf(out->dt_from, sizeof out->dt_from, "rule: one MTU on the fabric link (%.0f B at "
             "%.4g GB/s)", mtu_bytes, link_bytes_per_s / 1e9);
    if (bin) {
        char why[128];
        if (sim_units_parse(bin, SIM_DIM_TIME, &out->dt_s, why, sizeof why) ||
            !(out->dt_s >= 1e-12) || out->dt_s > 1)
            return cli_usage_error(command, "--bin %s: expected a time from 1ps to 1s such "
                                   "as 100ns", bin);
        snprintf(out->dt_from, sizeof out->dt_from, "--bin %s", bin);
    }
    out->max_bins = TRACE_DEFAULT_BINS;
    snprintf(out->bins_from, sizeof out->bins_from, "dcsim default (--bins N)");
    if (bins) {
        char *end;
        unsigned long n = strtoul(bins, &end, 10);
        if (*end || end == bins || n < 2 || n > TRACE_MAX_BINS || n % 2)
            return cli_usage_error(command, "--bins %s: expected an even whole number from "
                                   "2 to 1048576", bins);
        out->max_bins = (uint32_t)n;
        snprintf(out->bins_from, sizeof out->bins_from, "--bins %s", bins);
    }
    return 0;
}

int packet_trace_write(outpath *op, const topo_graph *g, const pkt_series *s,
                       const packet_trace_meta *m, sim_error *err)
{
    hid_t f = h5_create_file(op, err);
    if (f < 0)
        return SIM_ERR_IO;
    const char *failed = packet_trace_put(f, g, s, m);
    if (!failed && put_root(f, m))
        failed = "writing the root attributes";
    return h5_finish_file(op, f, failed, err);
}
