#!/usr/bin/env bash
# Builds cudaenv for Windows (x86_64-pc-windows-gnu, linked by Debian's
# mingw-w64) and tests it under Wine: the library's unit tests, then the
# end-to-end set of tests/windows/e2e.sh against the real cudaenv.exe.
#
# What it needs, it installs: the Rust target (rustup), and Debian's
# gcc-mingw-w64-x86-64, wine and p7zip-full (as root, or through sudo). When the target
# or the packages cannot be had (no network, no rustup, no root), it says so
# and exits 3: "not run", which scripts/test.sh reports as such, never as a
# failure. Any other non-zero exit is a failure.
#
# Usage: scripts/windows-test.sh [unit|e2e|package|all]   (default: all)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '==> windows: %s\n' "$*" >&2; }
not_run() {
  say "not run: $*"
  exit 3
}

TARGET=x86_64-pc-windows-gnu
what=${1:-all}

# --- tools --------------------------------------------------------------------------
if ! command -v rustup >/dev/null 2>&1; then
  not_run "rustup is not installed, so the $TARGET target cannot be added"
fi
if ! rustup target list --installed 2>/dev/null | grep -qx "$TARGET"; then
  say "adding the Rust target $TARGET"
  rustup target add "$TARGET" >&2 || not_run "rustup could not fetch the $TARGET target"
fi
missing=()
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || missing+=(gcc-mingw-w64-x86-64)
command -v wine >/dev/null 2>&1 || missing+=(wine wine64)
command -v 7z >/dev/null 2>&1 || missing+=(p7zip-full) # the fixture of NVIDIA's Windows installer
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
  elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    not_run "these Debian packages are missing and I cannot install them: ${missing[*]}"
  fi
  say "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  { "${SUDO[@]}" apt-get update -qq && "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >&2 ||
    not_run "apt-get could not install ${missing[*]}"
fi

# --- the Wine prefix ----------------------------------------------------------------
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
export WINEPREFIX="$target_dir/wine-prefix"
export WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
helpers="$target_dir/windows-helpers"
mkdir -p "$helpers"
# Rust's std imports ProcessPrng from bcryptprimitives.dll, which Wine 8 lacks
# (tests/windows/README.md): built here and put in the prefix's system32.
x86_64-w64-mingw32-gcc -shared -O2 -s -o "$helpers/bcryptprimitives.dll" \
  tests/windows/bcryptprimitives.c tests/windows/bcryptprimitives.def -ladvapi32
x86_64-w64-mingw32-gcc -O2 -s -o "$helpers/cudart_probe.exe" tests/windows/cudart_probe.c
x86_64-w64-mingw32-gcc -O2 -s -o "$helpers/argecho.exe" tests/windows/argecho.c
if [[ ! -d $WINEPREFIX/drive_c/windows/system32 ]]; then
  say "creating the Wine prefix $WINEPREFIX"
  wineboot -i >/dev/null 2>&1 || true
  wineserver -w || true
fi
[[ -d $WINEPREFIX/drive_c/windows/system32 ]] || { say "error: wineboot made no prefix at $WINEPREFIX"; exit 1; }
cp "$helpers/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/"
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine

# Unit tests that do not run under Wine, each skipped by name: they run bash,
# zsh or fish (the shells' own round trips; Windows has PowerShell and cmd),
# Lmod/Tcl modulefiles (cluster tools), the Python generators of the registry,
# or make relative symbolic links, which Wine 8 does not create (Windows does,
# with Developer Mode). docs/windows.md says so.
NOT_YET_ON_WINDOWS=(
  activation::modulefile::tests::lmod_modulefile
  activation::modulefile::tests::tcl_modulefile
  activation::shell::bash::tests::non_utf8_values_pass
  activation::shell::bash::tests::tricky_values_round_trip_through_bash
  activation::shell::fish::tests::delta
  activation::shell::fish::tests::path_lists_are_elements_even_when_tricky
  activation::shell::fish::tests::tricky_values_round_trip_through_fish
  activation::shell::session::tests::undo_keeps_user_edits_and_unset_stays_unset
  activation::shell::zsh::tests::tricky_values_round_trip_through_zsh
  install::sources::debian::tests::registry_matches_the_generator
  install::sources::legacy::generated::registry_files_match_the_generator
  install::unpack::deb::tests::unpacks_the_libraries_into_lib64
  install::unpack::runfile::tests::nested_runfiles_are_taken_whole
  install::unpack::tar::tests::strips_the_top_directory_and_keeps_links
  install::unpack::tests::symlinks_must_stay_inside_and_not_chain
  machine::compat::metadata::tests::frameworks_toml_is_generated_from_its_inputs
  machine::verify::probe::facts::tests::judges_library_origin_through_symlinks
  os::tests::links_name_their_target_as_given
  store::files::tests::check_finds_every_kind_of_change
)
rc=0
if [[ $what == unit || $what == all ]]; then
  say "unit tests under Wine (${#NOT_YET_ON_WINDOWS[@]} skipped by name, see NOT_YET_ON_WINDOWS)"
  skip=()
  # --exact: a name that matches no test skips nothing, so a renamed test
  # would run (and fail) under Wine; every name must be a test.
  listed=$(cargo test --locked --lib -q -- --list 2>/dev/null | sed -n 's/: test$//p')
  for t in "${NOT_YET_ON_WINDOWS[@]}"; do
    grep -qxF "$t" <<<"$listed" || { say "error: NOT_YET_ON_WINDOWS names $t, which is no unit test"; rc=1; }
    skip+=(--skip "$t")
  done
  cargo test --locked --target "$TARGET" --lib -- --test-threads=2 --exact "${skip[@]}" || rc=1
fi
if [[ $what == e2e || $what == all ]]; then
  say "building cudaenv.exe (and the native cudaenv, for the locks made on Linux)"
  cargo build --locked --target "$TARGET" --bin cudaenv || exit 1
  cargo build --locked --bin cudaenv || exit 1
  CUDAENV_EXE="$target_dir/$TARGET/debug/cudaenv.exe" HELPERS="$helpers" \
    CUDAENV_LINUX="$target_dir/debug/cudaenv" \
    bash tests/windows/e2e.sh || rc=1
fi
if [[ $what == package || $what == all ]]; then
  # The zip and the win_amd64 wheel of scripts/windows-package.sh (a dev
  # build: what is checked is the packaging), each exe run under Wine.
  say "packaging: the zip and the win_amd64 wheel"
  venv=$helpers/maturin-venv
  if [[ ! -x $venv/bin/maturin ]]; then
    { python3 -m venv "$venv" && "$venv/bin/pip" install --quiet "maturin>=1.7,<2"; } >&2 ||
      not_run "maturin could not be installed from PyPI"
  fi
  pkg=$helpers/package
  rm -rf "$pkg"
  if PROFILE=dev MATURIN=$venv/bin/maturin scripts/windows-package.sh "$pkg"; then
    version=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["packages"][0]["version"])')
    python3 - "$pkg" "$version" <<'PY' || rc=1
import sys, zipfile
pkg, v = sys.argv[1:]
z = zipfile.ZipFile(f"{pkg}/cudaenv-{v}-x86_64-pc-windows-gnu.zip")
names = z.namelist()
assert f"cudaenv-{v}/cudaenv.exe" in names and f"cudaenv-{v}/README.md" in names, names
z.extract(f"cudaenv-{v}/cudaenv.exe", f"{pkg}/from-zip")
w = zipfile.ZipFile(f"{pkg}/cudaenv-{v}-py3-none-win_amd64.whl")
script = f"cudaenv-{v}.data/scripts/cudaenv.exe"
assert script in w.namelist(), w.namelist()
w.extract(script, f"{pkg}/from-wheel")
PY
    for exe in "$pkg/from-zip/cudaenv-$version/cudaenv.exe" "$pkg/from-wheel/cudaenv-$version.data/scripts/cudaenv.exe"; do
      got=$(wine "$exe" --version 2>&1 | tr -d '\r')
      if [[ $got == "cudaenv $version"* ]]; then
        printf 'ok %s runs: %s\n' "${exe#"$pkg"/}" "$got"
      else
        printf 'FAILED %s: %s\n' "${exe#"$pkg"/}" "$got"
        rc=1
      fi
    done
  else
    rc=1
  fi
fi
wineserver -k 2>/dev/null || true
exit $rc
