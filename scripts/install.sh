#!/bin/sh
# Build the package tarball from this checkout and install it.
# GAMGPU_CONFIGURE_ARGS is passed to configure (e.g. --without-cuda).
#
# An install that was killed part way (a session cut off, a CI job
# stopped) leaves R's lock directory 00LOCK-gamgpu in the library, and
# every later R CMD INSTALL there then refuses to run.  Nothing here
# installs gamgpu concurrently, so a lock found before the install is
# stale: it is removed, and said so.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
sh "$root/scripts/deps.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
R CMD build --no-manual --no-build-vignettes "$root" >build.log 2>&1 || { cat build.log; exit 1; }
lib=""
if [ "$(id -u)" -ne 0 ]; then
  libdir=$(Rscript -e 'cat(Sys.getenv("R_LIBS_USER"))')
  mkdir -p "$libdir"
  lib="--library=$libdir"
else
  libdir=$(Rscript -e 'cat(.libPaths()[1L])')
fi
if [ -d "$libdir/00LOCK-gamgpu" ]; then
  echo "install.sh: removing a stale lock left by an interrupted install: $libdir/00LOCK-gamgpu"
  rm -rf "$libdir/00LOCK-gamgpu"
fi
# shellcheck disable=SC2086
R CMD INSTALL $lib --configure-args="${GAMGPU_CONFIGURE_ARGS:-}" gamgpu_*.tar.gz
