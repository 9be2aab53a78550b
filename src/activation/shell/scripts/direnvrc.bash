# cudaenv for direnv: `use cudaenv [SPEC]` in an .envrc activates a CUDA stack.
# Install once:
#   mkdir -p ~/.config/direnv/lib && cudaenv direnv > ~/.config/direnv/lib/cudaenv.sh
#
# `use cudaenv` activates what the directory selects (CUDAENV_VERSION, the
# nearest .cuda-version or .tool-versions `cuda` line, the global version),
# `use cudaenv 12.4` a given spec, with exactly the values `cudaenv env` prints.
# direnv gives the environment back when you leave the directory.
use_cudaenv() {
  local code d=${CUDAENV_DIR:-$PWD} r=${CUDAENV_ROOT:-$HOME/.cudaenv}
  local -a watched=("$r/version" "$r/shims/.generation")
  [[ $d == /* ]] || d=$PWD/$d
  d=${d%/}
  # Reload when a pin appears, changes or goes away here or above, or when
  # versions are installed or removed.
  while :; do
    watched+=("$d/.cuda-version" "$d/.tool-versions")
    [[ -z $d ]] && break
    d=${d%/*}
  done
  watch_file "${watched[@]}"
  code=$(command @CUDAENV@ env --shell bash "$@") || return
  eval "$code"
}
