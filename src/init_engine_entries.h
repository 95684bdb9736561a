    {"gg_fit", (DL_FUNC) &gg_fit, 12},
    {"gg_family_rows", (DL_FUNC) &gg_family_rows, 5},
