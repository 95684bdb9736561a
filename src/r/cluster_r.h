/* cluster_r.h -- the leader's backend of a fit over a cluster's nodes
 * (cluster_r.c). */
#ifndef GAMGPU_CLUSTER_R_H
#define GAMGPU_CLUSTER_R_H

#include <Rinternals.h>

#include "backend.h"

/* A backend whose operations are dispatch(ops) in R (R/cluster.R's, which
 * runs them on every node and combines the nodes' results of the last);
 * dispatch must stay protected while the backend lives. */
int gg_backend_cluster_init(gg_backend *be, SEXP dispatch, gg_status *st);

#endif
