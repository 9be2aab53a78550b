# Sourced by the shim benchmarks (bench-shell.sh, bench-shim-stages.sh,
# shim-order.sh): builds the store they measure in, and finds the binary to
# measure. Not meant to be run on its own.
#
# bench_realtime "$0" "$@": as root, re-runs the calling script at real-time
# priority (chrt -f 50), so that other processes' noise stays out of the
# timings, where the machine allows it (a container may not); BENCH_NO_RT=1
# turns that off.
bench_realtime() {
  if [ "$(id -u)" = 0 ] && command -v chrt >/dev/null && chrt -f 50 true 2>/dev/null &&
    [ -z "${BENCH_NO_RT-}" ] && [ -z "${BENCH_IN_RT-}" ]; then
    BENCH_IN_RT=1 exec chrt -f 50 "$@"
  fi
}

# bench_binary HOW: sets `bin` to the absolute path of the build to measure
# (CUDAENV_BIN, default target/dist/cudaenv); exits 2, saying HOW to build
# it, when there is none.
bench_binary() {
  bin=${CUDAENV_BIN:-${CARGO_TARGET_DIR:-target}/dist/cudaenv}
  [ -x "$bin" ] || { echo "no binary at $bin ($1)" >&2; exit 2; }
  bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
}

#
# bench_store BIN WORK: with CUDAENV_ROOT=WORK/root and HOME=WORK/home
# (exported), makes six versions: `bench`, whose bin/nvcc is a /bin/sh script,
# four more installed ones and a linked one (every activation looks for the
# directories of linked versions, to take a previous one's off PATH, so the
# store is not a lone version); then rehashes, pins `bench` in
# WORK/a/b/c/project and changes to its src/deep, three directories below the
# pin. Sets `v` (the bench version's directory) and `proj`.
bench_store() {
  local bin=$1 work=$2
  export CUDAENV_ROOT=$work/root
  export HOME=$work/home
  mkdir -p "$HOME"
  v=$CUDAENV_ROOT/versions/bench
  mkdir -p "$v/.cudaenv" "$v/bin" "$v/lib64"
  printf '#!/bin/sh\necho "Cuda compilation tools, release 12.4 (fake)"\n' >"$v/bin/nvcc"
  chmod +x "$v/bin/nvcc"
  cat >"$v/.cudaenv/meta.toml" <<'EOF2'
schema = 1
kind = "installed"
bin_dirs = ["bin"]
lib_dirs = ["lib64"]
home = "."
source = "bench"
created = 0
EOF2
  touch "$v/.cudaenv/complete"
  local i
  for i in 1 2 3 4; do cp -a "$v" "$CUDAENV_ROOT/versions/other-$i"; done
  mkdir -p "$work/linked-tree/bin" "$work/linked-tree/lib64" "$CUDAENV_ROOT/versions/linked/.cudaenv"
  cat >"$CUDAENV_ROOT/versions/linked/.cudaenv/meta.toml" <<EOF2
schema = 1
kind = "linked"
prefix = "$work/linked-tree"
bin_dirs = ["bin"]
lib_dirs = ["lib64"]
home = "."
source = "link"
created = 0
EOF2
  touch "$CUDAENV_ROOT/versions/linked/.cudaenv/linked" "$CUDAENV_ROOT/versions/linked/.cudaenv/complete"
  [ "$("$bin" versions --bare | wc -l)" = 6 ] || {
    echo "the benchmark store is not what it should be:" >&2
    "$bin" versions >&2
    return 1
  }
  "$bin" --quiet rehash
  proj=$work/a/b/c/project
  mkdir -p "$proj/src/deep"
  echo bench >"$proj/.cuda-version"
  cd "$proj/src/deep"
}
