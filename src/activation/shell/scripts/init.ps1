# cudaenv for PowerShell; add to $PROFILE:  cudaenv init pwsh | Out-String | Invoke-Expression
$__cudaenvShims = @SHIMS@
# PATH's separator is `;` on Windows and `:` elsewhere.
$__cudaenvSep = [System.IO.Path]::PathSeparator
if (-not (($env:PATH -split $__cudaenvSep) -contains $__cudaenvShims)) {
    $env:PATH = if ($env:PATH) { $__cudaenvShims + $__cudaenvSep + $env:PATH } else { $__cudaenvShims }
}

# `cudaenv shell …` must change this shell, so its output is evaluated here.
function global:cudaenv {
    if ($args.Count -ge 2 -and $args[0] -eq 'shell' -and $args[1] -notin '-h', '--help') {
        $rest = $args[1..($args.Count - 1)]
        $code = & @CUDAENV@ shell --integrated --shell pwsh @rest
        if ($LASTEXITCODE -eq 0) { Invoke-Expression ($code -join "`n") }
    } else {
        & @CUDAENV@ @args
    }
}
