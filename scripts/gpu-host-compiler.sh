#!/bin/bash
# The host-compiler run on a GPU machine (docs/install.md, "The host compiler"):
# a stack's nvcc against the machine's compilers, then with
# CUDAENV_HOST_COMPILER=auto, and the kernel it builds run on the GPU.
#
# Copy it into a directory holding: `cudaenv` (a dist build), `cuda-11.8/` (Debian
# bookworm's CUDA 11.8 compiler as tests/e2e/host_compiler.rs lays it out,
# with bin/nvcc.profile, include/, libdevice/, and in lib64/
# libcudart_static.a, libcudadevrt.a and PyPI's libcudart.so.11.0) and
# `gcc11/` (Debian bookworm's cpp-11, gcc-11, g++-11, gcc-11-base,
# libgcc-11-dev and libstdc++-11-dev, unpacked with dpkg-deb -x). GPU machines
# reach no registry: pack these here and carry them over. Then run it there.
W=$(cd "$(dirname "$0")" && pwd)
export CUDAENV_ROOT=$W/root HOME=$W/home NO_COLOR=1
mkdir -p "$HOME" "$W/work"
C=$W/cudaenv
say() { printf '\n$ %s\n' "$*"; }
say cudaenv link cuda118 "$W/cuda-11.8"; $C link cuda118 "$W/cuda-11.8" 2>&1 | tail -3
cd "$W/work"
cat > k.cu <<'K'
#include <cstdio>
__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
int main() {
  const int n = 1 << 20;
  float *x, *y;
  cudaMallocManaged(&x, n * sizeof(float)); cudaMallocManaged(&y, n * sizeof(float));
  for (int i = 0; i < n; i++) { x[i] = 1.0f; y[i] = 2.0f; }
  saxpy<<<(n + 255) / 256, 256>>>(n, 3.0f, x, y);
  cudaError_t e = cudaDeviceSynchronize();
  int bad = 0; for (int i = 0; i < n; i++) bad += (y[i] != 5.0f);
  cudaDeviceProp p; cudaGetDeviceProperties(&p, 0);
  printf("%s (sm_%d%d): %s, %d of %d wrong\n", p.name, p.major, p.minor, cudaGetErrorString(e), bad, n);
  return e != cudaSuccess || bad != 0;
}
K
echo cuda118 > .cuda-version
say "g++ --version | head -1"; g++ --version | head -1
say "cudaenv doctor  (the host-compiler finding)"; $C doctor 2>&1 | grep -i -A2 "compiler" | head -8
say "cudaenv exec -- nvcc -arch=sm_90 k.cu -o k   (this machine's default g++ 13)"
$C exec -- nvcc -arch=sm_90 k.cu -o k 2>&1 | tail -3; echo "[exit ${PIPESTATUS[0]}]"
export PATH=$W/gcc11/usr/bin:$PATH
say "CUDAENV_HOST_COMPILER=auto cudaenv exec -- nvcc -arch=sm_90 k.cu -o k   (Debian's g++-11 on PATH)"
CUDAENV_HOST_COMPILER=auto $C exec -- nvcc -arch=sm_90 k.cu -o k 2>&1 | tail -3; echo "[exit ${PIPESTATUS[0]}]"
say ./k; ./k; echo "[exit $?]"
say "CUDAENV_HOST_COMPILER=auto cudaenv env --shell bash | grep -E 'NVCC|CUDAHOSTCXX'"
CUDAENV_HOST_COMPILER=auto $C env --shell bash 2>&1 | grep -E "NVCC|CUDAHOSTCXX|host"
