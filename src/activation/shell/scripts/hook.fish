
# What the selection depends on, read with builtins only (no process): the
# directory, CUDAENV_VERSION, the nearest .cuda-version (path and content) or
# the global version file, every .tool-versions on the way (it may pin through
# a `cuda` line), and the generation of the store and of the system root
# (bumped by rehash).
function __cudaenv_fingerprint
    set -l d $PWD
    if test -n "$CUDAENV_DIR"
        set d $CUDAENV_DIR
        string match -q -- '/*' $d; or set d $PWD/$d
    end
    set -l r $HOME/.cudaenv
    test -n "$CUDAENV_ROOT"; and set r $CUDAENV_ROOT
    set d (string replace -r -- '/$' '' $d)
    set -l fp $PWD "$CUDAENV_VERSION" "$CUDAENV_ROOT"
    while true
        set -l f $d/.cuda-version
        if test -e $f; or test -L $f
            set -l c ''
            test -f $f; and read -z -n 4097 c <$f 2>/dev/null
            set -a fp $f "$c"
            break
        end
        set -l t $d/.tool-versions
        if test -e $t; or test -L $t
            set -l c ''
            test -f $t; and read -z -n 65537 c <$t 2>/dev/null
            set -a fp $t "$c"
        end
        if test -z "$d"
            set -l c ''
            test -f $r/version; and read -z -n 4097 c <$r/version 2>/dev/null
            set -a fp global "$c"
            break
        end
        set d (string replace -r -- '/[^/]*$' '' $d)
    end
    set -l c ''
    test -f $r/shims/.generation; and read c <$r/shims/.generation 2>/dev/null
    set -a fp "$c"
    if test -n "$CUDAENV_SYSTEM_ROOT"
        set -l s ''
        test -f $CUDAENV_SYSTEM_ROOT/shims/.generation; and read s <$CUDAENV_SYSTEM_ROOT/shims/.generation 2>/dev/null
        set -a fp $CUDAENV_SYSTEM_ROOT "$s"
    end
    set -g __cudaenv_fp (string join \x1f -- $fp)
end

# The active version vanished (removed by hand, no rehash): look again.
function __cudaenv_gone
    set -l r $HOME/.cudaenv
    test -n "$CUDAENV_ROOT"; and set r $CUDAENV_ROOT
    test -n "$CUDAENV_ACTIVE"; and not test -e $r/versions/$CUDAENV_ACTIVE/.cudaenv/complete
    and begin
        test -z "$CUDAENV_SYSTEM_ROOT"; or not test -e $CUDAENV_SYSTEM_ROOT/versions/$CUDAENV_ACTIVE/.cudaenv/complete
    end
end

# On every directory change and before every prompt; the second call is free
# when nothing changed.
function _cudaenv_hook --on-variable PWD --on-event fish_prompt
    set -l cudaenv_status $status
    __cudaenv_fingerprint
    if test "$__cudaenv_fp" != "$__cudaenv_last"; or __cudaenv_gone
        set -g __cudaenv_last $__cudaenv_fp
        command @CUDAENV@ hook-env --shell fish | source
    end
    return $cudaenv_status
end
