/* threads_r.c -- R glue of the thread budget (threads.h): the most threads
 * that worked at once since the last reset, the calling thread included,
 * so tests can see that a fit keeps within control nthreads. */
#include <R.h>
#include <Rinternals.h>

#include "threads.h"
#include "threads_r.h"

SEXP gg_threads_peak_r(SEXP reset)
{
    return Rf_ScalarInteger(gg_threads_peak(Rf_asLogical(reset) == TRUE));
}
