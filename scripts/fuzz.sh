#!/usr/bin/env bash
# Runs cudaenv's coverage-guided fuzz targets (fuzz/, a crate of its own) for
# a bounded time each, on the stable toolchain.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Defaults: 300 s per target, every target in fuzz/Cargo.toml. Needs
# `cargo install cargo-fuzz` (stable is enough: with `--sanitizer none` no
# nightly flag is used; libFuzzer itself is built by the libfuzzer-sys crate).
# Each run starts from the committed seeds in fuzz/seeds/<target> plus the
# corpus grown by earlier runs (fuzz/corpus, not committed). A crash leaves
# its input in fuzz/artifacts/<target>/ and makes this script exit non-zero;
# the summary line per target gives seconds run, executions and crashes.
# Runs at the lowest CPU priority so a shared machine stays usable.
set -euo pipefail

cd "$(dirname "$0")/.."
secs="${1:-300}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo fuzz list --fuzz-dir fuzz)
fi
# A target directory of its own: instrumented builds never evict the normal ones.
target_dir="${CUDAENV_FUZZ_TARGET_DIR:-${CARGO_TARGET_DIR:-fuzz/target}-fuzz}"
log_dir="fuzz/logs"
triple="$(rustc -vV | sed -n 's/^host: //p')"
mkdir -p "$log_dir"

nice -n 19 cargo fuzz build --fuzz-dir fuzz --sanitizer none -O --target-dir "$target_dir"

status=0
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
    if [ -d "fuzz/seeds/$t" ]; then
        cp -n fuzz/seeds/"$t"/* "fuzz/corpus/$t/" 2>/dev/null || true
    fi
    dict=()
    if [ -f "fuzz/dicts/$t.dict" ]; then
        dict=("-dict=fuzz/dicts/$t.dict")
    fi
    log="$log_dir/$t.log"
    set +e
    # The binary built above, run directly (what `cargo fuzz run` does after
    # rebuilding), so editing the sources during a long run changes nothing.
    nice -n 19 "$target_dir/$triple/release/$t" -artifact_prefix="fuzz/artifacts/$t/" \
        -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        "${dict[@]}" "fuzz/corpus/$t" >"$log" 2>&1
    rc=$?
    set -e
    # libFuzzer's own count: seconds spent fuzzing, not building.
    fuzzed=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | awk '{print $5}' | tail -1)
    execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}' | tail -1)
    crashes=$(find "fuzz/artifacts/$t" -type f | wc -l)
    echo "fuzz: target=$t seconds=${fuzzed:-?} executions=${execs:-?} exit=$rc crash_files=$crashes log=$log"
    if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
        status=1
    fi
done
exit $status
