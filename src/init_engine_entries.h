    {"gg_fit", (DL_FUNC) &gg_fit, 12},
    {"gg_family_rows", (DL_FUNC) &gg_family_rows, 5},
    {"gg_backend_check", (DL_FUNC) &gg_backend_check, 8},
