# cudaenv for fish; add to ~/.config/fish/config.fish:  cudaenv init fish | source
contains -- @SHIMS@ $PATH; or set -gx PATH @SHIMS@ $PATH

# `cudaenv shell …` must change this shell, so its output is evaluated here.
function cudaenv
    if test (count $argv) -ge 2; and test "$argv[1]" = shell; and not contains -- "$argv[2]" -h --help
        set -l code (command @CUDAENV@ shell --integrated --shell fish $argv[2..-1]); or return
        string join \n -- $code | source
    else
        command @CUDAENV@ $argv
    end
end
