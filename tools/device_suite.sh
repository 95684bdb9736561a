#!/bin/sh
# tools/device_suite.sh -- on the GPU machine (through the device tool, with
# .device-r carried; see ../shared/device/README.md): install gamgpu from the
# working tree, run the whole test suite with GAMGPU_TEST_DEVICE=required in
# PARTS parts side by side (default 6 of the machine's 16 cores;
# tools/suite_by_file.R, PART=k/PARTS), and beside them
# a 1e6-row binomial REML fit whose telemetry must show launches and no
# fallback.  Each part stops at TLIM seconds (default 470) so that the call
# stays inside its 10 minutes; everything is written under $OUT and the
# totals are printed last.
#
#   HEADREV=$(git rev-parse --short HEAD)  # optional: names the commit
#   HEADREV=abc1234 TLIM=470 PARTS=6 sh tools/device_suite.sh
set -u
: "${OUT:=/tmp/device_suite}"
mkdir -p "$OUT"
sh .device-r/setup.sh > "$OUT/setup.log" 2>&1 || { tail -20 "$OUT/setup.log"; exit 1; }
export OPENBLAS_NUM_THREADS=1
R CMD INSTALL . > "$OUT/install.log" 2>&1 || { tail -40 "$OUT/install.log"; exit 1; }
grep -i "cuda\|nvrtc" "$OUT/install.log" | head -5
t0=$(date +%s)
parts=$(seq 1 "${PARTS:-6}")
for k in $parts; do
  mkdir -p "$OUT/part$k"
  ( GAMGPU_TEST_DEVICE=required OUT="$OUT/part$k" PART=$k/${PARTS:-6} \
      timeout "${TLIM:-470}" Rscript tools/suite_by_file.R > "$OUT/part$k/stdout.log" 2>&1
    echo "part $k rc=$? after $(( $(date +%s) - t0 )) s" >> "$OUT/parts.txt" ) &
done
Rscript -e '
suppressMessages(library(gamgpu))
print(gpu_info())
set.seed(1); n <- 1e6
d <- data.frame(x = runif(n), z = runif(n))
d$y <- rbinom(n, 1, plogis(sin(6 * d$x) + d$z - 0.5))
invisible(gpu_telemetry(reset = TRUE))
t <- system.time(f <- gam_gpu(y ~ s(x) + s(z), family = binomial(), data = d, method = "REML"))
cat("1e6 binomial REML fit:", round(t[["elapsed"]], 2), "s, converged", f$converged, "\n")
print(gpu_telemetry())
' > "$OUT/telemetry.log" 2>&1
wait
cat "$OUT/telemetry.log"
cat "$OUT/parts.txt"
for k in $parts; do
  awk -F, -v k="$k" 'NR > 1 { n++; p += $2; f += $3; s += $4; e += $5 }
    END { printf "part %s: %d files, %d pass, %d fail, %d skip, %d error\n", k, n, p, f, s, e }' \
    "$OUT/part$k/files.csv"
done
cat "$OUT"/part*/files.csv | awk -F, '$1 != "file" { n++; p += $2; f += $3; s += $4; e += $5 }
  END { printf "SUITE: %d files, %d pass, %d fail, %d skip, %d error\n", n, p, f, s, e }'
awk -F, '$1 != "file" && ($3 > 0 || $5 > 0)' "$OUT"/part*/files.csv
# (the device tool brings back a few files only: the parts' in one each)
awk 'FNR > 1 || NR == 1' $(for k in $parts; do echo "$OUT/part$k/files.csv"; done) \
  > "$OUT/files.csv"
for f in details.log stdout.log; do
  for k in $parts; do cat "$OUT/part$k/$f"; done > "$OUT/$f"
done
for k in $parts; do rm -rf "$OUT/part$k"; done
# the failures' messages, for the call's output
grep -A6 "Failure (\|Error (" "$OUT/details.log" | cut -c1-300 | head -80
echo "at ${HEADREV:-unnamed commit}"
ls tests/testthat/test-*.R | wc -l
for f in tests/testthat/test-*.R; do
  b=$(basename "$f")
  grep -q "^$b," "$OUT/files.csv" || echo "not reached: $b"
done
