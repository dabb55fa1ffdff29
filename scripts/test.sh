#!/usr/bin/env bash
# Set up the environment (first run only) and run the whole test suite, offline.
# Extra arguments go to pytest (e.g. -k calculator).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/env.sh"
cd "$root"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_EVALUATE_OFFLINE=1
export HF_DATASETS_DISABLE_PROGRESS_BARS=1 MPLBACKEND=Agg
exec python -m pytest -n 2 "$@"
