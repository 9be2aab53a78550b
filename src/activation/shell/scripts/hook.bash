
# What the selection depends on, read with builtins only (no process): the
# directory, CUDAENV_VERSION, the nearest .cuda-version (path and content) or
# the global version file, every .tool-versions on the way (it may pin through
# a `cuda` line), and the generation of the store and of the system root
# (bumped by rehash).
__cudaenv_fingerprint() {
  local d=${CUDAENV_DIR:-$PWD} f c r=${CUDAENV_ROOT:-$HOME/.cudaenv}
  [[ $d == /* ]] || d=$PWD/$d
  d=${d%/}
  __cudaenv_fp=$PWD$'\x1f'${CUDAENV_VERSION-}$'\x1f'${CUDAENV_ROOT-}
  while :; do
    f=$d/.cuda-version
    if [[ -e $f || -L $f ]]; then
      c=
      [[ -f $f ]] && read -r -N 4097 c 2>/dev/null <"$f"
      __cudaenv_fp+=$'\x1f'$f$'\x1f'$c
      break
    fi
    f=$d/.tool-versions
    if [[ -e $f || -L $f ]]; then
      c=
      [[ -f $f ]] && read -r -N 65537 c 2>/dev/null <"$f"
      __cudaenv_fp+=$'\x1f'$f$'\x1f'$c
    fi
    if [[ -z $d ]]; then
      c=
      [[ -f $r/version ]] && read -r -N 4097 c 2>/dev/null <"$r/version"
      __cudaenv_fp+=$'\x1f'global$'\x1f'$c
      break
    fi
    d=${d%/*}
  done
  c=
  [[ -f $r/shims/.generation ]] && read -r c 2>/dev/null <"$r/shims/.generation"
  __cudaenv_fp+=$'\x1f'$c
  if [[ -n ${CUDAENV_SYSTEM_ROOT-} ]]; then
    c=
    [[ -f $CUDAENV_SYSTEM_ROOT/shims/.generation ]] && read -r c 2>/dev/null <"$CUDAENV_SYSTEM_ROOT/shims/.generation"
    __cudaenv_fp+=$'\x1f'$CUDAENV_SYSTEM_ROOT$'\x1f'$c
  fi
}

# The active version vanished (removed by hand, no rehash): look again.
__cudaenv_gone() {
  [[ -n ${CUDAENV_ACTIVE-} && ! -e ${CUDAENV_ROOT:-$HOME/.cudaenv}/versions/$CUDAENV_ACTIVE/.cudaenv/complete ]] &&
    [[ -z ${CUDAENV_SYSTEM_ROOT-} || ! -e $CUDAENV_SYSTEM_ROOT/versions/$CUDAENV_ACTIVE/.cudaenv/complete ]]
}

_cudaenv_hook() {
  local __cudaenv_status=$?
  __cudaenv_fingerprint
  if [[ $__cudaenv_fp != "${__cudaenv_last-}" ]] || __cudaenv_gone; then
    __cudaenv_last=$__cudaenv_fp
    eval "$(command @CUDAENV@ hook-env --shell bash)"
  fi
  return $__cudaenv_status
}

# Run first at every prompt, keeping the user's PROMPT_COMMAND (string or array).
# (Written to work under `set -u` too.)
if [[ -n ${PROMPT_COMMAND+set} && ${PROMPT_COMMAND@a} == *a* ]]; then
  [[ " ${PROMPT_COMMAND[*]} " == *" _cudaenv_hook "* ]] || PROMPT_COMMAND=(_cudaenv_hook "${PROMPT_COMMAND[@]}")
else
  case $'\n'"${PROMPT_COMMAND-}"$'\n' in
    *$'\n'_cudaenv_hook$'\n'*) ;;
    *) PROMPT_COMMAND=_cudaenv_hook${PROMPT_COMMAND:+$'\n'$PROMPT_COMMAND} ;;
  esac
fi
