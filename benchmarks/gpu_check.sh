#!/usr/bin/env bash
# GPU check of the training path (issue 33): the training-path tests with CUDA visible, then the
# callback-overhead benchmark at GPU size (BART d512 6+6, 4,096 COGS rows, batch 64), in under
# 8 minutes on one H100 (each step has a time limit: 200 + 150 + 80 s after a ~30 s install).
# The suite never runs on a GPU otherwise; run this whenever one is lent.
#
#   benchmarks/gpu_check.sh prepare   # here (CPU, network to PyPI): wheels into .whl/, COGS into .gpu-data/
#   benchmarks/gpu_check.sh run       # on the GPU machine, from the repository root (carry .whl and .gpu-data)
#   benchmarks/gpu_check.sh dry-run   # here: the same steps at toy size on the CPU, to check this script
#
# The GPU machine has torch, transformers, accelerate, pyarrow, sacrebleu and pytest-xdist but not
# datasets, dill, multiprocess, evaluate or trl, and its peft (0.21.0) fails seq2seq LoRA: `prepare`
# downloads the versions this checkout is tested with (../shared/GPU.md). It cannot reach
# ../shared, so `prepare` copies COGS train.tsv (4 MB) into the ignored folder .gpu-data/.
# Logs go to $OUT (the device runner's output folder) when it is set, else to /tmp/gpu-check-logs/.
set -euo pipefail

MODE="${1:-run}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
LOGS="${OUT:-${TMPDIR:-/tmp}/gpu-check-logs}"
DATA="$ROOT/.gpu-data/cogs/train.tsv"
# the training-path tests: every test that trains a model (the first GPU run took 65 s with -n 8)
TESTS=(tests/test_cartography_track.py tests/test_cartography_callback.py tests/test_training_dynamics.py
       tests/test_models_seq2seq.py tests/test_models_lstm.py tests/test_models_fit_stop.py
       tests/test_cartography_directions.py tests/test_cartography_resume_parallel.py
       tests/test_cartography_ids.py tests/test_user_path.py tests/test_causal_lm.py tests/test_rl_curriculum.py)
BENCH=(benchmarks/bench_cartography.py --device cuda --data "$DATA" --num-examples 4096 --epochs 2
       --batch-size 64 --d-model 512 --layers 6 --repeats 1 --bleu-examples 128 --sync-steps 8)

export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 \
       HF_DATASETS_DISABLE_PROGRESS_BARS=1 MPLBACKEND=Agg PYTHONUNBUFFERED=1

case "$MODE" in
prepare)
    grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
    grep -qx '/.gpu-data/' .git/info/exclude 2>/dev/null || echo '/.gpu-data/' >> .git/info/exclude
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .whl \
        datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 evaluate==0.4.6 fsspec==2026.9.0 \
        transformers==5.24.0 trl==1.16.0 peft==0.21.2 sqlglot==30.31.0 lark==1.3.1
    mkdir -p "$(dirname "$DATA")"
    cp ../shared/data/cogs/train.tsv "$DATA"
    du -sh .whl .gpu-data
    echo "prepared: carry .whl and .gpu-data to the GPU machine, then run: benchmarks/gpu_check.sh run"
    ;;
run)
    [ -f "$DATA" ] || { echo "gpu_check: $DATA is missing; run 'benchmarks/gpu_check.sh prepare' first" >&2; exit 2; }
    ls .whl/*.whl > /dev/null 2>&1 || { echo "gpu_check: no wheels in .whl/; run 'benchmarks/gpu_check.sh prepare' first" >&2; exit 2; }
    mkdir -p "$LOGS"
    start=$(date +%s)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH="/tmp/site:$ROOT/src${PYTHONPATH:+:$PYTHONPATH}"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$LOGS/gpu.txt"
    python3 -c "import torch, transformers, peft, datasets; assert torch.cuda.is_available(), 'no CUDA';
print('torch', torch.__version__, 'transformers', transformers.__version__, 'peft', peft.__version__,
      'datasets', datasets.__version__, torch.cuda.get_device_name(0))" | tee -a "$LOGS/gpu.txt"
    # CUDA stays visible: the tests that pass use_cpu=True still run with autograd's device threads
    # started, which is what broke the forking two-process tests (they spawn now)
    timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 "${TESTS[@]}" 2>&1 | tail -40 | tee "$LOGS/tests.txt" || true
    echo "tests done after $(( $(date +%s) - start )) s" | tee -a "$LOGS/tests.txt"
    timeout 150 python3 "${BENCH[@]}" 2>&1 | grep -v "train_runtime" | tee "$LOGS/bench_cartography.txt" || true
    # the BLEU pass decodes in batches of eval_batch_size (default 8); the same at 64 shows its lever
    timeout 80 python3 "${BENCH[@]}" --eval-batch-size 64 --sync-steps 0 2>&1 | grep -v "train_runtime" \
        | tee "$LOGS/bench_cartography_eval64.txt" || true
    echo "gpu_check: $(( $(date +%s) - start )) s in all; logs in $LOGS"
    ;;
dry-run)
    # the same steps on the CPU at toy size: the test list is collected (every file and test must
    # exist) and the benchmark runs end to end, the host-sync count included
    mkdir -p "$LOGS"
    bash -n "$0"
    data="$DATA"; [ -f "$data" ] || data="$ROOT/../shared/data/cogs/train.tsv"
    python3 -m pytest -q -p no:cacheprovider --collect-only "${TESTS[@]}" | tail -3
    OMP_NUM_THREADS=1 python3 benchmarks/bench_cartography.py --device cpu --data "$data" --num-examples 64 \
        --epochs 1 --batch-size 16 --d-model 32 --layers 1 --repeats 1 --bleu-examples 8 --sync-steps 2 \
        2>&1 | grep -v "train_runtime" | tee "$LOGS/bench_dry_run.txt"
    echo "gpu_check dry-run: ok (the GPU run: ${BENCH[*]})"
    ;;
*)
    echo "usage: benchmarks/gpu_check.sh [prepare|run|dry-run]" >&2
    exit 2
    ;;
esac
