//! The rules whose answer is fixed text, matched by the phrases of the
//! message: cuDNN's and cuBLAS' status codes, no device, out of memory,
//! NCCL's errors and the like.

use crate::i18n::Msg;

use super::{Answer, Input, answer, has};
use crate::machine::finding::Finding;

/// A rule whose answer is fixed text: its meaning and fixes are catalogue keys.
struct Rule {
    id: &'static str,
    needles: &'static [&'static str],
    meaning: &'static str,
    fix: &'static [&'static str],
}

const RULES: &[Rule] = &[
    Rule {
        id: "cudnn-internal-error",
        needles: &[
            "CUDNN_STATUS_INTERNAL_ERROR",
            "CUDNN_STATUS_EXECUTION_FAILED",
            "CUDNN_STATUS_NOT_INITIALIZED",
            "CUDNN_STATUS_ARCH_MISMATCH",
        ],
        meaning: "explain-cudnn-internal-error",
        fix: &[
            "explain-cudnn-internal-error-fix-1",
            "explain-cudnn-internal-error-fix-2",
        ],
    },
    Rule {
        id: "no-device",
        needles: &[
            "no CUDA-capable device is detected",
            "CUDA_ERROR_NO_DEVICE",
            "cudaErrorNoDevice",
            "Found no NVIDIA driver on your system",
        ],
        meaning: "explain-no-device",
        fix: &["explain-no-device-fix-1", "explain-no-device-fix-2"],
    },
    Rule {
        id: "ptx-toolchain",
        needles: &[
            "provided PTX was compiled with an unsupported toolchain",
            "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
            "cudaErrorUnsupportedPtxVersion",
        ],
        meaning: "explain-ptx-toolchain",
        fix: &["explain-ptx-toolchain-fix-1", "explain-ptx-toolchain-fix-2"],
    },
    Rule {
        id: "compat-not-supported",
        needles: &[
            "forward compatibility was attempted on non supported HW",
            "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
            "error 804",
        ],
        meaning: "explain-compat-not-supported",
        fix: &[
            "explain-compat-not-supported-fix-1",
            "explain-compat-not-supported-fix-2",
        ],
    },
    Rule {
        id: "driver-library-mismatch",
        needles: &[
            "Driver/library version mismatch",
            "unsupported display driver / cuda driver combination",
            "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
            "error 803",
        ],
        meaning: "explain-driver-library-mismatch",
        fix: &[
            "explain-driver-library-mismatch-fix-1",
            "explain-driver-library-mismatch-fix-2",
            "explain-driver-library-mismatch-fix-3",
        ],
    },
    Rule {
        id: "cuinit-unknown",
        needles: &[
            "CUDA_ERROR_UNKNOWN",
            "cuInit: UNKNOWN ERROR",
            "failed call to cuInit",
            "CUDA unknown error",
        ],
        meaning: "explain-cuinit-unknown",
        fix: &[
            "explain-cuinit-unknown-fix-1",
            "explain-cuinit-unknown-fix-2",
            "explain-cuinit-unknown-fix-3",
        ],
    },
    Rule {
        id: "gcc-unsupported",
        needles: &[
            "unsupported GNU version",
            "gcc versions later than",
            "unsupported clang version",
        ],
        meaning: "explain-gcc-unsupported",
        fix: &[
            "explain-gcc-unsupported-fix-1",
            "explain-gcc-unsupported-fix-2",
        ],
    },
    Rule {
        id: "nccl-net-plugin",
        needles: &[
            "libnccl-net.so",
            "NET/Plugin: Could not find",
            "NET/Plugin : No plugin found",
        ],
        meaning: "NCCL looked for an optional network plugin (libnccl-net.so, for InfiniBand/EFA fabrics through a vendor plugin) and uses its built-in sockets and IB transports without it: an INFO line, not an error",
        fix: &[
            "nothing on a single node or plain Ethernet; on a fabric that needs a plugin (AWS EFA: aws-ofi-nccl), put its directory on LD_LIBRARY_PATH",
        ],
    },
    Rule {
        id: "nccl-undefined-symbol",
        needles: &["undefined symbol: nccl"],
        meaning: "the program was built against a newer NCCL than the libnccl.so.2 the loader found (NCCL adds functions in minor releases; the soname stays libnccl.so.2), so an older NCCL earlier on the search path shadows the one it needs",
        fix: &[
            "cudaenv trace -- python -c 'import torch'   # shows which libnccl.so.2 was loaded and from where",
            "install the NCCL the framework names (`pip show nvidia-nccl-cu12`, or its Requires-Dist) in the stack: cudaenv install CUDA+ncclVERSION",
        ],
    },
    Rule {
        id: "nccl-error",
        needles: &[
            "ncclUnhandledCudaError",
            "unhandled cuda error",
            "ncclSystemError",
            "ncclInternalError",
            "NCCL error",
        ],
        meaning: "an NCCL collective failed. The usual causes: a CUDA error underneath (a driver too old for the NCCL build, a GPU fault), peer-to-peer or shared-memory limits (containers with a small /dev/shm), or a network interface NCCL cannot use between nodes",
        fix: &[
            "rerun with NCCL_DEBUG=INFO (NCCL_DEBUG_SUBSYS=INIT,NET) to see which step failed",
            "containers: docker run --shm-size=1g (or --ipc=host)",
            "cudaenv verify   # runs NCCL's all-reduce on the stack when it carries NCCL",
        ],
    },
    Rule {
        id: "out-of-memory",
        needles: &[
            "CUDA out of memory",
            "CUDA_ERROR_OUT_OF_MEMORY",
            "cudaErrorMemoryAllocation",
            "CUBLAS_STATUS_ALLOC_FAILED",
            "OOM when allocating",
        ],
        meaning: "explain-out-of-memory",
        fix: &[
            "explain-out-of-memory-fix-1",
            "explain-out-of-memory-fix-2",
            "explain-out-of-memory-fix-3",
        ],
    },
    Rule {
        id: "cublas-not-initialized",
        needles: &[
            "CUBLAS_STATUS_NOT_INITIALIZED",
            "CUBLAS_STATUS_ARCH_MISMATCH",
        ],
        meaning: "explain-cublas-not-initialized",
        fix: &[
            "explain-cublas-not-initialized-fix-1",
            "explain-cublas-not-initialized-fix-2",
        ],
    },
    Rule {
        id: "tensorflow-no-gpu",
        needles: &[
            "Cannot dlopen some GPU libraries",
            "Skipping registering GPU devices",
        ],
        meaning: "explain-tensorflow-no-gpu",
        fix: &[
            "explain-tensorflow-no-gpu-fix-1",
            "explain-tensorflow-no-gpu-fix-2",
        ],
    },
    Rule {
        id: "dnn-not-found",
        needles: &[
            "DNN library is not found",
            "Unable to load cuDNN",
            "Could not load cudnn",
        ],
        meaning: "explain-dnn-not-found",
        fix: &["explain-dnn-not-found-fix-1", "explain-dnn-not-found-fix-2"],
    },
    Rule {
        id: "torch-cpu-build",
        needles: &["Torch not compiled with CUDA enabled"],
        meaning: "explain-torch-cpu-build",
        fix: &["explain-torch-cpu-build-fix-1"],
    },
    Rule {
        id: "undefined-symbol",
        needles: &[
            "undefined symbol",
            "version `libcublasLt.so",
            "not defined in file",
        ],
        meaning: "explain-undefined-symbol",
        fix: &["explain-undefined-symbol-fix-1"],
    },
];

pub(super) fn simple_rules(_input: &Input, t: &str, out: &mut Vec<Finding>) {
    for r in RULES {
        if out.iter().any(|e| e.code == r.id) {
            continue;
        }
        if let Some(m) = has(t, r.needles) {
            // "not found" rules above already cover library names; the generic ones add context.
            let fix = r.fix.iter().map(|k| Msg::key(k)).collect();
            out.push(answer(r.id, m, Msg::key(r.meaning)).fixes(fix));
        }
    }
}
