#!/usr/bin/env bash
# Runs cudaenv's whole test suite on a fresh Debian (or Ubuntu) machine.
#
# The end-to-end tests drive real shells (bash, zsh, fish, tmux), compile tiny
# shared libraries with cc, load them through python3's ctypes, and download
# small wheels from PyPI. This script installs the Debian packages for that
# (only those that are missing; as root, or through sudo when available), then
# runs every test target (all of them, even when one fails), the unit tests
# again in a fresh clone with nothing beside it, and prints a summary of
# passed / failed / ignored tests. It exits non-zero if anything failed. Extra
# arguments go to the first `cargo test`.
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
  g++:g++
  g++-11:g++-11
  dpkg:libc6-dev
  python3:python3
  dpkg:python3-venv
  git:git
  curl:curl
  /etc/ssl/certs/ca-certificates.crt:ca-certificates
  xz:xz-utils
  file:file
  man:man-db
  direnv:direnv
  /usr/share/lmod/lmod/init/bash:lmod
  /usr/sbin/slurmctld:slurmctld
  /usr/sbin/slurmd:slurmd
  sbatch:slurm-client
  /usr/sbin/munged:munge
  tclsh:tcl
  cmake:cmake
  flock:util-linux
  setsid:util-linux
  unshare:util-linux
  dpkg:python3-pip
  strace:strace
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

# Debian's environment-modules conflicts with lmod, so it is not installed: its
# modulecmd.tcl is unpacked into target/debian/ and run with tclsh by the tests.
em=target/debian/environment-modules
if [[ ! -e $em/usr/lib/modulecmd.tcl ]]; then
  say "unpacking Debian's environment-modules into $em"
  tmp=$(mktemp -d)
  chmod 755 "$tmp" # apt downloads as its own user when run as root
  if ! (cd "$tmp" && apt-get download environment-modules >/dev/null 2>&1); then
    # No package lists yet on this machine (nothing else was missing).
    if [[ $(id -u) -eq 0 ]]; then apt-get update -qq; else sudo apt-get update -qq; fi
    (cd "$tmp" && apt-get download environment-modules >/dev/null)
  fi
  mkdir -p "$em"
  dpkg-deb -x "$tmp"/environment-modules_*.deb "$em"
  rm -rf "$tmp"
fi

# Every suite runs even when an earlier one fails (`--no-fail-fast`, and no
# `set -e` around them); the summary at the end counts every test of every
# suite and the script exits non-zero if any test or any build failed.
LOGS=$(mktemp -d)
trap 'rm -rf "$LOGS"' EXIT
STEPS=()
STEP_RCS=()

# run_suite NAME CMD...: runs CMD, shows its output, keeps it for the summary.
run_suite() {
  local name=$1 rc
  shift
  say "$name: $*"
  set +e
  "$@" 2>&1 | tee "$LOGS/${#STEPS[@]}.log"
  rc=${PIPESTATUS[0]}
  set -e
  STEPS+=("$name")
  STEP_RCS+=("$rc")
}

run_suite "all targets" cargo test --locked --all-targets --no-fail-fast "$@"
# The shim's benchmark probe exists only in builds with its feature.
run_suite "shim probe" cargo test --locked --no-fail-fast --features shim-probe --test e2e probe
# Doc tests (`--all-targets` leaves them out): the compile_fail examples pin
# what the public API must reject.
run_suite "doc tests" cargo test --locked --no-fail-fast --doc
# What scripts/install.sh installs: the dist build, linked with
# src/activation/shims/shim-path.ld, whose assertions fail the link when the file is stale
# for the compiler it records (build.rs).
run_suite "dist build (shim layout)" cargo build --locked --profile dist

# The Windows build, tested under Wine (scripts/windows-test.sh installs the
# Rust target, mingw-w64 and Wine). Exit 3 means it could not be set up here
# (no network for the target, no root for the packages): "not run", not failed.
say "windows (under Wine): scripts/windows-test.sh"
set +e
scripts/windows-test.sh 2>&1 | tee "$LOGS/${#STEPS[@]}.log"
rc=${PIPESTATUS[0]}
set -e
if [[ $rc == 3 ]]; then
  STEPS+=("windows under Wine (not run)")
  STEP_RCS+=(skipped)
else
  STEPS+=("windows under Wine")
  STEP_RCS+=("$rc")
fi

# A user's or packager's clone has nothing beside it: run the unit tests in a
# fresh clone of this commit (HEAD) in an empty directory. It shares
# this checkout's target directory, so only the cudaenv crate is rebuilt.
# Nothing in src/ or tests/ may name the development machine's reference data
# either (the e2e suite is not re-run in the clone; this catches it there).
clone_test() {
  local dir target
  # The development machine's reference folder, spelled in two parts so that
  # this guard does not find itself.
  local outside="shared/""reference"
  if refs=$(grep -rln "$outside" src tests); then
    printf 'error: these files read ../%s, which a clone does not have:\n%s\n' "$outside" "$refs"
    printf 'hint: copy what they need into registry/inputs/ or tests/fixtures/ (see their README.md)\n'
    return 1
  fi
  dir=$(mktemp -d)
  target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  git clone --quiet --no-hardlinks . "$dir/cudaenv" &&
    git -C "$dir/cudaenv" checkout --quiet --detach "$(git rev-parse HEAD)" &&
    [[ ! -e $dir/shared ]] &&
    (cd "$dir/cudaenv" && CARGO_TARGET_DIR=$target cargo test --locked --no-fail-fast --lib)
  local rc=$?
  rm -rf "$dir"
  return $rc
}
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  run_suite "fresh clone (HEAD, nothing beside it)" clone_test
else
  say "fresh clone: not run (this is not a git checkout)"
  STEPS+=("fresh clone (not a git checkout)")
  STEP_RCS+=(skipped)
fi

# --- summary ------------------------------------------------------------------------
passed=0 failed=0 ignored=0 bad=0
for i in "${!STEPS[@]}"; do
  log="$LOGS/$i.log"
  p=0 f=0 g=0
  if [[ -f $log ]]; then
    read -r p f g < <(sed -n 's/^test result: [A-Za-z]*\. \([0-9]*\) passed; \([0-9]*\) failed; \([0-9]*\) ignored;.*/\1 \2 \3/p' "$log" |
      awk '{p+=$1; f+=$2; g+=$3} END {print p+0, f+0, g+0}')
  fi
  passed=$((passed + p)) failed=$((failed + f)) ignored=$((ignored + g))
  rc=${STEP_RCS[$i]}
  if [[ $rc == skipped ]]; then
    status="not run"
  elif [[ $rc == 0 ]]; then
    status="ok"
  else
    status="FAILED (exit $rc)"
    bad=$((bad + 1))
  fi
  printf '==> %-34s %-16s %5d passed %4d failed %4d ignored\n' "${STEPS[$i]}" "$status" "$p" "$f" "$g" >&2
done
if ((ignored)); then
  say "ignored tests (each with its reason):"
  cat "$LOGS"/*.log | sed -n 's/^test \(.*\) \.\.\. ignored\(, \)\{0,1\}\(.*\)$/    \1  \3/p' | sort -u >&2
fi
if ((failed)); then
  say "failed tests:"
  cat "$LOGS"/*.log | sed -n 's/^test \(.*\) \.\.\. FAILED$/    \1/p' | sort -u >&2
fi
say "total: $passed passed, $failed failed, $ignored ignored"
if ((failed || bad)); then
  say "FAILED: $bad of ${#STEPS[@]} steps failed"
  exit 1
fi
say "all ${#STEPS[@]} steps passed"
