#!/bin/sh
# Run every test: install gamgpu from this checkout, then its testthat
# suite.  GAMGPU_TEST_DEVICE=required makes GPU tests fail instead of
# skipping where no device is usable (use it on GPU machines).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
sh "$root/scripts/install.sh"
cd "$root/tests"
Rscript testthat.R
