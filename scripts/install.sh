#!/usr/bin/env bash
# Builds and installs cudaenv from this checkout, then installs and verifies a
# default CUDA stack. Meant for a fresh Debian or Ubuntu machine:
#
#   bash scripts/install.sh            # CUDA 12.4 + cuDNN 9 (default)
#   bash scripts/install.sh 12.6       # another spec
#
# Installs build prerequisites only when missing (as root, or through sudo),
# installs Rust with rustup only when cargo is missing, puts `cudaenv` in
# ~/.cargo/bin, runs `cudaenv install SPEC` and then `cudaenv verify` on it. A
# machine without an NVIDIA GPU or driver still gets the stack installed; verify
# then says so and the script ends successfully, stating what it could not check.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
SPEC=${1:-12.4+cudnn9}

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# --- build prerequisites ------------------------------------------------------------
missing=()
command -v cc >/dev/null 2>&1 || missing+=(gcc)
dpkg-query -W -f='${Status}' libc6-dev 2>/dev/null | grep -q 'install ok installed' || missing+=(libc6-dev)
command -v curl >/dev/null 2>&1 || missing+=(curl)
[[ -f /etc/ssl/certs/ca-certificates.crt ]] || missing+=(ca-certificates)
if ((${#missing[@]})); then
  if ! command -v apt-get >/dev/null 2>&1; then
    die "please install: ${missing[*]} (no apt-get on this machine)"
  fi
  if [[ $(id -u) -eq 0 ]]; then SUDO=()
  elif command -v sudo >/dev/null 2>&1; then SUDO=(sudo)
  else die "missing ${missing[*]}, and this needs root or sudo to install them"
  fi
  say "installing build prerequisites: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! command -v cargo >/dev/null 2>&1 && [[ -f "$HOME/.cargo/env" ]]; then
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
if ! command -v cargo >/dev/null 2>&1; then
  say "installing Rust with rustup (cargo is missing)"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal \
    || die "could not install Rust; install it from https://rustup.rs and run this again"
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi

# --- cudaenv itself ---------------------------------------------------------------------
say "building and installing cudaenv (cargo install --locked --profile dist --path .)"
cargo install --locked --profile dist --path . --force
BIN_DIR=${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin
CUDAENV=$BIN_DIR/cudaenv
[[ -x $CUDAENV ]] || die "cargo install did not produce $CUDAENV"
say "installed $("$CUDAENV" --version) at $CUDAENV"
case ":$PATH:" in
  *":$BIN_DIR:"*) ;;
  *) say "note: add $BIN_DIR to PATH (e.g. in ~/.bashrc) to run cudaenv by name" ;;
esac

# --- its main job: install and verify a stack --------------------------------------------
if ! "$CUDAENV" install --help >/dev/null 2>&1; then
  die "this build of cudaenv has no \`install\` command; cannot install $SPEC"
fi
say "cudaenv install $SPEC"
"$CUDAENV" install "$SPEC"

if ! "$CUDAENV" verify --help >/dev/null 2>&1; then
  die "this build of cudaenv has no \`verify\` command; $SPEC is installed but unverified"
fi
say "cudaenv verify $SPEC"
set +e
"$CUDAENV" verify "$SPEC"
rc=$?
set -e
# Exit codes are documented in docs/exit-codes.md.
case $rc in
  0) say "done: $SPEC is installed and verified on this machine's GPU" ;;
  10) say "done: $SPEC is installed; not verified on a GPU: no NVIDIA driver could be loaded here" ;;
  13) say "done: $SPEC is installed; not verified on a GPU: no GPU is visible here" ;;
  *) die "$SPEC is installed but \`cudaenv verify\` failed (exit $rc; see docs/exit-codes.md)" ;;
esac
