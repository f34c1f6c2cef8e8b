#!/usr/bin/env bash
# The prepared check for a session that is lent a GPU (one command, about 6-10 minutes on an
# H200): the CUDA check script at E=8192, then the tests whose CUDA paths only run on a device
# (graphs, the conditional node, torch.cuda.graph + registered(), streams). Run it from the
# repository root after `pip install -e ".[dev]"` (torch with CUDA for the torch tests);
# results go to $OUT (or ./gpu_session) as text files.
set -u
out="${OUT:-gpu_session}"
mkdir -p "$out"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
for section in generators courses capture sensors min_time envs; do
    timeout 200 python benchmarks/cuda_check.py --E 8192 --calls 3 --only "$section" \
        >> "$out/cuda_check.txt" 2>&1
    echo "cuda_check $section rc=$?" | tee -a "$out/summary.txt"
done
# per_env vs per_item at E=8192: bitwise equality on the GPU and the numbers that pick the
# default layout (kernel_layout="auto")
timeout 200 python benchmarks/cuda_check.py --E 8192 --calls 3 --only layouts \
    >> "$out/cuda_check.txt" 2>&1
echo "cuda_check layouts rc=$?" | tee -a "$out/summary.txt"
timeout 90 python benchmarks/generate.py --E 8192 --calls 3 --generators bezier polar circuit --profile \
    > "$out/generate_profile.txt" 2>&1
echo "generate --profile rc=$?" | tee -a "$out/summary.txt"
timeout 240 python -m pytest -q -x -p no:cacheprovider \
    tests/course/test_capture_rules.py tests/test_interop_torch.py \
    tests/course/test_ingraph_recipe.py tests/course/test_course_gates.py \
    tests/pipeline/test_real_widths.py \
    > "$out/pytest_cuda.txt" 2>&1
echo "pytest rc=$?" | tee -a "$out/summary.txt"
tail -n 25 "$out/cuda_check.txt" "$out/pytest_cuda.txt"
