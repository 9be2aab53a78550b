# cudaenv for bash; add to ~/.bashrc:  eval "$(cudaenv init bash)"
case ":${PATH-}:" in
  *:@SHIMS@:*) ;;
  *) export PATH=@SHIMS@"${PATH:+:$PATH}" ;;
esac

# `cudaenv shell …` must change this shell, so its output is evaluated here.
cudaenv() {
  if [ "$#" -ge 2 ] && [ "$1" = shell ] && [ "$2" != -h ] && [ "$2" != --help ]; then
    shift
    local __cudaenv_code
    __cudaenv_code=$(command @CUDAENV@ shell --integrated --shell bash "$@") || return
    eval "$__cudaenv_code"
  else
    command @CUDAENV@ "$@"
  fi
}
