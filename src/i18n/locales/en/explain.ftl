# cudaenv's English messages for `explain` (the source; every other
# catalogue translates these keys). Placeholders are `{ $name }`; a
# value that must start with a space says so with `{" "}`.

## Whether an installed version provides what is missing

explain-installed-none = no installed version provides it
explain-installed-yes-active-has-it = yes: { $names } ({ $active } is active: the library is there, so the program is not running with its environment)
explain-installed-yes-active-other = yes: { $names } (the active version is { $active })
explain-installed-yes-none-active = yes: { $names } (no version is active)

## A library the dynamic loader did not find

explain-windows-dll-note = {" "}(a Windows DLL name: native Windows GPU support ends with TensorFlow 2.10; under WSL2 the Linux libraries are used)
explain-missing-driver-library = { $file } is the NVIDIA driver's own library: the program found no driver{ $windows }
explain-missing-driver-library-fix = install the NVIDIA driver (containers: run with --gpus all; WSL2: install the Windows driver, and make sure /usr/lib/wsl/lib is in the ldconfig cache)
explain-missing-tensorrt = { $file } is TensorRT, an optional inference library TensorFlow probes for; without it TensorFlow still uses the GPU
explain-missing-tensorrt-provided-by = TensorRT (not part of CUDA or cuDNN; cudaenv does not install it)
explain-missing-tensorrt-fix = nothing, unless you use TF-TRT: then `pip install tensorrt` matching your CUDA
explain-missing-cuda-library = the program asked the dynamic loader for { $file } by name and no directory on LD_LIBRARY_PATH, in the ldconfig cache or in its RUNPATH has it: it needs the { $provider } runtime libraries{ $windows }
explain-run-with-hook = run the program from a shell with the hook enabled (`eval "$(cudaenv init bash)"`) or through `cudaenv exec`
explain-missing-cudnn-sub-library = { $file } is one of cuDNN { $major }'s sub-libraries: libcudnn.so.{ $major } itself was found but this part of it was not — typically a partial cuDNN copy, or PyTorch's bundled cuDNN mixed with another on LD_LIBRARY_PATH{ $windows }
explain-missing-cudnn = the program needs cuDNN { $major } ({ $file }) and the dynamic loader found none{ $windows }
explain-run-with-active-cudnn = run it with the active environment (`cudaenv exec -- CMD`), and check `cudaenv doctor` for other cuDNN copies on LD_LIBRARY_PATH
explain-doctor-lists-cudnn-copies = cudaenv doctor   # lists every cuDNN copy the loader can see
explain-missing-unknown-library = { $file } was not found by the dynamic loader; cudaenv does not know which package provides it

## cuDNN version mismatch

explain-cudnn-install-or-framework = cudaenv install { $cuda }+cudnn{ $cudnn }   (or the CUDA your framework needs: `cudaenv compat FRAMEWORK`)
explain-cudnn-install-by-rule = cudaenv install { $cuda }+cudnn{ $cudnn }   (CUDA { $cuda }: { $rule } — or the CUDA your framework needs: `cudaenv compat FRAMEWORK`)
explain-cudnn-install-any-cuda = cudaenv install CUDA+cudnn{ $cudnn }   (CUDA: the release your framework needs; `cudaenv compat FRAMEWORK` tells)
explain-doctor-finds-older-cudnn = cudaenv doctor   # finds the older cuDNN copy that was loaded
explain-cudnn-version-mismatch = the program was built against cuDNN { $compiled } but loaded cuDNN { $loaded }; cuDNN must have the same major version and at least the same minor ({ $floor } or newer)

## The driver is older than the CUDA runtime

explain-cuda-needs-driver = CUDA { $cuda } needs driver { $driver }
explain-upgrade-driver-to = upgrade the NVIDIA driver to ≥ { $driver }
explain-upgrade-driver = upgrade the NVIDIA driver
explain-driver-runs-active-cuda = driver { $driver } does run the active CUDA { $cuda }, so the program loaded some other, newer CUDA runtime, or a link-time stub libcuda.so instead of the driver
explain-doctor-finds-stray-cudart = cudaenv doctor   # finds stray libcudart copies and stub libcuda.so on LD_LIBRARY_PATH
explain-run-with-active-environment = run the program with the active environment: cudaenv exec -- CMD
explain-use-cuda-driver-runs-installed = or use a CUDA this driver runs: cudaenv local { $name }
explain-use-cuda-driver-runs = or use a CUDA this driver runs (≤ { $cuda }): cudaenv install { $cuda } && cudaenv local { $cuda }
explain-driver-no-installed-fits = no installed version fits
explain-driver-installed-fit = installed versions that fit: { $names }
explain-driver-runs-up-to-named = this driver ({ $driver }) runs CUDA ≤ { $cuda }; { $fits }
explain-driver-runs-up-to = this driver runs CUDA ≤ { $cuda }; { $fits }
explain-check-stub-libcuda = check for a stub libcuda.so on LD_LIBRARY_PATH (…/lib64/stubs): `cudaenv doctor`
explain-driver-insufficient = the CUDA runtime the program loaded is newer than what the installed NVIDIA driver supports (or a link-time stub libcuda was loaded instead of the driver)

## No machine code for this GPU

explain-arch-cuda-range = { $sm }: CUDA { $first } up to (not including) { $removed }
explain-arch-cuda-from = { $sm }: CUDA ≥ { $first }
explain-arch-cuda-before = { $sm }: CUDA before { $removed }
explain-arch-unknown = { $sm }: unknown to cudaenv
explain-active-cannot-build-for = the active { $name } (CUDA { $cuda }) cannot build for { $sm }: cudaenv install { $target } && cudaenv local { $target }
explain-framework-build-for = frameworks: install a build made with CUDA ≥ { $first } (e.g. `pip install torch --index-url https://download.pytorch.org/whl/cu{ $tag }`)
explain-doctor-shows-architecture = cudaenv doctor   # shows the GPU's architecture and what the active CUDA supports
explain-no-kernel-image = the binary (a framework wheel, an extension, or a CUDA library) contains no machine code for this GPU's architecture and no PTX the driver could compile for it

## nvcc cannot compile for an architecture

explain-use-cuda-before = use a CUDA before { $removed } (e.g. `cudaenv install { $last } --profile devel`)
explain-stop-building-for = or stop building for { $sm } (TORCH_CUDA_ARCH_LIST / CMAKE_CUDA_ARCHITECTURES)
explain-nvcc-arch = this nvcc cannot compile for { $sm } ({ $family })
explain-nvcc-arch-unknown-family = this nvcc cannot compile for { $sm } (unknown architecture)
explain-cuda-range = CUDA { $first } up to (not including) { $removed }
explain-cuda-before = CUDA before { $removed }
explain-unknown = unknown

## A PyTorch extension built with another CUDA

explain-torch-extension-cuda = building a PyTorch C++/CUDA extension: nvcc/CUDA_HOME is CUDA { $detected }, but this PyTorch was built with CUDA { $torch }; extensions must be compiled with the same major.minor
explain-torch-extension-provided-by = CUDA { $torch } (with nvcc: --profile devel)

## Messages with a fixed answer

explain-cudnn-internal-error = cuDNN failed inside a call. The usual causes, in order: the GPU ran out of memory (TensorFlow reserves nearly all of it up front), a cuDNN too old for this GPU's architecture, or two different cuDNN copies loaded into one process
explain-cudnn-internal-error-fix-1 = TensorFlow: export TF_FORCE_GPU_ALLOW_GROWTH=true
explain-cudnn-internal-error-fix-2 = cudaenv doctor   # checks the GPU architecture against the active CUDA/cuDNN and finds stray cuDNN copies
explain-no-device = CUDA sees no GPU: CUDA_VISIBLE_DEVICES hides them (empty or -1), the driver is not loaded, the device nodes /dev/nvidia* are missing or not accessible, or (containers) no GPU was passed in
explain-no-device-fix-1 = unset CUDA_VISIBLE_DEVICES
explain-no-device-fix-2 = cudaenv doctor   # checks the driver, device nodes and CUDA_VISIBLE_DEVICES
explain-ptx-toolchain = the program carries PTX produced by a newer CUDA than the driver's JIT compiler understands: the driver runs this CUDA only through minor version compatibility, which excludes PTX JIT
explain-ptx-toolchain-fix-1 = upgrade the NVIDIA driver to the one the toolkit shipped with (`cudaenv compat` shows it per release)
explain-ptx-toolchain-fix-2 = or use the CUDA release matching the driver (`cudaenv doctor` says which)
explain-compat-not-supported = a CUDA forward-compatibility libcuda (cuda-compat package, often …/cuda-X/compat on LD_LIBRARY_PATH) was loaded on a GPU that does not support it (forward compatibility is for data-center GPUs)
explain-compat-not-supported-fix-1 = remove the cuda-X/compat directory from LD_LIBRARY_PATH
explain-compat-not-supported-fix-2 = cudaenv doctor
explain-driver-library-mismatch = the loaded libcuda and the running kernel module are different driver releases — usually after a driver upgrade without a reboot, or a forward-compatibility libcuda that does not match the driver branch
explain-driver-library-mismatch-fix-1 = reboot (or reload the nvidia kernel modules)
explain-driver-library-mismatch-fix-2 = remove any cuda-X/compat directory from LD_LIBRARY_PATH
explain-driver-library-mismatch-fix-3 = cudaenv doctor   # shows the driver version from each source
explain-cuinit-unknown = cuInit failed without a specific reason. Common causes: /dev/nvidia-uvm missing (the nvidia_uvm module not loaded, often after suspend/resume), or a driver upgrade without a reboot
explain-cuinit-unknown-fix-1 = sudo nvidia-modprobe -u -c=0   (or: sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm)
explain-cuinit-unknown-fix-2 = reboot if that does not help
explain-cuinit-unknown-fix-3 = cudaenv doctor
explain-gcc-unsupported = nvcc refuses the host compiler: each CUDA release supports host compilers up to a certain version
explain-gcc-unsupported-fix-1 = point nvcc at a compiler its CUDA accepts: export CUDAENV_HOST_COMPILER=auto (or a path such as /usr/bin/g++-12); activation sets NVCC_PREPEND_FLAGS=-ccbin …, NVCC_CCBIN and CUDAHOSTCXX
explain-gcc-unsupported-fix-2 = or a newer CUDA release: cudaenv install VERSION --profile devel
explain-out-of-memory = the GPU has no free memory for the allocation (another process may be holding it; TensorFlow reserves nearly all of it by default)
explain-out-of-memory-fix-1 = reduce the batch size or model size
explain-out-of-memory-fix-2 = TensorFlow: export TF_FORCE_GPU_ALLOW_GROWTH=true; PyTorch: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
explain-out-of-memory-fix-3 = check other processes with nvidia-smi
explain-cublas-not-initialized = cuBLAS could not create its handle: usually the GPU is out of memory, or the cuBLAS loaded belongs to a different CUDA than the runtime (two CUDA copies on the library path)
explain-cublas-not-initialized-fix-1 = cudaenv doctor   # finds stray CUDA copies on LD_LIBRARY_PATH
explain-cublas-not-initialized-fix-2 = free GPU memory (see out-of-memory)
explain-tensorflow-no-gpu = TensorFlow did not register the GPU because a library failed to load (the lines before this one name it) or no driver was found. On native Windows, TensorFlow ≥ 2.11 has no GPU support at all (use WSL2)
explain-tensorflow-no-gpu-fix-1 = paste the `Could not load dynamic library …` lines into `cudaenv explain` (TensorFlow 2.14 and later print them only with `TF_CPP_VMODULE=dso_loader=1`: run it again with that set)
explain-tensorflow-no-gpu-fix-2 = cudaenv local --for tensorflow==VERSION   # pins the CUDA + cuDNN it was tested with
explain-tensorflow-cudart-stub = despite the wording, this is TensorFlow's CUDA stub failing to load the CUDA runtime it was built against (libcudart.so.12 for TensorFlow 2.14 and later, libcudart.so.11.0 for 2.5–2.13): no CUDA stack is active, or the active one has another CUDA major. The driver may well be installed (`nvidia-smi` says)
explain-tensorflow-cudart-stub-driver = despite the wording, the driver is there ({ $driver }): TensorFlow's CUDA stub could not load the CUDA runtime it was built against (libcudart.so.12 for TensorFlow 2.14 and later, libcudart.so.11.0 for 2.5–2.13), because no CUDA stack is active or the active one has another CUDA major
explain-tensorflow-cudart-stub-tested = { $framework } was tested with { $stack }
explain-tensorflow-cudart-stub-names = TF_CPP_VMODULE=dso_loader=1 python … 2>&1 | cudaenv explain   # names every library it could not load
explain-dnn-not-found = the framework could not load cuDNN (or loaded an incompatible one)
explain-dnn-not-found-fix-1 = cudaenv compat FRAMEWORK   # says which cuDNN it needs
explain-dnn-not-found-fix-2 = cudaenv install --for FRAMEWORK==VERSION
explain-torch-cpu-build = this PyTorch is a CPU-only build: no CUDA stack can make it use the GPU
explain-torch-cpu-build-fix-1 = reinstall a CUDA build: pip install torch --index-url https://download.pytorch.org/whl/cu126 (pick the cuXYZ `cudaenv compat torch` suggests)
explain-undefined-symbol = a library was loaded together with a different release of one it depends on (e.g. libcublas from one CUDA and libcublasLt from another): two CUDA or cuDNN copies are mixed in one process
explain-undefined-symbol-fix-1 = cudaenv doctor   # lists every CUDA/cuDNN copy on LD_LIBRARY_PATH and in the ldconfig cache

explain-lib-tensorrt-old = { $file } is TensorRT { $major }, an optional inference library TensorFlow 2.x probes for at start-up (TF-TRT; releases built with TensorRT 7 ask for libnvinfer.so.7, later ones for libnvinfer.so.8); without it TensorFlow still uses the GPU
explain-lib-tensorrt-old-provided-by = TensorRT { $major }.x (NVIDIA's TensorRT { $major } packages; the tensorrt-cu*-libs wheels cudaenv installs start at TensorRT 10, which TensorFlow 2.x does not load)
explain-lib-tensorrt-old-fix-1 = nothing, unless you use TF-TRT: the warning is harmless (TF_CPP_MIN_LOG_LEVEL=2 hides it)
explain-lib-tensorrt-old-fix-2 = for TF-TRT: NVIDIA's TensorRT { $major } packages for your CUDA, or a TensorFlow container that ships them
explain-lib-tensorrt-8-fix = for TF-TRT: `pip install "tensorrt==8.6.*"` (pypi.org's wheel carries libnvinfer.so.8 in site-packages/tensorrt/, with the CUDA 12 wheels it needs); `cudaenv link NAME "$VIRTUAL_ENV"` then records that venv, TensorRT included, as a version
explain-lib-missing = { $file } is { $title } { $major }.x, { $role }; the dynamic loader found it in no directory it searched{ $windows }
explain-lib-role-nccl = the collective-communication library multi-GPU training loads (torch.distributed, JAX, Horovod)
explain-lib-role-tensorrt = NVIDIA's inference library
explain-lib-role-cusparselt = the structured-sparsity matrix library PyTorch's sparse kernels load
explain-lib-role-cutensor = the tensor-contraction library CuPy and others load

explain-gcc-refused = nvcc refuses the host compiler: this nvcc accepts { $family } up to { $max }{ $releases }{ $active }, and the compiler it found (g++ on PATH unless -ccbin names one) is newer
explain-gcc-refused-active = {" "}(the active version has CUDA { $cuda })
explain-gcc-refused-fix-auto = export { $variable }=auto   # activation points nvcc at the newest installed g++ its CUDA accepts (NVCC_PREPEND_FLAGS=-ccbin …, NVCC_CCBIN, CUDAHOSTCXX)
explain-gcc-refused-fix-name = or name one: export { $variable }=/usr/bin/{ $compiler } (Debian/Ubuntu: apt install { $package }), or host-compiler in config.toml
explain-gcc-refused-fix-newer = or a CUDA release that accepts your compiler: { $releases }

## Windows: a DLL the loader did not find, the Visual C++ runtime, Python's DLL search

explain-win-missing-cuda-dll = Windows found { $file } in none of the directories it searches for a DLL (the program's own directory, System32, then each directory on PATH): the program needs the { $provider } runtime DLLs{ $windows }
explain-win-missing-cudnn-dll = the program needs cuDNN { $major } ({ $file }) and Windows found it in none of the directories it searches (the program's own directory, System32, PATH): cuDNN is a download of its own beside the CUDA toolkit, and its bin directory must be on PATH too{ $windows }
explain-win-missing-cudnn-sub-dll = { $file } is one of cuDNN { $major }'s sub-libraries: cudnn64_{ $major }.dll itself was found but this part of it was not — typically only part of cuDNN's bin directory was copied into CUDA's{ $windows }
explain-win-missing-driver = { $file } is the NVIDIA driver's own DLL (the driver puts it in System32): this Windows has no NVIDIA driver, or only Microsoft's basic display driver
explain-win-missing-driver-fix = install NVIDIA's Windows driver for the GPU (GeForce/Studio, or the data-center driver); `nvidia-smi` answers once it is in place
explain-win-tensorflow-tested = { $spec } is what TensorFlow { $releases } was tested with on native Windows (TensorFlow ≥ 2.11 has no GPU there: use WSL2, or `cudaenv compat tensorflow==2.10 --platform windows`)
explain-win-link-existing = or link the toolkit NVIDIA's installer put in place, with cuDNN's files copied into it as the guides do: cudaenv link { $cuda } "C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v{ $cuda }" && cudaenv local { $cuda }
explain-win-run-with-hook = run the program with the stack's environment: `cudaenv exec -- python train.py`, or in PowerShell through the hook (`cudaenv init pwsh | Out-String | Invoke-Expression` in $PROFILE); a program started before (an IDE, Jupyter) keeps its old PATH until it is started again from there
explain-vc-runtime = { $files }: Microsoft's Visual C++ runtime, which the Windows builds of TensorFlow, PyTorch and most Python extensions link against. This is not about CUDA: no CUDA stack provides these DLLs
explain-vc-runtime-provided-by = the Microsoft Visual C++ Redistributable for Visual Studio 2015–2022 (x64)
explain-win-vc-redist = install the Microsoft Visual C++ Redistributable 2015–2022, x64: https://aka.ms/vs/17/release/vc_redist.x64.exe (it puts the DLLs in C:\Windows\System32; TensorFlow ≥ 2.1 needs msvcp140_1.dll, which the 2019 and later releases carry)
explain-vc-runtime-fix-doctor = cudaenv doctor   # looks for msvcp140.dll, msvcp140_1.dll, vcruntime140.dll and vcruntime140_1.dll in System32 and on PATH
explain-win-unnamed-module = (named in the lines above)
explain-win-tf-import-failed = Python could not load TensorFlow's core module ({ $module }) or a DLL it links. This is not about CUDA: TensorFlow ≥ 2.1 loads CUDA's and cuDNN's DLLs later, when it looks for a GPU, and a missing one only prints "Could not load dynamic library …" and runs on the CPU. The usual causes: the Visual C++ runtime is missing (msvcp140_1.dll, vcruntime140_1.dll), the CPU lacks AVX (the official wheels need it), the Python is 32-bit or one the release does not support, or the installation is broken
explain-win-tf-import-failed-fix-python = python -c "import struct; print(struct.calcsize('P') * 8)" must print 64; `cudaenv compat tensorflow==VERSION --platform windows` lists the Pythons a release supports; then pip install --force-reinstall tensorflow==VERSION
explain-win-dll-load-failed = Python could not load the extension module { $module } or a DLL it links. Since Python 3.8, Windows Python looks for an extension's DLLs only in the module's own directory, System32 and the directories added with os.add_dll_directory(): PATH is not searched, so a CUDA bin directory on PATH does not help an extension that links CUDA's DLLs directly
explain-win-add-dll-directory = if the extension links CUDA's DLLs itself (CuPy, your own extension), add their directory before the import: os.add_dll_directory(os.path.join(os.environ["CUDA_PATH"], "bin")) — activation (`cudaenv exec`, the PowerShell hook) points CUDA_PATH at the active stack
explain-win-ctypes-dll-search = Python's ctypes (3.8 and later) looked for { $file } only in the directory its name gives, in System32 and in the directories added with os.add_dll_directory(): it does not search PATH, so a DLL that is on PATH is still not found this way
explain-win-ctypes-full-path = ctypes.CDLL(os.path.join(os.environ["CUDA_PATH"], "bin", "{ $file }"))   # with the stack activated (`cudaenv exec`), CUDA_PATH is its root
explain-win-ctypes-winmode = or ctypes.CDLL("{ $file }", winmode=0), which searches as LoadLibrary does, PATH included
