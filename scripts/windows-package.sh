#!/usr/bin/env bash
# Packages cudaenv for Windows, cross-built here (x86_64-pc-windows-gnu,
# linked by mingw-w64):
#   - a zip of cudaenv.exe with the README and licences, for a plain
#     download (unzip, put the folder on PATH);
#   - a win_amd64 wheel (maturin's `bin` bindings, pyproject.toml), so that
#     `pip install`, `pipx install` and `uv tool install` put cudaenv.exe on
#     PATH on Windows as they do on Linux.
# Both land in OUT (default target/windows/).
#
# Usage: scripts/windows-package.sh [OUT]
# Environment: PROFILE (default dist: the build scripts/install.sh makes;
# `dev` for a quick check), MATURIN (default: maturin on PATH; the wheel is
# skipped, saying so, when there is none: `pipx run maturin`, `uvx maturin` or
# a venv's maturin, see the README).
# Needs: the Rust target x86_64-pc-windows-gnu and gcc-mingw-w64-x86-64
# (scripts/windows-test.sh installs both), zip support in python3.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TARGET=x86_64-pc-windows-gnu
profile=${PROFILE:-dist}
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
out=${1:-$target_dir/windows}
version=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["packages"][0]["version"])')
mkdir -p "$out"

echo "==> building cudaenv.exe ($profile profile)" >&2
cargo build --locked --target "$TARGET" --profile "$profile" --bin cudaenv >&2
dir=$profile
[[ $profile == dev ]] && dir=debug
exe=$target_dir/$TARGET/$dir/cudaenv.exe

zip_name=cudaenv-$version-x86_64-pc-windows-gnu.zip
python3 - "$out/$zip_name" "$exe" "cudaenv-$version" README.md README.zh-CN.md docs/windows.md <<'PY'
import sys, zipfile, glob, os
dest, exe, top, *docs = sys.argv[1:]
with zipfile.ZipFile(dest + ".tmp", "w", zipfile.ZIP_DEFLATED) as z:
    z.write(exe, f"{top}/cudaenv.exe")
    for d in docs:
        for f in glob.glob(d):
            z.write(f, f"{top}/{os.path.basename(f)}")
os.replace(dest + ".tmp", dest)
PY
echo "==> $out/$zip_name" >&2

maturin=${MATURIN:-$(command -v maturin || true)}
if [[ -z $maturin ]]; then
  echo "==> no maturin: the win_amd64 wheel is not built (MATURIN=path, or pipx run maturin)" >&2
  exit 0
fi
strip=true
[[ $profile == dev ]] && strip=false
"$maturin" build --target "$TARGET" --profile "$profile" --strip "$strip" --out "$out" >&2
echo "==> $out/cudaenv-$version-py3-none-win_amd64.whl" >&2
