#!/usr/bin/env bash
# Shim and shell-hook benchmark: cudaenv vs pyenv vs mise, side by side, same run.
#
# Measures, with hyperfine (-N: no intermediate shell) and in-shell loops:
#   1. shim overhead: `nvcc --version` through the cudaenv shim minus the same
#      fake nvcc (a /bin/sh script) run directly; pyenv's and mise's shims the
#      same way with `python --version`;
#   2. the prompt hook when nothing changed: the cost of one `_cudaenv_hook`
#      call in bash and zsh (a loop of N calls, timed with $EPOCHREALTIME), and
#      `mise hook-env` with its session variables set (its early exit);
#   3. the hook after a `cd`: `cudaenv hook-env` (what the hook runs when the
#      directory changed) vs `mise hook-env` on a first prompt vs
#      `pyenv version-name`.
#
# Usage: scripts/bench-shell.sh
# Needs: a dist build (cargo build --profile dist; CUDAENV_BIN overrides the
# path), hyperfine, python3 (for medians), bash, zsh. Optional: pyenv (PYENV_ROOT, default ~/.pyenv,
# with one Python installed), mise (MISE_BIN, or `mise` on PATH; e.g.
# `npm install -g @jdxcode/mise-linux-x64`). Missing optional tools are skipped.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench-store.sh
. "$here/bench-store.sh"
# Other processes on a small machine make timings noisy; as root, run the
# whole benchmark (and what it starts) at real-time priority so that the tools
# compared get the CPU when they want it. BENCH_NO_RT=1 turns this off.
bench_realtime "$0" "$@"
bench_binary "cargo build --profile dist"
command -v hyperfine >/dev/null || { echo "hyperfine not found" >&2; exit 2; }
runs=${RUNS:-300}
loop=${LOOP:-2000}

real_home=$HOME
work=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-bench-shell.XXXXXX")
trap 'rm -rf "$work"' EXIT
results=$work/results.md
: >"$results"

say() { printf '==> %s\n' "$*" >&2; }
hf() { # title, then hyperfine arguments
  local title=$1
  shift
  say "$title"
  printf '\n### %s\n\n' "$title" >>"$results"
  ${hf_prefix:-} hyperfine -N --warmup 20 --runs "$runs" --style basic --export-markdown "$work/one.md" \
    --export-json "$work/one.json" "$@" >&2
  cat "$work/one.md" >>"$results"
  # Medians (the goals are stated as medians), and each command's excess over the first.
  python3 - "$work/one.json" >>"$results" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
base = r[0]["median"]
print()
for x in r:
    extra = "" if x is r[0] else f" ({(x['median'] - base) * 1e3:+.2f} ms)"
    print(f"- median `{x['command']}`: {x['median'] * 1e3:.2f} ms{extra}")
PY
}

# --- a store: the version used, four more, and a linked one --------------------
bench_store "$bin" "$work" || exit 1

# --- 1. shims ------------------------------------------------------------------
# Whether this binary keeps the shim's code together (src/activation/shims/shim-path.ld).
if command -v readelf >/dev/null && command -v nm >/dev/null; then
  printf '\n%s\n' "$(CUDAENV_BIN=$bin bash "$here/shim-order.sh" --check 2>&1 || true)" >>"$results"
fi
# The floor for any shim that is a separate program: a C program that only
# execs the real one (one more execve, nothing else).
floor=()
if command -v cc >/dev/null; then
  printf '#include <unistd.h>\nint main(int c, char **v) { (void)c; execv("%s", v); return 127; }\n' \
    "$v/bin/nvcc" >"$work/floor.c"
  cc -O2 -o "$work/nvcc-floor" "$work/floor.c"
  floor=(-n "exec-only C wrapper (floor)" "$work/nvcc-floor --version")
fi
# "direct" runs nvcc the way an activated shell would: with the variables the
# shim would give it (LD_LIBRARY_PATH makes every library lookup of the child
# search the version's lib64 first), so the difference is the shim's own cost.
# The same pair without activation follows.
(
  eval "$("$bin" env --shell bash bench)"
  hf "cudaenv shim: nvcc --version (shim vs direct, both with the version's variables)" \
    -n direct "$v/bin/nvcc --version" \
    -n "cudaenv shim" "$CUDAENV_ROOT/shims/nvcc --version" \
    "${floor[@]}"
)
hf "cudaenv shim: nvcc --version (shim vs direct, no variables set beforehand)" \
  -n direct "$v/bin/nvcc --version" \
  -n "cudaenv shim" "$CUDAENV_ROOT/shims/nvcc --version"

# The same comparison with the runs interleaved (hyperfine runs one command's
# batch, then the other's, so drift between minutes shows up as a difference).
spawn_rounds=${SPAWN_ROUNDS:-1000}
spawn_cmds=("$v/bin/nvcc --version")
[ -x "$work/nvcc-floor" ] && spawn_cmds+=("$work/nvcc-floor --version")
spawn_cmds+=("$CUDAENV_ROOT/shims/nvcc --version")
say "cudaenv shim, interleaved spawns"
{
  printf '\n### cudaenv shim: interleaved spawns (%s rounds; direct, [exec-only floor,] shim)\n\n' "$spawn_rounds"
  printf 'No variables set beforehand:\n\n```\n'
  python3 "$here/bench-spawn.py" "$spawn_rounds" "${spawn_cmds[@]}"
  printf '```\n\nWith the version'"'"'s variables:\n\n```\n'
  (
    eval "$("$bin" env --shell bash bench)"
    python3 "$here/bench-spawn.py" "$spawn_rounds" "${spawn_cmds[@]}"
  )
  printf '```\n'
} >>"$results"

pyenv_root=${PYENV_ROOT:-$real_home/.pyenv}
if [ -x "$pyenv_root/bin/pyenv" ] && [ -n "$(ls "$pyenv_root/versions" 2>/dev/null)" ]; then
  pyver=$(ls "$pyenv_root/versions" | sort -V | tail -1)
  echo "$pyver" >"$proj/.python-version"
  hf "pyenv shim: python --version (shim vs direct, Python $pyver)" \
    -n direct "$pyenv_root/versions/$pyver/bin/python --version" \
    -n "pyenv shim" "env PYENV_ROOT=$pyenv_root $pyenv_root/shims/python --version"
else
  say "pyenv not found at $pyenv_root: skipped"
fi

# mise is multi-threaded, and real-time scheduling distorts it badly (its
# early exit took ~100 ms at SCHED_FIFO, a few ms at normal priority): measure
# it at normal priority, which makes its numbers noisier than the others.
normal=
[ -n "${BENCH_IN_RT-}" ] && normal="chrt -o 0"
mise=${MISE_BIN:-$(command -v mise || true)}
if [ -n "$mise" ] && [ -x "$mise" ]; then
  export MISE_DATA_DIR=$work/mise-data MISE_CONFIG_DIR=$work/mise-config MISE_CACHE_DIR=$work/mise-cache
  export MISE_STATE_DIR=$work/mise-state MISE_YES=1
  mkdir -p "$MISE_DATA_DIR" "$MISE_CONFIG_DIR"
  # A "tool" that is a plain directory with the same fake nvcc, linked into
  # mise under a registry name it accepts (`mise link` needs one).
  mkdir -p "$work/mise-tool/bin"
  cp "$v/bin/nvcc" "$work/mise-tool/bin/nvcc"
  "$mise" link node@99.0.0 "$work/mise-tool" >&2
  printf '[tools]\nnode = "99.0.0"\n' >"$proj/mise.toml"
  "$mise" trust "$proj/mise.toml" >&2
  "$mise" reshim >&2
  if [ -x "$MISE_DATA_DIR/shims/nvcc" ]; then
    hf_prefix=$normal hf "mise shim: nvcc --version (shim vs direct; normal priority)" \
      -n direct "$work/mise-tool/bin/nvcc --version" \
      -n "mise shim" "$MISE_DATA_DIR/shims/nvcc --version"
  else
    say "mise made no nvcc shim: skipped"
  fi
else
  say "mise not found (MISE_BIN or PATH): skipped"
fi

# --- 2. the hook when nothing changed ------------------------------------------
say "hook, nothing changed: $loop calls in bash and zsh"
printf '\n### prompt hook, nothing changed (in-shell loop of %s calls)\n\n' "$loop" >>"$results"
printf '| shell | per call | processes started |\n|:---|---:|---:|\n' >>"$results"
# The hook is timed as the shell runs it; the binary is replaced by a logger
# afterwards to count starts (there must be none).
cat >"$work/hook-bench.bash" <<EOF
eval "\$('$bin' init bash)"
cd '$proj/src/deep'
_cudaenv_hook
[ "\$CUDAENV_ACTIVE" = bench ] || { echo "hook did not activate" >&2; exit 1; }
t0=\$EPOCHREALTIME
for ((i = 0; i < $loop; i++)); do _cudaenv_hook; done
t1=\$EPOCHREALTIME
t2=\$EPOCHREALTIME
for ((i = 0; i < $loop; i++)); do :; done
t3=\$EPOCHREALTIME
echo "\$t0 \$t1 \$t2 \$t3"
EOF
cat >"$work/hook-bench.zsh" <<EOF
zmodload zsh/datetime
eval "\$('$bin' init zsh)"
cd '$proj/src/deep'
_cudaenv_hook
[ "\$CUDAENV_ACTIVE" = bench ] || { echo "hook did not activate" >&2; exit 1; }
t0=\$EPOCHREALTIME
for ((i = 0; i < $loop; i++)); do _cudaenv_hook; done
t1=\$EPOCHREALTIME
t2=\$EPOCHREALTIME
for ((i = 0; i < $loop; i++)); do :; done
t3=\$EPOCHREALTIME
echo "\$t0 \$t1 \$t2 \$t3"
EOF
for sh in bash zsh; do
  if ! command -v "$sh" >/dev/null; then continue; fi
  args=(--norc --noprofile)
  [ "$sh" = zsh ] && args=(-f)
  read -r t0 t1 t2 t3 < <("$sh" "${args[@]}" "$work/hook-bench.$sh")
  per=$(awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v n="$loop" \
    'BEGIN { printf "%.1f µs", ((b - a) - (d - c)) / n * 1e6 }')
  # Count binary starts during idle hooks with a logging wrapper.
  mkdir -p "$work/wrap"
  printf '#!/bin/sh\necho x >>%s\nexec %s "$@"\n' "$work/starts-$sh" "$bin" >"$work/wrap/cudaenv"
  chmod +x "$work/wrap/cudaenv"
  : >"$work/starts-$sh"
  "$bin" init "$sh" | sed "s|$bin|$work/wrap/cudaenv|g" >"$work/init-wrapped.$sh"
  "$sh" "${args[@]}" -c ". '$work/init-wrapped.$sh'; cd '$proj/src/deep'; _cudaenv_hook; : >'$work/starts-$sh'; for i in 1 2 3 4 5 6 7 8 9 10; do _cudaenv_hook; done"
  starts=$(wc -l <"$work/starts-$sh" | tr -d ' ')
  printf '| %s | %s | %s in 10 calls |\n' "$sh" "$per" "$starts" >>"$results"
  say "$sh: $per per call, $starts binary starts in 10 idle calls"
done

if [ -n "${mise:-}" ] && [ -x "${mise:-}" ]; then
  (
    cd "$proj/src/deep"
    # Apply once so mise's session variables are set: its early-exit path.
    eval "$("$mise" hook-env -s bash)"
    hf_prefix=$normal hf "mise hook-env, nothing changed (session variables set; normal priority)" \
      -n "mise hook-env -s bash" "$mise hook-env -s bash"
  )
fi

# --- 3. after a cd -------------------------------------------------------------
cmds=(-n "cudaenv hook-env (after cd)" "$bin hook-env --shell bash")
if [ -x "${pyenv_root}/bin/pyenv" ]; then
  cmds+=(-n "pyenv version-name" "env PYENV_ROOT=$pyenv_root $pyenv_root/bin/pyenv version-name")
fi
hf "what runs after a cd" "${cmds[@]}"
if [ -n "${mise:-}" ] && [ -x "${mise:-}" ]; then
  hf_prefix=$normal hf "what runs after a cd: mise (normal priority)" \
    -n "cudaenv hook-env (after cd)" "$bin hook-env --shell bash" \
    -n "mise hook-env (first prompt)" "env -u __MISE_SESSION -u __MISE_DIFF $mise hook-env -s bash"
fi

say "results"
echo "machine: $(nproc) CPUs, $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg); $(hyperfine --version); real-time priority: ${BENCH_IN_RT:-no}"
echo "cudaenv: $bin ($("$bin" --version))"
cat "$results"
