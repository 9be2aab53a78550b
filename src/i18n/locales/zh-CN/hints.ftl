# cudaenv 的中文提示：错误下面的 `hint:` 一行，告诉用户下一步该做什么。
# 键和占位符与 locales/en/hints.ftl 一致。

hint-invalid-spec = 版本规格的写法如 `12.4`、`12.4.1`、`11.2+cudnn8.1`、`system`，或者某个链接版本的名字
hint-invalid-version-file = 这个文件里应该只写一个版本规格，例如 `12.4+cudnn9.1`；请修正或删除 { $path }
hint-installed-list = { $hint }；已安装：{ $installed }
hint-link-a-name = `{ $spec }` 是一个名字，不是 CUDA 版本号：请用 `cudaenv link { $spec } PATH` 创建它
hint-install-spec = 运行 `cudaenv install { $spec }` 来安装它
hint-no-runtime-at = 请让 `cudaenv link` 指向一个 CUDA 工具包（例如 /usr/local/cuda-12.4），或者某个 Python 环境里的 site-packages/nvidia 目录
hint-already-exists = 换一个名字，或者先用 `cudaenv uninstall { $name }` 删掉它
hint-nothing-is-installed = 还没有安装任何版本
hint-no-such-version = 请给出 `cudaenv versions` 打印的完整名字；已安装：{ $installed }
hint-confirmation-required = 在脚本里请加 `-y`（`--yes`）来确认
hint-command-in-other-versions = 这些版本里有它：{ $versions }；用 `cudaenv local` 或 `cudaenv shell` 选择其中一个
hint-shim-recursion = 在 shim 和真正的 `{ $command }` 之间，有东西又调用了一次 `{ $command }`（某个包装脚本，或者一个又绕回 shims 目录的 PATH）；{ $variable } 记录了嵌套的层数
hint-command-not-found = 没有任何已安装的版本提供 `{ $command }`；如果它是工具包里的工具（nvcc、ptxas、cuobjdump ……），需要用 `devel` 或 `full` 方式安装
hint-unrepresentable-path = 请使用路径里不含 `:` 的目录（用于 CUDAENV_ROOT，或传给 `link` 的路径）
hint-bad-archive = 这个压缩包被判定为不安全或已损坏，没有安装任何东西；如果它来自镜像站，请检查镜像站
hint-hash-mismatch = 下载的文件和索引给出的 sha256 不符，已丢弃，没有安装任何东西。可能是镜像站或代理提供了被改动过的文件
hint-md5-mismatch = 下载的文件和 NVIDIA 公布的 md5（NVIDIA 为这个文件给出的唯一校验值）不符，已丢弃，没有安装任何东西。可能是镜像站或代理提供了被改动过的文件，或者 $CUDAENV_ROOT/registry/ 里的站点固定写错了 md5
hint-size-mismatch-manifest = 这个文件不是清单（manifest）里声明的那个，已丢弃，没有安装任何东西。可能是镜像站或代理提供了别的文件
hint-size-mismatch-index = 这个文件不是索引里声明的那个，已丢弃，没有安装任何东西。可能是镜像站或代理提供了别的文件
hint-check-where = { $hint }（请检查 { $place }）
hint-run-again-to-resume = { $advice }；再运行一次即可接着下载{ $others }
hint-network-package-index = 请检查网络连接（支持 HTTPS_PROXY / NO_PROXY）或软件包索引（{ $place }）；再运行一次即可接着下载
hint-network-debian-mirror = 请检查网络连接（支持 HTTPS_PROXY / NO_PROXY）或 Debian 镜像（{ $place }）；再运行一次即可接着下载
hint-network-any = 请检查网络连接（支持 HTTPS_PROXY / NO_PROXY）或下载源的镜像（CUDAENV_PYPI_INDEX、CUDAENV_NVIDIA_MIRROR、CUDAENV_DEBIAN_MIRROR、config.toml）；再运行一次即可接着下载
hint-network-dns = 主机名 `{ $host }` 解析失败：请检查拼写（CUDAENV_NVIDIA_MIRROR、config.toml 里的 `nvidia-mirror`）、DNS 设置或代理（HTTPS_PROXY）
hint-network-nvidia = 请检查网络连接（支持 HTTPS_PROXY / NO_PROXY）或 NVIDIA 镜像（CUDAENV_NVIDIA_MIRROR、config.toml 里的 `nvidia-mirror`）
hint-offline = 先不带 --offline 运行一次，把它下载下来（{ $url }）
hint-unverified = 如果要接受一个没有固定哈希可以校验的下载，请加 --allow-unverified
hint-bad-nvidia-file = 没有安装任何东西；这个文件可能已损坏或被篡改：请检查提供它的镜像（CUDAENV_NVIDIA_MIRROR）
hint-config = `cudaenv help configuration` 列出了 config.toml 支持的所有键
hint-invalid-facts = 请传入 `cudaenv doctor --json` 的输出（或其中的 `facts` 对象）
hint-invalid-lock = 没有下载或安装任何东西；请用 `cudaenv lock` 重新生成它（或者从版本控制里恢复 { $path }）
hint-lock-foreign-url = 锁文件固定的是版本和哈希；文件本身来自你自己配置的下载源（CUDAENV_PYPI_INDEX、CUDAENV_NVIDIA_MIRROR、CUDAENV_DEBIAN_MIRROR、config.toml）。用 `--locked` 从这些下载源获取锁定的文件，或者用 `cudaenv lock` 针对它们重新锁定
hint-lock-mismatch = 没有安装任何东西；运行 `cudaenv lock` 重新解析，检查改动后提交 cuda.lock
hint-lock-platform = 没有安装任何东西；用 `cudaenv lock --platform { $platforms }` 加上这个平台，然后提交 cuda.lock
hint-no-lock = 用 `cudaenv lock` 创建一个（放在 .cuda-version 旁边），然后提交它
hint-no-version-file = 请给出 SPEC：`cudaenv lock 12.4+cudnn9` 会把它写进 ./.cuda-version 并锁定
hint-invalid-framework = 写成 FRAMEWORK==VERSION，例如 `tensorflow==2.10` 或 `torch==2.4`（`torch==2.4+cu118` 可以指定某个构建）
hint-known = 已知版本：{ $known }
hint-no-native-windows-gpu = { $wsl }；或者用 { $framework } { $last }，它是原生 Windows 上支持 GPU 的最后一个版本：pip install "{ $framework }<2.11"，然后 cudaenv install { $spec } && cudaenv local { $spec }
hint-no-native-windows-gpu-wsl-spec = 请用 WSL2，它的 Linux 版支持 GPU（在 WSL2 里：cudaenv install --for { $framework }=={ $version }，即 { $spec }）
hint-no-native-windows-gpu-wsl = 请用 WSL2，它的 Linux 版支持 GPU
hint-framework-not-installed = 请指定版本（`cudaenv compat { $framework }==VERSION`），或者让 CUDAENV_PYTHON 指向装了它的那个 Python 解释器
hint-would-not-run-driver = 升级 NVIDIA 驱动，或者选一个更旧的 CUDA（`cudaenv compat` 会列出每个版本的要求），或者去掉 --strict 强行安装
hint-would-not-run-target-driver = 升级目标机器的 NVIDIA 驱动，或者选一个更旧的 CUDA（对同一个目标运行 `cudaenv compat` 可以看到每个版本的要求），或者去掉 --strict 强行安装
hint-would-not-run-gpu = 选一个支持这块 GPU 的 CUDA 版本，或者去掉 --strict 强行安装
hint-would-not-run-target-gpu = 选一个支持目标机器 GPU 的 CUDA 版本，或者去掉 --strict 强行安装
hint-no-driver = 在装有 NVIDIA GPU 的机器上，请安装 NVIDIA 驱动（装好后 `nvidia-smi` 会列出 GPU）；在容器里，启动时要把 GPU 传进去（例如 `docker run --gpus all`）。没有 GPU 的机器上无法做任何验证。cudaenv 只安装工具包，从不安装驱动
hint-driver-too-old = 把 NVIDIA 驱动升级到 { $driver } 或更新，或者选一个这个驱动能运行的 CUDA（先 `cudaenv install { $cuda }`，再 `cudaenv local { $cuda }`）
hint-arch-unsupported = 请选一个支持这块 GPU 的 CUDA：{ $instead }
hint-no-device-hidden-one = CUDA_VISIBLE_DEVICES={ $value } 把驱动仅有的一块 GPU 藏起来了；请 unset 它，或者写上 GPU 编号（例如 CUDA_VISIBLE_DEVICES=0）
hint-no-device-hidden-many = CUDA_VISIBLE_DEVICES={ $value } 把驱动的 { $count } 块 GPU 都藏起来了；请 unset 它，或者写上 GPU 编号（例如 CUDA_VISIBLE_DEVICES=0）
hint-no-device-hidden = CUDA_VISIBLE_DEVICES={ $value } 把 GPU 藏起来了；请 unset 它，或者写上 GPU 编号（例如 CUDA_VISIBLE_DEVICES=0）
hint-no-device = 请检查 `nvidia-smi`；在容器里，启动时要把 GPU 传进去（例如 `docker run --gpus all`）
hint-library-missing-system = 没有选定任何版本，动态链接器也找不到这个库：请选一个版本（`cudaenv local 12.4`、`cudaenv verify 12.4`），或者把某个工具包的 lib64 加到 LD_LIBRARY_PATH
hint-library-missing = 版本 `{ $version }` 里缺少它：请重新安装这个版本，或者链接一个包含它的目录；`cudaenv verify --json` 会列出尝试过的每个 soname
hint-library-shadowed = 先找到的是另一份：请从 LD_LIBRARY_PATH（以及 LD_PRELOAD）中去掉 { $dir }，或者把这个库装进该版本
hint-library-mismatch = 自从记录这个版本以来，文件被改动过，或者被另一份挡住了；请重新安装这个版本
hint-wrong-result = GPU、驱动或某个库算出了错误的结果：用 `nvidia-smi -q -d ECC,CLOCK` 检查显存错误或超频，换一个驱动试试；另外 NVIDIA_TF32_OVERRIDE=1 也会让 fp32 乘法不精确
hint-timed-out-cuinit = 驱动卡在初始化（cuInit）里了：这台机器上的每个 CUDA 程序都会同样卡住。请检查 `nvidia-smi`（如果它也卡住，说明驱动或 GPU 卡死了：重新加载内核模块或重启；在 `dmesg` 里找 Xid 错误）。如果只是检查本身比较慢（--size 很大），用 --timeout SECS 放宽时限
hint-timed-out = `{ $stage }` 没有返回。运行另一个 CUDA 程序（`nvidia-smi`，或者某个框架的第一次 GPU 调用）看看它是否也卡住：如果是，说明驱动或 GPU 卡死了（在 `dmesg` 里找 Xid 错误）；如果不是，只是这次调用在这里比较慢（--size 很大，或者正在编译代码）：用 --timeout SECS 放宽时限
hint-last-output = { $hint }
    这些库最后的输出是：
    { $output }
hint-only-last-output =
    这些库最后的输出是：
    { $output }
hint-predates-gpu-use = 使用 CUDA { $first } 或更新的版本，这是第一个带有 { $sm } 原生代码的版本（`cudaenv install { $first }`）
hint-predates-gpu-use-frameworks = 使用 CUDA { $first } 或更新的版本，这是第一个带有 { $sm } 原生代码的版本（`cudaenv install { $first }`），并配上为它构建的框架：{ $frameworks }
hint-predates-gpu-newest = 使用最新的 CUDA 版本
hint-predates-gpu = { $instead }。用 CUDA { $cuda } 时，这块 GPU 需要的每个库内核都要由驱动在第一次使用时现场编译（cuBLAS 要好几分钟；计算缓存 CUDA_CACHE_MAXSIZE 太小存不下时还会重新编译），不带 PTX 的库会报 "no kernel image is available"
hint-unknown-help-topic = 可用的主题：{ $topics }；`cudaenv help` 还会列出所有命令
hint-unknown-command = `cudaenv --help` 会列出所有命令
hint-no-pin-nothing-installed = 装好之后用 `cudaenv local SPEC` 锁定一个版本：先 `cudaenv install 12.4`，再 `cudaenv local 12.4`（`cudaenv ls-remote` 列出可以安装的版本）
hint-no-pin = 用 `cudaenv local SPEC` 锁定一个版本；已安装：{ $installed }
hint-version-name-required-none = 还没有安装任何版本（`cudaenv versions` 会列出已安装的版本）
hint-version-name-required = `cudaenv { $command } NAME`；已安装：{ $installed }
hint-manifests-unreachable = { $advice }；没有做任何改动：cudaenv 继续使用手头已有的清单
hint-unsafe-system-root = 任何能写这个目录的人都能往每个用户的进程里塞库文件；管理员应当运行 `chmod go-w { $path }`（或者删掉这个版本）；在那之前请使用你自己根目录下的版本
hint-system-root-not-writable = 请使用你自己的根目录（去掉 --system）；或者以系统根目录所有者的身份，用 `cudaenv install --system` 或 CUDAENV_ROOT={ $root } 运行
hint-no-system-root = 设置 { $variable }，或者在 $CUDAENV_ROOT/config.toml 里设置 `system-root`
hint-nothing-installed = 请先安装一个（`cudaenv install 12.4`），或者接管一个已有的（`cudaenv link NAME PATH`）
hint-modulefile-not-ours = 导出到一个单独的目录（再 `module use` 它），或者把那个文件挪走
hint-not-a-mirror = 请给一个新的或空的目录，或者之前由 `cudaenv mirror` 写过的目录（会往里追加）
hint-bad-mirror = 记录文件被改动或损坏了；没有写入任何东西。请在一个空目录里重新生成镜像
hint-invalid-target = 用 `--target-driver 550.54.15 --target-arch sm_90` 描述要规划的机器（在那台机器上运行 `nvidia-smi --query-gpu=driver_version,compute_cap --format=csv` 可以同时得到这两项）
hint-trace-failed = 检查这个命令能否用 `cudaenv exec -- COMMAND` 运行，以及临时目录（$TMPDIR）是否可写

hint-trace-unsupported = `cudaenv verify` 会显示 cudart、cuBLAS 和 cuDNN 是从哪里加载的；在 Windows 上可以用 Sysinternals 的 Process Monitor（筛选操作 Load Image）查看程序加载的每个 DLL；在 WSL2 里 `cudaenv trace` 和在 Linux 上一样可用
hint-network-stalled = 服务器（或中间的代理）接受了连接，但停止了发送；请稍后重试，或者用 { $variable }=SECONDS 给慢速服务器更多时间（默认 { $default }）
hint-invalid-http-timeout = 请设为整数秒，例如 { $variable }=60，或者 unset 它以使用默认值（{ $default } 秒）
hint-bad-variable = 把 { $variable } 设为这样的值，或者 unset 它（`cudaenv help environment` 列出了所有变量）
hint-bug = 这是 cudaenv 的 bug；没有留下任何做了一半的改动。请附上出错的命令报告这个问题
hint-resources = 系统拒绝了 cudaenv 需要的资源（线程、文件描述符、TLS 根证书）：请检查 `ulimit -a`
hint-cannot-run = 检查这个文件是否可执行，以及是否为这台机器构建（`file`、`ldd`）
hint-no-error-text = 把错误信息作为参数传入，或者从标准输入传入：`cudaenv explain "libcudart.so.11.0: cannot open…"`
hint-no-shell-version = `cudaenv shell SPEC` 为当前 shell 设置一个版本；`cudaenv version` 显示当前激活的版本及原因
hint-system-has-no-prefix = 请选一个 cudaenv 的版本（`cudaenv prefix 12.4`、`cudaenv local 12.4`）；`cudaenv versions` 会列出它们
hint-not-a-link = `--force` 只能替换链接：请先运行 `cudaenv uninstall { $name }`，或者换一个名字
hint-incomplete-version = 加 --force 来替换它
hint-bad-child-request = 这个进程由 `cudaenv verify` 启动；请直接运行 `cudaenv verify`
hint-corrupt-cache = 删除 { $path }（或者不带 --offline 运行一次，重新读取索引）
hint-bad-metadata = 这个版本的记录被改动或损坏了：请重新安装，或者用 `cudaenv uninstall` 删除 { $path }
hint-not-utf8-for-shell = 请使用合法 UTF-8 的路径或值，或者换一个 shell（bash、zsh、fish）
hint-unknown-shell = 可选的是 bash、zsh、fish、pwsh 或 cmd

hint-unreadable-file = 文件所有者可以用 `chmod a+r { $path }` 让其他用户读取它（cudaenv 写入的文件遵循 umask）
hint-path-with-line-break = 请使用路径中不含换行符的目录（用于 CUDAENV_ROOT 或交给 `link` 的路径）；`cudaenv env --shell SHELL` 可以处理任何路径
hint-write-outside = 请删除链接 { $path }（或换一个内部没有链接的目录）；没有任何内容经由它写入
hint-no-space = 请先在那里腾出空间，或把 cudaenv 的根目录放到更大的文件系统上（CUDAENV_ROOT）；没有安装任何内容，也没有留下写了一半的文件
hint-not-regular-artifact = 镜像中的文件应是普通文件：请用 `cudaenv mirror` 重新生成镜像；没有读取或安装任何内容
hint-installed-differs-from-lock = 没有做任何改动；可以用 `cudaenv install --locked --force` 按锁文件重新安装
hint-untrusted-system-path = 能控制该位置的任何人都可以向每个用户的进程植入库或工具；应由管理员创建该目录并交给 root，或将其从该版本中移除；在此之前请使用你自己根目录下的版本

# 下载源没有所要的东西时（`… is not available from …`）给出的建议。
hint-other-sources-tool = 。没有 NVIDIA 的服务器时，cudaenv 的其他下载源都没有 CUDA { $version } 的 `{ $tool }`（PyPI 上 12.x 的 nvcc 只有 ptxas 和 NVVM；Debian 的软件包只提供运行时库）：PyPI 从 CUDA 13 起有完整的 nvcc（`cudaenv install 13 --profile devel`），Debian 自己的 `nvidia-cuda-toolkit` 软件包在系统范围内提供 nvcc 12.4（用 apt，需要 root），`--without nvcc,cuobjdump,nvdisasm,nvprune` 则从 PyPI 安装 12.x 的其余部分
hint-other-sources-libraries = 。没有 NVIDIA 的服务器时：PyPI 有 11.7 及以后的 CUDA 库（`--source pypi`），Debian 的软件包有 11.2.2、11.8.0 和 12.4.1 的（`--source debian`）
hint-ls-remote = 运行 `cudaenv ls-remote` 查看每个下载源提供什么，或运行 `cudaenv update` 刷新发行版列表（PyPI 的和 NVIDIA 的）
hint-ls-remote-without = 运行 `cudaenv ls-remote` 查看每个下载源提供什么，或运行 `cudaenv update` 刷新发行版列表（PyPI 的和 NVIDIA 的）；`--without { $components }` 可以安装其余部分
hint-nvidia-platforms = NVIDIA 只为 Linux x86_64 和 aarch64（sbsa）发布 CUDA
hint-libraries-need-pypi = NCCL 和 TensorRT 来自 PyPI（TensorRT 来自 NVIDIA 的软件包索引）：请用 `--source auto` 或 `--source pypi`，或者把它们从版本规格里去掉
hint-libraries-need-pypi-or-nvidia = cuSPARSELt 和 cuTENSOR 来自 PyPI 或 NVIDIA 的 redist 服务器：请用 `--source auto`、`--source pypi` 或 `--source nvidia`，或者把它们从版本规格里去掉
hint-index-lacks-metapackage = 这个索引里没有 NVIDIA 的 CUDA 元包；请把 `cuda-toolkit` 也同步到镜像里，或者用 `--offline` 使用上一次的目录
hint-legacy-before-10 = CUDA 10.0 之前的 runfile 结构不同，cudaenv 不拆解它们；请使用 CUDA 10.0 或更新的版本
hint-legacy-windows-before-11 = CUDA 11.0 之前的 Windows 安装包结构不同，cudaenv 不拆解它们；请使用 CUDA 11.0 或更新的版本
hint-library-majors = PyPI 上的 { $library } 只有这些版本的构建：{ $majors }；`--without { $component }` 可以安装其余部分
hint-no-wheel-for = 这个项目没有适用于 { $platform } 的 wheel
hint-available = 可用的版本：{ $versions }
hint-check-package-index = 请检查软件包索引（CUDAENV_PYPI_INDEX / PIP_INDEX_URL）
hint-check-nvidia-index = 请检查 NVIDIA 的软件包索引（CUDAENV_PYPI_NVIDIA_INDEX）
hint-pypi-releases = PyPI 上有 CUDA 11.7、11.8、12.x 和 13.x 的 NVIDIA wheel；已知的发行版：{ $releases }；更早的工具包请用 `--source legacy`；`cudaenv update` 可以刷新这个列表
hint-try-source-nvidia = 试试 `--source nvidia`
hint-pypi-lacks-build = PyPI 上没有这个构建；请换一个 CUDA 发行版或用 `--source nvidia`，或者加 `--without { $component }`
hint-lock-md5-only = NVIDIA 只为这个文件公布了 md5，而锁文件按 sha256 固定文件；`cudaenv install { $spec }` 可以安装它，并用那个 md5 校验
hint-frozen-debian = Debian 软件包提供哪些文件是解析出来的，不写进锁文件：请用 `cudaenv install --locked`
hint-frozen-runfile = runfile 提供哪些目录是解析出来的，不写进锁文件：请用 `cudaenv install --locked`
hint-lock-linked = 请锁定一个由下载源安装的版本：先 `cudaenv install { $spec }` 再 `cudaenv lock { $spec }`，或者在 { $file } 里固定你想要的那个已安装版本
hint-lock-platforms-differ = 在 { $platform } 上解析出的是 { $name }；请分别锁定各个平台，或者指定一个在所有平台上都有的确切发行版
hint-lock-pass-platform = 请加 `--platform linux-x86_64`、`--platform linux-aarch64` 或 `--platform windows-x86_64`

# `verify` 超时的原因，依据停止之前测到的数据。
hint-timeout-cpu = 进程在 { $seconds } 秒内用了 { $cpu } 秒 CPU 时间
hint-timeout-cache-grew = 驱动的计算缓存（{ $dir }）从 { $before } 增长到 { $after }
hint-timeout-evidence = ：{ $evidence }
hint-timeout-cache-limit = CUDA_CACHE_MAXSIZE，这里是 { $bytes } 字节
hint-timeout-cache-limit-default = CUDA_CACHE_MAXSIZE，默认 256 MiB
hint-timeout-jit-library-version = { $library } { $version } 的
hint-timeout-jit-library = { $library } 的
hint-timeout-jit-libraries = 这些库的
hint-timeout-jit-fix-first = 改用 CUDA { $first } 或更新的版本，它带有原生的 { $sm } 代码
hint-timeout-jit-fix = 改用一个带有原生 { $sm } 代码的 CUDA 发行版
hint-timeout-jit = `{ $stage }` 只是慢，并没有卡死{ $evidence }。CUDA { $cuda } 没有 { $sm } 代码，所以驱动在第一次使用时为这块 GPU 即时编译（JIT）{ $library } PTX：在这个环境上运行的框架第一次调用 cuBLAS 时也会这样等待，而且每当计算缓存（{ $limit }；最多 4 GiB）太小、存不下编译结果时还会再等一次。要解决它，请{ $fix }；如果要将就使用，请设置 CUDA_CACHE_MAXSIZE=4294967296 并用更长的 --timeout 重新运行，让缓存一次填满
hint-timeout-busy = `{ $stage }` 一直在忙，并没有卡死：{ $evidence }。这个调用在这里很慢（--size 很大，或者驱动在编译代码），不是挂起：请用 --timeout SECS 放宽时限
hint-timeout-busy-cached = `{ $stage }` 一直在忙，并没有卡死：{ $evidence }。这个调用在这里很慢（--size 很大，或者驱动在编译代码，编译结果保存在它的计算缓存里，最多 { $limit }），不是挂起：请用 --timeout SECS 放宽时限
hint-timeout-idle = `{ $stage }` 没有返回，而进程处于空闲（{ $evidence }）：它在等驱动或 GPU，并没有在计算。请运行另一个 CUDA 程序（`nvidia-smi`，或某个框架的第一次 GPU 调用），看看它是否也在等：如果是，说明驱动或 GPU 卡住了（在 `dmesg` 里找 Xid 错误；重新加载内核模块或重启）

# GPU 跑不了这套 CUDA 时，改用什么。
hint-arch-cuda-from = CUDA { $cuda } 或更新的版本
hint-arch-cuda-before = 比 { $cuda } 更早的 CUDA
hint-arch-none-known = cudaenv 不知道有哪个版本可用
hint-arch-newer-cuda = 更新的 CUDA
