//! Dynamic bindings to the NVIDIA libraries, loaded by soname at run time.
//!
//! cudaenv links against no CUDA library: the point of `verify` is to load
//! them the way frameworks do (`dlopen("libcudart.so.12")`, searched through
//! `LD_LIBRARY_PATH`, the loader cache and the default directories) and see
//! what the loader actually picks. Each library is a table of typed function
//! pointers filled from one `Library`; the table keeps the library loaded for
//! as long as it lives. Only the handful of entry points `verify` calls are
//! bound, all of them present in CUDA 11 through 13 and cuDNN 8 and 9.
//!
//! Nothing here is safe to call without a loaded, matching library, so every
//! call site is `unsafe` and checks the returned status. The loader, the
//! `api!` tables live in the OS layer (`os::dylib`); the driver's own table
//! is `machine::libcuda`, asked as every driver probe asks it
//! (`machine::facts::driver`).

#![allow(non_snake_case)]

use std::ffi::{c_char, c_int, c_uint, c_void};

pub use crate::machine::libcuda::Driver;
use crate::os::dylib::api;
pub use crate::os::dylib::{Loaded, cstr, open_first};

pub type CudaStream = *mut c_void;
pub type CudaEvent = *mut c_void;
pub type CublasHandle = *mut c_void;
pub type CudnnHandle = *mut c_void;
pub type CudnnDesc = *mut c_void;

api! {
    /// NVML, only for the driver's own version string and the GPU count that
    /// ignores CUDA_VISIBLE_DEVICES.
    Nvml {
        nvmlInit_v2: fn() -> c_int;
        nvmlSystemGetDriverVersion: fn(*mut c_char, c_uint) -> c_int;
        nvmlDeviceGetCount_v2: fn(*mut c_uint) -> c_int;
        nvmlShutdown: fn() -> c_int;
    }
}

api! {
    /// The CUDA runtime (`libcudart.so.<major>`).
    Runtime {
        cudaRuntimeGetVersion: fn(*mut c_int) -> c_int;
        cudaDriverGetVersion: fn(*mut c_int) -> c_int;
        cudaGetDeviceCount: fn(*mut c_int) -> c_int;
        cudaSetDevice: fn(c_int) -> c_int;
        cudaDeviceGetAttribute: fn(*mut c_int, c_int, c_int) -> c_int;
        cudaMalloc: fn(*mut *mut c_void, usize) -> c_int;
        cudaFree: fn(*mut c_void) -> c_int;
        cudaMemcpy: fn(*mut c_void, *const c_void, usize, c_int) -> c_int;
        cudaMemset: fn(*mut c_void, c_int, usize) -> c_int;
        cudaDeviceSynchronize: fn() -> c_int;
        cudaEventCreate: fn(*mut CudaEvent) -> c_int;
        cudaEventDestroy: fn(CudaEvent) -> c_int;
        cudaEventRecord: fn(CudaEvent, CudaStream) -> c_int;
        cudaEventSynchronize: fn(CudaEvent) -> c_int;
        cudaEventElapsedTime: fn(*mut f32, CudaEvent, CudaEvent) -> c_int;
        cudaGetErrorName: fn(c_int) -> *const c_char;
        cudaGetErrorString: fn(c_int) -> *const c_char;
        cudaGetLastError: fn() -> c_int;
    }
}

impl Runtime {
    /// A failed call as a check reports it: `cudaMalloc returned 2
    /// (cudaErrorMemoryAllocation)`.
    pub fn error(&self, call: &str, r: c_int) -> String {
        // SAFETY: `cudaGetErrorName` returns a static string for every code.
        let name = unsafe { cstr((self.cudaGetErrorName)(r)) };
        format!("{call} returned {r} ({name})")
    }
}

pub const CUDA_MEMCPY_HOST_TO_DEVICE: c_int = 1;
pub const CUDA_MEMCPY_DEVICE_TO_HOST: c_int = 2;
pub const CUDA_ERROR_INSUFFICIENT_DRIVER: c_int = 35;
pub const CUDA_ERROR_NO_DEVICE: c_int = 100;
pub const CUDA_ERROR_NO_KERNEL_IMAGE: c_int = 209;
pub const CUDA_ERROR_UNSUPPORTED_PTX: c_int = 222;

api! {
    /// cuBLAS (`libcublas.so.<major>`).
    Cublas {
        cublasCreate_v2: fn(*mut CublasHandle) -> c_int;
        cublasDestroy_v2: fn(CublasHandle) -> c_int;
        cublasGetProperty: fn(c_int, *mut c_int) -> c_int;
        cublasSetMathMode: fn(CublasHandle, c_int) -> c_int;
        cublasGemmEx: fn(
            CublasHandle, c_int, c_int, c_int, c_int, c_int,
            *const c_void, *const c_void, c_int, c_int,
            *const c_void, c_int, c_int,
            *const c_void, *mut c_void, c_int, c_int,
            c_int, c_int
        ) -> c_int;
    }
}

api! {
    /// cuBLASLt (`libcublasLt.so.<major>`), which cuBLAS itself loads; bound
    /// to learn which file that was and its version.
    CublasLt {
        cublasLtGetVersion: fn() -> usize;
    }
}

pub const CUBLAS_STATUS_SUCCESS: c_int = 0;
pub const CUBLAS_STATUS_ARCH_MISMATCH: c_int = 8;
pub const CUBLAS_OP_N: c_int = 0;
pub const CUBLAS_GEMM_DEFAULT: c_int = -1;
pub const CUBLAS_DEFAULT_MATH: c_int = 0;
pub const CUDA_R_32F: c_int = 0;
pub const CUDA_R_64F: c_int = 1;
pub const CUDA_R_16F: c_int = 2;
pub const CUDA_R_16BF: c_int = 14;
pub const CUBLAS_COMPUTE_32F: c_int = 68;
pub const CUBLAS_COMPUTE_64F: c_int = 70;
pub const CUBLAS_COMPUTE_32F_FAST_TF32: c_int = 77;

/// cuBLAS status names, from `cublas_api.h`.
pub fn cublas_status_name(s: c_int) -> &'static str {
    match s {
        0 => "CUBLAS_STATUS_SUCCESS",
        1 => "CUBLAS_STATUS_NOT_INITIALIZED",
        3 => "CUBLAS_STATUS_ALLOC_FAILED",
        7 => "CUBLAS_STATUS_INVALID_VALUE",
        8 => "CUBLAS_STATUS_ARCH_MISMATCH",
        11 => "CUBLAS_STATUS_MAPPING_ERROR",
        13 => "CUBLAS_STATUS_EXECUTION_FAILED",
        14 => "CUBLAS_STATUS_INTERNAL_ERROR",
        15 => "CUBLAS_STATUS_NOT_SUPPORTED",
        16 => "CUBLAS_STATUS_LICENSE_ERROR",
        _ => "CUBLAS_STATUS_UNKNOWN",
    }
}

api! {
    /// cuDNN (`libcudnn.so.<major>`), through the legacy API that cuDNN 8 and
    /// 9 both export.
    Cudnn {
        cudnnGetVersion: fn() -> usize;
        cudnnGetCudartVersion: fn() -> usize;
        cudnnGetErrorString: fn(c_int) -> *const c_char;
        cudnnCreate: fn(*mut CudnnHandle) -> c_int;
        cudnnDestroy: fn(CudnnHandle) -> c_int;
        cudnnCreateTensorDescriptor: fn(*mut CudnnDesc) -> c_int;
        cudnnDestroyTensorDescriptor: fn(CudnnDesc) -> c_int;
        cudnnSetTensor4dDescriptor: fn(CudnnDesc, c_int, c_int, c_int, c_int, c_int, c_int) -> c_int;
        cudnnCreateFilterDescriptor: fn(*mut CudnnDesc) -> c_int;
        cudnnDestroyFilterDescriptor: fn(CudnnDesc) -> c_int;
        cudnnSetFilter4dDescriptor: fn(CudnnDesc, c_int, c_int, c_int, c_int, c_int, c_int) -> c_int;
        cudnnCreateConvolutionDescriptor: fn(*mut CudnnDesc) -> c_int;
        cudnnDestroyConvolutionDescriptor: fn(CudnnDesc) -> c_int;
        cudnnSetConvolution2dDescriptor: fn(CudnnDesc, c_int, c_int, c_int, c_int, c_int, c_int, c_int, c_int) -> c_int;
        cudnnSetConvolutionMathType: fn(CudnnDesc, c_int) -> c_int;
        cudnnGetConvolution2dForwardOutputDim: fn(CudnnDesc, CudnnDesc, CudnnDesc, *mut c_int, *mut c_int, *mut c_int, *mut c_int) -> c_int;
        cudnnGetConvolutionForwardWorkspaceSize: fn(CudnnHandle, CudnnDesc, CudnnDesc, CudnnDesc, CudnnDesc, c_int, *mut usize) -> c_int;
        cudnnConvolutionForward: fn(
            CudnnHandle, *const c_void, CudnnDesc, *const c_void, CudnnDesc, *const c_void,
            CudnnDesc, c_int, *mut c_void, usize, *const c_void, CudnnDesc, *mut c_void
        ) -> c_int;
    }
}

pub const CUDNN_STATUS_SUCCESS: c_int = 0;
pub const CUDNN_TENSOR_NCHW: c_int = 0;
pub const CUDNN_DATA_FLOAT: c_int = 0;
pub const CUDNN_CROSS_CORRELATION: c_int = 1;
pub const CUDNN_FMA_MATH: c_int = 3;
/// IMPLICIT_PRECOMP_GEMM, IMPLICIT_GEMM, GEMM, WINOGRAD, FFT: tried in order
/// until one is supported for the shape.
pub const CUDNN_FWD_ALGOS: [c_int; 5] = [1, 0, 2, 6, 4];
