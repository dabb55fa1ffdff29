#!/usr/bin/env bash
# Create (or reuse) the project's virtual environment and install hf-synthsample into it.
#
#   HF_SYNTHSAMPLE_VENV        where the environment lives            [.venv]
#   HF_SYNTHSAMPLE_TORCH       the torch requirement to install first  [torch==2.13.0]
#                              (a CPU machine gets the CPU wheel it has; GPU users set e.g.
#                              "torch==2.13.0" together with HF_SYNTHSAMPLE_TORCH_INDEX)
#   HF_SYNTHSAMPLE_TORCH_INDEX optional --index-url for torch (e.g. a CUDA wheel index)
#   PYTHON                     the interpreter that creates the venv   [python3]
#
# Sourced by scripts/quickstart.sh and scripts/test.sh; prints nothing but pip errors when the
# environment is already up to date.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${HF_SYNTHSAMPLE_VENV:-$root/.venv}"
torch_req="${HF_SYNTHSAMPLE_TORCH:-torch==2.13.0}"
torch_index="${HF_SYNTHSAMPLE_TORCH_INDEX:-}"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
  echo "creating virtual environment $venv" >&2
  "$python" -m venv "$venv"
fi
stamp="$venv/.hf-synthsample-stamp"
want="$("$python" -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest()[:16])' "$root/pyproject.toml") $torch_req $torch_index"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "installing hf-synthsample and its dependencies into $venv" >&2
  pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
  "${pip[@]}" install --upgrade pip >/dev/null 2>&1 || true
  # torch first, from the requested source; then pin it with a constraint so that nothing
  # that follows (transformers, accelerate, ...) can swap it for a multi-GB CUDA build.
  if [ -n "$torch_index" ]; then
    "${pip[@]}" install "$torch_req" --index-url "$torch_index"
  else
    "${pip[@]}" install "$torch_req"
  fi
  constraints="$(mktemp)"
  "$venv/bin/python" -c "import importlib.metadata as m; print('torch==' + m.version('torch').split('+')[0])" >"$constraints"
  PIP_CONSTRAINT="$constraints" "${pip[@]}" install -e "$root[dev,all]" 2>&1 | grep -v "^WARNING: Location" || true
  rm -f "$constraints"
  "$venv/bin/python" -c "import hf_synthsample, datasets, transformers, torch" # fail loudly if broken
  echo "$want" >"$stamp"
fi
export PATH="$venv/bin:$PATH"
export VIRTUAL_ENV="$venv"
