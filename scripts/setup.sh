#!/bin/sh
# The main job: install what is missing, install gamgpu, and run the
# example on the GPU when one is usable, else on the CPU.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
sh "$root/scripts/install.sh"
Rscript "$root/scripts/example.R"
