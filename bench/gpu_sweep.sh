#!/usr/bin/env bash
# Times kernel variants of the CUDA backend, one convt3d-bench run each, and
# prints one line per variant: the kernel convt3d chose, its median time and
# its verification.  For tuning the planner's rules on a GPU machine (see
# bench/NOTES.md); not part of make check.
#
#   bench/gpu_sweep.sh BENCH LIST [OUTDIR]
#
# BENCH is the convt3d-bench binary.  Each line of LIST is
#   LABEL  [VAR=VALUE ...]  -- BENCH-ARGUMENTS
# e.g.  kb_default  -- --suite=kernelbench
#       kb_tz4      CONVT3D_CUDA_TILE=12,4,4,1,8  -- --suite=kernelbench
# Blank lines and lines starting with # are skipped.  Every run gets
# --device=cuda --no-baselines --json (into OUTDIR, default a temporary
# directory); the bench's own verification stays on unless the line says
# --no-verify.
set -uo pipefail
bench=${1:?usage: gpu_sweep.sh BENCH LIST [OUTDIR]}
list=${2:?usage: gpu_sweep.sh BENCH LIST [OUTDIR]}
out=${3:-$(mktemp -d)}
mkdir -p "$out"
printf '%-28s %-34s %10s %10s  %s\n' variant kernel median_ms min_ms check
while read -r line; do
  case $line in ''|'#'*) continue ;; esac
  label=${line%% *}
  rest=${line#"$label"}
  envs=${rest%%--*}
  args=${rest#*--}
  json="$out/$label.json"
  # shellcheck disable=SC2086 # the variables and arguments are meant to split
  if ! env $envs "$bench" --device=cuda --no-baselines --json="$json" $args >"$out/$label.log" 2>&1; then
    printf '%-28s %s\n' "$label" "FAILED (exit $?): $(tail -n 3 "$out/$label.log" | tr '\n' ' ')"
    continue
  fi
  python3 - "$json" "$label" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
for case in j["cases"]:
    for dev in case.get("devices", []):
        for impl in dev.get("impls", []):
            if impl.get("baseline") or impl.get("state") != "ok":
                continue
            t, v = impl["time"], impl.get("verification") or {}
            check = ("ok %.1e" % v["rel_l2"]) if v.get("checked") and v.get("ok") else \
                    ("MISMATCH %s" % v.get("rel_l2")) if v.get("checked") else "unchecked"
            print("%-28s %-34s %10.4f %10.4f  %s" % (sys.argv[2], impl.get("detail", "")[:34],
                                                   t["median_ms"], t["min_ms"], check))
EOF
done <"$list"
