#!/usr/bin/env bash
# What each part of a shim's path costs, and what the floors below it are.
#
# Times, interleaved (scripts/bench-spawn.py), the fake `nvcc` of the
# benchmark store run directly and through:
#   - three exec-only programs (the floors for any shim that is a program):
#     one without the C library (a raw execve; x86_64 only), one statically
#     and one dynamically linked with glibc;
#   - the cudaenv shim stopped by its benchmark probe at each stage of its
#     path (src/activation/shims/probe.rs: 0 = the top of main, before any work; 5 = the
#     program found), then exec'ing nvcc with the environment it was given;
#   - the complete shim.
# All with the version's variables set beforehand, so every run of nvcc gets
# the same environment and the differences are the wrappers' own.
#
# Usage: cargo build --profile dist --features shim-probe
#        CUDAENV_BIN=target/dist/cudaenv scripts/bench-shim-stages.sh
# Needs: a dist build with the `shim-probe` feature, python3, cc (for the
# floors). SPAWN_ROUNDS sets the rounds (default 1500). As root, runs at
# real-time priority (BENCH_NO_RT=1 turns that off).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench-store.sh
. "$here/bench-store.sh"
bench_realtime "$0" "$@"
bench_binary "cargo build --profile dist --features shim-probe"
rounds=${SPAWN_ROUNDS:-1500}

work=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-bench-stages.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A probe build execs CUDAENV_PROBE_EXEC at stage 0; any other build ignores
# the variables (and `cudaenv` rejects the unknown argument).
if [ "$(CUDAENV_PROBE_STAGE=0 CUDAENV_PROBE_EXEC=/bin/echo "$bin" probe-check 2>/dev/null)" != probe-check ]; then
  echo "$bin has no benchmark probe: build it with --features shim-probe" >&2
  exit 2
fi

bench_store "$bin" "$work" || exit 1
nvcc=$v/bin/nvcc

floors=()
if command -v cc >/dev/null; then
  printf '#include <unistd.h>\nint main(int c, char **v) { (void)c; execv("%s", v); return 127; }\n' \
    "$nvcc" >"$work/floor.c"
  cc -O2 -o "$work/floor-dynamic" "$work/floor.c"
  if cc -O2 -static -o "$work/floor-static" "$work/floor.c" 2>/dev/null; then
    floors+=("$work/floor-static --version")
  fi
  floors+=("$work/floor-dynamic --version")
  if [ "$(uname -m)" = x86_64 ]; then
    cat >"$work/floor-nolibc.c" <<EOC
static long sys3(long n, long a, long b, long c) {
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return r;
}
__attribute__((force_align_arg_pointer)) void start_c(long *sp) {
  char **argv = (char **)(sp + 1);
  sys3(59, (long)"$nvcc", (long)argv, (long)(argv + sp[0] + 1)); /* execve */
  sys3(231, 127, 0, 0);                                           /* exit_group */
}
__asm__(".globl _start\n_start:\n mov %rsp, %rdi\n and \$-16, %rsp\n call start_c\n");
EOC
    if cc -O2 -nostdlib -static -o "$work/floor-nolibc" "$work/floor-nolibc.c" 2>/dev/null; then
      floors=("$work/floor-nolibc --version" "${floors[@]}")
    fi
  fi
fi

eval "$("$bin" env --shell bash bench)"
shim=$CUDAENV_ROOT/shims/nvcc
cmds=("$nvcc --version" "${floors[@]}")
for stage in 0 1 2 3 4 5; do
  cmds+=("CUDAENV_PROBE_STAGE=$stage CUDAENV_PROBE_EXEC=$nvcc $shim --version")
done
cmds+=("$shim --version")

echo "machine: $(nproc) CPUs, $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg); rounds: $rounds"
echo "work directory $work (printed as WORK); medians, each against the first line:"
python3 "$here/bench-spawn.py" "$rounds" "${cmds[@]}" | sed "s|$work|WORK|g"
