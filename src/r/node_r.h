/* node_r.h -- a cluster node's backend operations (node_r.c). */
#ifndef GAMGPU_NODE_R_H
#define GAMGPU_NODE_R_H

#include <Rinternals.h>

SEXP gg_node_op_r(SEXP ptr, SEXP op, SEXP arg, SEXP fam);
SEXP gg_tcp_nodelay_r(void);

#endif
