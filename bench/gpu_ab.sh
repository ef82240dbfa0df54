#!/usr/bin/env bash
# Before/after on a GPU machine in one call: builds two `make dist` tarballs
# side by side, runs the new one's `make check` (the GPU test program runs
# there), then the bench suite with each build in turn, in both layouts, so
# that both sets of times come from one machine in one session.
#
#   bench/gpu_ab.sh OLD.tar.gz NEW.tar.gz [CUNIT_DEB_DIR]
#
# Logs and the bench JSON go to $OUT (or /tmp/convt3d-ab).  The old build is
# timed without baselines and without verification (the new one verifies and
# times cuDNN), to keep the call short.  AB_STEPS (default "check bench")
# says what runs after the builds, which are skipped when a warm machine
# still has them: check = the new build's make check and its Python tests,
# bench = the suite with each build, both layouts.
set -uo pipefail
old=${1:?usage: gpu_ab.sh OLD.tar.gz NEW.tar.gz [CUNIT_DEB_DIR]}
new=${2:?usage: gpu_ab.sh OLD.tar.gz NEW.tar.gz [CUNIT_DEB_DIR]}
debs=${3:-$(dirname "$new")}
log=${OUT:-/tmp/convt3d-ab}
mkdir -p "$log"
cu=/tmp/cunit
mkdir -p "$cu"
for f in "$debs"/*.deb; do [ -f "$f" ] && dpkg -x "$f" "$cu"; done
lib=$cu/usr/lib/x86_64-linux-gnu
export CPPFLAGS="-I$cu/usr/include ${CPPFLAGS:-}" LDFLAGS="-L$lib ${LDFLAGS:-}"
export CUNIT_CFLAGS="-I$cu/usr/include" CUNIT_LIBS="-L$lib -lcunit"
export LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}"

build() { # tarball dir target logname
  [ -f "$2/done" ] && return 0
  rm -rf "$2" && mkdir -p "$2" && tar -xzf "$1" -C "$2" && cd "$2"/*/ &&
    ./configure >"$log/$4-configure.log" 2>&1 && make -j16 $3 >"$log/$4-make.log" 2>&1 &&
    touch "$2/done"
}
steps=${AB_STEPS:-check bench}
nvidia-smi --query-gpu=name,clocks.sm,memory.used --format=csv,noheader
start=$(date +%s)
(build "$old" /tmp/ab-old convt3d-bench old) & pid_old=$!
(build "$new" /tmp/ab-new all new) & pid_new=$!
wait $pid_old || { echo "old build failed"; tail -20 "$log"/old-*.log; exit 1; }
wait $pid_new || { echo "new build failed"; tail -20 "$log"/new-*.log; exit 1; }
echo "built both in $(( $(date +%s) - start )) s"
oldb=$(echo /tmp/ab-old/*/convt3d-bench) newd=$(echo /tmp/ab-new/*/)
rc=0
case " $steps " in *" check "*)
  (cd "$newd" && make -j16 check >"$log/check.log" 2>&1) || rc=$?
  for f in tests/test_convt3d tests/test_gpu tests/example python/check-python; do
    cp "$newd/$f.log" "$log/$(basename $f).log" 2>/dev/null
  done
  grep -h -E '^(PASS|FAIL|SKIP|ERROR|# )' "$log/check.log" | tail -12
  grep -h -E 'tests run|passed|failed' "$log"/test_gpu.log "$log"/check-python.log 2>/dev/null | tail -6
  echo "make check exit: $rc ($(( $(date +%s) - start )) s)"
esac
case " $steps " in *" bench "*) ;; *) exit $rc ;; esac
for layout in ncdhw ndhwc; do
  "$newd/convt3d-bench" --device=cuda --suite=all --layout=$layout --budget=0.3 \
    --json="$log/new-$layout.json" >"$log/new-$layout.txt" 2>&1
  "$oldb" --device=cuda --suite=all --layout=$layout --budget=0.3 --no-baselines --no-verify \
    --json="$log/old-$layout.json" >"$log/old-$layout.txt" 2>&1
  echo "== $layout: new (with cuDNN) / old"
  grep -E '^(kernelbench|unet|k4s2p1|k3s2|depthwise|k3s1p1| +cuDNN)' "$log/new-$layout.txt" |
    cut -c1-125 # through rel L2 (the mode and tol columns came in with --dtype/--math)
  grep -E '^(kernelbench|unet|k4s2p1|k3s2|depthwise|k3s1p1)' "$log/old-$layout.txt" | cut -c1-80
done
"$newd/convt3d-bench" --device=cuda --suite=all -v --no-baselines --no-verify --reps=1 \
  --warmup=0 >"$log/new-verbose.txt" 2>&1
echo "total $(( $(date +%s) - start )) s"
exit $rc
