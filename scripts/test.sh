#!/usr/bin/env bash
# Runs cudaenv's whole test suite on a fresh Debian (or Ubuntu) machine.
#
# The end-to-end tests drive real shells (bash, zsh, fish, tmux), compile tiny
# shared libraries with cc, load them through python3's ctypes, and download
# small wheels from PyPI. This script installs the Debian packages for that
# (only those that are missing; as root, or through sudo when available), then
# runs every test target. Extra arguments go to `cargo test`.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '==> %s\n' "$*" >&2; }

# What must be present, as `command:package`, `/path/glob:package`, or
# `dpkg:package` (the package itself). Add what new tests need here.
REQUIREMENTS=(
  bash:bash
  zsh:zsh
  fish:fish
  tmux:tmux
  script:bsdutils
  setpriv:util-linux
  cc:gcc
  dpkg:libc6-dev
  python3:python3
  dpkg:python3-venv
  git:git
  curl:curl
  /etc/ssl/certs/ca-certificates.crt:ca-certificates
  xz:xz-utils
  file:file
  cmake:cmake
)

present() {
  local what=$1 pkg=$2
  if [[ $what == dpkg ]]; then
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'
  elif [[ $what == /* ]]; then
    # A path, possibly with a glob: present when anything matches.
    compgen -G "$what" >/dev/null
  else
    command -v "$what" >/dev/null 2>&1
  fi
}

missing=()
for req in "${REQUIREMENTS[@]}"; do
  what=${req%%:*}
  pkg=${req##*:}
  present "$what" "$pkg" || missing+=("$pkg")
done

if ((${#missing[@]})); then
  say "installing missing Debian packages: ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
  elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    say "error: these packages are missing and I am neither root nor able to sudo: ${missing[*]}"
    say "hint: run: apt-get update && apt-get install -y ${missing[*]}"
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! command -v cargo >/dev/null 2>&1 && [[ -f "$HOME/.cargo/env" ]]; then
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
if ! command -v cargo >/dev/null 2>&1; then
  say "error: cargo is not installed (Rust >= $(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml) is needed)"
  say "hint: install it with rustup: https://rustup.rs"
  exit 1
fi

say "cargo test --all-targets $*"
cargo test --locked --all-targets "$@"
# The shim's benchmark probe exists only in builds with its feature.
say "cargo test --features shim-probe --test e2e probe"
cargo test --locked --features shim-probe --test e2e probe
