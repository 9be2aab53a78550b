# cudaenv 的 `doctor` 中文消息：检查结果与修复办法。键和占位符与
# locales/en/doctor.ftl 一致。

## 驱动和 GPU

doctor-wsl-no-libcuda = WSL2 里没有 /usr/lib/wsl/lib/libcuda.so.1：Windows 上的 NVIDIA 驱动没有把 GPU 提供给 Linux
doctor-wsl-no-libcuda-fix = 在 Windows 上安装或更新 NVIDIA 驱动（千万不要在 WSL 里面装 Linux 驱动），然后执行 `wsl --shutdown`
doctor-wsl-foreign-libcuda = WSL2 加载的 libcuda 来自 { $path }，而不是 Windows 驱动提供的 /usr/lib/wsl/lib
doctor-wsl-foreign-libcuda-fix = 卸载装了 { $path } 的那个 Linux 驱动软件包；WSL2 必须使用 /usr/lib/wsl/lib
doctor-wsl-ok = WSL2：libcuda 来自 Windows 驱动（/usr/lib/wsl/lib）
doctor-no-driver = 没有找到 NVIDIA 驱动（没有 /proc/driver/nvidia/version、/sys/module/nvidia/version，也无法加载 libcuda.so.1）：这台机器上可以编译 CUDA 程序，但不能运行
doctor-no-driver-fix = 如果这是 CI 或编译用的机器，无需处理；否则请安装 NVIDIA 驱动（容器里：用 --gpus all 启动）
doctor-driver-version-unknown = libcuda.so.1 能加载，但读不出驱动版本
doctor-driver = NVIDIA 驱动 { $driver }（来自 { $source }）
doctor-driver-max = NVIDIA 驱动 { $driver }（来自 { $source }），最高支持 CUDA { $cuda }
doctor-driver-mismatch = 内核模块和 libcuda 不是同一个驱动版本（{ $list }）：CUDA 会报 "system has unsupported display driver / cuda driver combination"，NVML 会报 "Driver/library version mismatch"
doctor-driver-mismatch-fix = 升级驱动后请重启（或重新加载 nvidia 内核模块）
doctor-libcuda-missing = 内核驱动已加载，但 libcuda.so.1 加载不了：{ $error }
doctor-libcuda-missing-fix = 安装驱动的用户态库（版本要和内核模块一致）；容器里请使用 NVIDIA Container Toolkit
doctor-cuinit-no-device-fix = 确认 GPU 存在并且绑定到了 nvidia 驱动（lspci -k）
doctor-cuinit-driver-mismatch-fix = 升级驱动后重启，或者从 LD_LIBRARY_PATH 中去掉 CUDA 前向兼容版的 libcuda
doctor-cuinit-compat-fix = 从 LD_LIBRARY_PATH 中去掉 cuda-compat 目录：前向兼容只在数据中心 GPU 上可用
doctor-cuinit-failed-fix = 检查 /dev/nvidia-uvm（`sudo nvidia-modprobe -u -c=0`），在 dmesg 里查找 NVRM 错误，或者重启
doctor-cuinit-failed = cuInit 失败：{ $error }
doctor-no-gpu = 驱动已加载，但报告没有 GPU
doctor-no-gpu-fix = 确认这台机器（或这个容器）能看到 GPU
doctor-gpu-arch = { $sm }，{ $family }
doctor-gpu-arch-unknown-family = { $sm }，未知架构
doctor-gpu-cc-unknown = 计算能力未知
doctor-gpu = GPU { $index }：{ $name }（{ $arch }）
doctor-gpu-memory = GPU { $index }：{ $name }（{ $arch }，{ $gib } GiB）

doctor-driver-named = 驱动 { $driver }
doctor-target-driver-named = 目标机器的驱动 { $driver }
doctor-this-gpu = 这块 GPU
doctor-target-gpu = 目标机器的 GPU

## 为另一台机器做规划

doctor-target-driver-max = 驱动 { $driver }（最高支持 CUDA { $cuda }）
doctor-target-driver = 驱动 { $driver }
doctor-target-driver-unknown = 驱动未知
doctor-target = 正在为目标机器做规划：{ $driver }，{ $gpus }；下面对当前版本的检查针对的是那台机器，不评判本机自己的驱动和 GPU
doctor-target-arch-unknown = 正在为目标机器做规划：{ $driver }，GPU 架构未知；下面对当前版本的检查针对的是那台机器，不评判本机自己的驱动和 GPU

## 当前激活的版本

doctor-active-missing = 没有可用的激活版本：{ $error }
doctor-active-missing-fix = 安装它（`cudaenv install SPEC`），或者选用别的版本（`cudaenv local SPEC`）
doctor-active-system = 当前版本：system（由 { $origin } 设定）；cudaenv 不会往环境里添加任何东西
doctor-active-no-cudnn = CUDA { $cuda }，没有 cuDNN
doctor-active-versions-unknown = 版本未知
doctor-active = 当前版本：{ $name }（{ $what }），由 { $origin } 设定
doctor-active-with-libraries = { $what }{ $libraries }
doctor-origin-default = 默认值（没有设定任何版本）
doctor-origin-argument = 命令行
doctor-origin-shell = 环境变量 { $variable }
doctor-origin-global = { $path }（全局）
doctor-not-activated = 当前环境没有为 { $name } 激活（CUDAENV_ACTIVE={ $active }）：从这里启动的程序拿不到它的库
doctor-not-activated-unset = 当前环境没有为 { $name } 激活（CUDAENV_ACTIVE 未设置）：从这里启动的程序拿不到它的库
doctor-not-activated-fix = 启用 shell 钩子（`eval "$(cudaenv init bash)"`），或者用 `cudaenv exec` 运行程序
doctor-driver-fit = { $driver } 可以运行 CUDA { $cuda }
doctor-driver-minor-compat = { $driver } 只能通过次版本兼容（minor version compatibility）运行 CUDA { $cuda }：需要对这个工具包做 PTX 即时编译的代码会失败（"the provided PTX was compiled with an unsupported toolchain"）
doctor-driver-minor-compat-fix = 把驱动升级到 ≥ { $need }，或者改用这个驱动发布时配套的 CUDA 版本
doctor-driver-too-old = { $driver } 对 CUDA { $cuda } 来说太旧了（需要 ≥ { $need }）：程序会报 "CUDA driver version is insufficient for CUDA runtime version"
doctor-driver-too-old-fix = 把 NVIDIA 驱动升级到 ≥ { $need }
doctor-driver-too-old-fix-or-select = 把 NVIDIA 驱动升级到 ≥ { $need }，或者选用 CUDA ≤ { $cuda }（`cudaenv local { $cuda }`）
doctor-cudnn-cuda = cuDNN { $cudnn } 不是为 CUDA { $cuda } 构建的
doctor-cudnn-cuda-by-rule = cuDNN { $cudnn } 不是为 CUDA { $cuda } 构建的，只适用于 { $built_for }（{ $rule }）
doctor-cudnn-cuda-fix = 安装一对相配的版本，例如 `cudaenv install { $spec }`
doctor-cudnn-cuda-ok-by-rule = cuDNN { $cudnn } 与 CUDA { $cuda } 相配：它是为 { $built_for } 构建的（{ $rule }）

## 当前 CUDA 与 GPU 架构

doctor-arch-native = CUDA { $cuda } 支持 { $sm }
doctor-arch-compatible = CUDA { $cuda } 通过它的 { $via } 机器码在 { $sm } 上运行（同一架构家族）
doctor-arch-deprecated = { $sm } 从 CUDA { $since } 起已被标为弃用，今后的某个版本会去掉它
doctor-arch-deprecated-fix = 这块 GPU 请停留在 CUDA < { $removed }
doctor-arch-deprecated-fix-unknown = 这块 GPU 请停留在去掉它的那个 CUDA 版本之前
doctor-arch-removed = CUDA { $cuda } 不支持 { $gpu }（{ $sm }，{ $family }）：从 CUDA { $since } 起就不再支持；会出现 "no kernel image is available for execution on the device"
doctor-arch-removed-fix = 选用 { $since } 之前的 CUDA 版本（例如 `cudaenv local 12.9`）
doctor-arch-needs = { $sm } 需要 CUDA ≥ { $first }
doctor-arch-newer-than-known = { $sm } 比 cudaenv 知道的所有 CUDA 都新
doctor-arch-too-new = CUDA { $cuda } 比 { $gpu }（{ $sm }，{ $family }）更早发布：{ $need }。这套 CUDA 里没有这块 GPU 的原生机器码，只有 PTX，驱动要在每个库第一次使用时现场编译（cuBLAS 要好几分钟；计算缓存 CUDA_CACHE_MAXSIZE 装满后还得重新编译）；不带 PTX 的库会报 "no kernel image is available"
doctor-arch-too-new-fix = 使用 CUDA ≥ { $first }（先 `cudaenv install { $first }`，再 `cudaenv local { $first }`）
doctor-arch-too-new-fix-frameworks = 使用 CUDA ≥ { $first }（先 `cudaenv install { $first }`，再 `cudaenv local { $first }`），并配上为它构建的框架：{ $frameworks }
doctor-arch-too-new-fix-newest = 使用最新的 CUDA 版本
doctor-sm-family = { $sm }（{ $family }）
doctor-unknown-architecture = 未知架构

## 库路径

doctor-libcuda-stub = LD_LIBRARY_PATH 上的 { $dir } 里有链接用的桩库 libcuda.so（stub）：程序会加载它而不是驱动，然后报 "CUDA driver version is insufficient"
doctor-libcuda-stub-fix = 从 LD_LIBRARY_PATH 中去掉 { $dir }（桩库只用于链接：请用 -L 指定，不要放进加载路径）
doctor-libcuda-compat = LD_LIBRARY_PATH 上的 { $dir } 带着自己的 libcuda（也许是 CUDA 前向兼容包？）：它会顶替已安装驱动的 libcuda
doctor-libcuda-compat-fix = 只有在数据中心 GPU 且驱动分支受支持时才保留它；否则请从 LD_LIBRARY_PATH 中去掉
doctor-ld-shadow = LD_LIBRARY_PATH 上的 { $dir } 排在 { $name } 的库前面，把它们挡住了（{ $libs }）
doctor-ld-shadow-fix = 从 LD_LIBRARY_PATH 中去掉 { $dir }（例如在 ~/.bashrc 里）；cudaenv 会自己把当前版本的目录放进去
doctor-ld-extra = LD_LIBRARY_PATH 上的 { $dir } 提供了 { $name } 没有的库（{ $libs }）；用到这些库的程序会混用两套 CUDA
doctor-ld-extra-fix = 从 LD_LIBRARY_PATH 中去掉 { $dir }，或者安装一个包含这些库的版本
doctor-ld-copies = LD_LIBRARY_PATH 上有好几个 CUDA 运行时（{ $dirs }）；每个库都以排在最前面的那份为准
doctor-ld-copies-fix = LD_LIBRARY_PATH 上只保留一套 CUDA，或者交给 cudaenv 管理（`cudaenv local VERSION`）
doctor-ld-system = LD_LIBRARY_PATH 提供的 CUDA 库来自 { $dirs }
doctor-ldconfig = 系统库缓存（ldconfig）从 { $dir } 提供了 { $libs }，而 { $name } 没有这些库：用到它们的程序会加载系统里的那份
doctor-ldconfig-fix = 安装一个包含这些库的版本（例如加上 cuDNN：`cudaenv install CUDA+cudnnX`）；如果没有程序用到它们，可以忽略
doctor-cuda-home = { $var }={ $value }，但当前版本是 { $name }（{ $home }）：编译工具（nvcc、CMake、torch 扩展）会使用 { $value }
doctor-cuda-home-no-tree = { $var }={ $value }，但当前版本是 { $name }（没有工具包目录）：编译工具（nvcc、CMake、torch 扩展）会使用 { $value }
doctor-cuda-home-fix = unset { $var }，或者激活 { $name }（`eval "$(cudaenv env)"`）
doctor-list-more = { $first }，…… 还有 { $more } 个

## 环境：可见设备、设备文件

doctor-visible-devices-none = CUDA_VISIBLE_DEVICES={ $value } 把所有 GPU 都藏起来了：CUDA 会报 "no CUDA-capable device is detected"
doctor-visible-devices-none-fix-no-gpu = 要使用 GPU，请 unset CUDA_VISIBLE_DEVICES
doctor-visible-devices-none-fix = unset CUDA_VISIBLE_DEVICES，或者设成要用的 GPU（例如 0）
doctor-visible-devices-bad = CUDA_VISIBLE_DEVICES 里有不存在的 GPU（{ $bad }）；CUDA 会忽略第一个无效项之后的所有内容
doctor-visible-devices-bad-fix = 使用小于 { $count } 的编号
doctor-dxg-denied = 当前用户对 /dev/dxg 没有读写权限
doctor-dxg-denied-fix = 检查这个 WSL 发行版对 /dev/dxg 的权限设置
doctor-dxg-missing = 缺少 /dev/dxg：WSL2 的 GPU 半虚拟化没有开启
doctor-dxg-missing-fix = 更新 WSL（`wsl --update`）和 Windows 驱动
doctor-device-nodes-denied = 没有 { $nodes } 的读写权限
doctor-device-nodes-denied-fix = 把用户加入这些文件所属的用户组（通常是 `video`：`sudo usermod -aG video $USER`，然后重新登录），或者修正容器的设备映射
doctor-device-nodes-missing = 驱动已加载，但缺少 /dev/nvidiactl 或 /dev/nvidiaN
doctor-device-nodes-missing-fix = 执行 `sudo nvidia-modprobe -c=0`（或者以 root 身份运行一次 `nvidia-smi`）；容器里要把设备传进去（--gpus all）
doctor-uvm-missing = 缺少 /dev/nvidia-uvm：只有在允许运行 nvidia-modprobe 的地方，CUDA 才会在第一次使用时自动创建它；否则 cuInit 会报 CUDA_ERROR_UNKNOWN
doctor-uvm-missing-fix = 执行 `sudo nvidia-modprobe -u -c=0`
doctor-device-nodes-ok = { $count } 个设备文件，都可读写

## nvidia-smi、Python 和框架

doctor-nvidia-smi-active = 当前激活的工具包是 { $name }（CUDA { $cuda }）
doctor-nvidia-smi-no-active = 它并不说明装了或激活了哪个工具包
doctor-nvidia-smi = nvidia-smi 显示的 "CUDA Version: { $cuda }" 是这个驱动最高支持的 CUDA 版本，不是已安装的工具包；{ $active }
doctor-python-no-frameworks = 没有 torch、tensorflow、jax、cupy、cuda-python 或 numba-cuda
doctor-python = Python { $version }（{ $executable }）：{ $frameworks }
doctor-wheel-overlap = { $packages } 装在了一起，并且都包含 { $file }：后装的覆盖了先装的文件，需要另一份的框架就会拿到错误的库
doctor-wheel-overlap-fix = 每个 Python 环境只放一个 CUDA 主版本（另一个框架用第二个 venv）；要恢复这个文件：`pip install --force-reinstall --no-deps { $package }=={ $version }`

# The GPU code in a framework's own libraries (their .nv_fatbin) against the GPU
doctor-kernels-native = { $package } { $version } 带有{ $gpu }（{ $sm }，{ $family }）的机器码：它为 { $sass } 编译的内核可以在上面运行
doctor-kernels-jit = { $package } { $version } 没有{ $gpu }（{ $sm }，{ $family }）的机器码，只有 { $ptx } 的 PTX（{ $file } 有 { $sass } 的机器码）：要等驱动把这些 PTX 现场编译（JIT）后才能运行，第一次启动会很慢（大型框架要几分钟；之后有缓存，上限为 CUDA_CACHE_MAXSIZE）
doctor-kernels-missing = { $package } { $version } 无法在{ $gpu }（{ $sm }，{ $family }）上运行：{ $file } 有 { $sass } 的机器码和 { $ptx } 的 PTX，这块 GPU 一样都跑不了（"no kernel image is available for execution on the device"）
doctor-kernels-partial = { $package } { $version } 能在{ $gpu }（{ $sm }）上运行，但它的 { $file } 有 { $sass } 的机器码和 { $ptx } 的 PTX：{ $runs ->
    [jit] 这个库里的运算要等驱动现场编译（JIT）它的 PTX 后才能运行（第一次使用会慢）
   *[no] 这块 GPU 一样都跑不了，这个库里的运算在这里会失败（"no kernel image is available for execution on the device"）
}
doctor-kernels-none = 无
doctor-kernels-fix = { $which ->
    [same] 安装 { $package } { $release } 为 CUDA { $cuda } 构建的版本：同一版本另有一个构建所用的 CUDA 支持 { $sm }（装好后 doctor 会读出它实际带有的架构）：`{ $command }`
    [newer] 安装为 CUDA { $cuda } 构建的 { $package } { $release }：这是比你装的版本更新、且有一个构建所用的 CUDA 支持 { $sm } 的第一个版本（装好后 doctor 会读出它实际带有的架构）：`{ $command }`
   *[newest] 安装为 CUDA { $cuda } 构建的 { $package } { $release }：这是有一个构建所用的 CUDA 仍支持 { $sm } 的最新版本（装好后 doctor 会读出它实际带有的架构）：`{ $command }`
}
doctor-kernels-fix-none = cudaenv 的表格里没有为 { $sm } 构建的 { $package } 版本：请从源码为 { $sm } 构建（torch 用 TORCH_CUDA_ARCH_LIST）
doctor-kernels-unreadable = 读不出 { $package } 的 { $file } 里的 GPU 代码：{ $error }
doctor-kernels-unreadable-fix = 重新安装它：`pip install --force-reinstall --no-deps { $package }`
doctor-wheels-cuda-runtime = CUDA 运行时 { $version }
doctor-wheels-with-cudnn = { $cuda } + cuDNN { $cudnn }
doctor-how-pathfinder = cuda-pathfinder 先搜索 site-packages，再搜索 LD_LIBRARY_PATH 和 CUDA_PATH/CUDA_HOME
doctor-how-torch = torch 按路径预先加载它们，而且它的库带有指向 site-packages/nvidia 的 RPATH
doctor-instead-torch = PyPI 上 torch 的 CUDA 版总是使用自带的 wheel；cudaenv 的版本用来服务你自己针对它编译的扩展（`CUDA_HOME`、nvcc）
doctor-how-tensorflow = TensorFlow 的库带有指向 site-packages/nvidia 的 RPATH
doctor-instead-tensorflow = 安装普通的 `tensorflow=={ $version }`（不要 `[and-cuda]`），并卸载 nvidia-*-cu{ $major } 这些 wheel
doctor-how-jax = 插件按路径从 site-packages 打开这些 wheel 里的库
doctor-instead-jax = 安装 `jax[cuda{ $major }-local]`（不带 NVIDIA wheel 的插件），并卸载 nvidia-* 这些 wheel
doctor-how-cupy = CuPy 先在 site-packages/nvidia 里找，再找 CUDA_PATH
doctor-instead-cupy = 安装不带 `[ctk]` 附加项的 `{ $package }`，并卸载 nvidia-* 这些 wheel（以及 `cuda-toolkit`）
doctor-instead-cuda-python = 安装不带 `cu{ $major }` 附加项的 `{ $package }`，并卸载 nvidia-* 这些 wheel
doctor-keep-off-fix = 设置 `CUDAENV_BUNDLED_CUDA=wheels`（或在 $CUDAENV_ROOT/config.toml 里写 `bundled-cuda = "wheels"`）：这样激活时，在这些 wheel 旁边就不会把该版本的库放到 LD_LIBRARY_PATH 上
doctor-framework-cpu = { $name } 是只支持 CPU 的版本：不管用哪套 CUDA，它都不会用 GPU
doctor-framework-cpu-fix = 重新安装 CUDA 版：`pip install torch --index-url https://download.pytorch.org/whl/cu121`（cuXYZ 按 `cudaenv compat torch` 的建议选）
doctor-framework-finds-cuda-pathfinder = { $name } 在运行时查找 CUDA（cuda-pathfinder：先找 site-packages，再找加载路径）；它没有自己固定的 CUDA 主版本
doctor-framework-finds-cuda-path = { $name } 在运行时查找 CUDA（先找 CUDA_PATH，再找加载路径）；它没有自己固定的 CUDA 主版本
doctor-framework-uses-wheels = { $name } 从它自带的 NVIDIA wheel 加载 { $what }（{ $how }）
doctor-framework-bundled-no-active = { $uses }；它不需要 cudaenv 的版本。如果想改用 cudaenv 的版本：{ $instead }
doctor-framework-bundled-other-major = { $uses }；当前激活的 { $name }（CUDA { $cuda }）的 soname 不同，互不干扰
doctor-framework-bundled-kept-off = { $uses }；激活时不会把当前的 { $name } 放到这些 wheel 旁边的 LD_LIBRARY_PATH 上（bundled-cuda = wheels）
doctor-framework-cudnn-mixed = { $uses }，但当前激活的 { $name } 把 cuDNN { $have } 放在了 LD_LIBRARY_PATH 最前面：cuDNN 的子库（libcudnn_graph.so.{ $major }、libcudnn_cnn.so.{ $major } ……）按 soname 打开，会从那里加载，和 wheel 里的 { $want } 对不上
doctor-framework-cudnn-mixed-jax = { $mixed }；它的 cuDNN 运算（卷积）可能会失败
doctor-framework-cudnn-mixed-error = { $mixed }（"cuDNN version incompatibility"）
doctor-framework-jax-two-copies = { $uses }，而当前激活的 { $name } 把 soname 相同的 CUDA { $major } 库放在了 LD_LIBRARY_PATH 最前面：按 soname 打开的来自这套 CUDA，按路径打开的来自 wheel，于是同一个库会有两份被加载进同一个进程（`cudaenv trace -- python …` 可以列出来）
doctor-framework-bundled-not-stack = { $uses }，而不是来自当前激活的 { $name }：这套 CUDA 服务于你自己编译的东西，而不是这个框架。如果想让框架改用它：{ $instead }
doctor-framework-system-cuda = { $name } 从加载路径加载 CUDA { $major }：{ $dir } 里的 { $soname }（{ $origin }）；当前没有激活 cudaenv 的版本
doctor-framework-needs-cuda = { $name } 需要库路径上有 { $stack }，但当前既没有激活 cudaenv 的版本，加载路径上也没有 { $soname }
doctor-framework-needs-major = 它需要 CUDA { $major }.x（libcudart.so.{ $soname_major }），当前版本是 CUDA { $cuda }
doctor-framework-built-with-newer-cuda = 它是用 CUDA { $want } 构建的，比当前的 { $cuda } 新
doctor-framework-active-cuda-unknown = 当前版本的 CUDA 未知
doctor-framework-needs-cudnn = 它需要 cuDNN { $want }，当前版本没有 cuDNN
doctor-framework-needs-cudnn-major = 它需要 cuDNN { $major }.x，当前版本是 { $have }
doctor-framework-built-with-newer-cudnn = 它是用 cuDNN { $want } 构建的，比当前的 { $have } 新（"Loaded runtime CuDNN library … but source was compiled with …"）
doctor-framework-matches = { $name } 从当前激活的 { $active } 加载 CUDA，两者相配
doctor-framework-mismatch = { $name } 和当前激活的 { $active } 不相配：{ $problems }

## 容器

doctor-require-more = { $first }（另有 { $more } 条约束）
doctor-apptainer-nv = Apptainer/Singularity 容器：宿主机驱动的库已绑定到 { $libs }（--nv）
doctor-apptainer-libs-off-path = { $libs } 里有宿主机的 libcuda.so.1，但它不在 LD_LIBRARY_PATH 上：这里的 CUDA 程序加载不了驱动
doctor-apptainer-libs-off-path-fix = 保留 Apptainer 设置的 LD_LIBRARY_PATH（激活只会往前面加；镜像的 %environment 不能把它整个替换掉），或者把 { $libs } 加进去
doctor-apptainer-no-nv = Apptainer/Singularity 容器里没有宿主机驱动：{ $libs } 里没有 libcuda.so.1，说明容器启动时没有加 --nv
doctor-apptainer-no-nv-fix = 用 `apptainer exec --nv IMAGE …` 启动（Singularity 用 `singularity exec --nv`；要用 NVIDIA Container Toolkit 就加 `--nvccli`）
doctor-container = { $kind } 容器
doctor-nvidia-visible-devices = NVIDIA_VISIBLE_DEVICES={ $value }：NVIDIA 容器运行时没有给这个容器任何 GPU
doctor-nvidia-visible-devices-fix = 用 `--gpus all` 启动容器（或者在 NVIDIA 运行时下设置 NVIDIA_VISIBLE_DEVICES=all）
doctor-nvidia-capabilities = NVIDIA_DRIVER_CAPABILITIES={ $value } 里没有 `compute`：NVIDIA 容器运行时不会挂载 libcuda，CUDA 程序无法运行
doctor-nvidia-capabilities-fix = 在镜像里设置 NVIDIA_DRIVER_CAPABILITIES=compute,utility（或 all）；`cudaenv env --format dockerfile` 会打印这一行
doctor-require-cuda-low = NVIDIA_REQUIRE_CUDA={ $shown } 的要求低于当前的 { $name }（CUDA { $cuda }）所需：容器运行时会放行驱动跑不动它的宿主机
doctor-require-cuda-low-fix = 声明 NVIDIA_REQUIRE_CUDA=cuda>={ $cuda }（`cudaenv env --format dockerfile { $name }` 会打印出来）
doctor-require-cuda-ok = NVIDIA_REQUIRE_CUDA={ $shown } 满足当前的 { $name }
doctor-disable-require = 设置了 NVIDIA_DISABLE_REQUIRE：容器运行时会忽略 NVIDIA_REQUIRE_CUDA，在驱动太旧的宿主机上也照样启动这个镜像
doctor-disable-require-fix = 除非镜像自带前向兼容驱动，否则请 unset NVIDIA_DISABLE_REQUIRE

doctor-host-compiler-none = nvcc 没有可用的主机编译器（{ $from } 指定的编译器都无法响应 --version）
doctor-host-compiler-none-fix = 安装 g++（Debian：apt install g++），或用 CUDAENV_HOST_COMPILER 指定一个
doctor-host-compiler-by-setting = ，由 CUDAENV_HOST_COMPILER / host-compiler 设置
doctor-host-compiler-ok = 主机编译器：{ $compiler }（{ $from }{ $setting }）；{ $limits }
doctor-host-compiler-refused = { $name } 的 nvcc 不接受它的主机编译器 { $compiler }（{ $from }）：{ $limits }
doctor-host-compiler-fix-switch = export CUDAENV_HOST_COMPILER=auto（或在 config.toml 中写 host-compiler = "auto"）：之后激活时会让 nvcc 使用 { $compiler }
doctor-host-compiler-fix-install = 安装一个它接受的 GCC（Debian/Ubuntu：apt install g++-{ $gcc }），然后 export CUDAENV_HOST_COMPILER=auto；或者换用更新的 CUDA 版本

## Windows：DLL 搜索路径、CUDA_PATH_V*、驱动的 DLL、Visual C++ 运行库

doctor-win-nvcuda-missing = nvidia-smi 报告了驱动，但 { $dir } 里没有驱动的 CUDA DLL nvcuda.dll：CUDA 程序找不到驱动
doctor-win-nvcuda-missing-fix = 重新安装 NVIDIA 的 Windows 驱动（选安装程序的“清洁安装”）；nvcuda.dll 应当在 System32 里
doctor-win-path-shadow = PATH 上的 { $dir } 排在 { $name } 的 DLL 前面，把它们挡住了（{ $libs }）：同名的 DLL，Windows 加载它最先找到的那个
doctor-win-path-shadow-fix = 从 PATH 中去掉 { $dir }（设置 → 系统 → 关于 → 高级系统设置 → 环境变量；这是 NVIDIA 的 CUDA 安装程序加上的），或者在激活的环境里启动程序：`cudaenv exec -- …` 或 PowerShell 钩子会把当前版本的 bin 放在最前面
doctor-win-path-extra = PATH 上的 { $dir } 里有 { $name } 没有的 CUDA DLL（{ $libs }）：请求这些 DLL 的程序会加载那套工具包里的
doctor-win-path-extra-fix = 除非你有意混用那套工具包，否则从 PATH 中去掉 { $dir }；也可以用 `cudaenv install` 把这个库装进一套版本里
doctor-win-path-copies = PATH 上有好几套 CUDA 工具包的 bin 目录（{ $dirs }）；每个 DLL 名字都以排在最前面的那份为准
doctor-win-path-copies-fix = PATH 上只保留其中一个，或者一个也不留，让 cudaenv 把当前版本的放在最前面（`cudaenv local VERSION`，然后用 `cudaenv exec` 或 PowerShell 钩子）
doctor-win-cuda-path-missing = { $var }={ $value }，但这个目录不存在：工具包卸载了，变量却留了下来（Visual Studio 针对该版本的 CUDA 编译规则会失败）
doctor-win-cuda-path-other-release = { $var }={ $value }，那是 CUDA { $tree } 的目录：要求 CUDA { $named } 的编译拿到的是 { $tree }
doctor-win-cuda-path-remove-fix = 在 PowerShell 里删掉它：[Environment]::SetEnvironmentVariable('{ $var }', $null, 'User')（系统变量用 'Machine'，需要管理员权限），或者在“环境变量”对话框里删除
doctor-win-cuda-path-not-active = { $var }={ $value }，但这个版本号当前激活的是 { $name }：Visual Studio 的 CUDA 编译规则会使用 { $value }
doctor-win-cuda-path-not-active-fix = 在激活的环境里编译（`cudaenv exec -- msbuild …`，或者 PowerShell 钩子），激活会把 { $var } 设成 { $name }
doctor-win-cuda-path-ok = { $vars }：每个都指向对应版本、确实存在的 CUDA 目录
doctor-win-vc-runtime-ok = Visual C++ 运行库：msvcp140.dll、msvcp140_1.dll、vcruntime140.dll、vcruntime140_1.dll（在 { $dirs }）
doctor-win-vc-runtime-missing = Visual C++ 运行库的 { $dlls } 既不在 System32 里，也不在 PATH 上的任何目录里：TensorFlow 的 import 会失败（"DLL load failed while importing _pywrap_tensorflow_internal"、"Could not find the DLL(s) 'msvcp140_1.dll'"），链接它的其他 Windows 程序也一样。这不是 CUDA 的问题
doctor-win-vc-runtime-missing-fix = 安装微软的 Visual C++ 2015–2022 可再发行组件包（x64）：https://aka.ms/vs/17/release/vc_redist.x64.exe
doctor-win-not-activated-fix = 在 PowerShell 里激活它（`cudaenv init pwsh | Out-String | Invoke-Expression`，写进 $PROFILE 则每个新终端都生效），或者用 `cudaenv exec -- …` 运行程序；cmd 里：`cudaenv env --shell cmd > activate.cmd`，然后 `call activate.cmd`
doctor-win-cuda-home-fix = 在这个终端里激活 { $name }（PowerShell 钩子，或 `cudaenv exec -- …`），激活会把 { $var } 指向它；{ $var } 是 NVIDIA 安装程序为它自己的工具包设置的
doctor-win-tensorflow-no-gpu = 安装的是 tensorflow { $version }，而在原生 Windows 上 2.10 之后的 TensorFlow 不支持 GPU：无论激活哪个 CUDA，它都只在 CPU 上运行
doctor-win-no-driver = 没有找到 NVIDIA 驱动（PATH、System32 和 NVIDIA Corporation\NVSMI 里都没有 nvidia-smi.exe，System32 里也没有 nvcuda.dll）：这里可以编译 CUDA 程序，但不能运行
doctor-win-no-driver-fix = CI 或编译机上无需处理；其他机器请为 GPU 安装 NVIDIA 的 Windows 驱动（GeForce/Studio 驱动，或数据中心驱动）
