/* init.c -- TEMPORARY registration of the engine's .Call routines for the
 * engine branch; replaced at merge by the package's own init.c, which
 * includes init_engine_entries.h. */
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>

#include "fit_r.h"

static const R_CallMethodDef call_methods[] = {
#include "init_engine_entries.h"
    {NULL, NULL, 0}};

void R_init_gamgpu(DllInfo *dll)
{
    R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
}
