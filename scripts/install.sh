#!/bin/sh
# Build the package tarball from this checkout and install it.
# GAMGPU_CONFIGURE_ARGS is passed to configure (e.g. --without-cuda).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
sh "$root/scripts/deps.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
R CMD build --no-manual "$root" >build.log 2>&1 || { cat build.log; exit 1; }
lib=""
if [ "$(id -u)" -ne 0 ]; then
  lib=$(Rscript -e 'cat(Sys.getenv("R_LIBS_USER"))')
  mkdir -p "$lib"
  lib="--library=$lib"
fi
# shellcheck disable=SC2086
R CMD INSTALL $lib --configure-args="${GAMGPU_CONFIGURE_ARGS:-}" gamgpu_*.tar.gz
