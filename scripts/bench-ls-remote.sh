#!/usr/bin/env bash
# ls-remote benchmark: the live release catalogue, cold and warm, against its floors.
#
# Each round, interleaved so that the machine's drift hits every figure alike:
#   floor (network)  one request for the `cuda-toolkit` project page (PEP 691 JSON),
#                    with curl, to /dev/null: what any cold read costs at least;
#   cold ls-remote   an empty root: the project page plus every release's metadata
#                    (the ~3 KB metapackage wheels, 16 at a time), then the table;
#   floor (start)    `cudaenv --version`: the cost of starting the binary at all;
#   warm ls-remote   the stored catalogue (younger than a day) answers: no network.
# Medians (and min-max) over the rounds, in milliseconds.
#
# Usage: scripts/bench-ls-remote.sh [ROUNDS]   (default 9)
# Needs: a dist build (cargo build --profile dist; CUDAENV_BIN overrides the path),
# curl, python3, and the index (CUDAENV_PYPI_INDEX, default https://pypi.org/simple).
set -euo pipefail

rounds=${1:-9}
bin=${CUDAENV_BIN:-${CARGO_TARGET_DIR:-target}/dist/cudaenv}
[ -x "$bin" ] || { echo "no binary at $bin (cargo build --profile dist)" >&2; exit 2; }
index=${CUDAENV_PYPI_INDEX:-https://pypi.org/simple}

work=$(mktemp -d "${TMPDIR:-/tmp}/cudaenv-bench-ls.XXXXXX")
trap 'rm -rf "$work"' EXIT
export HOME=$work/home
mkdir -p "$HOME"

echo "binary: $bin ($("$bin" --version)); index: $index; $rounds rounds; $(date -u '+%Y-%m-%d %H:%M UTC')"
python3 - "$bin" "$index" "$work" "$rounds" <<'PY'
import os, shutil, statistics, subprocess, sys, time

binary, index, work, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
devnull = subprocess.DEVNULL

def run(argv, env=None):
    t = time.perf_counter()
    r = subprocess.run(argv, stdout=devnull, stderr=devnull, env=env)
    dt = (time.perf_counter() - t) * 1000
    if r.returncode != 0:
        sys.exit(f"{argv[0]} exited {r.returncode}")
    return dt

def env_for(root):
    e = dict(os.environ)
    e["CUDAENV_ROOT"] = root
    e["CUDAENV_PYPI_INDEX"] = index
    return e

warm_root = os.path.join(work, "warm")
run([binary, "ls-remote"], env_for(warm_root))  # fills the warm root's catalogue
names = ["floor (network)", "cold ls-remote", "floor (start)", "warm ls-remote"]
times = {n: [] for n in names}
for i in range(rounds):
    cold_root = os.path.join(work, f"cold{i}")
    times["floor (network)"].append(run(
        ["curl", "-sf", "-o", "/dev/null", "-H",
         "Accept: application/vnd.pypi.simple.v1+json", index.rstrip("/") + "/cuda-toolkit/"]))
    times["cold ls-remote"].append(run([binary, "ls-remote"], env_for(cold_root)))
    shutil.rmtree(cold_root, ignore_errors=True)
    times["floor (start)"].append(run([binary, "--version"]))
    times["warm ls-remote"].append(run([binary, "ls-remote"], env_for(warm_root)))
for n in names:
    v = times[n]
    print(f"{n:18} median {statistics.median(v):8.1f} ms   min {min(v):8.1f}   max {max(v):8.1f}")
PY
