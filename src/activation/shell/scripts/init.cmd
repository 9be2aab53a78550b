@REM cudaenv for cmd.exe (AutoRun: for /f "delims=" %i in ('cudaenv init cmd') do @%i)
@REM cmd has no prompt hook: the shims pick each directory's version themselves;
@REM `cudaenv env --shell cmd` gives the `set` lines for a batch file.
@set "PATH=@SHIMS@;%PATH%"
