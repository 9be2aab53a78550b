# cudaenv 的 `explain` 中文消息（简体中文）。键与 locales/en/explain.ftl
# 一一对应，占位符 `{ $name }` 必须相同；命令、路径、环境变量保持原样。

## 是否有已安装的版本提供缺少的部分

explain-installed-none = 没有任何已安装的版本提供它
explain-installed-yes-active-has-it = 有：{ $names }（当前激活的就是 { $active }，库文件就在里面，说明程序并没有在它的环境里运行）
explain-installed-yes-active-other = 有：{ $names }（当前激活的版本是 { $active }）
explain-installed-yes-none-active = 有：{ $names }（当前没有激活任何版本）

## 动态链接器找不到某个库

explain-windows-dll-note = （这是 Windows 的 DLL 名称：原生 Windows 上的 GPU 支持到 TensorFlow 2.10 为止；在 WSL2 里用的是 Linux 版的库）
explain-missing-driver-library = { $file } 是 NVIDIA 驱动自带的库：程序没有找到驱动{ $windows }
explain-missing-driver-library-fix = 安装 NVIDIA 驱动（容器里：用 --gpus all 启动；WSL2：在 Windows 上安装驱动，并确认 /usr/lib/wsl/lib 在 ldconfig 缓存中）
explain-missing-tensorrt = { $file } 是 TensorRT，TensorFlow 会顺带尝试加载的可选推理库；没有它，TensorFlow 照样能用 GPU
explain-missing-tensorrt-provided-by = TensorRT（不属于 CUDA 或 cuDNN；cudaenv 不负责安装它）
explain-missing-tensorrt-fix = 无需处理，除非你在用 TF-TRT：那样的话请 `pip install tensorrt`，版本与你的 CUDA 对应
explain-missing-cuda-library = 程序按名字请求动态链接器加载 { $file }，但 LD_LIBRARY_PATH、ldconfig 缓存和程序自身的 RUNPATH 里都找不到它：程序需要 { $provider } 的运行时库{ $windows }
explain-run-with-hook = 在启用了 shell 钩子的终端里运行程序（`eval "$(cudaenv init bash)"`），或者用 `cudaenv exec` 运行
explain-missing-cudnn-sub-library = { $file } 是 cuDNN { $major } 的子库之一：libcudnn.so.{ $major } 本身找到了，这一部分却没找到——通常是 cuDNN 只拷了一部分，或者 PyTorch 自带的 cuDNN 和 LD_LIBRARY_PATH 上的另一份混在了一起{ $windows }
explain-missing-cudnn = 程序需要 cuDNN { $major }（{ $file }），动态链接器一份也没找到{ $windows }
explain-run-with-active-cudnn = 在激活的环境里运行它（`cudaenv exec -- CMD`），并用 `cudaenv doctor` 检查 LD_LIBRARY_PATH 上有没有别的 cuDNN
explain-doctor-lists-cudnn-copies = cudaenv doctor   # 列出动态链接器能看到的每一份 cuDNN
explain-missing-unknown-library = 动态链接器找不到 { $file }；cudaenv 不知道它属于哪个软件包

## cuDNN 版本不匹配

explain-cudnn-install-or-framework = cudaenv install { $cuda }+cudnn{ $cudnn }   （或者装你的框架所需的 CUDA：`cudaenv compat FRAMEWORK`）
explain-cudnn-install-by-rule = cudaenv install { $cuda }+cudnn{ $cudnn }   （CUDA { $cuda }：{ $rule }——或者装你的框架所需的 CUDA：`cudaenv compat FRAMEWORK`）
explain-cudnn-install-any-cuda = cudaenv install CUDA+cudnn{ $cudnn }   （CUDA 取你的框架所需的版本；`cudaenv compat FRAMEWORK` 会告诉你）
explain-doctor-finds-older-cudnn = cudaenv doctor   # 找出被加载的那份旧 cuDNN
explain-cudnn-version-mismatch = 程序编译时用的是 cuDNN { $compiled }，运行时却加载了 cuDNN { $loaded }；cuDNN 的主版本必须相同，次版本不能更低（需要 { $floor } 或更新）

## 驱动比 CUDA 运行时旧

explain-cuda-needs-driver = CUDA { $cuda } 需要驱动 { $driver }
explain-upgrade-driver-to = 把 NVIDIA 驱动升级到 ≥ { $driver }
explain-upgrade-driver = 升级 NVIDIA 驱动
explain-driver-runs-active-cuda = 驱动 { $driver } 能运行当前激活的 CUDA { $cuda }，所以程序加载的是别处一个更新的 CUDA 运行时，或者是链接用的桩库 libcuda.so（stub），而不是驱动
explain-doctor-finds-stray-cudart = cudaenv doctor   # 找出 LD_LIBRARY_PATH 上多余的 libcudart 和桩库 libcuda.so
explain-run-with-active-environment = 在激活的环境里运行程序：cudaenv exec -- CMD
explain-use-cuda-driver-runs-installed = 或者改用这个驱动能运行的 CUDA：cudaenv local { $name }
explain-use-cuda-driver-runs = 或者改用这个驱动能运行的 CUDA（≤ { $cuda }）：cudaenv install { $cuda } && cudaenv local { $cuda }
explain-driver-no-installed-fits = 已安装的版本都不合适
explain-driver-installed-fit = 合适的已安装版本：{ $names }
explain-driver-runs-up-to-named = 这个驱动（{ $driver }）最高支持 CUDA { $cuda }；{ $fits }
explain-driver-runs-up-to = 这个驱动最高支持 CUDA { $cuda }；{ $fits }
explain-check-stub-libcuda = 检查 LD_LIBRARY_PATH 上有没有桩库 libcuda.so（…/lib64/stubs）：`cudaenv doctor`
explain-driver-insufficient = 程序加载的 CUDA 运行时比已安装的 NVIDIA 驱动所支持的更新（或者加载的是链接用的桩库 libcuda，而不是驱动）

## 没有适合这块 GPU 的机器码

explain-arch-cuda-range = { $sm }：CUDA { $first } 起，到 { $removed } 为止（不含 { $removed }）
explain-arch-cuda-from = { $sm }：CUDA ≥ { $first }
explain-arch-cuda-before = { $sm }：{ $removed } 之前的 CUDA
explain-arch-unknown = { $sm }：cudaenv 不认识这个架构
explain-active-cannot-build-for = 当前激活的 { $name }（CUDA { $cuda }）无法为 { $sm } 编译：cudaenv install { $target } && cudaenv local { $target }
explain-framework-build-for = 框架：安装用 CUDA ≥ { $first } 构建的版本（例如 `pip install torch --index-url https://download.pytorch.org/whl/cu{ $tag }`）
explain-doctor-shows-architecture = cudaenv doctor   # 显示 GPU 的架构，以及当前 CUDA 支持哪些架构
explain-no-kernel-image = 这个二进制文件（框架的 wheel、扩展或某个 CUDA 库）里既没有这块 GPU 架构的机器码，也没有驱动能现场编译的 PTX

## nvcc 不能为某个架构编译

explain-use-cuda-before = 改用 { $removed } 之前的 CUDA（例如 `cudaenv install { $last } --profile devel`）
explain-stop-building-for = 或者不再为 { $sm } 编译（TORCH_CUDA_ARCH_LIST / CMAKE_CUDA_ARCHITECTURES）
explain-nvcc-arch = 这个 nvcc 不能为 { $sm }（{ $family }）编译
explain-nvcc-arch-unknown-family = 这个 nvcc 不能为 { $sm }（未知架构）编译
explain-cuda-range = CUDA { $first } 起，到 { $removed } 为止（不含 { $removed }）
explain-cuda-before = { $removed } 之前的 CUDA
explain-unknown = 未知

## 用另一个 CUDA 编译 PyTorch 扩展

explain-torch-extension-cuda = 正在编译 PyTorch 的 C++/CUDA 扩展：nvcc/CUDA_HOME 指向 CUDA { $detected }，而这个 PyTorch 是用 CUDA { $torch } 构建的；扩展必须用相同的主版本.次版本编译
explain-torch-extension-provided-by = CUDA { $torch }（需要 nvcc：--profile devel）

## 答案固定的消息

explain-cudnn-internal-error = cuDNN 在调用内部出错了。常见原因依次是：GPU 显存不够（TensorFlow 默认一开始就占满几乎全部显存）、cuDNN 太旧不支持这块 GPU 的架构、或者同一个进程里加载了两份不同的 cuDNN
explain-cudnn-internal-error-fix-1 = TensorFlow：export TF_FORCE_GPU_ALLOW_GROWTH=true
explain-cudnn-internal-error-fix-2 = cudaenv doctor   # 对照当前的 CUDA/cuDNN 检查 GPU 架构，并找出多余的 cuDNN
explain-no-device = CUDA 看不到任何 GPU：可能是 CUDA_VISIBLE_DEVICES 把它们藏起来了（为空或 -1）、驱动没有加载、设备文件 /dev/nvidia* 不存在或没有权限，或者（容器里）启动时没有传入 GPU
explain-no-device-fix-1 = unset CUDA_VISIBLE_DEVICES
explain-no-device-fix-2 = cudaenv doctor   # 检查驱动、设备文件和 CUDA_VISIBLE_DEVICES
explain-ptx-toolchain = 程序里带的 PTX 是由比驱动的即时编译器更新的 CUDA 生成的：这个驱动只能通过次版本兼容（minor version compatibility）运行这个 CUDA，而次版本兼容不包括 PTX 即时编译
explain-ptx-toolchain-fix-1 = 把 NVIDIA 驱动升级到这个工具包发布时配套的版本（`cudaenv compat` 按版本列出）
explain-ptx-toolchain-fix-2 = 或者改用与驱动相配的 CUDA 版本（`cudaenv doctor` 会告诉你是哪个）
explain-compat-not-supported = 在不支持前向兼容的 GPU 上加载了 CUDA 前向兼容版的 libcuda（cuda-compat 软件包，常见于 LD_LIBRARY_PATH 上的 …/cuda-X/compat）；前向兼容只适用于数据中心 GPU
explain-compat-not-supported-fix-1 = 从 LD_LIBRARY_PATH 中去掉 cuda-X/compat 目录
explain-compat-not-supported-fix-2 = cudaenv doctor
explain-driver-library-mismatch = 加载的 libcuda 和正在运行的内核模块不是同一个驱动版本——通常是升级驱动后没有重启，或者用了与驱动分支不匹配的前向兼容 libcuda
explain-driver-library-mismatch-fix-1 = 重启（或重新加载 nvidia 内核模块）
explain-driver-library-mismatch-fix-2 = 从 LD_LIBRARY_PATH 中去掉所有 cuda-X/compat 目录
explain-driver-library-mismatch-fix-3 = cudaenv doctor   # 显示各个来源报告的驱动版本
explain-cuinit-unknown = cuInit 失败了，但没有给出具体原因。常见原因：缺少 /dev/nvidia-uvm（nvidia_uvm 模块没有加载，休眠/唤醒后常见），或者升级驱动后没有重启
explain-cuinit-unknown-fix-1 = sudo nvidia-modprobe -u -c=0   （或者：sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm）
explain-cuinit-unknown-fix-2 = 如果还不行，就重启
explain-cuinit-unknown-fix-3 = cudaenv doctor
explain-gcc-unsupported = nvcc 拒绝了主机编译器：每个 CUDA 版本只支持到某个版本为止的主机编译器
explain-gcc-unsupported-fix-1 = 让 nvcc 使用其 CUDA 接受的编译器：export CUDAENV_HOST_COMPILER=auto（或一个路径，例如 /usr/bin/g++-12）；激活时会设置 NVCC_PREPEND_FLAGS=-ccbin …、NVCC_CCBIN 和 CUDAHOSTCXX
explain-gcc-unsupported-fix-2 = 或者换更新的 CUDA：cudaenv install VERSION --profile devel
explain-out-of-memory = GPU 没有足够的空闲显存完成这次分配（可能被别的进程占着；TensorFlow 默认会占满几乎全部显存）
explain-out-of-memory-fix-1 = 减小 batch size 或模型规模
explain-out-of-memory-fix-2 = TensorFlow：export TF_FORCE_GPU_ALLOW_GROWTH=true；PyTorch：PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
explain-out-of-memory-fix-3 = 用 nvidia-smi 查看还有哪些进程在用 GPU
explain-cublas-not-initialized = cuBLAS 无法创建句柄：通常是 GPU 显存不够，或者加载的 cuBLAS 和运行时不属于同一个 CUDA（库路径上有两份 CUDA）
explain-cublas-not-initialized-fix-1 = cudaenv doctor   # 找出 LD_LIBRARY_PATH 上多余的 CUDA
explain-cublas-not-initialized-fix-2 = 释放 GPU 显存（见 out-of-memory 一条）
explain-tensorflow-no-gpu = TensorFlow 没有注册 GPU：要么某个库加载失败（这一行之前的日志会写出是哪个库），要么没有找到驱动。在原生 Windows 上，TensorFlow ≥ 2.11 完全不支持 GPU（请用 WSL2）
explain-tensorflow-no-gpu-fix-1 = 把日志里 `Could not load dynamic library …` 那几行粘贴给 `cudaenv explain`（TensorFlow 2.14 及以后只在设置了 `TF_CPP_VMODULE=dso_loader=1` 时才打印这几行：设置后再运行一次）
explain-tensorflow-no-gpu-fix-2 = cudaenv local --for tensorflow==VERSION   # 锁定它测试时用的 CUDA + cuDNN
explain-tensorflow-cudart-stub = 别被字面意思误导：这是 TensorFlow 的 CUDA 桩代码没能加载它编译时对应的 CUDA 运行时（TensorFlow 2.14 及以后是 libcudart.so.12，2.5–2.13 是 libcudart.so.11.0）：当前没有激活的 CUDA 版本，或者激活的版本 CUDA 主版本号不对。驱动很可能是装好的（用 `nvidia-smi` 确认）
explain-tensorflow-cudart-stub-driver = 别被字面意思误导：驱动是有的（{ $driver }）。TensorFlow 的 CUDA 桩代码没能加载它编译时对应的 CUDA 运行时（TensorFlow 2.14 及以后是 libcudart.so.12，2.5–2.13 是 libcudart.so.11.0），原因是当前没有激活的 CUDA 版本，或者激活的版本 CUDA 主版本号不对
explain-tensorflow-cudart-stub-tested = { $framework } 测试时用的是 { $stack }
explain-tensorflow-cudart-stub-names = TF_CPP_VMODULE=dso_loader=1 python … 2>&1 | cudaenv explain   # 列出它加载失败的每一个库
explain-dnn-not-found = 框架无法加载 cuDNN（或者加载了不兼容的版本）
explain-dnn-not-found-fix-1 = cudaenv compat FRAMEWORK   # 告诉你它需要哪个 cuDNN
explain-dnn-not-found-fix-2 = cudaenv install --for FRAMEWORK==VERSION
explain-torch-cpu-build = 这个 PyTorch 是只支持 CPU 的版本：换什么 CUDA 都不会让它用上 GPU
explain-torch-cpu-build-fix-1 = 重新安装 CUDA 版：pip install torch --index-url https://download.pytorch.org/whl/cu126（cuXYZ 按 `cudaenv compat torch` 的建议选）
explain-undefined-symbol = 一个库和它所依赖的库来自不同的版本（例如 libcublas 来自一个 CUDA，libcublasLt 来自另一个）：同一个进程里混用了两份 CUDA 或 cuDNN
explain-undefined-symbol-fix-1 = cudaenv doctor   # 列出 LD_LIBRARY_PATH 和 ldconfig 缓存里的每一份 CUDA/cuDNN

explain-lib-tensorrt-old = { $file } 是 TensorRT { $major }，TensorFlow 2.x 启动时会探测的可选推理库（TF-TRT；用 TensorRT 7 构建的版本请求 libnvinfer.so.7，之后的版本请求 libnvinfer.so.8）；缺少它时 TensorFlow 仍然会使用 GPU
explain-lib-tensorrt-old-provided-by = TensorRT { $major }.x（NVIDIA 的 TensorRT { $major } 软件包；cudaenv 安装的 tensorrt-cu*-libs wheel 从 TensorRT 10 开始，TensorFlow 2.x 不会加载它）
explain-lib-tensorrt-old-fix-1 = 如果不使用 TF-TRT，无需处理：这条警告无害（TF_CPP_MIN_LOG_LEVEL=2 可以隐藏它）
explain-lib-tensorrt-old-fix-2 = 如需 TF-TRT：安装与你的 CUDA 匹配的 NVIDIA TensorRT { $major } 软件包，或使用自带它的 TensorFlow 容器
explain-lib-tensorrt-8-fix = 如需 TF-TRT：`pip install "tensorrt==8.6.*"`（pypi.org 上的这个 wheel 在 site-packages/tensorrt/ 里带有 libnvinfer.so.8，并会装上它需要的 CUDA 12 wheel）；然后 `cudaenv link NAME "$VIRTUAL_ENV"` 会把这个 venv（连同 TensorRT）登记为一个版本
explain-lib-missing = { $file } 是 { $title } { $major }.x，{ $role }；动态链接器在它搜索的所有目录中都没有找到它{ $windows }
explain-lib-role-nccl = 多 GPU 训练会加载的集合通信库（torch.distributed、JAX、Horovod）
explain-lib-role-tensorrt = NVIDIA 的推理库
explain-lib-role-cusparselt = PyTorch 稀疏算子加载的结构化稀疏矩阵库
explain-lib-role-cutensor = CuPy 等加载的张量缩并库

explain-gcc-refused = nvcc 拒绝了主机编译器：这个 nvcc 只接受不高于 { $max } 的 { $family }{ $releases }{ $active }，而它找到的编译器（未用 -ccbin 指定时为 PATH 上的 g++）比这更新
explain-gcc-refused-active = （当前激活的版本是 CUDA { $cuda }）
explain-gcc-refused-fix-auto = export { $variable }=auto   # 激活时让 nvcc 使用已安装的、其 CUDA 接受的最新 g++（NVCC_PREPEND_FLAGS=-ccbin …、NVCC_CCBIN、CUDAHOSTCXX）
explain-gcc-refused-fix-name = 或者指定一个：export { $variable }=/usr/bin/{ $compiler }（Debian/Ubuntu：apt install { $package }），也可以在 config.toml 中设置 host-compiler
explain-gcc-refused-fix-newer = 或者换用接受你的编译器的 CUDA 版本：{ $releases }

## Windows：加载器找不到的 DLL、Visual C++ 运行库、Python 的 DLL 搜索规则

explain-win-missing-cuda-dll = Windows 在它查找 DLL 的所有目录里（程序自己的目录、System32，然后是 PATH 上的每个目录）都没有找到 { $file }：程序需要 { $provider } 的运行时 DLL{ $windows }
explain-win-missing-cudnn-dll = 程序需要 cuDNN { $major }（{ $file }），Windows 在它查找的目录里（程序自己的目录、System32、PATH）都没找到：cuDNN 是和 CUDA 工具包分开下载的，它的 bin 目录也必须在 PATH 上{ $windows }
explain-win-missing-cudnn-sub-dll = { $file } 是 cuDNN { $major } 的子库之一：cudnn64_{ $major }.dll 本身找到了，这一部分却没找到——通常是只把 cuDNN 的 bin 目录拷了一部分到 CUDA 的目录里{ $windows }
explain-win-missing-driver = { $file } 是 NVIDIA 驱动自带的 DLL（驱动把它装在 System32 里）：这台 Windows 没有装 NVIDIA 驱动，或者只有微软的基本显示驱动
explain-win-missing-driver-fix = 为这块 GPU 安装 NVIDIA 的 Windows 驱动（GeForce/Studio 驱动，或数据中心驱动）；装好后 `nvidia-smi` 就能正常输出
explain-win-tensorflow-tested = { $spec } 是 TensorFlow { $releases } 在原生 Windows 上测试时用的配置（TensorFlow ≥ 2.11 在原生 Windows 上不支持 GPU：请用 WSL2，或参看 `cudaenv compat tensorflow==2.10 --platform windows`）
explain-win-link-existing = 或者链接 NVIDIA 安装程序装好的工具包（按教程的做法把 cuDNN 的文件拷进去之后）：cudaenv link { $cuda } "C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v{ $cuda }" && cudaenv local { $cuda }
explain-win-run-with-hook = 在这套版本的环境里运行程序：`cudaenv exec -- python train.py`，或者在 PowerShell 里启用钩子（把 `cudaenv init pwsh | Out-String | Invoke-Expression` 写进 $PROFILE）；之前就已启动的程序（IDE、Jupyter）保留着旧的 PATH，要从激活后的终端重新启动才会生效
explain-vc-runtime = { $files }：微软的 Visual C++ 运行库，TensorFlow、PyTorch 以及大多数 Python 扩展的 Windows 版都链接它。这不是 CUDA 的问题：没有哪个 CUDA 版本提供这些 DLL
explain-vc-runtime-provided-by = 微软的 Visual C++ 可再发行组件包（Visual Studio 2015–2022，x64）
explain-win-vc-redist = 安装微软的 Visual C++ 2015–2022 可再发行组件包（x64）：https://aka.ms/vs/17/release/vc_redist.x64.exe（它会把这些 DLL 放进 C:\Windows\System32；TensorFlow ≥ 2.1 需要 msvcp140_1.dll，2019 及以后的版本才带它）
explain-vc-runtime-fix-doctor = cudaenv doctor   # 在 System32 和 PATH 上查找 msvcp140.dll、msvcp140_1.dll、vcruntime140.dll 和 vcruntime140_1.dll
explain-win-unnamed-module = （名字见上面几行）
explain-win-tf-import-failed = Python 无法加载 TensorFlow 的核心模块（{ $module }）或它链接的某个 DLL。这不是 CUDA 的问题：TensorFlow ≥ 2.1 要到寻找 GPU 时才加载 CUDA 和 cuDNN 的 DLL，缺了它们只会打印 "Could not load dynamic library …" 并改用 CPU 运行。常见原因：缺少 Visual C++ 运行库（msvcp140_1.dll、vcruntime140_1.dll）、CPU 不支持 AVX（官方 wheel 需要它）、Python 是 32 位的或不在该版本支持的范围内，或者安装已损坏
explain-win-tf-import-failed-fix-python = python -c "import struct; print(struct.calcsize('P') * 8)" 必须输出 64；`cudaenv compat tensorflow==VERSION --platform windows` 列出该版本支持的 Python；然后 pip install --force-reinstall tensorflow==VERSION
explain-win-dll-load-failed = Python 无法加载扩展模块 { $module } 或它链接的某个 DLL。从 Python 3.8 起，Windows 上的 Python 只在模块自己的目录、System32 和用 os.add_dll_directory() 添加的目录里查找扩展模块依赖的 DLL，不再搜索 PATH：所以把 CUDA 的 bin 目录加到 PATH 上，对直接链接 CUDA DLL 的扩展不起作用
explain-win-add-dll-directory = 如果这个扩展自己链接了 CUDA 的 DLL（CuPy、你自己的扩展），在 import 之前加上它们的目录：os.add_dll_directory(os.path.join(os.environ["CUDA_PATH"], "bin"))——激活（`cudaenv exec`、PowerShell 钩子）会把 CUDA_PATH 指向当前激活的版本
explain-win-ctypes-dll-search = Python 的 ctypes（3.8 及以后）只在名字里给出的目录、System32 和用 os.add_dll_directory() 添加的目录里查找 { $file }：它不搜索 PATH，所以即使这个 DLL 在 PATH 上，这样也找不到
explain-win-ctypes-full-path = ctypes.CDLL(os.path.join(os.environ["CUDA_PATH"], "bin", "{ $file }"))   # 在激活的环境里（`cudaenv exec`），CUDA_PATH 就是这套版本的根目录
explain-win-ctypes-winmode = 或者 ctypes.CDLL("{ $file }", winmode=0)，它按 LoadLibrary 的顺序查找，包括 PATH
