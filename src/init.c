/* init.c -- registration of every .Call routine, in one table.
 * Symbols are not searched dynamically and R code calls them as objects
 * (.Call(gg_gram_r, ...)), so a typo is an error at load, not at call. */
#include <R.h>
#include <R_ext/Rdynload.h>
#include <Rinternals.h>

#include "basis_r.h"
#include "cox_r.h"
#include "device_r.h"
#include "efam_r.h"
#include "family_r.h"
#include "fit_r.h"
#include "gamlss_r.h"
#include "interrupt_r.h"
#include "mvn_r.h"
#include "node_r.h"
#include "session_r.h"
#include "setup_r.h"
#include "threads_r.h"
#include "xsparse_r.h"

#define CALLDEF(name, n) {#name, (DL_FUNC) &name, n}

static const R_CallMethodDef call_methods[] = {
    CALLDEF(gg_runtime_attach,        2),
    CALLDEF(gg_runtime_detach,        1),
    CALLDEF(gg_gpu_probe_r,           0),
    CALLDEF(gg_gpu_info_r,            1),
    CALLDEF(gg_nvrtc_arch_r,          2),
    CALLDEF(gg_nvrtc_arch_listed_r,   2),
    CALLDEF(gg_arena_stats_r,         1),
    CALLDEF(gg_arena_release_r,       1),
    CALLDEF(gg_arena_try_alloc_r,     3),
    CALLDEF(gg_arena_size_class_r,    1),
    CALLDEF(gg_set_memory_budget_r,   1),
    CALLDEF(gg_gpu_fault_r,           2),
    CALLDEF(gg_host_arena_new,        2),
    CALLDEF(gg_host_arena_budget,     2),
    CALLDEF(gg_host_arena_alloc,      3),
    CALLDEF(gg_host_arena_release,    2),
    CALLDEF(gg_host_arena_trim,       1),
    CALLDEF(gg_host_arena_stats,      1),
    CALLDEF(gg_host_arena_free,       1),
    CALLDEF(gg_modules_r,             0),
    CALLDEF(gg_set_kernel_dir_r,      1),
    CALLDEF(gg_module_request_r,      3),
    CALLDEF(gg_telemetry_r,           1),
    CALLDEF(gg_record_fallback_r,     2),
    CALLDEF(gg_compile_check_r,       3),
    CALLDEF(gg_gram_r,                5),
    CALLDEF(gg_cpu_gram_mode_r,       2),
    CALLDEF(gg_xsparse_mode_r,        1),
    CALLDEF(gg_xsparse_check_r,       7),
    CALLDEF(gg_xsparse_takes_r,       1),
    CALLDEF(gg_predict_r,             7),
    CALLDEF(gg_fit,                   9),
    CALLDEF(gg_family_rows,           6),
    CALLDEF(gg_backend_check,         8),
    CALLDEF(gg_xplan_build_r,         1),
    CALLDEF(gg_xplan_build_device_r,  3),
    CALLDEF(gg_xplan_stats_device_r,  4),
    CALLDEF(gg_tprs_pp_r,             5),
    CALLDEF(gg_tprs_construct_r,      4),
    CALLDEF(gg_tprs_construct_all_r,  4),
    CALLDEF(gg_column_summary_r,      2),
    CALLDEF(gg_column_extremes_r,     3),
    CALLDEF(gg_check_rows_r,          4),
    CALLDEF(gg_cox_ll_r,             11),
    CALLDEF(gg_cox_session_ll_r,     11),
    CALLDEF(gg_cox_hazard_r,          9),
    CALLDEF(gg_ls_gh_r,              14),
    CALLDEF(gg_ls_ll_r,              17),
    CALLDEF(gg_ls_session_ll_r,      14),
    CALLDEF(gg_mvn_ll_r,              7),
    CALLDEF(gg_fill_r,                3),
    CALLDEF(gg_variance_r,            2),
    CALLDEF(gg_first_rows_r,          3),
    CALLDEF(gg_basis_stats_r,         3),
    CALLDEF(gg_count_pivots_r,        2),
    CALLDEF(gg_values_between_r,      3),
    CALLDEF(gg_response_sums_r,       2),
    CALLDEF(gg_rsq_sums_r,            4),
    CALLDEF(gg_sorted_unique_list_r,  2),
    CALLDEF(gg_log_density_r,         4),
    CALLDEF(gg_sum_spread_r,          4),
    CALLDEF(gg_family_aic_r,          6),
    CALLDEF(gg_working_residuals_r,   9),
    CALLDEF(gg_threads_peak_r,        1),
    CALLDEF(gg_interrupt_polls_r,     0),
    CALLDEF(gg_efam_rows_r,           7),
    CALLDEF(gg_efam_deta_r,           7),
    CALLDEF(gg_zip_saturated_r,       4),
    CALLDEF(gg_tw_aic_r,              6),
    CALLDEF(gg_efam_dev_resids_r,     6),
    CALLDEF(gg_efam_dev_sum_r,        6),
    CALLDEF(gg_session_open_r,        6),
    CALLDEF(gg_node_op_r,             4),
    CALLDEF(gg_tcp_nodelay_r,         0),
    CALLDEF(gg_session_close_r,       1),
    CALLDEF(gg_session_same_x_r,      3),
    CALLDEF(gg_session_info_r,        1),
    CALLDEF(gg_session_eval_r,        6),
    CALLDEF(gg_session_fetch_r,       2),
    CALLDEF(gg_session_gram_r,        3),
    CALLDEF(gg_session_leverage_r,    3),
    CALLDEF(gg_session_mul_r,         3),
    CALLDEF(gg_session_rows_r,        7),
    CALLDEF(gg_session_newton_gram_r, 4),
    CALLDEF(gg_session_derivs_r,      4),
    CALLDEF(gg_session_ef_eval_r,     6),
    CALLDEF(gg_session_ef_rows_r,     5),
    CALLDEF(gg_session_ef_newton_r,   2),
    {NULL, NULL, 0}
};

void R_init_gamgpu(DllInfo *dll)
{
    R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
}
