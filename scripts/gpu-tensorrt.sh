#!/bin/bash
# `cudaenv verify`'s TensorRT check (builder, then an engine built, run and compared
# with the host) on a GPU machine that reaches no registry (docs/verify.md, "TensorRT").
# The only TensorRT pypi.org serves as a binary is the 8.5/8.6 `tensorrt` wheel (10.x
# and later come from NVIDIA's index), so this runs TensorRT 8.6.0, as the earlier run
# of the builder check did: its libraries beside the machine's CUDA 13 wheels.
#
#   scripts/gpu-tensorrt.sh prepare DIR   here, with network: DIR gets the
#       `tensorrt==8.6.0` wheel (about 820 MB; its libraries do not depend on the
#       Python it names), this script and `cudaenv` (the one on PATH, or $CUDAENV).
#   DIR/gpu-tensorrt.sh run DIR           there: unpacks the wheel into a
#       site-packages next to a copy of the CUDA 13 wheels of $TORCH_SITE (default
#       the machine's PyTorch venv), links it as a version and verifies it three times
#       (twice as text, once as --json), then with `--device` pointing past the GPUs.
# Outputs go to $OUT (or DIR/out).
set -u
mode=${1:?prepare or run}; D=$(mkdir -p "${2:?DIR}" && cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
case $mode in
prepare)
  C=${CUDAENV:-$(command -v cudaenv)}
  cp "$C" "$D/cudaenv" && cp "$here/gpu-tensorrt.sh" "$D/"
  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.10 \
    --implementation cp --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$D/wheels" "tensorrt==8.6.0" || exit
  (cd "$D/wheels" && sha256sum ./*.whl > SHA256SUMS && cat SHA256SUMS)
  du -sh "$D/wheels"
  exit ;;
run) ;;
*) echo "usage: $0 prepare|run DIR" >&2; exit 2 ;;
esac
O=${OUT:-$D/out}; mkdir -p "$O"
B=$D/cudaenv; chmod +x "$B"
TS=${TORCH_SITE:-/opt/torch/.venv/lib/python3.12/site-packages}
export CUDAENV_ROOT=$D/root HOME=$D/home NO_COLOR=1; mkdir -p "$HOME"
say() { printf '\n$ %s\n' "$*"; }
(cd "$D/wheels" && sha256sum -c --quiet SHA256SUMS) && echo "wheel: matches SHA256SUMS"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
V=$D/trtvenv; S=$V/lib/python3.12/site-packages
if [ ! -e "$S/tensorrt/libnvinfer.so.8" ]; then
  mkdir -p "$S" || exit
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
    "$D"/wheels/tensorrt-8.6.0-*.whl "$S" || exit
  for p in nvidia_cuda_runtime nvidia_cublas nvidia_cudnn nvidia_nccl nvidia_cusparselt; do
    cp -a "$TS"/"$p"*.dist-info "$S/" || exit
  done
  cp -a "$TS/nvidia" "$S/" || exit
fi
ls "$S/tensorrt" | grep '^lib'
say cudaenv link trt86 "$V"; "$B" link trt86 "$V" 2>&1
for i in 1 2; do
  say cudaenv verify trt86; "$B" verify trt86 > "$O/verify-$i.txt" 2>&1; echo "exit $?"
  cat "$O/verify-$i.txt"
done
say cudaenv verify trt86 --json
"$B" verify trt86 --json > "$O/verify.json" 2> "$O/verify-json.err"; echo "exit $?"
python3 -c 'import json, sys; v = json.load(open(sys.argv[1])); print(json.dumps(v["probe"]["tensorrt"] if "probe" in v else v["tensorrt"])); print("problems:", v["problems"], "warnings:", v["warnings"], "wall", v["wall_seconds"])' "$O/verify.json"
say cudaenv verify trt86 --device 7; "$B" verify trt86 --device 7 2>&1 | grep -E "TensorRT|error|warning"; echo "exit ${PIPESTATUS[0]}"
