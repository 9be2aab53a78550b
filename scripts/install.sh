#!/usr/bin/env bash
# Builds and installs cudaenv from this checkout, then installs and verifies a
# default CUDA stack, and ends by saying what to do next. Meant for a fresh
# Debian or Ubuntu machine:
#
#   bash scripts/install.sh                 # CUDA 12.4 + cuDNN 9 (default)
#   bash scripts/install.sh 12.6            # another spec
#   bash scripts/install.sh --modify-rc     # also add the PATH and init lines to your rc file
#   bash scripts/install.sh --binary PATH   # install a cudaenv already built, instead of building
#   bash scripts/install.sh 12.4.1 -- --without=cublas   # arguments after -- go to `cudaenv install`
#
# Installs build prerequisites only when missing (as root, or through sudo),
# installs Rust with rustup only when cargo is missing, puts `cudaenv` in
# ~/.cargo/bin, its shell completions and manual pages where bash, fish and
# man find them, runs `cudaenv install SPEC` and then `cudaenv verify` on it. A
# machine without an NVIDIA GPU or driver still gets the stack installed; verify
# then says so and the script ends successfully, stating what it could not check.
#
# It never edits a shell rc file unless --modify-rc is given. Running it again
# changes nothing that is already in place, and says so.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

usage() {
  sed -n '2,20s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

MODIFY_RC=false
BINARY=
SPEC=
INSTALL_ARGS=()
while (($#)); do
  case $1 in
    --modify-rc) MODIFY_RC=true ;;
    --binary)
      (($# >= 2)) || die "--binary needs the path of a cudaenv executable"
      BINARY=$2
      shift
      ;;
    --binary=*) BINARY=${1#--binary=} ;;
    -h | --help) usage; exit 0 ;;
    --) shift; INSTALL_ARGS=("$@"); break ;;
    -*) die "unknown option $1 (see: bash scripts/install.sh --help)" ;;
    *)
      [[ -z $SPEC ]] || die "one spec at a time (got $SPEC and $1)"
      SPEC=$1
      ;;
  esac
  shift
done
SPEC=${SPEC:-12.4+cudnn9}

# What this run changed, for the closing line.
CHANGED=()

# --- cudaenv itself ---------------------------------------------------------------------
BIN_DIR=${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin
CUDAENV=$BIN_DIR/cudaenv
before=$( [[ -f $CUDAENV ]] && sha256sum "$CUDAENV" | cut -d' ' -f1 || true )

if [[ -n $BINARY ]]; then
  [[ -x $BINARY ]] || die "--binary $BINARY is not an executable file"
  "$BINARY" --version >/dev/null 2>&1 || die "--binary $BINARY does not run (\`$BINARY --version\` failed)"
  mkdir -p "$BIN_DIR"
  if [[ $(sha256sum <"$BINARY" | cut -d' ' -f1) != "$before" ]]; then
    say "installing $BINARY as $CUDAENV"
    cp "$BINARY" "$CUDAENV.tmp.$$"
    chmod 755 "$CUDAENV.tmp.$$"
    mv -f "$CUDAENV.tmp.$$" "$CUDAENV"
  fi
else
  # --- build prerequisites ----------------------------------------------------------
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
    CHANGED+=("Debian packages ${missing[*]}")
  fi

  # The cargo found here may come from a PATH this script extends; whether the
  # user's own shells find cudaenv is checked below, against a new login shell.
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
    CHANGED+=("Rust (rustup)")
  fi
  say "building and installing cudaenv (cargo install --locked --profile dist --path .)"
  cargo install --locked --profile dist --path . --force
fi
[[ -x $CUDAENV ]] || die "the install did not produce $CUDAENV"
version=$("$CUDAENV" --version)
if [[ $(sha256sum <"$CUDAENV" | cut -d' ' -f1) == "$before" ]]; then
  say "$version at $CUDAENV: already installed, unchanged"
else
  say "installed $version at $CUDAENV"
  CHANGED+=("$CUDAENV")
fi

# --- completions and manual pages ---------------------------------------------------------
# put_file DEST: writes stdin to DEST unless DEST already holds exactly that
# (then it touches nothing, not even DEST's directory).
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
put_file() {
  local dest=$1 tmp
  cat >"$SCRATCH/new"
  if cmp -s "$SCRATCH/new" "$dest"; then
    return 1
  fi
  mkdir -p "$(dirname "$dest")"
  tmp=$(mktemp "$dest.XXXXXX")
  cat "$SCRATCH/new" >"$tmp"
  chmod 644 "$tmp"
  mv -f "$tmp" "$dest"
}
extras=()
DATA_HOME=${XDG_DATA_HOME:-$HOME/.local/share}
CONFIG_HOME=${XDG_CONFIG_HOME:-$HOME/.config}
if "$CUDAENV" completions --help >/dev/null 2>&1 && "$CUDAENV" man --help >/dev/null 2>&1; then
  # bash-completion loads this file the first time `cudaenv` is completed.
  if "$CUDAENV" completions bash | put_file "$DATA_HOME/bash-completion/completions/cudaenv"; then
    extras+=("$DATA_HOME/bash-completion/completions/cudaenv")
  fi
  # fish loads this file the first time `cudaenv` is completed.
  if command -v fish >/dev/null 2>&1 &&
    "$CUDAENV" completions fish | put_file "$CONFIG_HOME/fish/completions/cudaenv.fish"; then
    extras+=("$CONFIG_HOME/fish/completions/cudaenv.fish")
  fi
  # man finds pages in ../share/man of each PATH directory: ~/.cargo/share/man.
  MAN_DIR=$(dirname "$BIN_DIR")/share/man/man1
  "$CUDAENV" --quiet man --dir "$SCRATCH/man1"
  for page in "$SCRATCH"/man1/*.1; do
    if put_file "$MAN_DIR/$(basename "$page")" <"$page"; then
      extras+=("$MAN_DIR/$(basename "$page")")
    fi
  done
  if ((${#extras[@]})); then
    say "installed completions and manual pages (${#extras[@]} files: bash, fish, man in $MAN_DIR)"
    CHANGED+=("completions and manual pages")
  else
    say "completions and manual pages: already installed, unchanged"
  fi
else
  say "this build of cudaenv has no \`completions\` or \`man\` command: no completions or manual pages installed"
fi

# --- its main job: install and verify a stack --------------------------------------------
if ! "$CUDAENV" install --help >/dev/null 2>&1; then
  die "this build of cudaenv has no \`install\` command; cannot install $SPEC"
fi
versions_before=$("$CUDAENV" versions --bare 2>/dev/null || true)
say "cudaenv install $SPEC ${INSTALL_ARGS[*]}"
"$CUDAENV" install "$SPEC" "${INSTALL_ARGS[@]}"
if [[ $("$CUDAENV" versions --bare 2>/dev/null || true) != "$versions_before" ]]; then
  CHANGED+=("the stack $SPEC")
fi

if ! "$CUDAENV" verify --help >/dev/null 2>&1; then
  die "this build of cudaenv has no \`verify\` command; $SPEC is installed but unverified"
fi
say "cudaenv verify $SPEC"
set +e
"$CUDAENV" verify "$SPEC"
rc=$?
set -e
# Exit codes: `cudaenv help exit-codes`.
case $rc in
  0) say "$SPEC is installed and verified on this machine's GPU" ;;
  10) say "$SPEC is installed; not verified on a GPU: no NVIDIA driver could be loaded here" ;;
  13) say "$SPEC is installed; not verified on a GPU: no GPU is visible here" ;;
  *) die "$SPEC is installed but \`cudaenv verify\` failed (exit $rc; \`cudaenv help exit-codes\` explains it)" ;;
esac

# --- what the user must do next -------------------------------------------------------------
# The shell the user logs in with, its rc file, and the lines that go in it.
user_shell=${SHELL:-/bin/bash}
case $(basename "$user_shell") in
  zsh)
    shell=zsh rc="$HOME/.zshrc"
    path_line="export PATH=\"$BIN_DIR:\$PATH\""
    # Completions need compinit's `compdef`; the guard keeps a .zshrc without it quiet.
    init_lines=('eval "$(cudaenv init zsh)"' '(( $+functions[compdef] )) && eval "$(cudaenv completions zsh)"')
    which_cmd='whence -p cudaenv'
    ;;
  fish)
    shell=fish rc="$CONFIG_HOME/fish/config.fish"
    path_line="fish_add_path $BIN_DIR"
    init_lines=('cudaenv init fish | source')
    which_cmd='command -s cudaenv'
    ;;
  *)
    shell=bash rc="$HOME/.bashrc"
    path_line="export PATH=\"$BIN_DIR:\$PATH\""
    init_lines=('eval "$(cudaenv init bash)"')
    # Without Debian's bash-completion (absent on a minimal system) nothing
    # loads the completion file installed above: the rc file loads it.
    if [[ ! -f /usr/share/bash-completion/bash_completion && ! -f /etc/bash_completion ]]; then
      init_lines+=('eval "$(cudaenv completions bash)"')
    fi
    which_cmd='type -P cudaenv'
    ;;
esac
command -v "$user_shell" >/dev/null 2>&1 || user_shell=$(command -v "$shell" || echo /bin/bash)
rc_shown=${rc/#$HOME/\~}
path_line=${path_line//$HOME/\$HOME}

# Which cudaenv executable a new login shell of the user finds (not the shell
# function `init` defines), with nothing inherited from this process (whose
# PATH cargo's env file may have extended).
found=$(env -i HOME="$HOME" USER="${USER:-}" LOGNAME="${LOGNAME:-}" SHELL="$user_shell" TERM=dumb \
  timeout 20 "$user_shell" -l -i -c "$which_cmd" </dev/null 2>/dev/null | tail -n 1 || true)

lines=()
path_note=
if [[ $found != "$CUDAENV" ]]; then
  if grep -qxF -- "$path_line" "$rc" 2>/dev/null; then
    # Ours is there, yet a login shell does not find it: it does not read $rc.
    path_note="$rc_shown has the PATH line, but a new login shell does not read $rc_shown: source it from your login profile (for bash, ~/.profile or ~/.bash_profile: . ~/.bashrc)"
  else
    lines+=("$path_line")
  fi
fi
for l in "${init_lines[@]}"; do
  grep -qxF -- "$l" "$rc" 2>/dev/null || lines+=("$l")
done

if $MODIFY_RC && ((${#lines[@]})); then
  mkdir -p "$(dirname "$rc")"
  {
    printf '\n# added by cudaenv (scripts/install.sh)\n'
    printf '%s\n' "${lines[@]}"
  } >>"$rc"
  say "added to $rc_shown:"
  printf '      %s\n' "${lines[@]}" >&2
  CHANGED+=("$rc_shown")
  lines=()
  need_new_shell=true
fi

steps=()
if ((${#lines[@]})); then
  text="add these lines to $rc_shown (or run this script again with --modify-rc):"
  for l in "${lines[@]}"; do text+=$'\n'"       $l"; done
  if [[ -n $found && $found != "$CUDAENV" ]]; then
    text+=$'\n'"     (a new shell now finds another cudaenv first: $found)"
  fi
  steps+=("$text")
  need_new_shell=true
fi
if [[ -n $path_note ]]; then
  steps+=("$path_note")
fi
if [[ ${need_new_shell:-false} == true ]]; then
  steps+=("open a new shell (or: exec $shell -l) so that \`cudaenv\` and its shell integration are there")
fi
global=$("$CUDAENV" global 2>/dev/null || true)
if [[ -z $global || $global == system ]]; then
  steps+=("make the stack you installed the default, or pin it per project:
       cudaenv global $SPEC
       cd PROJECT && cudaenv local $SPEC")
fi

if ((${#steps[@]})); then
  say "next steps ($shell):"
  n=0
  for s in "${steps[@]}"; do
    n=$((n + 1))
    printf '  %d. %s\n' "$n" "$s" >&2
  done
else
  say "cudaenv is on PATH, set up in $rc_shown, and $global is the global version: nothing more to do"
fi
say "more: \`cudaenv help\` (topics: \`cudaenv help shell\`, \`cudaenv help versions\`)"
if ((${#CHANGED[@]})); then
  say "changed: $(IFS=';'; echo "${CHANGED[*]}" | sed 's/;/; /g')"
else
  say "nothing changed: everything was already installed and set up"
fi
