#!/bin/sh
# Install what gamgpu needs on a Debian/Ubuntu machine, if it is missing:
# R with its headers, mgcv, cli (progress of long fits), testthat and survival (real survival data for
# the censored families' tests).  Idempotent; uses sudo when not root.
set -eu
have() {
  command -v Rscript >/dev/null 2>&1 &&
    Rscript -e 'q(status = !all(c("mgcv", "testthat", "survival", "cli") %in% rownames(installed.packages())))' \
      >/dev/null 2>&1
}
if have; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends \
  r-base-dev r-cran-mgcv r-cran-testthat r-cran-survival r-cran-cli
