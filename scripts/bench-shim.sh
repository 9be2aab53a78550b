#!/usr/bin/env bash
# The shim's bar: a cudaenv shim costs at most 0.3 ms more than a C program
# that only execs the same tool, measured side by side in one run.
#
# Builds that exec-only program with cc (dynamically linked with the C
# library, as any program a shim could be), then times, interleaved
# (scripts/bench-spawn.py: one run of each per round, medians, the spread
# between blocks of rounds as the noise), the benchmark store's fake `nvcc`
#   1. run directly,
#   2. through the exec-only C program,
#   3. through the cudaenv shim,
#   4. through the shim of each other build named in BENCH_VARIANTS
#      ("label=/path/to/cudaenv ..."), to see what a start-up setting is
#      worth against the same floor in the same rounds.
# All with the version's variables already set (as in a shell where the hook
# activated it), so every run of nvcc gets the same environment and the
# differences are the wrappers' own. Exits 1 when the bar (3 over 2, at most
# SHIM_BAR_MS, default 0.3) is not met.
#
# Usage: cargo build --profile dist && scripts/bench-shim.sh
# Needs: python3, cc (and binutils, valgrind for the line on src/activation/shims/shim-path.ld). CUDAENV_BIN: the build (default target/dist/cudaenv);
# SPAWN_ROUNDS: rounds (default 2000); SPAWN_BLOCKS: blocks (default 5). As
# root, runs at real-time priority where allowed (BENCH_NO_RT=1 turns it off).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench-store.sh
. "$here/bench-store.sh"
bench_realtime "$0" "$@"
bench_binary "cargo build --profile dist"
rounds=${SPAWN_ROUNDS:-2000}
limit=${SHIM_BAR_MS:-0.3}
command -v cc >/dev/null || { echo "cc not found: it builds the exec-only program" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-bench-shim.XXXXXX")
trap 'rm -rf "$work"' EXIT

bench_store "$bin" "$work" || exit 1
nvcc=$v/bin/nvcc
printf '#include <unistd.h>\nint main(int c, char **v) { (void)c; execv("%s", v); return 127; }\n' \
  "$nvcc" >"$work/exec-only.c"
cc -O2 -o "$work/exec-only" "$work/exec-only.c"

eval "$("$bin" env --shell bash bench)"
cmds=("$nvcc --version" "$work/exec-only --version" "$CUDAENV_ROOT/shims/nvcc --version")
labels=(direct "exec-only C program" "cudaenv shim")
for variant in ${BENCH_VARIANTS-}; do
  label=${variant%%=*}
  mkdir -p "$work/variants/$label"
  ln "${variant#*=}" "$work/variants/$label/nvcc" 2>/dev/null || cp "${variant#*=}" "$work/variants/$label/nvcc"
  cmds+=("$work/variants/$label/nvcc --version")
  labels+=("shim of $label")
done

# A wrapper that fails fast would look cheap: each must print what nvcc does.
want=$("$nvcc" --version)
for c in "${cmds[@]}"; do
  # shellcheck disable=SC2086 # a command line: split into words on purpose
  got=$($c 2>&1) || true
  [ "$got" = "$want" ] || { printf '%s printed %q, not %q\n' "$c" "$got" "$want" >&2; exit 1; }
done

echo "machine: $(nproc) CPUs, $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg); real-time priority: ${BENCH_IN_RT:-0}"
echo "binary: $bin ($("$bin" --version))"
if command -v readelf >/dev/null && command -v nm >/dev/null; then
  CUDAENV_BIN=$bin bash "$here/shim-order.sh" --check 2>&1 || true
fi
echo "rounds: $rounds in ${SPAWN_BLOCKS:-5} blocks; medians, each against direct [lowest, highest block]:"
status=0
python3 "$here/bench-spawn.py" --bar 1 2 "$limit" "$rounds" "${cmds[@]}" >"$work/out" || status=$?
# Name the lines by what they run rather than by the temporary paths.
i=0
while IFS= read -r line; do
  if [ "$i" -lt "${#cmds[@]}" ]; then
    printf '%s  %s\n' "${line%%  "${cmds[$i]}"}" "${labels[$i]}"
  else
    printf '%s\n' "${line/command 3 over command 2/shim over the exec-only program}"
  fi
  i=$((i + 1))
done <"$work/out"
exit "$status"
