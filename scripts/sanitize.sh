#!/usr/bin/env bash
# Runs the test suite under ASan+UBSan (build-asan/) and the concurrency test
# under TSan (build-tsan/).
#   scripts/sanitize.sh [asan|tsan|all]
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}
root=$PWD  # the suppression files; the tests run inside the build trees
prefix=$(python3 -c 'import sys; print(sys.prefix)')
# The Python extension is left out: an instrumented module cannot load into an
# uninstrumented interpreter.
common=(-G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBRT_BUILD_BENCH=OFF -DBRT_BUILD_PYTHON=OFF)
if [ "$which" = asan ] || [ "$which" = all ]; then
  cmake -S . -B build-asan "${common[@]}" -DBRT_SANITIZE="address;undefined" >/dev/null
  cmake --build build-asan
  # oneDNN (uninstrumented, JIT) is loaded by dlopen: ASan must be first in
  # the process, which it is for our own executables; leaks are checked.
  # OpenMPI keeps what MPI_Init allocates: those leaks are suppressed
  # (tests/lsan_mpi.supp, matched on full stacks, with its components kept
  # loaded so their frames have names); brt's are not.
  # LSan's dynamic-TLS tracking (GCC 12's libasan) read a garbage range from
  # the main thread's DTV at exit once oneDNN's oneTBB build and the Intel
  # runtime it needs were loaded, and crashed (session_test): that tracking is
  # off; heap leaks are still checked.
  (cd build-asan && OMPI_MCA_mca_base_component_disable_dlclose=1 \
    ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0:intercept_tls_get_addr=0 LSAN_OPTIONS=suppressions=$root/tests/lsan_mpi.supp \
    UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -E "example_")
fi
if [ "$which" = tsan ] || [ "$which" = all ]; then
  cmake -S . -B build-tsan "${common[@]}" -DBRT_SANITIZE=thread >/dev/null
  cmake --build build-tsan --target concurrency_test session_test device_queue_test host_pool_test \
    tile_flags_test control_flow_test collectives_test brt_provider_mpi
  # oneDNN and libtbb are not instrumented, so TSan cannot see their
  # synchronisation: accesses inside those libraries are suppressed
  # (tests/tsan.supp), and brt's parallel loops run on threads of their own
  # in this build (providers/cpu/parallel.h). The threads under test are
  # brt's: the callers, the loops' threads, the async and comm threads.
  export TSAN_OPTIONS="suppressions=$root/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1"
  build-tsan/tests/concurrency_test
  build-tsan/tests/session_test
  build-tsan/tests/device_queue_test
  build-tsan/tests/host_pool_test
  # The fine-grained AG+GEMM's chunk flags: a missing acquire or release is a race here.
  build-tsan/tests/tile_flags_test
  # Loops and branches run their regions in contexts of each request's own.
  build-tsan/tests/control_flow_test
  # The mpi provider's comm thread and the ranks' callers, two ranks. OpenMPI
  # is not instrumented: its own internals are suppressed (tests/tsan.supp),
  # and its components stay loaded so the suppressions keep their libraries.
  if command -v mpirun >/dev/null; then
    OMPI_MCA_mca_base_component_disable_dlclose=1 mpirun --oversubscribe --allow-run-as-root -np 2 \
      -x OMPI_MCA_mca_base_component_disable_dlclose -x TSAN_OPTIONS \
      build-tsan/tests/collectives_test
  fi
fi
