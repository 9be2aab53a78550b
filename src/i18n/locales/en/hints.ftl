# cudaenv's English hints: the `hint:` line under an error, saying what to
# do next (the source).

hint-invalid-spec = a spec looks like `12.4`, `12.4.1`, `11.2+cudnn8.1`, `system`, or the name of a linked version
hint-invalid-version-file = the file should hold one spec such as `12.4+cudnn9.1`; fix or remove { $path }
hint-installed-list = { $hint }; installed: { $installed }
hint-link-a-name = `{ $spec }` is a name, not a CUDA version: create it with `cudaenv link { $spec } PATH`
hint-install-spec = run `cudaenv install { $spec }` to install it
hint-no-runtime-at = point `cudaenv link` at a CUDA toolkit (e.g. /usr/local/cuda-12.4) or a Python environment's site-packages/nvidia directory
hint-already-exists = pick another name, or remove it first with `cudaenv uninstall { $name }`
hint-nothing-is-installed = nothing is installed
hint-no-such-version = give the exact name as `cudaenv versions` prints it; installed: { $installed }
hint-confirmation-required = pass `-y` (`--yes`) to confirm from a script
hint-command-in-other-versions = it exists in: { $versions }; select one of those with `cudaenv local` or `cudaenv shell`
hint-shim-recursion = something between the shim and the real `{ $command }` runs `{ $command }` again (a wrapper script, or a PATH that leads back to the shims); { $variable } counts the nesting
hint-command-not-found = no installed version provides `{ $command }`; if it is a toolkit tool (nvcc, ptxas, cuobjdump …), it comes with a `devel` or `full` install
hint-unrepresentable-path = use a directory whose path has no `:` (for CUDAENV_ROOT, or the path given to `link`)
hint-bad-archive = the archive was rejected as unsafe or corrupt and nothing was installed; if it comes from a mirror, check the mirror
hint-hash-mismatch = the download does not match the index's sha256 and was discarded; nothing was installed. A mirror or proxy may be serving altered files
hint-md5-mismatch = the download does not match NVIDIA's published md5 (the only checksum NVIDIA gives for this file) and was discarded; nothing was installed. A mirror or proxy may be serving altered files, or a site pin in $CUDAENV_ROOT/registry/ names the wrong md5
hint-size-mismatch-manifest = the file is not the one the manifest announced and was discarded; nothing was installed. A mirror or proxy may be serving a different file
hint-size-mismatch-index = the file is not the one the index announced and was discarded; nothing was installed. A mirror or proxy may be serving a different file
hint-check-where = { $hint } (check { $place })
hint-run-again-to-resume = { $advice }; run again to resume{ $others }
hint-network-package-index = check the connection (HTTPS_PROXY / NO_PROXY are honoured) or the package index ({ $place }); run again to resume
hint-network-debian-mirror = check the connection (HTTPS_PROXY / NO_PROXY are honoured) or the Debian mirror ({ $place }); run again to resume
hint-network-any = check the connection (HTTPS_PROXY / NO_PROXY are honoured) or the source's mirror (CUDAENV_PYPI_INDEX, CUDAENV_NVIDIA_MIRROR, CUDAENV_DEBIAN_MIRROR, config.toml); run again to resume
hint-network-dns = the host name `{ $host }` did not resolve: check its spelling (CUDAENV_NVIDIA_MIRROR, `nvidia-mirror` in config.toml), the DNS settings, or the proxy (HTTPS_PROXY)
hint-network-nvidia = check the connection (HTTPS_PROXY / NO_PROXY are honoured) or the NVIDIA mirror (CUDAENV_NVIDIA_MIRROR, `nvidia-mirror` in config.toml)
hint-offline = run once without --offline to download it ({ $url })
hint-unverified = pass --allow-unverified to accept a download that no pinned hash can check
hint-bad-nvidia-file = nothing was installed; the file may be corrupt or tampered with: check the mirror (CUDAENV_NVIDIA_MIRROR) that served it
hint-config = `cudaenv help configuration` lists the keys config.toml accepts
hint-invalid-facts = pass the output of `cudaenv doctor --json` (or its `facts` object)
hint-invalid-lock = nothing was downloaded or installed; regenerate it with `cudaenv lock` (or restore { $path } from version control)
hint-lock-foreign-url = a lock pins versions and hashes; the bytes come from your own sources (CUDAENV_PYPI_INDEX, CUDAENV_NVIDIA_MIRROR, CUDAENV_DEBIAN_MIRROR, config.toml). Use `--locked` to fetch the pinned files from them, or `cudaenv lock` to re-lock against them
hint-lock-mismatch = nothing was installed; run `cudaenv lock` to re-resolve, review the change and commit cuda.lock
hint-lock-platform = nothing was installed; add this platform with `cudaenv lock --platform { $platforms }` and commit cuda.lock
hint-no-lock = create one with `cudaenv lock` (next to .cuda-version) and commit it
hint-no-version-file = pass a SPEC: `cudaenv lock 12.4+cudnn9` pins it in ./.cuda-version and locks it
hint-invalid-framework = write FRAMEWORK==VERSION, e.g. `tensorflow==2.10` or `torch==2.4` (`torch==2.4+cu118` picks a build)
hint-known = known: { $known }
hint-no-native-windows-gpu = { $wsl }, or { $framework } { $last }, the last release with GPU on native Windows: pip install "{ $framework }<2.11", then cudaenv install { $spec } && cudaenv local { $spec }
hint-no-native-windows-gpu-wsl-spec = use WSL2, where its Linux build has the GPU (there: cudaenv install --for { $framework }=={ $version }, which is { $spec })
hint-no-native-windows-gpu-wsl = use WSL2, where its Linux builds have the GPU
hint-framework-not-installed = name a version (`cudaenv compat { $framework }==VERSION`), or point CUDAENV_PYTHON at the interpreter whose environment has it
hint-would-not-run-driver = upgrade the NVIDIA driver, pick an older CUDA (`cudaenv compat` shows what each needs), or drop --strict to install anyway
hint-would-not-run-target-driver = upgrade the target machine's NVIDIA driver, pick an older CUDA (`cudaenv compat` with the same target shows what each needs), or drop --strict to install anyway
hint-would-not-run-gpu = pick a CUDA release that supports this GPU, or drop --strict to install anyway
hint-would-not-run-target-gpu = pick a CUDA release that supports the target machine's GPU, or drop --strict to install anyway
hint-no-driver = on a machine with an NVIDIA GPU, install NVIDIA's driver (`nvidia-smi` then lists the GPU); in a container, start it with the GPU exposed (e.g. `docker run --gpus all`). On a machine without one, nothing can be verified. cudaenv installs toolkits, never the driver
hint-driver-too-old = upgrade the NVIDIA driver to { $driver } or newer, or select a CUDA this driver runs (`cudaenv install { $cuda }`, then `cudaenv local { $cuda }`)
hint-arch-unsupported = select a CUDA that supports this GPU: { $instead }
hint-no-device-hidden-one = CUDA_VISIBLE_DEVICES={ $value } hides the driver's only GPU; unset it or list a GPU index (e.g. CUDA_VISIBLE_DEVICES=0)
hint-no-device-hidden-many = CUDA_VISIBLE_DEVICES={ $value } hides the driver's { $count } GPUs; unset it or list a GPU index (e.g. CUDA_VISIBLE_DEVICES=0)
hint-no-device-hidden = CUDA_VISIBLE_DEVICES={ $value } hides the GPUs; unset it or list a GPU index (e.g. CUDA_VISIBLE_DEVICES=0)
hint-no-device = check `nvidia-smi`; in a container, start it with the GPU exposed (e.g. `docker run --gpus all`)
hint-library-missing-system = no version is selected and the loader finds no copy: select one (`cudaenv local 12.4`, `cudaenv verify 12.4`) or put a toolkit's lib64 on LD_LIBRARY_PATH
hint-library-missing = version `{ $version }` lacks it: reinstall it, or link a tree that has it; `cudaenv verify --json` lists every soname tried
hint-library-shadowed = another copy is found first: remove { $dir } from LD_LIBRARY_PATH (and LD_PRELOAD), or install the library into the version
hint-library-mismatch = the files changed since the version was recorded, or another copy shadows them; reinstall the version
hint-wrong-result = a GPU, driver or library that computes wrong numbers: check `nvidia-smi -q -d ECC,CLOCK` for memory errors or overclocking, try another driver; NVIDIA_TF32_OVERRIDE=1 also makes fp32 products inexact
hint-timed-out-cuinit = the driver hangs in its initialisation (cuInit): every CUDA program on this machine will hang the same way. Check `nvidia-smi` (if it hangs too, the driver or GPU is stuck: reload the kernel module or reboot; look for Xid errors in `dmesg`). If the checks are only slow (a large --size), raise the limit with --timeout SECS
hint-timed-out = `{ $stage }` did not return. Run another CUDA program (`nvidia-smi`, a framework's first GPU call) to see whether it waits too: if so the driver or GPU is stuck (look for Xid errors in `dmesg`); if not, the call is only slow here (a large --size, code being compiled): raise the limit with --timeout SECS
hint-last-output = { $hint }
    the libraries' last output was:
    { $output }
hint-only-last-output =
    the libraries' last output was:
    { $output }
hint-predates-gpu-use = use CUDA { $first } or newer, the first with native { $sm } code (`cudaenv install { $first }`)
hint-predates-gpu-use-frameworks = use CUDA { $first } or newer, the first with native { $sm } code (`cudaenv install { $first }`), and a framework built for it: { $frameworks }
hint-predates-gpu-newest = use the newest CUDA release
hint-predates-gpu = { $instead }. With CUDA { $cuda } every library kernel this GPU needs is JIT-compiled by the driver at its first use (minutes for cuBLAS; again whenever the compute cache, CUDA_CACHE_MAXSIZE, is too small to keep it), and libraries that ship no PTX fail with "no kernel image is available"
hint-unknown-help-topic = topics: { $topics }; `cudaenv help` lists the commands too
hint-unknown-command = `cudaenv --help` lists the commands
hint-no-pin-nothing-installed = pin one with `cudaenv local SPEC` once it is installed: `cudaenv install 12.4`, then `cudaenv local 12.4` (`cudaenv ls-remote` lists what can be installed)
hint-no-pin = pin one with `cudaenv local SPEC`; installed: { $installed }
hint-version-name-required-none = nothing is installed (`cudaenv versions` lists what is)
hint-version-name-required = `cudaenv { $command } NAME`; installed: { $installed }
hint-manifests-unreachable = { $advice }; nothing was changed: cudaenv keeps using the manifests it has
hint-unsafe-system-root = anyone who can write there can plant libraries in every user's processes; the administrator should run `chmod go-w { $path }` (or remove the version); meanwhile use a version of your own root
hint-system-root-not-writable = use your own root (leave out --system); or, as the system root's owner, run it with `cudaenv install --system` or CUDAENV_ROOT={ $root }
hint-no-system-root = set { $variable } or `system-root` in $CUDAENV_ROOT/config.toml
hint-nothing-installed = install one first (`cudaenv install 12.4`) or adopt one (`cudaenv link NAME PATH`)
hint-modulefile-not-ours = export into a directory of its own (`module use` it), or move that file away
hint-not-a-mirror = give a new or empty directory, or one that `cudaenv mirror` wrote before (it adds to it)
hint-bad-mirror = the record was changed or damaged; nothing was written. Write the mirror anew into an empty directory
hint-invalid-target = describe the machine to plan for as `--target-driver 550.54.15 --target-arch sm_90` (`nvidia-smi --query-gpu=driver_version,compute_cap --format=csv` there prints both)
hint-trace-failed = check that the command runs with `cudaenv exec -- COMMAND`, and that the temporary directory ($TMPDIR) is writable

hint-trace-unsupported = `cudaenv verify` shows where cudart, cuBLAS and cuDNN load from; on Windows, Sysinternals Process Monitor (a filter on the operation Load Image) lists every DLL a program loads, and in WSL2 `cudaenv trace` works as on Linux
hint-network-stalled = the server (or a proxy on the way) accepted the connection but stopped sending; try again later, or allow slower servers more time with { $variable }=SECONDS (default { $default })
hint-invalid-http-timeout = set it to whole seconds, e.g. { $variable }=60, or unset it for the default ({ $default } s)
hint-bad-variable = set { $variable } to such a value, or unset it (`cudaenv help environment` lists the variables)
hint-bug = this is a bug in cudaenv; nothing was committed half-way. Please report it with the command that failed
hint-resources = the system refused a resource cudaenv needs (threads, file descriptors, TLS roots): check `ulimit -a`
hint-cannot-run = check that the file is executable and built for this machine (`file`, `ldd`)
hint-no-error-text = pass the message as an argument or on standard input: `cudaenv explain "libcudart.so.11.0: cannot open…"`
hint-no-shell-version = `cudaenv shell SPEC` sets one for this shell; `cudaenv version` shows what is active and why
hint-system-has-no-prefix = select a cudaenv version (`cudaenv prefix 12.4`, `cudaenv local 12.4`); `cudaenv versions` lists them
hint-not-a-link = `--force` only replaces links: run `cudaenv uninstall { $name }` first, or pick another name
hint-incomplete-version = pass --force to replace it
hint-bad-child-request = this process is started by `cudaenv verify`; run that instead
hint-corrupt-cache = remove { $path } (or run once without --offline to read the index again)
hint-bad-metadata = the version's record was changed or damaged: reinstall it, or remove { $path } with `cudaenv uninstall`
hint-not-utf8-for-shell = use a path or value that is valid UTF-8, or another shell (bash, zsh, fish)
hint-unknown-shell = expected bash, zsh, fish, pwsh or cmd

hint-unreadable-file = its owner can let others read it with `chmod a+r { $path }` (files cudaenv writes follow the umask)
hint-path-with-line-break = use a directory whose path has no line break (for CUDAENV_ROOT, or the path given to `link`); `cudaenv env --shell SHELL` carries any path
hint-write-outside = remove the link { $path } (or give a directory without links in it); nothing was written through it
hint-no-space = free some space there, or give cudaenv a root on a larger file system (CUDAENV_ROOT); nothing was installed and nothing half-written was kept
hint-not-regular-artifact = a mirror's files are regular files: write the mirror again with `cudaenv mirror`; nothing was read or installed
hint-installed-differs-from-lock = nothing was changed; reinstall it from the lock with `cudaenv install --locked --force`
hint-untrusted-system-path = anyone who controls that place can plant libraries or tools in every user's processes; the administrator should create the directory, give it to root, or remove it from the version; meanwhile use a version of your own root

# What a source says to do when it has not got what was asked
# (`… is not available from …`).
hint-other-sources-tool = {"."} Without NVIDIA's server, no other source of cudaenv has CUDA { $version }'s `{ $tool }` (PyPI's 12.x nvcc is ptxas and NVVM only; Debian's packages give the runtime libraries): PyPI has a complete nvcc from CUDA 13 (`cudaenv install 13 --profile devel`), Debian's own `nvidia-cuda-toolkit` package has nvcc 12.4 system-wide (apt, as root), and `--without nvcc,cuobjdump,nvdisasm,nvprune` installs the rest of 12.x from PyPI
hint-other-sources-libraries = {"."} Without NVIDIA's server: PyPI has the CUDA libraries of 11.7 and later (`--source pypi`), Debian's packages those of 11.2.2, 11.8.0 and 12.4.1 (`--source debian`)
hint-ls-remote = run `cudaenv ls-remote` to see what each source offers, or `cudaenv update` to refresh the release lists (PyPI's and NVIDIA's)
hint-ls-remote-without = run `cudaenv ls-remote` to see what each source offers, or `cudaenv update` to refresh the release lists (PyPI's and NVIDIA's); `--without { $components }` installs the rest
hint-nvidia-platforms = NVIDIA ships CUDA for Linux x86_64 and aarch64 (sbsa)
hint-libraries-need-pypi = NCCL and TensorRT come from PyPI (TensorRT from NVIDIA's package index): use `--source auto` or `--source pypi`, or leave them out of the spec
hint-libraries-need-pypi-or-nvidia = cuSPARSELt and cuTENSOR come from PyPI or NVIDIA's redist server: use `--source auto`, `--source pypi` or `--source nvidia`, or leave them out of the spec
hint-index-lacks-metapackage = the index lacks NVIDIA's CUDA metapackage; mirror `cuda-toolkit` too, or use `--offline` for the last catalogue
hint-legacy-before-10 = runfiles before CUDA 10.0 are laid out differently and cudaenv does not take them apart; use CUDA 10.0 or newer
hint-legacy-windows-before-11 = Windows installers before CUDA 11.0 are laid out differently and cudaenv does not take them apart; use CUDA 11.0 or newer
hint-library-majors = PyPI has { $library } builds for { $majors }; `--without { $component }` installs the rest
hint-no-wheel-for = the project has no wheel for { $platform }
hint-available = available: { $versions }
hint-check-package-index = check the package index (CUDAENV_PYPI_INDEX / PIP_INDEX_URL)
hint-check-nvidia-index = check NVIDIA's package index (CUDAENV_PYPI_NVIDIA_INDEX)
hint-pypi-releases = PyPI has NVIDIA wheels for CUDA 11.7, 11.8, 12.x and 13.x; known releases: { $releases }; older toolkits come from `--source legacy`; `cudaenv update` refreshes the list
hint-try-source-nvidia = try `--source nvidia`
hint-pypi-lacks-build = PyPI lacks this build; try another CUDA release or `--source nvidia`, or `--without { $component }`
hint-lock-md5-only = NVIDIA publishes only an md5 for this file and a lock pins files by sha256; `cudaenv install { $spec }` installs it, verified by that md5
hint-frozen-debian = which files a Debian package contributes is resolved, not locked: use `cudaenv install --locked`
hint-frozen-runfile = which directories a runfile contributes is resolved, not locked: use `cudaenv install --locked`
hint-lock-linked = lock a version the sources install: `cudaenv lock { $spec }` after `cudaenv install { $spec }`, or pin the installed one you mean in { $file }
hint-lock-platforms-differ = { $platform } resolves { $name }; lock the platforms separately or name an exact release available on all of them
hint-lock-pass-platform = pass `--platform linux-x86_64`, `--platform linux-aarch64` or `--platform windows-x86_64`

# Why `verify` ran out of time, from what was measured before the stop.
hint-timeout-cpu = the process used { $cpu } s of CPU time in { $seconds } s
hint-timeout-cache-grew = the driver's compute cache ({ $dir }) grew from { $before } to { $after }
hint-timeout-evidence = {": "}{ $evidence }
hint-timeout-cache-limit = CUDA_CACHE_MAXSIZE, { $bytes } bytes here
hint-timeout-cache-limit-default = CUDA_CACHE_MAXSIZE, 256 MiB by default
hint-timeout-jit-library-version = { $library } { $version }'s
hint-timeout-jit-library = { $library }'s
hint-timeout-jit-libraries = the libraries'
hint-timeout-jit-fix-first = use CUDA { $first } or newer, which has native { $sm } code
hint-timeout-jit-fix = use a CUDA release with native { $sm } code
hint-timeout-jit = `{ $stage }` was slow, not stuck{ $evidence }. CUDA { $cuda } has no { $sm } code, so the driver JIT-compiles { $library } PTX for this GPU at its first use: a framework on this stack waits the same way at its first cuBLAS call, and again whenever the compute cache ({ $limit }; at most 4 GiB) is too small to keep what was compiled. To fix it, { $fix }; to live with it, set CUDA_CACHE_MAXSIZE=4294967296 and rerun with a longer --timeout, so the cache is filled once
hint-timeout-busy = `{ $stage }` was busy, not stuck: { $evidence }. The call is slow here (a large --size, or code the driver compiles), not hung: raise the limit with --timeout SECS
hint-timeout-busy-cached = `{ $stage }` was busy, not stuck: { $evidence }. The call is slow here (a large --size, or code the driver compiles, kept in its compute cache up to { $limit }), not hung: raise the limit with --timeout SECS
hint-timeout-idle = `{ $stage }` did not return and the process was idle ({ $evidence }): it is waiting on the driver or the GPU, not computing. Run another CUDA program (`nvidia-smi`, a framework's first GPU call) to see whether it waits too: if so the driver or GPU is stuck (look for Xid errors in `dmesg`; reload the kernel module or reboot)

# What to use instead on a GPU the stack's CUDA cannot run on.
hint-arch-cuda-from = CUDA { $cuda } or newer
hint-arch-cuda-before = a CUDA older than { $cuda }
hint-arch-none-known = none known to cudaenv
hint-arch-newer-cuda = a newer CUDA
