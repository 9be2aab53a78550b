#!/usr/bin/env bash
# Install benchmark: cudaenv vs `uv pip install --no-deps`, side by side, same run.
#
# The stack: CUDA 12.4.1 + cuDNN 9.1.0.70 from PyPI, exactly the three wheels
#   nvidia-cuda-runtime-cu12 12.4.127, nvidia-cublas-cu12 12.4.5.8, nvidia-cudnn-cu12 9.1.0.70
# (~1 GB compressed). Both tools start cold: an empty cudaenv root + cache, an empty uv
# cache and a fresh venv. Then cudaenv's reinstall from its own cache is timed
# (uninstall + install, and uninstall + install --offline).
#
# Usage: scripts/bench-install.sh [uv-first|cudaenv-first]
# Needs: a dist build (cargo build --profile dist; CUDAENV_BIN overrides the path), uv on PATH.
# With /usr/bin/time present, the CPU time (user + system) of each cold install is reported too.
# Also reported, from the same run: the network floor (the same files by parallel curl to
# /dev/null) and the inflate floor (unzip of every wheel at once, on all cores).
# Needs curl and unzip for the floors.
# Every cold run downloads ~2 GB in all; run it sparingly.
set -euo pipefail

order=${1:-uv-first}
bin=${CUDAENV_BIN:-${CARGO_TARGET_DIR:-target}/dist/cudaenv}
[ -x "$bin" ] || { echo "no binary at $bin (cargo build --profile dist)" >&2; exit 2; }
command -v uv >/dev/null || { echo "uv not found (pip install uv)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# Runs a command, writing its CPU seconds ("user+system") to the file $1
# when /usr/bin/time is there (the report says n/a otherwise).
timed() {
  local out=$1
  shift
  if [ -x /usr/bin/time ]; then /usr/bin/time -f %U+%S -o "$out" "$@"; else "$@"; fi
}
cpu() { [ -s "$1" ] && tail -1 "$1" | awk -F+ '{ printf "%.1f s (%.1f user + %.1f system)", $1 + $2, $1, $2 }' || echo n/a; }

spec=12.4.1+cudnn9.1.0.70
only=(--without cufft,curand,cusolver,cusparse,nvrtc,nvjitlink,cupti)

run_uv() {
  export UV_CACHE_DIR="$work/uv-cache"
  uv venv -q "$work/venv"
  local t0 t1
  t0=$(now)
  timed "$work/uv.cpu" uv pip install -q --python "$work/venv/bin/python" --no-deps \
    nvidia-cuda-runtime-cu12==12.4.127 nvidia-cublas-cu12==12.4.5.8 nvidia-cudnn-cu12==9.1.0.70
  t1=$(now)
  uv_cold=$(secs "$t0" "$t1")
}

run_cudaenv() {
  export CUDAENV_ROOT="$work/root"
  local t0 t1
  t0=$(now)
  timed "$work/ce.cpu" "$bin" -q install "$spec" "${only[@]}"
  t1=$(now)
  ce_cold=$(secs "$t0" "$t1")
}

# Each cold install starts from the same state: the previous one's dirty
# pages written out and the page cache dropped (when run as root), so the
# second one does not pay for the first one's writeback.
settle() {
  sync
  if [ -w /proc/sys/vm/drop_caches ]; then echo 3 >/proc/sys/vm/drop_caches; fi
}
if [ "$order" = cudaenv-first ]; then
  settle; run_cudaenv; settle; run_uv
else
  settle; run_uv; settle; run_cudaenv
fi

export CUDAENV_ROOT="$work/root"

# The two floors a cold install works between, measured in the same run:
# the network (the same wheels fetched in parallel by curl, to /dev/null) and
# inflating them (every wheel unzipped at once, on all cores, into $work).
mapfile -t urls < <("$bin" -q install "$spec" "${only[@]}" --dry-run --json --force |
  python3 -c 'import json,sys; [print(a["url"]) for a in json.load(sys.stdin)["artifacts"]]')
settle
t0=$(now)
for u in "${urls[@]}"; do curl -sf -o /dev/null "$u" & done
wait
t1=$(now)
floor_net=$(secs "$t0" "$t1")
settle
t0=$(now)
i=0
for w in "$CUDAENV_ROOT"/cache/downloads/*.whl; do
  mkdir -p "$work/inflate/$i"
  unzip -q -o "$w" -d "$work/inflate/$i" & i=$((i + 1))
done
wait
t1=$(now)
floor_inflate=$(secs "$t0" "$t1")
rm -rf "$work/inflate"

# After a sync (not a cache drop: a reinstall is measured warm): a commit
# syncs its marker, and on ext4 that waits for the writeback of whatever the
# previous cold install left dirty (~2 s measured).
"$bin" -q uninstall -y "$spec"
sync
t0=$(now); "$bin" -q install "$spec" "${only[@]}"; t1=$(now)
ce_re=$(secs "$t0" "$t1")
"$bin" -q uninstall -y "$spec"
sync
t0=$(now); "$bin" -q install "$spec" "${only[@]}" --offline; t1=$(now)
ce_off=$(secs "$t0" "$t1")

# The same bytes landed: every library uv installed exists in cudaenv's tree.
for f in "$work"/venv/lib/python*/site-packages/nvidia/*/lib/lib*.so*; do
  cmp -s "$f" "$CUDAENV_ROOT/versions/$spec/lib64/$(basename "$f")" || { echo "differs: $f" >&2; exit 1; }
done

echo "machine: $(nproc) cores, $(uname -m); order: $order"
echo "cold install   uv: ${uv_cold}s   cudaenv: ${ce_cold}s   ratio uv/cudaenv: $(awk -v a="$uv_cold" -v b="$ce_cold" 'BEGIN { printf "%.2f", a / b }')"
echo "floors   network (${#urls[@]} files by parallel curl): ${floor_net}s   inflate (unzip of every wheel at once): ${floor_inflate}s"
echo "cold install CPU time   uv: $(cpu "$work/uv.cpu")   cudaenv: $(cpu "$work/ce.cpu")"
echo "reinstall from cudaenv's cache: ${ce_re}s (index online), ${ce_off}s (--offline)"
