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
# Needs: a dist build (cargo build --profile dist; CUDAENV_BIN overrides the path), cargo
# (the inflate floor is an example of this crate, built here), curl, python3.
# uv is pinned (UV_VERSION, default below): it is installed with pip into a venv under
# ${XDG_CACHE_HOME:-~/.cache}/cudaenv-bench the first time; UV=/path/to/uv uses another one
# (its version is printed with the results).
# With /usr/bin/time present, the CPU time (user + system) of each cold install is reported,
# and, from /proc/stat, the CPU the whole machine was busy meanwhile (the kernel's
# writeback threads included) and the CPU the hypervisor took from it (steal: on a
# virtual machine, the host's own work on the guest's cores, its network device's
# among it), also while the network floor runs; and the most memory the machine took
# during each cold install (the fall of MemFree, page cache included).
# Also reported, from the same run, the two floors a cold install works between: the
# network (the same files by parallel curl to /dev/null) and inflating the same wheels'
# members with libdeflate on every core (examples/inflate_floor.rs, the inflater cudaenv
# uses, from memory into touched buffers: no disk, no page faults).
# Every run downloads ~3 GB in all; run it sparingly.
set -euo pipefail

order=${1:-uv-first}
bin=${CUDAENV_BIN:-${CARGO_TARGET_DIR:-target}/dist/cudaenv}
[ -x "$bin" ] || { echo "no binary at $bin (cargo build --profile dist)" >&2; exit 2; }
uv_version=${UV_VERSION:-0.13.9}
if [ -z "${UV:-}" ]; then
  venv=${XDG_CACHE_HOME:-$HOME/.cache}/cudaenv-bench/uv-$uv_version
  if [ ! -x "$venv/bin/uv" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "uv==$uv_version"
  fi
  UV=$venv/bin/uv
fi
"$UV" --version >/dev/null || { echo "uv at $UV does not run" >&2; exit 2; }
floor_bin=${INFLATE_FLOOR_BIN:-}
if [ -z "$floor_bin" ]; then
  cargo build -q --profile dist --example inflate_floor
  floor_bin=${CARGO_TARGET_DIR:-target}/dist/examples/inflate_floor
fi

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
# CPU seconds of the whole machine so far, from the fields of /proc/stat's first line
# that the awk expression $1 adds up.
stat_secs() { awk -v hz="$(getconf CLK_TCK)" "/^cpu / { print ($1) / hz; exit }" /proc/stat; }
# CPU seconds the whole machine has been busy (all but idle and iowait).
busy() { stat_secs '$2 + $3 + $4 + $7 + $8'; }
# CPU seconds the hypervisor has taken from the machine (steal; 0 on bare metal).
stolen() { stat_secs '$9'; }

# The most memory the machine takes while a command runs: the largest fall of MemFree
# below its value at the start (the whole machine's, page cache included), in MiB, written
# to the file $1; sampled every 20 ms by shell builtins alone, so that sampling costs no
# process per sample. Stopped by peak_stop.
peak_start() {
  local out=$1
  echo 0 >"$out"
  (
    exec {tick}<> <(:)
    { read -r _; read -r _ start _; } </proc/meminfo
    low=$start
    while :; do
      { read -r _; read -r _ free _; } </proc/meminfo
      if [ "$free" -lt "$low" ]; then
        low=$free
        echo $(((start - low) / 1024)) >"$out"
      fi
      read -r -t 0.02 -u "$tick" _ || :
    done
  ) &
  peak_pid=$!
}
peak_stop() {
  kill "$peak_pid" 2>/dev/null || :
  wait "$peak_pid" 2>/dev/null || :
}

spec=12.4.1+cudnn9.1.0.70
only=(--without cufft,curand,cusolver,cusparse,nvrtc,nvjitlink,cupti)

run_uv() {
  export UV_CACHE_DIR="$work/uv-cache"
  "$UV" venv -q "$work/venv"
  local t0 t1 b0 s0
  b0=$(busy)
  s0=$(stolen)
  peak_start "$work/uv.peak"
  t0=$(now)
  timed "$work/uv.cpu" "$UV" pip install -q --python "$work/venv/bin/python" --no-deps \
    nvidia-cuda-runtime-cu12==12.4.127 nvidia-cublas-cu12==12.4.5.8 nvidia-cudnn-cu12==9.1.0.70
  t1=$(now)
  peak_stop
  uv_busy=$(secs "$b0" "$(busy)")
  uv_steal=$(secs "$s0" "$(stolen)")
  uv_cold=$(secs "$t0" "$t1")
}

run_cudaenv() {
  export CUDAENV_ROOT="$work/root"
  local t0 t1 b0 s0
  b0=$(busy)
  s0=$(stolen)
  peak_start "$work/ce.peak"
  t0=$(now)
  timed "$work/ce.cpu" "$bin" -q install "$spec" "${only[@]}"
  t1=$(now)
  peak_stop
  ce_busy=$(secs "$b0" "$(busy)")
  ce_steal=$(secs "$s0" "$(stolen)")
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
# inflating them (every member of the wheels, libdeflate on every core, from
# memory; the wheels are fetched for it untimed).
mapfile -t urls < <("$bin" -q install "$spec" "${only[@]}" --dry-run --json --force |
  python3 -c 'import json,sys; [print(a["url"]) for a in json.load(sys.stdin)["artifacts"]]')
settle
s0=$(stolen)
t0=$(now)
for u in "${urls[@]}"; do curl -sf -o /dev/null "$u" & done
wait
t1=$(now)
floor_net=$(secs "$t0" "$t1")
net_steal=$(secs "$s0" "$(stolen)")
mkdir -p "$work/wheels"
for u in "${urls[@]}"; do curl -sf -o "$work/wheels/${u##*/}" "$u" & done
wait
floor_inflate=$("$floor_bin" "$work"/wheels/*.whl)
rm -rf "$work/wheels"

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

echo "machine: $(nproc) cores, $(uname -m); order: $order; $("$UV" --version); cudaenv $("$bin" --version | awk '{ print $NF }')"
echo "cold install   uv: ${uv_cold}s   cudaenv: ${ce_cold}s   ratio uv/cudaenv: $(awk -v a="$uv_cold" -v b="$ce_cold" 'BEGIN { printf "%.2f", a / b }')"
floor=$(awk -v a="$floor_net" -v b="${floor_inflate%% *}" 'BEGIN { print (a > b ? a : b) }')
echo "floors   network (${#urls[@]} files by parallel curl): ${floor_net}s   inflate (libdeflate, in memory): $floor_inflate"
echo "cold install / larger floor   uv: $(awk -v a="$uv_cold" -v f="$floor" 'BEGIN { printf "%.2f", a / f }')   cudaenv: $(awk -v a="$ce_cold" -v f="$floor" 'BEGIN { printf "%.2f", a / f }')"
echo "cold install CPU time   uv: $(cpu "$work/uv.cpu")   cudaenv: $(cpu "$work/ce.cpu")"
echo "machine busy during each cold install (all processes, kernel threads included)   uv: ${uv_busy} s   cudaenv: ${ce_busy} s"
echo "memory taken at the peak of each cold install (fall of MemFree, page cache included)   uv: $(cat "$work/uv.peak") MiB   cudaenv: $(cat "$work/ce.peak") MiB"
echo "taken by the hypervisor (steal)   uv: ${uv_steal} s   cudaenv: ${ce_steal} s   network floor: ${net_steal} s"
echo "reinstall from cudaenv's cache: ${ce_re}s (index online), ${ce_off}s (--offline)"
