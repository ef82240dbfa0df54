#!/usr/bin/env bash
# Builds tests/gpu_emulate.cc (the CUDA kernels' block bodies on the host,
# with AddressSanitizer and UndefinedBehaviorSanitizer) against the
# library's C sources and runs it (make emulate, after configure): EMULATE_COUNT problems (default 100) per
# kernel and mode, seed EMULATE_SEED (default 1).  Needs a C++ compiler
# (CXX, default g++) and CUDA's headers (vector_types.h: CUDA_HOME, default
# /usr/local/cuda), no GPU.  Exit status 0 when every problem matched.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cxx=${CXX:-g++}
cc=${CC:-gcc}
cuda=${CUDA_HOME:-/usr/local/cuda}
count=${EMULATE_COUNT:-100}
seed=${EMULATE_SEED:-1}
work=${EMULATE_WORK:-$PWD/emulate-work}
built=${EMULATE_INCLUDE:-$PWD/include} # where configure wrote convt3d_version.h
mkdir -p "$work"
[ -f "$built/convt3d_version.h" ] || { echo "gpu_emulate.sh: no $built/convt3d_version.h (run configure; make emulate sets it)" >&2; exit 2; }
san="-fsanitize=address,undefined -fno-sanitize-recover=all -g -O1"
inc="-I$built -I$src/include -I$src/src -I$cuda/include"
objs=
for f in layout error ref; do
  $cc -std=c11 $san $inc -c "$src/src/$f.c" -o "$work/$f.o"
  objs="$objs $work/$f.o"
done
$cxx -std=c++17 $san $inc -DCONVT3D_GPU_EMULATE -x c++ "$src/tests/gpu_emulate.cc" \
  "$src/src/gpu_plan.cu" "$src/src/gpu_igemm_plan.cu" "$src/src/gpu_depthwise_plan.cu" \
  -x none $objs -lpthread -o "$work/gpu_emulate"
rc=0
for mode in "igemm" "phase grouped" "phase tiled" "phase"; do
  set -- $mode
  "$work/gpu_emulate" "$1" "$count" "$seed" "${2:-}" || rc=1
done
exit $rc
