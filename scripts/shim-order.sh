#!/usr/bin/env bash
# Regenerates shims/shim-path.ld, or checks a binary against it (--check).
#
# Every shim is this binary, so a shim's cost includes the page faults of the
# code it runs. build.rs links release builds with shims/shim-path.ld, which
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
# Usage: scripts/shim-order.sh            # write shims/shim-path.ld
#        scripts/shim-order.sh --check    # does a binary keep the shim's code together?
# Needs: valgrind (not for --check), python3, a release or dist build (CUDAENV_BIN, default target/dist/cudaenv).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
mode=${1:-write}
bin=${CUDAENV_BIN:-${CARGO_TARGET_DIR:-$repo/target}/dist/cudaenv}
[ -x "$bin" ] || { echo "no binary at $bin (cargo build --profile dist)" >&2; exit 2; }

rustc_version=$(rustc -V 2>/dev/null || echo "an unknown rustc")
work=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-shim-order.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ "$mode" = --check ]; then
  # Which of the file's patterns match a function of the binary, and whether
  # those functions are in .text.shim. (callgrind cannot be asked: it does not
  # name functions outside .text.)
  read -r start size < <(readelf -SW "$bin" | awk '$2 == ".text.shim" { print $4, $6 }') || true
  nm "$bin" >"$work/nm"
  python3 - "$repo/shims/shim-path.ld" "$work/nm" "${start:-0}" "${size:-0}" <<'PY'
import fnmatch, re, sys
script, nm, start, size = sys.argv[1], sys.argv[2], int(sys.argv[3], 16), int(sys.argv[4], 16)
patterns = [p for line in open(script) for p in re.findall(r"\.text\.(?!unlikely\.)(\S+?)(?=[ )])", line)]
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
  exit $?
fi

command -v valgrind >/dev/null || { echo "valgrind not found (apt-get install valgrind)" >&2; exit 2; }
export CUDAENV_ROOT=$work/root HOME=$work/home
mkdir -p "$HOME"
# The benchmark's store (scripts/bench-shell.sh): the version used, four
# more, a linked one.
v=$CUDAENV_ROOT/versions/bench
mkdir -p "$v/.cudaenv" "$v/bin" "$v/lib64"
printf '#!/bin/sh\necho fake nvcc\n' >"$v/bin/nvcc"
chmod +x "$v/bin/nvcc"
cat >"$v/.cudaenv/meta.toml" <<'EOF'
schema = 1
kind = "installed"
bin_dirs = ["bin"]
lib_dirs = ["lib64"]
home = "."
source = "bench"
created = 0
EOF
touch "$v/.cudaenv/complete"
for i in 1 2 3 4; do cp -a "$v" "$CUDAENV_ROOT/versions/other-$i"; done
mkdir -p "$work/linked-tree/bin" "$work/linked-tree/lib64" "$CUDAENV_ROOT/versions/linked/.cudaenv"
cat >"$CUDAENV_ROOT/versions/linked/.cudaenv/meta.toml" <<EOF
schema = 1
kind = "linked"
prefix = "$work/linked-tree"
bin_dirs = ["bin"]
lib_dirs = ["lib64"]
home = "."
source = "link"
created = 0
EOF
touch "$CUDAENV_ROOT/versions/linked/.cudaenv/linked" "$CUDAENV_ROOT/versions/linked/.cudaenv/complete"
"$bin" --quiet rehash
mkdir -p "$work/project/src"
echo bench >"$work/project/.cuda-version"
cd "$work/project/src"
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
        --demangle=no --compress-strings=no --compress-pos=no "$shim" --version >/dev/null 2>"$work/vg.$n"
    )
  done
  # callgrind names each object file (ob=) and function (fn=); keep the
  # functions of the shim itself, first occurrence only.
  cat "$work"/cg.*.1 "$work"/cg.[0-9] 2>/dev/null | awk -v shim="$shim" '
    /^ob=/ { ob = substr($0, 4) }
    /^fn=/ { f = substr($0, 4); if (ob == shim && f !~ /[ ()]/ && !seen[f]++) print f }'
}


trace >"$work/traced"
# Identical functions share one body (and so one section) under several
# names, and callgrind reports only one of them: take every name at the
# address of each function traced.
nm "$bin" >"$work/nm"
python3 - "$work/traced" "$work/nm" >"$work/fns" <<'PY'
import sys
traced = open(sys.argv[1]).read().split()
at, names = {}, {}
for line in open(sys.argv[2]):
    p = line.split()
    if len(p) == 3:
        a = int(p[0], 16)
        at.setdefault(p[2], a)
        names.setdefault(a, []).append(p[2])
seen = set()
for f in traced:
    for n in [f] + names.get(at.get(f), []):
        if n not in seen:
            seen.add(n)
            print(n)
PY
out=$repo/shims/shim-path.ld
# v0 names: crate hashes (Cs<hash>_) and back-references (B<offset>_, which
# move when a hash's length does) become wildcards; LTO may add suffixes.
sed -E -e '/^_R/{s/Cs[0-9A-Za-z]+_/Cs*_/g; s/B[0-9A-Za-z]*_/B*_/g}' -e 's/$/*/' "$work/fns" |
  awk '!seen[$0]++' >"$work/patterns"
{
  echo "/* The functions a shim runs, kept together at the start of the code (see"
  echo "   build.rs). Generated by scripts/shim-order.sh with $rustc_version; do not edit. */"
  echo "SECTIONS {"
  echo "  .text.shim : {"
  # Cold functions (`#[cold]`, such as a vector's growth) have sections of
  # their own prefix.
  sed 's/.*/    *(.text.& .text.unlikely.&)/' "$work/patterns"
  echo "  }"
  echo "}"
  echo "INSERT BEFORE .text;"
} >"$out"
echo "wrote $out ($(wc -l <"$work/patterns") patterns)" >&2
