#!/bin/bash
# Plain `tensorflow` (no `[and-cuda]`, so no NVIDIA wheels) on a cudaenv stack, on a GPU
# machine that reaches no registry (docs/frameworks.md, "TensorFlow on a cudaenv stack").
#
#   scripts/gpu-tensorflow.sh prepare DIR [VERSION]   here, with network: DIR gets the
#       stack's mirror (`cudaenv mirror --for tensorflow==VERSION`), TensorFlow's wheels for
#       CPython 3.12 (`pip download`, its dependencies included), this script, the check and
#       `cudaenv` (the one on PATH, or $CUDAENV).
#   DIR/gpu-tensorflow.sh run DIR [VERSION]           there: installs the stack from the
#       mirror with every proxy pointing at a closed port, makes a fresh venv, installs
#       TensorFlow from the wheels alone, pins the stack in a project and runs the check
#       under `cudaenv exec`, under the bash hook and under `cudaenv trace`; then with
#       nothing active, and pipes TensorFlow's messages into `cudaenv explain`.
# Outputs go to $OUT (or DIR/out).
set -u
mode=${1:?prepare or run}; D=$(mkdir -p "${2:?DIR}" && cd "$2" && pwd); V=${3:-2.21.0}
here=$(cd "$(dirname "$0")" && pwd)
case $mode in
prepare)
  C=${CUDAENV:-$(command -v cudaenv)}
  cp "$C" "$D/cudaenv" && cp "$here/gpu-tensorflow.sh" "$here/gpu_tf_check.py" "$D/"
  "$C" mirror "$D/mirror" --for "tensorflow==$V" || exit
  python3 -m pip download --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any \
    -d "$D/wheels" "tensorflow==$V" || exit
  du -sh "$D/mirror" "$D/wheels"
  exit ;;
run) ;;
*) echo "usage: $0 prepare|run DIR [VERSION]" >&2; exit 2 ;;
esac
O=${OUT:-$D/out}; mkdir -p "$O"
B=$D/cudaenv; chmod +x "$B"; T=$D/gpu_tf_check.py
export CUDAENV_ROOT=$D/root HOME=$D/home NO_COLOR=1 PYTHONUNBUFFERED=1; mkdir -p "$HOME"
export http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9
export CUDAENV_PYPI_INDEX=file://$D/mirror/pypi/simple CUDAENV_NVIDIA_MIRROR=file://$D/mirror/nvidia
say() { printf '\n$ %s\n' "$*"; }
(cd "$D/mirror" && sha256sum -c --quiet SHA256SUMS) && echo "mirror: every file matches SHA256SUMS"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
say cudaenv compat "tensorflow==$V"; "$B" compat "tensorflow==$V"
say cudaenv install --for "tensorflow==$V"; "$B" install --for "tensorflow==$V" 2>&1 | tail -n 3
V_=$D/venv
if [ ! -x "$V_/bin/python" ]; then
  python3 -m venv "$V_" 2>/dev/null || python3 -m venv --without-pip "$V_"
  if [ -x "$V_/bin/pip" ]; then PIP="$V_/bin/python -m pip"; else PIP="python3 -m pip --python $V_/bin/python"; fi
  $PIP install -q --no-index --find-links "$D/wheels" --no-compile "tensorflow==$V" || exit
fi
P=$D/project; mkdir -p "$P"; cd "$P" || exit
say cudaenv local --for "tensorflow==$V"; "$B" local --for "tensorflow==$V"
say cudaenv exec -- python gpu_tf_check.py
"$B" exec -- "$V_/bin/python" "$T" > "$O/tf-exec.txt" 2>&1; echo "exit $?"
grep -E "^(tensorflow|built|GPUs|device:|matmul|conv2d|RESULT)|Loaded cuDNN" "$O/tf-exec.txt"
say 'bash -i: eval "$(cudaenv init bash)"; cd project; python gpu_tf_check.py'
printf 'eval "$(%s init bash)"\ncd %s\n:\n:\necho "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"\n%s %s 2>&1\nexit\n' "$B" "$P" "$V_/bin/python" "$T" |
  (cd / && bash --norc --noprofile -i) > "$O/tf-hook.txt" 2>&1
grep -E "^(LD_LIBRARY_PATH|GPUs|matmul|conv2d|RESULT)" "$O/tf-hook.txt"
say cudaenv trace -- python gpu_tf_check.py
"$B" trace -- "$V_/bin/python" "$T" > "$O/tf-trace.txt" 2>&1; echo "exit $?"
grep -E "^(trace:|pid |  lib|      /|note:)" "$O/tf-trace.txt"
cd "$D" || exit
say 'python gpu_tf_check.py   # nothing active'
env -u LD_LIBRARY_PATH "$V_/bin/python" "$T" > "$O/tf-bare.txt" 2>&1; echo "exit $?"
grep -v -E "oneDNN|cpu_feature_guard|To enable the following|absl::InitializeLog" "$O/tf-bare.txt"
say 'TF_CPP_VMODULE=dso_loader=1 python gpu_tf_check.py   # nothing active'
env -u LD_LIBRARY_PATH TF_CPP_VMODULE=dso_loader=1 "$V_/bin/python" "$T" > "$O/tf-bare-v.txt" 2>&1; echo "exit $?"
grep -E "Could not load dynamic library" "$O/tf-bare-v.txt"
say 'python gpu_tf_check.py 2>&1 | cudaenv explain'; "$B" explain < "$O/tf-bare.txt"
say 'TF_CPP_VMODULE=dso_loader=1 python gpu_tf_check.py 2>&1 | cudaenv explain'; "$B" explain < "$O/tf-bare-v.txt"
