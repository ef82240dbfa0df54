#!/usr/bin/env bash
# Runs the libFuzzer target that `make fuzz` built (Makefile.am compiles it:
# the library's CPU sources with -fsanitize=fuzzer,address,undefined) for a
# bounded time on a copy of the seed corpus, so that new inputs never land in
# the repository.  Called by `make fuzz`; by hand:
#
#   fuzz/run.sh BINARY            fuzz for FUZZ_SECONDS (default 60)
#   fuzz/run.sh BINARY FILE...    replay FILE... (e.g. a crash-* input)
#
# Environment: FUZZ_SECONDS, FUZZ_WORK (working directory; the corpus copy
# is $FUZZ_WORK/corpus, default ./fuzz-work), FUZZ_THREADS (OpenMP threads,
# default 1: reproducible, and the fastest executions), FUZZ_SEED
# (libFuzzer's -seed: a fixed one makes a run repeatable, as CI wants;
# default random), FUZZ_FLAGS (extra libFuzzer flags).
# Exit status: 0 when the fuzzer found nothing.  The execution count is the
# "stat::number_of_executed_units" line of the output.
set -euo pipefail

if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: $0 FUZZ_BINARY [FILE...]  (make fuzz builds the binary)" >&2
  exit 2
fi
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
src=$(cd "$(dirname "$0")/.." && pwd)
seconds=${FUZZ_SECONDS:-60}
work=${FUZZ_WORK:-$PWD/fuzz-work}
mkdir -p "$work/corpus"

export OMP_NUM_THREADS=${FUZZ_THREADS:-1}
# Huge requests must come back as NULL (and the library must say OUT_OF_MEMORY),
# not abort the process.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

if [ $# -gt 0 ]; then
  exec "$bin" -runs=1 "$@"
fi
cd "$work"
# New inputs go to the first directory (the working copy), seeds are read-only.
# shellcheck disable=SC2086
exec "$bin" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
  -max_len=256 -print_final_stats=1 ${FUZZ_SEED:+-seed=$FUZZ_SEED} ${FUZZ_FLAGS:-} \
  "$work/corpus" "$src/fuzz/corpus"
