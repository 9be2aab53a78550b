#!/usr/bin/env bash
# Regenerates src/activation/shims/shim-path.ld, or checks a binary against it (--check).
#
# Every shim is this binary, so a shim's cost includes the page faults of the
# code it runs. build.rs links release builds with src/activation/shims/shim-path.ld, which
# gathers the functions a shim runs (resolving a version, building the
# environment, exec) into one section, `.text.shim`, at the start of the code:
# a few pages instead of ~25 scattered 64 KiB windows (docs/PERFORMANCE.md).
#
# The functions are found by running a shim under valgrind's callgrind up to
# its execve, in a throwaway store, with and without an activated environment.
# Names are v0-mangled (.cargo/config.toml), written as patterns without the
# per-crate hashes, so the file keeps matching across compiler updates; it
# only goes stale when the shim's code path itself changes.
#
# The file asserts that every pattern gathers a function, so a stale one fails
# the link (naming the pattern); --check also runs a shim under callgrind and
# fails when a function it runs is outside .text.shim (new on the path).
#
# Usage: scripts/shim-order.sh            # write src/activation/shims/shim-path.ld
#        scripts/shim-order.sh --check    # does a binary keep the shim's code together?
# When the link fails because the file is stale, build without it, then
# regenerate and build again:
#   CUDAENV_SHIM_ORDER=off cargo build --profile dist && scripts/shim-order.sh &&
#     cargo build --profile dist && scripts/shim-order.sh --check
# Needs: valgrind (for --check: to check the functions run), python3, a release or dist build (CUDAENV_BIN, default target/dist/cudaenv).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
mode=${1:-write}
bin=${CUDAENV_BIN:-${CARGO_TARGET_DIR:-$repo/target}/dist/cudaenv}
[ -x "$bin" ] || { echo "no binary at $bin (cargo build --profile dist)" >&2; exit 2; }

rustc_version=$(rustc -V 2>/dev/null || echo "an unknown rustc")
work=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-shim-order.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ "$mode" != --check ]; then
  command -v valgrind >/dev/null || { echo "valgrind not found (apt-get install valgrind)" >&2; exit 2; }
fi
# The benchmark's store (scripts/bench-store.sh).
# shellcheck source=bench-store.sh
. "$here/bench-store.sh"
bench_store "$bin" "$work" >/dev/null || exit 1
shim=$CUDAENV_ROOT/shims/nvcc

# The functions of the binary that a shim runs before its execve, in the
# order first run; one scenario per argument ("plain" or "activated").
trace() {
  local n=0
  for scenario in plain activated; do
    n=$((n + 1))
    (
      [ "$scenario" = activated ] && eval "$("$bin" env --shell bash bench)"
      valgrind --tool=callgrind --callgrind-out-file="$work/cg.$n" --dump-before=execve \
        --dump-instr=yes --compress-pos=no "$shim" --version >/dev/null 2>"$work/vg.$n"
    )
  done
  # The addresses of the instructions run, mapped to the binary's functions
  # through its symbol table (callgrind's own names miss functions outside
  # .text, e.g. in a binary already linked with the script), in the order
  # first met. Every name at a function's address counts: identical
  # functions share one body, and so one section, under several names.
  nm -S --defined-only "$bin" >"$work/nm"
  python3 - "$work/nm" "$work"/cg.*.1 <<'PY'
import bisect, sys
funcs = []
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 4 and p[2] in "tTwW":
        funcs.append((int(p[0], 16), int(p[1], 16), p[3]))
funcs.sort()
starts = [f[0] for f in funcs]
names = {}
for a, _, n in funcs:
    names.setdefault(a, []).append(n)
seen = set()
for path in sys.argv[2:]:
    for line in open(path):
        if not line.startswith("0x"):
            continue
        addr = int(line.split()[0], 16)
        i = bisect.bisect_right(starts, addr) - 1
        if i < 0 or addr >= funcs[i][0] + max(funcs[i][1], 1):
            continue
        for n in names[funcs[i][0]]:
            # The C start-up's own code is not in sections of its own.
            if n not in seen and n not in ("_start", "_init", "_fini"):
                seen.add(n)
                print(n)
PY
}

if [ "$mode" = --check ]; then
  # Which of the file's patterns match a function of the binary, and whether
  # those functions are in .text.shim. (callgrind cannot be asked: it does not
  # name functions outside .text.)
  read -r start size < <(readelf -SW "$bin" | awk '$2 == ".text.shim" { print $4, $6 }') || true
  nm "$bin" >"$work/nm"
  status=0
  python3 - "$repo/src/activation/shims/shim-path.ld" "$work/nm" "${start:-0}" "${size:-0}" <<'PY' || status=1
import fnmatch, re, sys
script, nm, start, size = sys.argv[1], sys.argv[2], int(sys.argv[3], 16), int(sys.argv[4], 16)
patterns = [p for line in open(script) if "*(" in line
            for p in re.findall(r"\.text\.(?!unlikely\.)(\S+?)(?=[ )])", line)]
funcs = [(int(p[0], 16), p[2]) for p in (l.split() for l in open(nm)) if len(p) == 3 and p[1] in "tTwW"]
by_first = {}
for addr, name in funcs:
    by_first.setdefault(name[:12], []).append((addr, name))
matched, inside = 0, 0
for pat in patterns:
    prefix = pat.split("*")[0][:12]
    hits = [a for a, n in by_first.get(prefix, []) if fnmatch.fnmatchcase(n, pat)] if len(prefix) == 12 \
        else [a for a, n in funcs if fnmatch.fnmatchcase(n, pat)]
    if hits:
        matched += 1
        inside += any(start <= a < start + size for a in hits)
print(f"shim path: {matched} of {len(patterns)} patterns match a function, {inside} of them in .text.shim ({size // 1024} KiB)")
sys.exit(0 if size and matched * 10 >= len(patterns) * 9 and inside == matched else 1)
PY
  # And whether every function the shim runs is in .text.shim: a function
  # new on the path is not named by the file yet.
  if command -v valgrind >/dev/null; then
    trace >"$work/fns"
    nm "$bin" >"$work/nm"
    python3 - "$work/fns" "$work/nm" "${start:-0}" "${size:-0}" <<'PY' || status=1
import sys
fns, nm, start, size = sys.argv[1], sys.argv[2], int(sys.argv[3], 16), int(sys.argv[4], 16)
addr = {}
for line in open(nm):
    p = line.split()
    if len(p) == 3 and p[1] in "tTwW":
        addr[p[2]] = int(p[0], 16)
run = [n for n in open(fns).read().split() if n in addr]
outside = [n for n in run if not start <= addr[n] < start + size]
print(f"shim path: {len(run)} functions run before the execve, {len(outside)} of them outside .text.shim")
for n in outside[:20]:
    print(f"  outside: {n}")
sys.exit(1 if outside else 0)
PY
  else
    echo "shim path: valgrind not found, so the functions it runs were not checked"
  fi
  exit "$status"
fi


trace >"$work/fns"
out=$repo/src/activation/shims/shim-path.ld
# v0 names: crate hashes (Cs<hash>_) and back-references (B<offset>_, which
# move when a hash's length does) become wildcards, and so do the numbered
# suffixes LLVM gives local copies (`.1736`, `.llvm.123`), which change with any edit.
sed -E -e '/^_R/{s/Cs[0-9A-Za-z]+_/Cs*_/g; s/B[0-9A-Za-z]*_/B*_/g}' -e 's/(\.llvm)?\.[0-9]+$//' -e 's/$/*/' "$work/fns" |
  awk '!seen[$0]++' >"$work/patterns"
{
  echo "/* The functions a shim runs, kept together at the start of the code (see"
  echo "   build.rs). Generated by scripts/shim-order.sh with $rustc_version; do not edit."
  echo "   Each pattern is followed by a symbol, and an ASSERT below fails the link when"
  echo "   a pattern gathered nothing: a stale file stops the build instead of quietly"
  echo "   leaving the shim's code scattered. */"
  echo "SECTIONS {"
  echo "  .text.shim : {"
  echo "    __cudaenv_shim_0 = .;"
  # Cold functions (`#[cold]`, such as a vector's growth) have sections of
  # their own prefix.
  awk '{ printf "    *(.text.%s .text.unlikely.%s)\n    __cudaenv_shim_%d = .;\n", $0, $0, NR }' "$work/patterns"
  echo "  }"
  echo "}"
  echo "INSERT BEFORE .text;"
  awk '{ printf "ASSERT(__cudaenv_shim_%d > __cudaenv_shim_%d, \"src/activation/shims/shim-path.ld is stale: %s matches no function; regenerate it with scripts/shim-order.sh\")\n", NR, NR - 1, $0 }' "$work/patterns"
} >"$out"
echo "wrote $out ($(wc -l <"$work/patterns") patterns)" >&2
