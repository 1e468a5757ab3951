/* export.h - write a topology graph for other tools: GraphML (yEd, Gephi,
 * NetworkX) or Graphviz DOT. One cable (links 2c and 2c+1) is one undirected
 * edge from link_src[2c] to link_dst[2c]; node ids are "n<id>", edge ids
 * "c<cable>". Attributes: node kind (host, switch, scaleup, nic), tier, plane,
 * group (-1 for TOPO_NO_GROUP); edge bytes_per_s (direction source -> target)
 * and reverse_bytes_per_s (target -> source).
 */
#ifndef DCSIM_TOPO_EXPORT_H
#define DCSIM_TOPO_EXPORT_H

#include <stddef.h>
#include <stdio.h>

#include "graph.h"

/* Write g as a GraphML document to f. Returns 0, or -1 with a one-line
 * reason (links not in cable pairs, a write error). The caller owns f. */
int topo_export_graphml(const topo_graph *g, FILE *f, char *why, size_t why_size);

/* Write g as an undirected Graphviz graph ("graph dcsim { ... }") to f; the
 * same attributes as GraphML, as DOT attributes. Returns as above. */
int topo_export_dot(const topo_graph *g, FILE *f, char *why, size_t why_size);

#endif
