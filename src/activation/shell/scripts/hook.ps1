
# What the selection depends on, read in-process (no child process): the
# directory, CUDAENV_VERSION, the nearest .cuda-version (path and content) or
# the global version file, every .tool-versions on the way (it may pin through
# a `cuda` line), and the generation of the store and of the system root
# (bumped by rehash).
function global:__cudaenvFingerprint {
    $root = if ($env:CUDAENV_ROOT) { $env:CUDAENV_ROOT } else { Join-Path $HOME '.cudaenv' }
    $here = (Get-Location -PSProvider FileSystem).ProviderPath
    $d = if ($env:CUDAENV_DIR) { $env:CUDAENV_DIR } else { $here }
    if (-not $d.StartsWith('/')) { $d = Join-Path $here $d }
    $fp = [System.Collections.Generic.List[string]]::new()
    $fp.Add($here); $fp.Add("$env:CUDAENV_VERSION"); $fp.Add("$env:CUDAENV_ROOT")
    $d = $d.TrimEnd('/')
    while ($true) {
        $f = "$d/.cuda-version"
        if ([System.IO.File]::Exists($f) -or [System.IO.Directory]::Exists($f) -or (Test-Path -LiteralPath $f)) {
            $c = ''
            try { if ([System.IO.File]::Exists($f)) { $c = [System.IO.File]::ReadAllText($f) } } catch { }
            $fp.Add($f); $fp.Add($c)
            break
        }
        $t = "$d/.tool-versions"
        if ([System.IO.File]::Exists($t) -or [System.IO.Directory]::Exists($t) -or (Test-Path -LiteralPath $t)) {
            $c = ''
            try { if ([System.IO.File]::Exists($t)) { $c = [System.IO.File]::ReadAllText($t) } } catch { }
            $fp.Add($t); $fp.Add($c)
        }
        if ($d -eq '') {
            $c = ''
            try { $c = [System.IO.File]::ReadAllText("$root/version") } catch { }
            $fp.Add('global'); $fp.Add($c)
            break
        }
        $d = $d.Substring(0, $d.LastIndexOf('/'))
    }
    $c = ''
    try { $c = [System.IO.File]::ReadAllText("$root/shims/.generation") } catch { }
    $fp.Add($c)
    if ($env:CUDAENV_SYSTEM_ROOT) {
        $c = ''
        try { $c = [System.IO.File]::ReadAllText("$env:CUDAENV_SYSTEM_ROOT/shims/.generation") } catch { }
        $fp.Add($env:CUDAENV_SYSTEM_ROOT); $fp.Add($c)
    }
    $fp -join [char]0x1f
}

# The active version vanished (removed by hand, no rehash): look again.
function global:__cudaenvGone {
    $root = if ($env:CUDAENV_ROOT) { $env:CUDAENV_ROOT } else { Join-Path $HOME '.cudaenv' }
    [bool]$env:CUDAENV_ACTIVE -and -not [System.IO.File]::Exists("$root/versions/$env:CUDAENV_ACTIVE/.cudaenv/complete") -and
        -not ($env:CUDAENV_SYSTEM_ROOT -and [System.IO.File]::Exists("$env:CUDAENV_SYSTEM_ROOT/versions/$env:CUDAENV_ACTIVE/.cudaenv/complete"))
}

function global:_cudaenv_hook {
    $fp = __cudaenvFingerprint
    if ($fp -ne $global:__cudaenvLast -or (__cudaenvGone)) {
        $global:__cudaenvLast = $fp
        $code = & @CUDAENV@ hook-env --shell pwsh
        if ($code) { Invoke-Expression ($code -join "`n") }
    }
}

# Run before every prompt, keeping the user's prompt function.
if (-not $global:__cudaenvPrompt) {
    $global:__cudaenvPrompt = $function:prompt
    function global:prompt {
        # The hook runs a program; keep the user's last exit code for their prompt.
        $lastExit = $global:LASTEXITCODE
        _cudaenv_hook
        $global:LASTEXITCODE = $lastExit
        & $global:__cudaenvPrompt
    }
}
