#!/bin/sh
# tools/check_memory.sh -- the memory and thread checkers over gamgpu, in one
# script anyone can rerun (issue 15).  Each check builds its own copy of the
# package into $OUT, runs, and prints one line: the checker, what it ran,
# the errors it reported, and how many of them have gamgpu's code in their
# stack (the number that must be 0).  Logs stay in $OUT.
#
#   sh tools/check_memory.sh [memcheck] [asan] [helgrind] [sanitizer]
#
# With no argument it runs memcheck, asan and helgrind, and sanitizer
# (compute-sanitizer's memcheck, racecheck and initcheck over the workload
# on the device) when a GPU is usable.
#   memcheck   valgrind memcheck over tools/check_workload.R and the
#              quick test files (CHECK_TEST_FILES)
#   asan       the whole test suite under an AddressSanitizer and
#              UndefinedBehaviorSanitizer build (libasan preloaded into R)
#   helgrind   valgrind helgrind (a thread checker) over the workload: the
#              thread budget's helpers, the row jobs, the REML pool
#   sanitizer  compute-sanitizer (memcheck, racecheck, initcheck) over the
#              workload with GAMGPU_CHECK_DEVICE=required, and memcheck over
#              device test files (CHECK_DEVICE_TEST_FILES)
# Environment: OUT (/tmp/gamgpu-checks), CHECK_TEST_FILES (a few fast files),
# CHECK_DEVICE_TEST_FILES (default: fault injection, step halving, device
# fits; not test-robust-interrupt.R, whose latency bounds do not hold under a checker).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/gamgpu-checks}
R=${R_HOME:+$R_HOME/bin/}R
mkdir -p "$OUT"
CHECKS=${*:-memcheck asan helgrind sanitizer}
CHECK_TEST_FILES=${CHECK_TEST_FILES:-"test-threads-budget.R test-robust-crash-regressions.R test-api-arguments.R"}
CHECK_DEVICE_TEST_FILES=${CHECK_DEVICE_TEST_FILES:-"test-device-fault-injection.R test-fit-step-halving.R test-fit-device.R"}
status=0

# build the package from the tree into $OUT/lib-$1 with extra compiler flags $2
build() {
  lib="$OUT/lib-$1"
  rm -rf "$lib" "$OUT/src-$1" && mkdir -p "$lib" "$OUT/src-$1"
  (cd "$ROOT" && tar --exclude='*.o' --exclude='*.so' --exclude='./.git' \
     --exclude='./.device-r' -cf - .) | (cd "$OUT/src-$1" && tar xf -)
  mk="$OUT/Makevars-$1"
  printf 'CFLAGS = -g -O1 -fno-omit-frame-pointer %s\nLDFLAGS = %s\n' "$2" "$2" > "$mk"
  # (no load test: a sanitized library loads only with its runtime preloaded)
  if ! R_MAKEVARS_USER="$mk" "$R" CMD INSTALL --no-test-load -l "$lib" "$OUT/src-$1" \
       > "$OUT/install-$1.log" 2>&1; then
    echo "$1: the build failed, see $OUT/install-$1.log"
    status=1
    return 1
  fi
}

# valgrind logs: error records, and those with gamgpu's code in their
# stack (a frame in one of its files, or in gamgpu.so)
OURS=$(cd "$ROOT" && ls src/*/*.c src/*/*.h inst/include/*.h inst/kernels/*.cu |
       sed 's#.*/##; s/[.]/[.]/g' | paste -sd'|' -)
vg_count() {
  awk -v re="[(]($OURS):[0-9]+[)]|gamgpu[.]so" '
    /^==[0-9]+== *$/ { if (inrec) { total++; if (ours) mine++ } inrec = 0; ours = 0; next }
    /^==[0-9]+== (Invalid|Conditional jump|Use of uninitialised|Syscall param|Mismatched|Source and destination|Possible data race|Lock order|Thread #[0-9]+:? (unlocked|was|deallocated)|Argument .* of function)/ { inrec = 1 }
    inrec && $0 ~ re { ours = 1 }
    END { if (inrec) { total++; if (ours) mine++ } printf "%d %d\n", total + 0, mine + 0 }
  ' "$@"
}

run_tests() {   # $1 lib, then the runner prefix
  lib=$1; shift
  for f in $CHECK_TEST_FILES; do
    (cd "$ROOT/tests" && R_LIBS="$lib" "$@" -e "library(testthat); library(gamgpu); test_file('testthat/$f', reporter = 'summary', package = 'gamgpu', load_package = 'installed')")
  done
}

for check in $CHECKS; do
  case "$check" in
  memcheck)
    build memcheck "" || continue
    rm -f "$OUT"/memcheck.*.log
    vg="valgrind --tool=memcheck --num-callers=40 --track-origins=yes --log-file=$OUT/memcheck.%p.log"
    R_LIBS="$OUT/lib-memcheck" "$R" -d "$vg" --vanilla --no-echo -f "$ROOT/tools/check_workload.R" \
      > "$OUT/memcheck-workload.out" 2>&1
    grep -q "workload done" "$OUT/memcheck-workload.out" || { echo "memcheck: the workload did not finish"; status=1; }
    run_tests "$OUT/lib-memcheck" "$R" -d "$vg" --vanilla --no-echo > "$OUT/memcheck-tests.out" 2>&1
    set -- $(vg_count "$OUT"/memcheck.*.log)
    echo "memcheck: workload + $CHECK_TEST_FILES: $1 error records, $2 in gamgpu's code"
    [ "$2" -eq 0 ] || status=1
    ;;
  asan)
    build asan "-fsanitize=address,undefined" || continue
    pre="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
    rm -f "$OUT"/asan.* "$OUT"/ubsan.*
    (cd "$ROOT/tests" && R_LIBS="$OUT/lib-asan" LD_PRELOAD="$pre" \
       ASAN_OPTIONS=detect_leaks=0:halt_on_error=0:log_path="$OUT/asan" \
       UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=0:log_path="$OUT/ubsan" \
       "$R" --vanilla --no-echo -f testthat.R > "$OUT/asan-suite.out" 2>&1)
    suite=$(grep -o "\[ FAIL [0-9]* .*\]" "$OUT/asan-suite.out" | tail -1)
    # ASan reports run from "ERROR: AddressSanitizer" to "SUMMARY:", the
    # stack between; a UBSan report names its file on its own line
    set -- $(cat "$OUT"/asan.* 2>/dev/null | awk -v re="/($OURS):[0-9]+" '
      /ERROR: AddressSanitizer/ { inrec = 1; ours = 0; total++ }
      inrec && $0 ~ re { ours = 1 }
      /^SUMMARY:/ { if (inrec && ours) mine++; inrec = 0 }
      END { printf "%d %d\n", total + 0, mine + 0 }')
    ub_total=$(cat "$OUT"/ubsan.* 2>/dev/null | grep -c "runtime error:")
    ub_mine=$(cat "$OUT"/ubsan.* 2>/dev/null | grep "runtime error:" | grep -Ec "/($OURS):[0-9]+")
    total=$(( $1 + ub_total ))
    mine=$(( $2 + ub_mine ))
    echo "asan+ubsan: the test suite ($suite): $total reports, $mine in gamgpu's code"
    [ "$mine" -eq 0 ] || status=1
    ;;
  helgrind)
    build helgrind "" || continue
    rm -f "$OUT"/helgrind.*.log
    vg="valgrind --tool=helgrind --num-callers=40 --log-file=$OUT/helgrind.%p.log"
    R_LIBS="$OUT/lib-helgrind" GAMGPU_CHECK_N=1500 "$R" -d "$vg" --vanilla --no-echo \
      -f "$ROOT/tools/check_workload.R" > "$OUT/helgrind-workload.out" 2>&1
    grep -q "workload done" "$OUT/helgrind-workload.out" || { echo "helgrind: the workload did not finish"; status=1; }
    set -- $(vg_count "$OUT"/helgrind.*.log)
    echo "helgrind: workload: $1 error records, $2 in gamgpu's code"
    [ "$2" -eq 0 ] || status=1
    ;;
  sanitizer)
    cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    if [ ! -x "$cs" ] || ! Rscript -e 'quit(status = !isTRUE(gamgpu::gpu_info()$usable))' > /dev/null 2>&1; then
      echo "sanitizer: skipped (no compute-sanitizer or no usable GPU here)"
      continue
    fi
    build sanitizer "" || continue
    for tool in memcheck racecheck initcheck; do
      R_LIBS="$OUT/lib-sanitizer" GAMGPU_CHECK_DEVICE=required GAMGPU_CHECK_N=4000 \
        "$cs" --tool "$tool" --target-processes all --log-file "$OUT/cs-$tool.log" \
        "$R" --vanilla --no-echo -f "$ROOT/tools/check_workload.R" > "$OUT/cs-$tool.out" 2>&1
      summary=$(grep "ERROR SUMMARY\|RACECHECK SUMMARY" "$OUT/cs-$tool.log" | tail -1)
      grep -q "workload done" "$OUT/cs-$tool.out" || { echo "sanitizer $tool: the workload did not finish"; status=1; }
      echo "compute-sanitizer $tool: workload on the device: ${summary:-no summary}"
      echo "$summary" | grep -q " 0 error\|0 hazard" || status=1
    done
    # and memcheck over device test files: the error paths (injected
    # faults, interrupts) and the device fits
    rm -f "$OUT"/cs-tests.*.log
    for f in $CHECK_DEVICE_TEST_FILES; do
      (cd "$ROOT/tests" && R_LIBS="$OUT/lib-sanitizer" GAMGPU_TEST_DEVICE=required \
        "$cs" --tool memcheck --target-processes all --log-file "$OUT/cs-tests.$f.log" \
        "$R" --vanilla --no-echo -e "library(testthat); library(gamgpu); test_file('testthat/$f', reporter = 'summary', package = 'gamgpu', load_package = 'installed')") \
        > "$OUT/cs-tests.$f.out" 2>&1
      summary=$(grep "ERROR SUMMARY" "$OUT/cs-tests.$f.log" | tail -1)
      fails=$(grep -c "^── .*\(Failure\|Error\)" "$OUT/cs-tests.$f.out")
      echo "compute-sanitizer memcheck: $f: ${summary:-no summary}; test failures: $fails"
      { echo "$summary" | grep -q " 0 error" && [ "$fails" -eq 0 ]; } || status=1
    done
    ;;
  *) echo "unknown check: $check"; status=2 ;;
  esac
done
exit $status
