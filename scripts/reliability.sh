#!/usr/bin/env bash
# The long runs of the reliability battery, with the counts docs/RELIABILITY.md
# reports. The normal test command runs the same tests with smaller counts.
#
#   scripts/reliability.sh [KILLS]      (default 240 random kills)
#
# Prints one summary line per run; exits non-zero if any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
kills="${1:-240}"
bin_before=$(stat -c %Y "${CARGO_TARGET_DIR:-target}/debug/cudaenv" 2>/dev/null || echo none)
start=$(date +%s)
CUDAENV_CRASH_ITERATIONS="$kills" cargo test --test e2e \
    reliability::install_faults::installs_killed_at_random_moments_leave_no_partial_version \
    -- --nocapture 2>&1 | grep -E "crash-consistency:|test result:|panicked|FAILED"
echo "random-kill run: ${kills} kills in $(( $(date +%s) - start )) s"
cargo test --test e2e reliability 2>&1 | grep -E "^test result:|FAILED|panicked"
bin_after=$(stat -c %Y "${CARGO_TARGET_DIR:-target}/debug/cudaenv" 2>/dev/null || echo none)
if [ "$bin_before" != "$bin_after" ] && [ "$bin_before" != none ]; then
    echo "note: the cudaenv binary was rebuilt during the run (shared target directory?)"
fi
