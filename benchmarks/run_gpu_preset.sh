#!/usr/bin/env bash
# Run one paper example's --gpu preset on a GPU machine, under `timeout`, and keep its tables in a
# dated results folder that docs/reproductions.md can cite (results.md, the tables' .md/.json/.png,
# runs.json, the log, the machine and the exact command).
#
#   benchmarks/run_gpu_preset.sh zhou            # Zhou et al. Figure 2 at SCAN* L = 31, 62
#   benchmarks/run_gpu_preset.sh karel           # Shin et al. Karel Table 1 at 10,000 programs
#   benchmarks/run_gpu_preset.sh cogs            # cartography on COGS gen with the paper's model size
#   benchmarks/run_gpu_preset.sh oren --init warm:DIR   # Oren et al. Table 5 at 2K with the larger warm start
#   benchmarks/run_gpu_preset.sh cogs --seeds 1 --data-seed 1    # any flag of the example overrides the preset
#   RESULTS=$OUT benchmarks/run_gpu_preset.sh karel              # on a lent machine: the folder that comes back
#
# Copy the dated folder to benchmarks/results/gpu/ and commit it; docs/reproductions.md cites its README.md.
#
# Each preset is sized to finish in under 8 minutes on one H100 (the estimate is in the example's
# docstring). Environment: GPU_TIMEOUT (seconds before the run is stopped, default 540: the preset
# plus a margin, inside a 10-minute device slot), RESULTS (parent folder, default benchmarks/results/gpu),
# PYTHON (default python), PRESET (the example's preset flag, default gpu; `tiny` checks this script on a
# CPU in seconds). Exit status: the example's (124: stopped by the timeout; whatever the run
# wrote before that is kept, and the README says so).
set -u

usage() { echo "usage: $0 {zhou|karel|cogs|oren} [flags of the example]" >&2; exit 2; }
[ $# -ge 1 ] || usage
case "$1" in
  zhou|zhou_scan) script=zhou_scan ;;
  karel|karel_io) script=karel_io ;;
  cogs|cartography|cartography_cogs) script=cartography_cogs ;;
  oren|oren_schema2qa) script=oren_schema2qa ;;
  *) echo "error: unknown example '$1' (zhou, karel, cogs or oren)" >&2; usage ;;
esac
shift
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
limit=${GPU_TIMEOUT:-540}
case "$limit" in ''|*[!0-9]*) echo "error: GPU_TIMEOUT must be a number of seconds, got '$limit'" >&2; exit 2 ;; esac
python=${PYTHON:-python}
preset=${PRESET:-gpu}
case "$preset" in ''|*[!a-z0-9-]*) echo "error: PRESET must be a preset name such as gpu or tiny, got '$preset'" >&2; exit 2 ;; esac
stamp=$(date -u +%Y-%m-%dT%H-%M-%SZ)
out="${RESULTS:-benchmarks/results/gpu}/$script-$preset-$stamp"
if [ -e "$out" ]; then echo "error: $out exists" >&2; exit 2; fi
mkdir -p "$out" || exit 2
command=(examples/"$script".py --"$preset" --out "$out" "$@")

export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 \
       HF_DATASETS_DISABLE_PROGRESS_BARS=1 MPLBACKEND=Agg TOKENIZERS_PARALLELISM=false
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
  echo "host: $(hostname), $(nproc --all) CPU cores"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /' \
    || echo "gpu: none found (nvidia-smi failed)"
  "$python" -c 'import torch, transformers; print(f"torch {torch.__version__} (CUDA {torch.version.cuda}, available: {torch.cuda.is_available()}), transformers {transformers.__version__}")' 2>&1
} > "$out/machine.txt"
cat "$out/machine.txt"

start=$(date +%s)
timeout --signal=TERM --kill-after=30 "$limit" "$python" "${command[@]}" > >(tee "$out/log.txt") 2>&1
rc=$?
wall=$(( $(date +%s) - start ))
# the Trainer's scratch folders (no checkpoints are saved; recorded dynamics of the data-map run) stay out
rm -rf "$out/runs" "$out/checkpoints"

status="finished (exit status 0)"
[ $rc -eq 124 ] && status="STOPPED by the ${limit}-second timeout: the tables below are missing or partial"
[ $rc -ne 0 ] && [ $rc -ne 124 ] && status="FAILED (exit status $rc): see log.txt"
{
  echo "# \`$script --$preset\`: $status"
  echo
  echo "Command: \`$python ${command[*]}\` (run by \`benchmarks/run_gpu_preset.sh\`, timeout ${limit} s)."
  echo "Wall time: ${wall} s."
  echo
  echo '```'
  cat "$out/machine.txt"
  echo '```'
  echo
  if [ -f "$out/results.md" ]; then cat "$out/results.md"; else echo "No results.md was written."; fi
} > "$out/README.md"
echo "results: $out/README.md ($status, ${wall} s)"
exit $rc
