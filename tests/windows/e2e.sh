#!/usr/bin/env bash
# End-to-end tests of the Windows build, under Wine: the real cudaenv.exe, a
# temporary root, NVIDIA's real win_amd64 wheels from PyPI served by a
# loopback index, the Windows loader loading cudart64_12.dll, Wine's cmd.exe.
# Run by scripts/windows-test.sh, which sets CUDAENV_EXE, HELPERS (the
# mingw-built helpers) and the Wine prefix; Debian's p7zip makes the fixture
# of NVIDIA's Windows installer. Each check prints `ok NAME` or
# `FAILED NAME` with what it saw; the exit status is non-zero if any failed,
# 3 ("not run") if the wheel cannot be had from PyPI.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
: "${CUDAENV_EXE:?}" "${HELPERS:?}" "${CUDAENV_LINUX:?}"

# The wheels these tests install, pinned (PyPI's sha256 of the files): the
# Windows one, and the Linux one of the same release for the locks made for
# both platforms.
WHEEL=nvidia_cuda_runtime_cu12-12.4.127-py3-none-win_amd64.whl
WHEEL_SHA256=09c2e35f48359752dfa822c09918211844a3d93c100a715d79b59591130c5e1e
LINUX_WHEEL=nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl
LINUX_WHEEL_SHA256=64403288fa2136ee8e467cdc9c9427e0434110899d07c779f25b5c068934faa5
ONLY_CUDART=--without=cublas,cufft,curand,cusolver,cusparse,nvrtc,nvjitlink,cupti

passed=0 failed=0
ok() { printf 'ok %s\n' "$1"; passed=$((passed + 1)); }
bad() {
  printf 'FAILED %s\n' "$1"
  shift
  printf '    %s\n' "$@"
  failed=$((failed + 1))
}

tmp=$(mktemp -d)
cleanup() {
  [[ -n ${server_pid:-} ]] && kill "$server_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

# --- the wheel, from live PyPI ------------------------------------------------------
wheels=$HELPERS/wheels
mkdir -p "$wheels"
if [[ ! -f $wheels/$WHEEL ]]; then
  python3 -m pip download --quiet --no-deps --only-binary=:all: --platform win_amd64 \
    --python-version 3.12 -d "$wheels" nvidia-cuda-runtime-cu12==12.4.127 >&2 ||
    { echo "not run: cannot download $WHEEL from PyPI" >&2; exit 3; }
fi
if [[ ! -f $wheels/$LINUX_WHEEL ]]; then
  python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
    --python-version 3.12 -d "$wheels" nvidia-cuda-runtime-cu12==12.4.127 >&2 ||
    { echo "not run: cannot download $LINUX_WHEEL from PyPI" >&2; exit 3; }
fi
for pair in "$WHEEL $WHEEL_SHA256" "$LINUX_WHEEL $LINUX_WHEEL_SHA256"; do
  set -- $pair
  got=$(sha256sum "$wheels/$1" | cut -d' ' -f1)
  if [[ $got != "$2" ]]; then
    echo "error: $1 has sha256 $got, not $2" >&2
    exit 1
  fi
done

# --- a loopback index ---------------------------------------------------------------
nvidia=$tmp/nvidia # NVIDIA's download server (its paths), filled below
mkdir -p "$nvidia"
python3 tests/windows/index_server.py "$wheels" "$nvidia" >"$tmp/port" &
server_pid=$!
for _ in $(seq 50); do [[ -s $tmp/port ]] && break; sleep 0.1; done
port=$(cat "$tmp/port")

win() { winepath -w "$1" 2>/dev/null; }
root=$tmp/root
project=$tmp/project
mkdir -p "$root" "$project"
export CUDAENV_ROOT=$(win "$root")
export CUDAENV_PYPI_INDEX=http://127.0.0.1:$port/simple
export NO_COLOR=1
# Windows programs end their lines with CRLF: compare without the CRs.
# Under load, Wine 8 has been seen to end cudaenv.exe with exit 1 and no output at all (once in
# three runs of this set, on a different check each time; with WINEDEBUG=-all a crash prints
# nothing). Such a run is run again, once, and said on stderr, so it stays visible in the log.
cudaenv() {
  local out rc
  out=$(wine "$CUDAENV_EXE" "$@" 2>&1 | tr -d '\r'; exit "${PIPESTATUS[0]}")
  rc=$?
  if [[ $rc == 1 && -z $out ]]; then
    echo "note: wine ended cudaenv.exe $* with exit 1 and no output; running it again" >&2
    out=$(wine "$CUDAENV_EXE" "$@" 2>&1 | tr -d '\r'; exit "${PIPESTATUS[0]}")
    rc=$?
  fi
  [[ -n $out ]] && printf '%s\n' "$out"
  return "$rc"
}

# --- install of the real wheel --------------------------------------------------------
out=$(cudaenv install 12.4.1 "$ONLY_CUDART" 2>&1)
rc=$?
if [[ $rc == 0 && -f $root/versions/12.4.1/bin/cudart64_12.dll && -f $root/versions/12.4.1/include/cuda_runtime.h ]]; then
  ok "install_of_the_win_amd64_wheel_lays_out_bin_and_include"
else
  bad "install_of_the_win_amd64_wheel_lays_out_bin_and_include" "exit $rc" "$out" "$(ls -R "$root/versions" 2>&1 | head -20)"
fi

# --- local + exec: the loader finds cudart64_12.dll on PATH ----------------------------------
cp "$HELPERS/cudart_probe.exe" "$HELPERS/argecho.exe" "$project/" 2>/dev/null
out=$(cd "$project" && cudaenv local 12.4.1 2>&1 && cat .cuda-version)
if [[ $out == *12.4.1* ]]; then ok "local_writes_the_pin"; else bad "local_writes_the_pin" "$out"; fi
out=$(cd "$project" && cudaenv exec -- "$(win "$project/cudart_probe.exe")" 2>&1)
rc=$?
if [[ $rc == 0 && $out == *"runtime=12040"* && $out == *'versions\12.4.1\bin\cudart64_12.dll'* ]]; then
  ok "exec_loads_cudart64_12_from_the_pinned_version"
else
  bad "exec_loads_cudart64_12_from_the_pinned_version" "exit $rc" "$out"
fi
out=$(cd "$project" && cudaenv exec -- "$(win "$project/cudart_probe.exe")" 2>&1)
if [[ $out == *"device_count_rc=35"* ]]; then
  ok "without_a_driver_the_runtime_says_insufficient_driver"
else
  bad "without_a_driver_the_runtime_says_insufficient_driver" "$out"
fi

# --- exec forwards exit codes and Windows command-line quoting --------------------------------
out=$(cd "$project" && ARGECHO_EXIT=7 cudaenv exec -- "$(win "$project/argecho.exe")" 'a b' 'c"d' '' 'e\' 2>&1)
rc=$?
want=$'arg=[a b]\narg=[c"d]\narg=[]\narg=[e\\]'
if [[ $rc == 7 && $out == "$want"* && $out == *'CUDA_PATH='*'versions\12.4.1'* ]]; then
  ok "exec_forwards_the_exit_code_quoted_arguments_and_CUDA_PATH"
else
  bad "exec_forwards_the_exit_code_quoted_arguments_and_CUDA_PATH" "exit $rc" "$out"
fi

# --- shims: copies or hard links of cudaenv.exe that spawn, wait and forward -------------------
mkdir -p "$tmp/toolkit/bin"
cp "$HELPERS/argecho.exe" "$tmp/toolkit/bin/"
printf '@echo batch tool %%1\r\n@exit /b 5\r\n' >"$tmp/toolkit/bin/batchtool.bat"
cp "$root/versions/12.4.1/bin/cudart64_12.dll" "$tmp/toolkit/bin/"
cp -r "$root/versions/12.4.1/include" "$tmp/toolkit/"
out=$(cudaenv link tool "$(win "$tmp/toolkit")" 2>&1)
rc=$?
if [[ $rc == 0 && -f $root/shims/argecho.exe ]]; then
  ok "link_makes_an_exe_shim"
else
  bad "link_makes_an_exe_shim" "exit $rc" "$out" "$(ls "$root/shims" 2>&1)"
fi
out=$(cd "$project" && cudaenv local tool 2>&1 && ARGECHO_EXIT=42 wine "$root/shims/argecho.exe" 'x y' 'q"' 2>&1 | tr -d '\r'; exit "${PIPESTATUS[0]}")
rc=$?
if [[ $rc == 42 && $out == *'arg=[x y]'*'arg=[q"]'* && $out == *'CUDA_PATH='*'toolkit'* ]]; then
  ok "a_shim_forwards_the_exit_code_and_quoted_arguments"
else
  bad "a_shim_forwards_the_exit_code_and_quoted_arguments" "exit $rc" "$out"
fi
# A .bat tool gets an .exe shim (a shim is cudaenv.exe), which runs the .bat.
out=$(cd "$project" && wine "$root/shims/batchtool.exe" hello 2>&1 | tr -d '\r'; exit "${PIPESTATUS[0]}")
rc=$?
if [[ $rc == 5 && $out == *'batch tool hello'* && ! -e $root/shims/batchtool.bat ]]; then
  ok "a_batch_tool_gets_an_exe_shim_that_runs_it"
else
  bad "a_batch_tool_gets_an_exe_shim_that_runs_it" "exit $rc" "$out" "$(ls "$root/shims" 2>&1)"
fi

# --- global, version, versions; uninstall of a link forgets it and leaves the tree ------------
mkdir -p "$tmp/elsewhere"
g=$(cudaenv global 12.4.1 2>&1 && cd "$tmp/elsewhere" && cudaenv version 2>&1)
grc=$?
here=$(cd "$project" && cudaenv version 2>&1)
all=$(cudaenv versions 2>&1)
if [[ $grc == 0 && $g == *"12.4.1"* && $here == *"tool"* && $all == *"12.4.1"* && $all == *"tool"* ]]; then
  ok "global_version_and_versions_pick_and_list_like_on_linux"
else
  bad "global_version_and_versions_pick_and_list_like_on_linux" "exit $grc" "$g" "--- in the project:" "$here" "--- versions:" "$all"
fi
out=$(cudaenv uninstall --yes tool 2>&1)
rc=$?
if [[ $rc == 0 && ! -e $root/versions/tool && -f $tmp/toolkit/bin/argecho.exe && -f $tmp/toolkit/bin/cudart64_12.dll &&
  ! -e $root/shims/argecho.exe ]]; then
  ok "uninstall_of_a_link_forgets_it_and_leaves_the_tree"
else
  bad "uninstall_of_a_link_forgets_it_and_leaves_the_tree" "exit $rc" "$out" "$(ls "$root/versions" "$root/shims" "$tmp/toolkit/bin" 2>&1)"
fi

# --- env --shell cmd, run by Wine's cmd.exe ----------------------------------------------------
(cd "$project" && cudaenv local 12.4.1 >/dev/null 2>&1)
out=$(cd "$project" && cudaenv env --shell cmd 2>&1)
rc=$?
printf '@echo off\r\n%s\r\necho CUDA_PATH=%%CUDA_PATH%%\r\necho CUDA_PATH_V12_4=%%CUDA_PATH_V12_4%%\r\n"%s"\r\n' \
  "${out//$'\n'/$'\r\n'}" "$(win "$project/cudart_probe.exe")" >"$project/activate.cmd"
run=$(cd "$project" && wine cmd /c "$(win "$project/activate.cmd")" 2>&1 | tr -d '\r')
if [[ $rc == 0 && $out == *"set "* && $run == *'CUDA_PATH=Z:'*'12.4.1'* && $run == *'CUDA_PATH_V12_4=Z:'* && $run == *"runtime=12040"* ]]; then
  ok "env_shell_cmd_activates_in_cmd_exe"
else
  bad "env_shell_cmd_activates_in_cmd_exe" "exit $rc" "$out" "--- cmd.exe:" "$run"
fi

# --- verify without a driver -----------------------------------------------------------------
# NVIDIA's cudart64_12.dll answers cudaRuntimeGetVersion without a driver:
# verify still reports the runtime, and where it was loaded from.
out=$(cd "$project" && cudaenv verify 2>&1)
rc=$?
if [[ $rc == 10 && $out == *"error: no NVIDIA driver"* && $out == *"nvcuda.dll"* && $out == *"hint: "* &&
  $out == *"runtime   CUDA 12.4"* && $out == *"cudart    12.4"*"cudart64_12.dll"* ]]; then
  ok "verify_without_a_driver_reports_the_runtime_and_fails_clearly"
else
  bad "verify_without_a_driver_reports_the_runtime_and_fails_clearly" "exit $rc" "$out"
fi

# --- 11.2+cudnn8.1 from NVIDIA's Windows installer and cuDNN zip (fixtures) ------------------
# NVIDIA's servers cannot be reached from here, so both files are made here
# with the real layouts and DLL names: the installer is a program (a stub)
# with a 7z archive appended, laid out as cuda_11.2.2_461.33_win10.exe is
# (one directory per component, each with its packages; as
# JuliaPackaging/Yggdrasil's CUDA_full@11.2 recipe unpacks it with 7z),
# compressed by Debian's p7zip with the BCJ2 filter that 7-Zip uses for
# programs; the cuDNN zip holds cuda/bin, cuda/include, cuda/lib/x64 as
# NVIDIA's does. They are served at NVIDIA's paths by the loopback server and
# pinned as a site pins its own files ($CUDAENV_ROOT/registry/), the installer
# by md5 as NVIDIA publishes it.
export CUDAENV_NVIDIA_MIRROR=http://127.0.0.1:$port/nvidia
inst=$tmp/installer
for f in setup.exe EULA.txt cuda_documentation/Doc/EULA.txt Display.Driver/nvlddmkm.sys \
  cuda_cudart/cudart/cudart.nvi cuda_cudart/cudart/bin/cudart64_110.dll cuda_cudart/cudart/bin/cudart32_110.dll \
  cuda_cudart/cudart/include/cuda_runtime.h cuda_cudart/cudart/lib/x64/cudart.lib cuda_cudart/cudart/lib/Win32/cudart.lib \
  libcublas/cublas/bin/cublas64_11.dll libcublas/cublas/bin/cublasLt64_11.dll libcublas/cublas/bin/nvblas64_11.dll \
  libcublas/cublas_dev/include/cublas_api.h libcublas/cublas_dev/lib/x64/cublas.lib \
  libcufft/cufft/bin/cufft64_10.dll libcufft/cufft/bin/cufftw64_10.dll libcurand/curand/bin/curand64_10.dll \
  libcusolver/cusolver/bin/cusolver64_11.dll libcusolver/cusolver/bin/cusolverMg64_11.dll \
  libcusparse/cusparse/bin/cusparse64_11.dll cuda_nvrtc/nvrtc/bin/nvrtc64_112_0.dll \
  cuda_nvrtc/nvrtc/bin/nvrtc-builtins64_112.dll cuda_cupti/cupti/extras/CUPTI/lib64/cupti64_2020.3.1.dll \
  cuda_nvcc/nvcc/bin/ptxas.exe cuda_nvcc/nvcc/include/crt/host_config.h cuda_nvcc/nvcc/lib/x64/cudadevrt.lib \
  cuda_nvcc/nvcc/nvvm/bin/nvvm64_40_0.dll; do
  mkdir -p "$(dirname "$inst/$f")"
  printf 'MZ fixture %s\n' "$f" >"$inst/$f"
done
cp "$HELPERS/argecho.exe" "$inst/cuda_nvcc/nvcc/bin/nvcc.exe" # a real program, so BCJ2 has code to filter
exe_rel=compute/cuda/11.2.2/local_installers/cuda_11.2.2_461.33_win10.exe
zip_rel=compute/redist/cudnn/v8.1.0/cudnn-11.2-windows-x64-v8.1.0.77.zip
mkdir -p "$(dirname "$nvidia/$exe_rel")" "$(dirname "$nvidia/$zip_rel")"
(cd "$inst" && 7z a -bd -mf=BCJ2 "$tmp/payload.7z" . >/dev/null) || { echo "error: 7z could not make the fixture" >&2; exit 1; }
# The stub: a real Windows program, then the six signature bytes once as a
# decoy (7-Zip's own stub carries them), then the archive.
{ cat "$HELPERS/argecho.exe"; printf '7z\274\257\047\034decoy'; cat "$tmp/payload.7z"; } >"$nvidia/$exe_rel"
python3 - "$nvidia/$zip_rel" <<'PY'
import sys, zipfile
names = ["cuda/bin/cudnn64_8.dll"] + [f"cuda/bin/cudnn_{p}_{s}64_8.dll" for p in ("ops", "cnn", "adv") for s in ("infer", "train")]
names += ["cuda/include/cudnn.h", "cuda/lib/x64/cudnn.lib", "cuda/NVIDIA_SLA_cuDNN_Support.txt"]
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for n in names:
        z.writestr(n, f"MZ fixture {n}\n")
    z.writestr("cuda/include/cudnn_version.h", "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n")
PY
pin() { # CUDA version, installer md5
  mkdir -p "$root/registry"
  printf '[[runfile]]\ncuda = "%s"\nplatform = "windows-x86_64"\npath = "%s"\nmd5 = "%s"\n' \
    "$1" "compute/cuda/$1/local_installers/cuda_$1_461.33_win10.exe" "$2" >>"$root/registry/runfiles.toml"
}
pin 11.2.2 "$(md5sum "$nvidia/$exe_rel" | cut -d' ' -f1)"
printf '[[archive]]\nversion = "8.1.0.77"\ncuda_min = "11.0"\ncuda_max = "11.2"\nplatform = "windows-x86_64"\npath = "%s"\nsha256 = "%s"\nsource = "test fixture"\n' \
  "$zip_rel" "$(sha256sum "$nvidia/$zip_rel" | cut -d' ' -f1)" >"$root/registry/cudnn-legacy.toml"

v=11.2.2+cudnn8.1.0.77
out=$(cudaenv install 11.2+cudnn8.1 2>&1)
rc=$?
tree=$root/versions/$v
want=(bin/cudart64_110.dll bin/cublas64_11.dll bin/cublasLt64_11.dll bin/cufft64_10.dll bin/curand64_10.dll
  bin/cusolver64_11.dll bin/cusparse64_11.dll bin/nvrtc64_112_0.dll extras/CUPTI/lib64/cupti64_2020.3.1.dll
  include/cuda_runtime.h include/cublas_api.h lib/x64/cudart.lib lib/x64/cublas.lib
  bin/cudnn64_8.dll bin/cudnn_ops_infer64_8.dll bin/cudnn_adv_train64_8.dll include/cudnn.h lib/x64/cudnn.lib)
absent=()
for f in "${want[@]}"; do [[ -f $tree/$f ]] || absent+=("$f"); done
# Not the installer's own files, 32-bit libraries, nor (runtime profile) the compiler.
extra=$(cd "$tree" 2>/dev/null && find . \( -name setup.exe -o -name '*.nvi' -o -name Win32 -o -name nvcc.exe -o -name nvlddmkm.sys -o -name EULA.txt \) | head)
if [[ $rc == 0 && ${#absent[@]} == 0 && -z $extra ]]; then
  ok "install_11_2_cudnn8_1_from_the_windows_installer_and_zip"
else
  bad "install_11_2_cudnn8_1_from_the_windows_installer_and_zip" "exit $rc" "$out" "missing: ${absent[*]}" "extra: $extra"
fi
out=$(cudaenv prefix "$v" 2>&1)
rc=$?
if [[ $rc == 0 && $out == *"versions\\$v" && -f $(winepath -u "$out" 2>/dev/null)/bin/cudart64_110.dll && -f $(winepath -u "$out" 2>/dev/null)/bin/cudnn64_8.dll ]]; then
  ok "prefix_of_the_stack_holds_cudart64_110_and_cudnn64_8_in_bin"
else
  bad "prefix_of_the_stack_holds_cudart64_110_and_cudnn64_8_in_bin" "exit $rc" "$out"
fi
out=$(cudaenv install --profile devel --force 11.2+cudnn8.1 2>&1 && CUDAENV_VERSION=$v cudaenv which nvcc 2>&1)
rc=$?
if [[ $rc == 0 && $out == *"versions\\$v\\bin\\nvcc.exe"* && -f $tree/bin/ptxas.exe && -f $tree/lib/x64/cudadevrt.lib && -f $tree/bin/cudart64_110.dll ]]; then
  ok "the_devel_profile_adds_nvcc_and_which_finds_it"
else
  bad "the_devel_profile_adds_nvcc_and_which_finds_it" "exit $rc" "$out"
fi
# An installer that is not the one pinned: refused by its md5, nothing installed.
bad_rel=compute/cuda/11.2.1/local_installers/cuda_11.2.1_461.33_win10.exe
mkdir -p "$(dirname "$nvidia/$bad_rel")"
cp "$nvidia/$exe_rel" "$nvidia/$bad_rel"
pin 11.2.1 0123456789abcdef0123456789abcdef
out=$(cudaenv install 11.2.1+cudnn8.1 2>&1)
rc=$?
if [[ $rc == 4 && $out == *"md5 mismatch"* && ! -e $root/versions/11.2.1+cudnn8.1.0.77 ]]; then
  ok "an_installer_that_fails_its_md5_installs_nothing"
else
  bad "an_installer_that_fails_its_md5_installs_nothing" "exit $rc" "$out" "$(ls "$root/versions")"
fi

# --- 12.4.1 from NVIDIA's redist, windows-x86_64 archives (fixtures) --------------------------
# NVIDIA's real manifest (registry/inputs/manifests), with the windows-x86_64
# archive of cuda_cudart replaced by one of the same name and layout (top
# directory, bin\, include\, lib\x64\) holding NVIDIA's real cudart64_12.dll
# (from the PyPI wheel above), its sha256 and size rewritten; cudaenv takes
# the rewritten manifest through `update --trust-mirror`, as for Linux.
python3 - "$nvidia" "$root/versions/12.4.1/bin/cudart64_12.dll" <<'PY'
import hashlib, json, os, sys, zipfile
nvidia, dll = sys.argv[1:]
redist = os.path.join(nvidia, "compute/cuda/redist")
m = json.load(open("registry/inputs/manifests/cuda/redistrib_12.4.1.json"))
e = m["cuda_cudart"]["windows-x86_64"]
path = os.path.join(redist, e["relative_path"])
os.makedirs(os.path.dirname(path), exist_ok=True)
top = os.path.basename(e["relative_path"])[: -len(".zip")]
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
    z.write(dll, f"{top}/bin/cudart64_12.dll")
    z.writestr(f"{top}/include/cuda_runtime_api.h", "#define CUDART_VERSION 12040\n")
    z.writestr(f"{top}/lib/x64/cudart.lib", "fixture import library\n")
    z.writestr(f"{top}/LICENSE", "fixture\n")
data = open(path, "rb").read()
e["sha256"] = hashlib.sha256(data).hexdigest()
e["size"] = str(len(data))
e.pop("md5", None)
open(os.path.join(redist, "redistrib_12.4.1.json"), "w").write(json.dumps(m, indent=2))
PY
redist_root=$(win "$tmp/redist-root")
out=$(CUDAENV_ROOT=$redist_root cudaenv update --trust-mirror 2>&1 &&
  CUDAENV_ROOT=$redist_root cudaenv install 12.4.1 --source nvidia "$ONLY_CUDART" 2>&1)
rc=$?
rtree=$tmp/redist-root/versions/12.4.1
run=$(cd "$project" && CUDAENV_ROOT=$redist_root cudaenv exec --version 12.4.1 -- "$(win "$project/cudart_probe.exe")" 2>&1)
if [[ $rc == 0 && -f $rtree/bin/cudart64_12.dll && -f $rtree/include/cuda_runtime_api.h && -f $rtree/lib/x64/cudart.lib &&
  $run == *"runtime=12040"* && $run == *'redist-root\versions\12.4.1\bin\cudart64_12.dll'* ]]; then
  ok "install_12_4_from_nvidia_redist_windows_archives_and_load_cudart64_12"
else
  bad "install_12_4_from_nvidia_redist_windows_archives_and_load_cudart64_12" "exit $rc" "$out" "--- exec:" "$run" \
    "$(cd "$rtree" 2>/dev/null && find . | head -20)"
fi
unset CUDAENV_NVIDIA_MIRROR

# --- trace: not on Windows, said clearly -----------------------------------------------------
out=$(cd "$project" && cudaenv trace -- "$(win "$project/cudart_probe.exe")" 2>&1)
rc=$?
if [[ $rc == 20 && $out == *"error: trace is not available on windows-x86_64"* && $out == *"hint: "*"verify"* ]]; then
  ok "trace_says_it_is_not_available_on_windows_and_what_to_use"
else
  bad "trace_says_it_is_not_available_on_windows_and_what_to_use" "exit $rc" "$out"
fi

# --- compat, explain and doctor know Windows ------------------------------------------------
# compat shows the native Windows builds by default here: TensorFlow's end at 2.10.
out=$(cudaenv compat tensorflow==2.15 2>&1)
rc=$?
if [[ $rc == 7 && $out == *"no GPU support on native Windows"* && $out == *"use WSL2"* && $out == *"cudaenv install 11.2+cudnn8.1"* ]]; then
  ok "compat_on_windows_says_tensorflow_after_2_10_has_no_gpu_there"
else
  bad "compat_on_windows_says_tensorflow_after_2_10_has_no_gpu_there" "exit $rc" "$out"
fi
out=$(cudaenv explain "Could not load dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found" 2>&1)
rc=$?
# 11.2+cudnn8.1 is installed by now (above): the fix is to pin it, not to install it.
if [[ $rc == 0 && $out == *"System32, then each directory on PATH"* && $out == *"fix:         cudaenv local 11.2.2+cudnn8.1.0.77"* && $out != *LD_LIBRARY_PATH* ]]; then
  ok "explain_gives_the_windows_fix_for_a_missing_dll"
else
  bad "explain_gives_the_windows_fix_for_a_missing_dll" "exit $rc" "$out"
fi
# The toolkit linked above holds cudart64_12.dll too: first on PATH (WINEPATH),
# it shadows the pinned 12.4.1's; a CUDA_PATH_V11_2 names a tree that is gone.
out=$(cd "$project" && WINEPATH="$(win "$tmp/toolkit/bin")" CUDA_PATH_V11_2='C:\no\such\v11.2' cudaenv doctor --json --no-python 2>&1)
rc=$?
summary=$(printf '%s' "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)
w = r["facts"].get("windows") or {}
codes = {f["code"]: f["level"] for f in r["findings"]}
print(codes.get("path-shadow"), codes.get("cuda-path-stale"), "device-nodes" in codes,
      (w.get("system_dir") or "").lower().endswith("system32"),
      [p["name"] for p in w.get("cuda_path_versions", [])])' 2>&1)
if [[ $rc == 16 && $summary == "error warning False True ['CUDA_PATH_V11_2']" ]]; then
  ok "doctor_gathers_windows_facts_and_finds_path_shadowing_and_a_stale_cuda_path"
else
  bad "doctor_gathers_windows_facts_and_finds_path_shadowing_and_a_stale_cuda_path" "exit $rc" "$summary" "$(printf '%s' "$out" | head -c 3000)"
fi

# --- one cuda.lock for Linux and Windows ---------------------------------------------------
# Made on Linux (the native cudaenv) for both platforms, it installs the
# Windows files under Windows and the Linux ones on Linux; made under
# Windows, the same.
for maker in linux windows; do
  team=$tmp/team-$maker
  mkdir -p "$team"
  if [[ $maker == linux ]]; then
    out=$(cd "$team" && CUDAENV_ROOT=$tmp/linux-root-$maker "$CUDAENV_LINUX" lock 12.4.1 "$ONLY_CUDART" \
      --platform linux-x86_64,windows-x86_64 2>&1)
  else
    out=$(cd "$team" && CUDAENV_ROOT=$(win "$tmp/win-root-$maker") cudaenv lock 12.4.1 "$ONLY_CUDART" \
      --platform linux-x86_64,windows-x86_64 2>&1)
  fi
  rc=$?
  lock=$(cat "$team/cuda.lock" 2>/dev/null | tr -d '\r')
  win_out=$(cd "$team" && CUDAENV_ROOT=$(win "$tmp/win-root-$maker") cudaenv install --frozen 2>&1)
  win_rc=$?
  linux_out=$(cd "$team" && CUDAENV_ROOT=$tmp/linux-root-$maker "$CUDAENV_LINUX" install --frozen 2>&1)
  linux_rc=$?
  if [[ $rc == 0 && $lock == *'platform = "windows-x86_64"'* && $lock == *"$WHEEL"* && $lock == *"$LINUX_WHEEL"* &&
    $win_rc == 0 && -f $tmp/win-root-$maker/versions/12.4.1/bin/cudart64_12.dll &&
    $linux_rc == 0 && -f $tmp/linux-root-$maker/versions/12.4.1/lib64/libcudart.so.12 ]]; then
    ok "a_lock_made_on_${maker}_installs_on_both_platforms"
  else
    bad "a_lock_made_on_${maker}_installs_on_both_platforms" "lock: exit $rc" "$out" "$lock" \
      "windows install: exit $win_rc" "$win_out" "linux install: exit $linux_rc" "$linux_out"
  fi
done

# The line scripts/test.sh counts, as cargo test prints it.
verdict=ok
((failed == 0)) || verdict=FAILED
printf 'test result: %s. %d passed; %d failed; 0 ignored; (the Wine end-to-end set)\n' "$verdict" "$passed" "$failed"
((failed == 0))
