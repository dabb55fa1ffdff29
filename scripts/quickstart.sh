#!/usr/bin/env bash
# Set up the environment (first run only) and run the main job on the built-in default:
# Calculator from the DCFG distribution, homogenized on `length`; prints the before/after
# histogram with KL-to-uniform figures and writes a Hub-layout dataset folder.
# Extra arguments go to `hf-synthsample quickstart` (e.g. --variable num_ops --out my-folder).
# An existing output folder is never replaced unless you pass --overwrite, and even then only a
# folder hf-synthsample wrote (it holds a .hf-synthsample file) is replaced; any other folder is
# refused with a message (delete it yourself, or choose another --out).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/env.sh"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}"
exec hf-synthsample quickstart "$@"
