# cudaenv's English messages for `doctor`'s findings and fixes (the source).


## The driver and the GPUs

doctor-wsl-no-libcuda = WSL2 without /usr/lib/wsl/lib/libcuda.so.1: the Windows NVIDIA driver does not expose the GPU to Linux
doctor-wsl-no-libcuda-fix = install or update the NVIDIA driver on Windows (never a Linux driver inside WSL), then `wsl --shutdown`
doctor-wsl-foreign-libcuda = WSL2 loads libcuda from { $path }, not the Windows driver's /usr/lib/wsl/lib
doctor-wsl-foreign-libcuda-fix = remove the Linux driver package that installed { $path }; WSL2 must use /usr/lib/wsl/lib
doctor-wsl-ok = WSL2: libcuda comes from the Windows driver (/usr/lib/wsl/lib)
doctor-no-driver = no NVIDIA driver found (no /proc/driver/nvidia/version, /sys/module/nvidia/version or loadable libcuda.so.1): CUDA programs can be built here but not run
doctor-no-driver-fix = nothing to do on CI or build machines; elsewhere install the NVIDIA driver (in containers: run with --gpus all)
doctor-driver-version-unknown = libcuda.so.1 loads, but its driver version could not be read
doctor-driver = NVIDIA driver { $driver } (from { $source })
doctor-driver-max = NVIDIA driver { $driver } (from { $source }), supports CUDA ≤ { $cuda }
doctor-driver-mismatch = the kernel module and libcuda are different driver releases ({ $list }): CUDA fails with "system has unsupported display driver / cuda driver combination" or NVML "Driver/library version mismatch"
doctor-driver-mismatch-fix = reboot (or reload the nvidia kernel modules) after a driver upgrade
doctor-libcuda-missing = the kernel driver is loaded but libcuda.so.1 cannot be: { $error }
doctor-libcuda-missing-fix = install the driver's user-space libraries (same version as the kernel module); in containers use the NVIDIA container toolkit
doctor-cuinit-no-device-fix = check that the GPU is present and bound to the nvidia driver (lspci -k)
doctor-cuinit-driver-mismatch-fix = reboot after the driver upgrade, or remove a CUDA forward-compatibility libcuda from LD_LIBRARY_PATH
doctor-cuinit-compat-fix = remove the cuda-compat directory from LD_LIBRARY_PATH: forward compatibility only works on data-center GPUs
doctor-cuinit-failed-fix = check /dev/nvidia-uvm (`sudo nvidia-modprobe -u -c=0`), dmesg for NVRM errors, or reboot
doctor-cuinit-failed = cuInit failed: { $error }
doctor-no-gpu = the driver is loaded but reports no GPU
doctor-no-gpu-fix = check that the GPU is visible to this machine or container
doctor-gpu-arch = { $sm }, { $family }
doctor-gpu-arch-unknown-family = { $sm }, unknown architecture
doctor-gpu-cc-unknown = compute capability unknown
doctor-gpu = GPU { $index }: { $name } ({ $arch })
doctor-gpu-memory = GPU { $index }: { $name } ({ $arch }, { $gib } GiB)

doctor-driver-named = driver { $driver }
doctor-target-driver-named = the target machine's driver { $driver }
doctor-this-gpu = this GPU
doctor-target-gpu = the target machine's GPU

## Planning for another machine

doctor-target-driver-max = driver { $driver } (supports CUDA ≤ { $cuda })
doctor-target-driver = driver { $driver }
doctor-target-driver-unknown = driver unknown
doctor-target = planning for a target machine: { $driver }, { $gpus }; the checks of the active version are for it, this machine's own driver and GPUs are not judged
doctor-target-arch-unknown = planning for a target machine: { $driver }, GPU architecture unknown; the checks of the active version are for it, this machine's own driver and GPUs are not judged

## The active version

doctor-active-missing = no usable active version: { $error }
doctor-active-missing-fix = install it (`cudaenv install SPEC`) or select another (`cudaenv local SPEC`)
doctor-active-system = active: system (set by { $origin }); cudaenv adds nothing to the environment
doctor-active-no-cudnn = CUDA { $cuda }, no cuDNN
doctor-active-versions-unknown = versions unknown
doctor-active = active: { $name } ({ $what }), set by { $origin }
doctor-active-with-libraries = { $what }{ $libraries }
doctor-origin-default = default: no version is set
doctor-origin-argument = the command line
doctor-origin-shell = the { $variable } environment variable
doctor-origin-global = { $path } (global)
doctor-not-activated = this environment is not activated for { $name } (CUDAENV_ACTIVE={ $active }): programs started from here do not get its libraries
doctor-not-activated-unset = this environment is not activated for { $name } (CUDAENV_ACTIVE=unset): programs started from here do not get its libraries
doctor-not-activated-fix = enable the shell hook (`eval "$(cudaenv init bash)"`), or run programs through `cudaenv exec`
doctor-driver-fit = { $driver } runs CUDA { $cuda }
doctor-driver-minor-compat = { $driver } runs CUDA { $cuda } only through minor version compatibility: code that needs PTX JIT for this toolkit fails ("the provided PTX was compiled with an unsupported toolchain")
doctor-driver-minor-compat-fix = upgrade the driver to ≥ { $need }, or use the CUDA release the driver shipped with
doctor-driver-too-old = { $driver } is too old for CUDA { $cuda } (needs ≥ { $need }): programs fail with "CUDA driver version is insufficient for CUDA runtime version"
doctor-driver-too-old-fix = upgrade the NVIDIA driver to ≥ { $need }
doctor-driver-too-old-fix-or-select = upgrade the NVIDIA driver to ≥ { $need }, or select CUDA ≤ { $cuda } (`cudaenv local { $cuda }`)
doctor-cudnn-cuda = cuDNN { $cudnn } is not built for CUDA { $cuda }
doctor-cudnn-cuda-by-rule = cuDNN { $cudnn } is not built for CUDA { $cuda }, only for { $built_for } ({ $rule })
doctor-cudnn-cuda-fix = install a matching pair, e.g. `cudaenv install { $spec }`
doctor-cudnn-cuda-ok-by-rule = cuDNN { $cudnn } goes with CUDA { $cuda }: built for { $built_for } ({ $rule })

## The active CUDA and the GPUs' architectures

doctor-arch-native = CUDA { $cuda } supports { $sm }
doctor-arch-compatible = CUDA { $cuda } runs on { $sm } through its { $via } machine code (same architecture family)
doctor-arch-deprecated = { $sm } is deprecated since CUDA { $since }; a future release drops it
doctor-arch-deprecated-fix = stay on CUDA < { $removed } for this GPU
doctor-arch-deprecated-fix-unknown = stay on CUDA < the release that removes it for this GPU
doctor-arch-removed = CUDA { $cuda } does not support { $gpu } ({ $sm }, { $family }): support ended in CUDA { $since }; expect "no kernel image is available for execution on the device"
doctor-arch-removed-fix = select a CUDA release before { $since } (e.g. `cudaenv local 12.9`)
doctor-arch-needs = { $sm } needs CUDA ≥ { $first }
doctor-arch-newer-than-known = { $sm } is newer than any CUDA cudaenv knows
doctor-arch-too-new = CUDA { $cuda } predates { $gpu } ({ $sm }, { $family }): { $need }. The stack has no native code for it, only PTX that the driver JIT-compiles at each library's first use (minutes for cuBLAS, again whenever the compute cache, CUDA_CACHE_MAXSIZE, overflows); libraries without PTX fail with "no kernel image is available"
doctor-arch-too-new-fix = use CUDA ≥ { $first } (`cudaenv install { $first }`, then `cudaenv local { $first }`)
doctor-arch-too-new-fix-frameworks = use CUDA ≥ { $first } (`cudaenv install { $first }`, then `cudaenv local { $first }`) with a framework built for it: { $frameworks }
doctor-arch-too-new-fix-newest = use the newest CUDA release
doctor-sm-family = { $sm } ({ $family })
doctor-unknown-architecture = unknown architecture

## Library paths

doctor-libcuda-stub = { $dir } on LD_LIBRARY_PATH holds the link-time stub libcuda.so: programs load it instead of the driver and fail with "CUDA driver version is insufficient"
doctor-libcuda-stub-fix = remove { $dir } from LD_LIBRARY_PATH (stubs are for linking only: use -L, not the loader path)
doctor-libcuda-compat = { $dir } on LD_LIBRARY_PATH holds its own libcuda (a CUDA forward-compatibility package?): it replaces the installed driver's
doctor-libcuda-compat-fix = keep it only on data-center GPUs with a supported driver branch; otherwise remove it from LD_LIBRARY_PATH
doctor-ld-shadow = { $dir } on LD_LIBRARY_PATH comes before { $name }'s libraries and shadows them ({ $libs })
doctor-ld-shadow-fix = remove { $dir } from LD_LIBRARY_PATH (e.g. in ~/.bashrc); cudaenv puts the active version's directories there itself
doctor-ld-extra = { $dir } on LD_LIBRARY_PATH provides libraries { $name } lacks ({ $libs }); programs asking for them mix two CUDA installs
doctor-ld-extra-fix = remove { $dir } from LD_LIBRARY_PATH, or install a version that has them
doctor-ld-copies = LD_LIBRARY_PATH holds several CUDA runtimes ({ $dirs }); the first one wins for each library
doctor-ld-copies-fix = keep one CUDA on LD_LIBRARY_PATH, or let cudaenv manage it (`cudaenv local VERSION`)
doctor-ld-system = LD_LIBRARY_PATH provides CUDA libraries from { $dirs }
doctor-ldconfig = the system library cache provides { $libs } from { $dir }, which { $name } lacks: programs asking for them load the system copy
doctor-ldconfig-fix = install a version with those libraries (e.g. add cuDNN: `cudaenv install CUDA+cudnnX`), or ignore this if nothing uses them
doctor-cuda-home = { $var }={ $value }, but the active version is { $name } ({ $home }): build tools (nvcc, CMake, torch extensions) use { $value }
doctor-cuda-home-no-tree = { $var }={ $value }, but the active version is { $name } (no toolkit tree): build tools (nvcc, CMake, torch extensions) use { $value }
doctor-cuda-home-fix = unset { $var } or activate { $name } (`eval "$(cudaenv env)"`)
doctor-list-more = { $first }, … { $more } more

## The environment: visible devices, device nodes

doctor-visible-devices-none = CUDA_VISIBLE_DEVICES={ $value } hides every GPU: CUDA reports "no CUDA-capable device is detected"
doctor-visible-devices-none-fix-no-gpu = unset CUDA_VISIBLE_DEVICES to use a GPU
doctor-visible-devices-none-fix = unset CUDA_VISIBLE_DEVICES, or set it to the GPUs to use (e.g. 0)
doctor-visible-devices-bad = CUDA_VISIBLE_DEVICES names GPUs that do not exist ({ $bad }); CUDA ignores everything after the first invalid entry
doctor-visible-devices-bad-fix = use indices below { $count }
doctor-dxg-denied = /dev/dxg is not readable and writable by this user
doctor-dxg-denied-fix = check the WSL distribution's permissions on /dev/dxg
doctor-dxg-missing = /dev/dxg is missing: WSL2 GPU paravirtualisation is off
doctor-dxg-missing-fix = update WSL (`wsl --update`) and the Windows driver
doctor-device-nodes-denied = no read/write access to { $nodes }
doctor-device-nodes-denied-fix = add the user to the group owning them (often `video`: `sudo usermod -aG video $USER`, then log in again), or fix the container's device mapping
doctor-device-nodes-missing = the driver is loaded but /dev/nvidiactl or /dev/nvidiaN is missing
doctor-device-nodes-missing-fix = run `sudo nvidia-modprobe -c=0` (or `nvidia-smi` once as root); in containers pass the devices (--gpus all)
doctor-uvm-missing = /dev/nvidia-uvm is missing: CUDA creates it on first use only where nvidia-modprobe may; otherwise cuInit fails with CUDA_ERROR_UNKNOWN
doctor-uvm-missing-fix = run `sudo nvidia-modprobe -u -c=0`
doctor-device-nodes-ok = { $count } device nodes, all readable and writable

## nvidia-smi, Python and the frameworks

doctor-nvidia-smi-active = the active toolkit is { $name } (CUDA { $cuda })
doctor-nvidia-smi-no-active = it says nothing about which toolkit is installed or active
doctor-nvidia-smi = nvidia-smi's "CUDA Version: { $cuda }" is the newest CUDA this driver supports, not an installed toolkit; { $active }
doctor-python-no-frameworks = no torch, tensorflow, jax, cupy, cuda-python or numba-cuda
doctor-python = Python { $version } at { $executable }: { $frameworks }
doctor-wheel-overlap = { $packages } are installed together and both own { $file }: the one installed last overwrote the other's file, so a framework that needs the other gets the wrong library
doctor-wheel-overlap-fix = keep one CUDA major per Python environment (a second venv for the other framework); to restore this file: `pip install --force-reinstall --no-deps { $package }=={ $version }`

# The GPU code in a framework's own libraries (their .nv_fatbin) against the GPU
doctor-kernels-native = { $package } { $version } has machine code for { $gpu } ({ $sm }, { $family }): its kernels for { $sass } run there
doctor-kernels-jit = { $package } { $version } has no machine code for { $gpu } ({ $sm }, { $family }), only PTX for { $ptx } ({ $file }: machine code for { $sass }): it runs after the driver JIT-compiles that PTX, which makes the first start slow (minutes for a large framework; cached afterwards, up to CUDA_CACHE_MAXSIZE)
doctor-kernels-missing = { $package } { $version } cannot run on { $gpu } ({ $sm }, { $family }): { $file } has machine code for { $sass } and PTX for { $ptx }, none of which this GPU can run ("no kernel image is available for execution on the device")
doctor-kernels-partial = { $package } { $version } runs on { $gpu } ({ $sm }), but its { $file } has machine code for { $sass } and PTX for { $ptx }: { $runs ->
    [jit] the operations in that library run only after the driver JIT-compiles its PTX (a slow first use)
   *[no] this GPU can run none of it, so the operations in that library fail there ("no kernel image is available for execution on the device")
}
doctor-kernels-none = none
doctor-kernels-fix = { $which ->
    [same] install the build of { $package } { $release } for CUDA { $cuda }: that release also has a build whose CUDA supports { $sm } (after installing, doctor reads the architectures it really has): `{ $command }`
    [newer] install { $package } { $release } built for CUDA { $cuda }: the first release after yours with a build whose CUDA supports { $sm } (after installing, doctor reads the architectures it really has): `{ $command }`
   *[newest] install { $package } { $release } built for CUDA { $cuda }: the newest release with a build whose CUDA still supports { $sm } (after installing, doctor reads the architectures it really has): `{ $command }`
}
doctor-kernels-fix-none = no { $package } release in cudaenv's tables is built for { $sm }: build it from source for { $sm } (for torch: TORCH_CUDA_ARCH_LIST)
doctor-kernels-unreadable = could not read the GPU code of { $package }'s { $file }: { $error }
doctor-kernels-unreadable-fix = reinstall it: `pip install --force-reinstall --no-deps { $package }`
doctor-wheels-cuda-runtime = CUDA runtime { $version }
doctor-wheels-with-cudnn = { $cuda } + cuDNN { $cudnn }
doctor-how-pathfinder = cuda-pathfinder searches site-packages before LD_LIBRARY_PATH and before CUDA_PATH/CUDA_HOME
doctor-how-torch = torch preloads them by path and its libraries carry an RPATH into site-packages/nvidia
doctor-instead-torch = PyPI's CUDA builds of torch always use their wheels; a stack serves extensions you compile against it (`CUDA_HOME`, nvcc)
doctor-how-tensorflow = TensorFlow's libraries carry an RPATH into site-packages/nvidia
doctor-instead-tensorflow = install plain `tensorflow=={ $version }` (not `[and-cuda]`) and remove the nvidia-*-cu{ $major } wheels
doctor-how-jax = the plugin opens the wheels' libraries by path from site-packages
doctor-instead-jax = install `jax[cuda{ $major }-local]` (the plugin without NVIDIA's wheels) and remove the nvidia-* wheels
doctor-how-cupy = CuPy looks in site-packages/nvidia before CUDA_PATH
doctor-instead-cupy = install `{ $package }` without its `[ctk]` extra and remove the nvidia-* wheels (and `cuda-toolkit`)
doctor-instead-cuda-python = install `{ $package }` without its `cu{ $major }` extra and remove the nvidia-* wheels
doctor-keep-off-fix = set `CUDAENV_BUNDLED_CUDA=wheels` (or `bundled-cuda = "wheels"` in $CUDAENV_ROOT/config.toml): activation then leaves the version's libraries off LD_LIBRARY_PATH next to these wheels
doctor-framework-cpu = { $name } is a CPU-only build: it never uses a GPU, whatever the CUDA stack
doctor-framework-cpu-fix = reinstall a CUDA build: `pip install torch --index-url https://download.pytorch.org/whl/cu121` (pick the cuXYZ `cudaenv compat torch` suggests)
doctor-framework-finds-cuda-pathfinder = { $name } finds CUDA at run time (cuda-pathfinder: site-packages first, then the loader path); it has no CUDA major of its own
doctor-framework-finds-cuda-path = { $name } finds CUDA at run time (CUDA_PATH, then the loader path); it has no CUDA major of its own
doctor-framework-uses-wheels = { $name } loads { $what } from its NVIDIA wheels ({ $how })
doctor-framework-bundled-no-active = { $uses }; it needs no cudaenv version. To use a cudaenv stack instead: { $instead }
doctor-framework-bundled-other-major = { $uses }; the active { $name } (CUDA { $cuda }) has other sonames and does not interfere
doctor-framework-bundled-kept-off = { $uses }; activation keeps the active { $name } off LD_LIBRARY_PATH next to these wheels (bundled-cuda = wheels)
doctor-framework-cudnn-mixed = { $uses }, but the active { $name } puts cuDNN { $have } first on LD_LIBRARY_PATH: cuDNN's sub-libraries (libcudnn_graph.so.{ $major }, libcudnn_cnn.so.{ $major } …), opened by soname, come from there and do not match the wheel's { $want }
doctor-framework-cudnn-mixed-jax = { $mixed }; its cuDNN operations (convolutions) may fail
doctor-framework-cudnn-mixed-error = { $mixed } ("cuDNN version incompatibility")
doctor-framework-jax-two-copies = { $uses }, and the active { $name } puts CUDA { $major } libraries with the same sonames first on LD_LIBRARY_PATH: what it opens by soname comes from the stack, what it opens by path from the wheels, so two copies of one library load into one process (`cudaenv trace -- python …` lists them)
doctor-framework-bundled-not-stack = { $uses }, not from the active { $name }: the stack serves what you compile, not this framework. To use the stack instead: { $instead }
doctor-framework-system-cuda = { $name } loads CUDA { $major } from the loader path: { $soname } in { $dir } ({ $origin }); no cudaenv version is active
doctor-framework-needs-cuda = { $name } needs { $stack } on the library path, and no cudaenv version is active nor a { $soname } on the loader path
doctor-framework-needs-major = it needs CUDA { $major }.x (libcudart.so.{ $soname_major }), the active version has CUDA { $cuda }
doctor-framework-built-with-newer-cuda = it was built with CUDA { $want }, newer than the active { $cuda }
doctor-framework-active-cuda-unknown = the active version's CUDA is unknown
doctor-framework-needs-cudnn = it needs cuDNN { $want }, the active version has none
doctor-framework-needs-cudnn-major = it needs cuDNN { $major }.x, the active version has { $have }
doctor-framework-built-with-newer-cudnn = it was built with cuDNN { $want }, newer than the active { $have } ("Loaded runtime CuDNN library … but source was compiled with …")
doctor-framework-matches = { $name } loads CUDA from the active { $active }, which matches it
doctor-framework-mismatch = { $name } does not match the active { $active }: { $problems }

## Containers

doctor-require-more = { $first } (and { $more } more constraints)
doctor-apptainer-nv = Apptainer/Singularity container: the host driver's libraries are bound in { $libs } (--nv)
doctor-apptainer-libs-off-path = { $libs } holds the host's libcuda.so.1 but is not on LD_LIBRARY_PATH: CUDA programs here cannot load the driver
doctor-apptainer-libs-off-path-fix = keep the LD_LIBRARY_PATH Apptainer sets (activation prepends to it; an image's %environment must not replace it), or add { $libs }
doctor-apptainer-no-nv = Apptainer/Singularity container without the host driver: { $libs } has no libcuda.so.1, so the container was started without --nv
doctor-apptainer-no-nv-fix = start it with `apptainer exec --nv IMAGE …` (`singularity exec --nv` for Singularity; `--nvccli` to use the NVIDIA container toolkit)
doctor-container = { $kind } container
doctor-nvidia-visible-devices = NVIDIA_VISIBLE_DEVICES={ $value }: the NVIDIA container runtime exposes no GPU to this container
doctor-nvidia-visible-devices-fix = start the container with `--gpus all` (or NVIDIA_VISIBLE_DEVICES=all under the NVIDIA runtime)
doctor-nvidia-capabilities = NVIDIA_DRIVER_CAPABILITIES={ $value } leaves out `compute`: the NVIDIA container runtime mounts no libcuda, so CUDA programs cannot run
doctor-nvidia-capabilities-fix = set NVIDIA_DRIVER_CAPABILITIES=compute,utility (or all) in the image; `cudaenv env --format dockerfile` prints the line
doctor-require-cuda-low = NVIDIA_REQUIRE_CUDA={ $shown } asks less than the active { $name } (CUDA { $cuda }) needs: the container runtime admits hosts whose driver cannot run it
doctor-require-cuda-low-fix = declare NVIDIA_REQUIRE_CUDA=cuda>={ $cuda } (`cudaenv env --format dockerfile { $name }` prints it)
doctor-require-cuda-ok = NVIDIA_REQUIRE_CUDA={ $shown } covers the active { $name }
doctor-disable-require = NVIDIA_DISABLE_REQUIRE is set: the container runtime ignores NVIDIA_REQUIRE_CUDA and starts this image on hosts whose driver is too old for it
doctor-disable-require-fix = unset NVIDIA_DISABLE_REQUIRE unless the image brings a forward-compatibility driver

doctor-host-compiler-none = nvcc has no host compiler to use ({ $from } names none that answers --version)
doctor-host-compiler-none-fix = install g++ (Debian: apt install g++), or set CUDAENV_HOST_COMPILER to one
doctor-host-compiler-by-setting = , set by CUDAENV_HOST_COMPILER / host-compiler
doctor-host-compiler-ok = host compiler: { $compiler } ({ $from }{ $setting }); { $limits }
doctor-host-compiler-refused = nvcc of { $name } refuses its host compiler { $compiler } ({ $from }): { $limits }
doctor-host-compiler-fix-switch = export CUDAENV_HOST_COMPILER=auto (or host-compiler = "auto" in config.toml): activation then points nvcc at { $compiler }
doctor-host-compiler-fix-install = install a GCC it accepts (Debian/Ubuntu: apt install g++-{ $gcc }), then export CUDAENV_HOST_COMPILER=auto; or use a newer CUDA release

## Windows: the DLL search path, CUDA_PATH_V*, the driver's DLL, the Visual C++ runtime

doctor-win-nvcuda-missing = nvidia-smi reports a driver, but { $dir } has no nvcuda.dll, the driver's CUDA DLL: CUDA programs find no driver
doctor-win-nvcuda-missing-fix = reinstall NVIDIA's Windows driver (its installer's "clean installation"); nvcuda.dll belongs in System32
doctor-win-path-shadow = { $dir } on PATH comes before { $name }'s DLLs and shadows them ({ $libs }): Windows loads the first DLL of a name it finds
doctor-win-path-shadow-fix = remove { $dir } from PATH (Settings → System → About → Advanced system settings → Environment Variables; NVIDIA's CUDA installer added it), or start programs activated: `cudaenv exec -- …` or the PowerShell hook put the active version's bin first
doctor-win-path-extra = { $dir } on PATH holds CUDA DLLs that { $name } lacks ({ $libs }): a program that asks for them loads that toolkit's
doctor-win-path-extra-fix = remove { $dir } from PATH unless you mean to mix that toolkit in; `cudaenv install` can add the library to a stack instead
doctor-win-path-copies = PATH holds several CUDA toolkits' bin directories ({ $dirs }); for each DLL name the first one wins
doctor-win-path-copies-fix = keep one of them on PATH, or none and let cudaenv put the active version's first (`cudaenv local VERSION`, then `cudaenv exec` or the PowerShell hook)
doctor-win-cuda-path-missing = { $var }={ $value }, which does not exist: a toolkit removed without its variable (Visual Studio's CUDA build rules for that release fail)
doctor-win-cuda-path-other-release = { $var }={ $value }, a CUDA { $tree } tree: builds that ask for CUDA { $named } get { $tree }
doctor-win-cuda-path-remove-fix = remove it in PowerShell: [Environment]::SetEnvironmentVariable('{ $var }', $null, 'User') ('Machine' for a system variable, as administrator), or in the Environment Variables dialog
doctor-win-cuda-path-not-active = { $var }={ $value }, but the active version of that release is { $name }: Visual Studio's CUDA build rules use { $value }
doctor-win-cuda-path-not-active-fix = build from an activated shell (`cudaenv exec -- msbuild …`, or the PowerShell hook), which sets { $var } to { $name }
doctor-win-cuda-path-ok = { $vars }: each names an existing CUDA tree of its release
doctor-win-vc-runtime-ok = Visual C++ runtime: msvcp140.dll, msvcp140_1.dll, vcruntime140.dll, vcruntime140_1.dll (in { $dirs })
doctor-win-vc-runtime-missing = the Visual C++ runtime's { $dlls } is in neither System32 nor a directory on PATH: TensorFlow's import fails ("DLL load failed while importing _pywrap_tensorflow_internal", "Could not find the DLL(s) 'msvcp140_1.dll'"), and so do other Windows builds that link it. This is not about CUDA
doctor-win-vc-runtime-missing-fix = install the Microsoft Visual C++ Redistributable 2015–2022, x64: https://aka.ms/vs/17/release/vc_redist.x64.exe
doctor-win-not-activated-fix = activate it in PowerShell (`cudaenv init pwsh | Out-String | Invoke-Expression`, in $PROFILE for every new shell), or run programs through `cudaenv exec -- …`; in cmd: `cudaenv env --shell cmd > activate.cmd`, then `call activate.cmd`
doctor-win-cuda-home-fix = activate { $name } in this shell (the PowerShell hook, or `cudaenv exec -- …`), which points { $var } at it; NVIDIA's installer set { $var } for its own toolkit
doctor-win-tensorflow-no-gpu = tensorflow { $version } is installed for native Windows, where TensorFlow after 2.10 has no GPU support: it runs on the CPU whatever CUDA is active
doctor-win-no-driver = no NVIDIA driver found (no nvidia-smi.exe on PATH, in System32 or in NVIDIA Corporation\NVSMI, and no nvcuda.dll in System32): CUDA programs can be built here but not run
doctor-win-no-driver-fix = nothing to do on CI or build machines; elsewhere install NVIDIA's Windows driver for the GPU (GeForce/Studio, or the data-center driver)
