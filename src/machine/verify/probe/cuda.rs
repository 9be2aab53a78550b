//! The CUDA runtime calls every check shares: their failures as
//! `ApiError`s, device memory and events that free themselves on drop.

use std::ffi::{c_int, c_void};

use crate::machine::verify::ApiError;
use crate::machine::verify::ffi::{self, Runtime};

pub(super) fn cuda_error(rt: &Runtime, call: &str, code: c_int) -> ApiError {
    // SAFETY: both return static strings for any code.
    let (name, message) = unsafe {
        (
            ffi::cstr((rt.cudaGetErrorName)(code)),
            ffi::cstr((rt.cudaGetErrorString)(code)),
        )
    };
    ApiError {
        call: call.into(),
        code,
        name,
        message,
    }
}

/// Device memory, freed on drop.
pub struct DevBuf<'a> {
    rt: &'a Runtime,
    pub ptr: *mut c_void,
    bytes: usize,
}

impl<'a> DevBuf<'a> {
    pub fn new(rt: &'a Runtime, bytes: usize) -> Result<DevBuf<'a>, ApiError> {
        let mut ptr = std::ptr::null_mut();
        // SAFETY: out-pointer to a local.
        let r = unsafe { (rt.cudaMalloc)(&mut ptr, bytes) };
        if r != 0 {
            return Err(cuda_error(rt, "cudaMalloc", r));
        }
        Ok(DevBuf { rt, ptr, bytes })
    }

    pub fn upload(&self, src: &[u8]) -> Result<(), ApiError> {
        assert!(src.len() <= self.bytes, "upload larger than the buffer");
        // SAFETY: `src` is readable for its length, which fits the allocation.
        let r = unsafe {
            (self.rt.cudaMemcpy)(
                self.ptr,
                src.as_ptr().cast(),
                src.len(),
                ffi::CUDA_MEMCPY_HOST_TO_DEVICE,
            )
        };
        check_cuda(self.rt, "cudaMemcpy", r)
    }

    pub fn download(&self, dst: &mut [u8]) -> Result<(), ApiError> {
        assert!(dst.len() <= self.bytes, "download larger than the buffer");
        // SAFETY: `dst` is writable for its length, which fits the allocation.
        let r = unsafe {
            (self.rt.cudaMemcpy)(
                dst.as_mut_ptr().cast(),
                self.ptr,
                dst.len(),
                ffi::CUDA_MEMCPY_DEVICE_TO_HOST,
            )
        };
        check_cuda(self.rt, "cudaMemcpy", r)
    }

    pub fn fill(&self, byte: u8, bytes: usize) -> Result<(), ApiError> {
        assert!(bytes <= self.bytes, "fill larger than the buffer");
        // SAFETY: within the allocation.
        let r = unsafe { (self.rt.cudaMemset)(self.ptr, byte as c_int, bytes) };
        check_cuda(self.rt, "cudaMemset", r)
    }
}

impl Drop for DevBuf<'_> {
    fn drop(&mut self) {
        // SAFETY: allocated by cudaMalloc, freed once.
        unsafe { (self.rt.cudaFree)(self.ptr) };
    }
}

pub fn check_cuda(rt: &Runtime, call: &str, r: c_int) -> Result<(), ApiError> {
    if r == 0 {
        Ok(())
    } else {
        Err(cuda_error(rt, call, r))
    }
}

pub fn synchronize(rt: &Runtime, after: &str) -> Result<(), ApiError> {
    // SAFETY: no arguments.
    let r = unsafe { (rt.cudaDeviceSynchronize)() };
    check_cuda(rt, &format!("cudaDeviceSynchronize (after {after})"), r)
}

/// A set of CUDA events on the default stream.
pub(super) struct Events<'a> {
    rt: &'a Runtime,
    ev: Vec<ffi::CudaEvent>,
}

impl<'a> Events<'a> {
    pub(super) fn new(rt: &'a Runtime, n: usize) -> Result<Events<'a>, ApiError> {
        // Built up inside the value, so the ones created so far are
        // destroyed by `Drop` if a later creation fails.
        let mut events = Events {
            rt,
            ev: Vec::with_capacity(n),
        };
        for _ in 0..n {
            let mut e = std::ptr::null_mut();
            // SAFETY: out-pointer to a local.
            let r = unsafe { (rt.cudaEventCreate)(&mut e) };
            check_cuda(rt, "cudaEventCreate", r)?;
            events.ev.push(e);
        }
        Ok(events)
    }

    pub(super) fn record(&self, i: usize) -> Result<(), ApiError> {
        // SAFETY: a live event on the default stream.
        let r = unsafe { (self.rt.cudaEventRecord)(self.ev[i], std::ptr::null_mut()) };
        check_cuda(self.rt, "cudaEventRecord", r)
    }

    /// Milliseconds between two recorded events (waits for the later one).
    pub(super) fn elapsed(&self, from: usize, to: usize) -> Result<f64, ApiError> {
        // SAFETY: live events, recorded above.
        let r = unsafe { (self.rt.cudaEventSynchronize)(self.ev[to]) };
        check_cuda(self.rt, "cudaEventSynchronize", r)?;
        let mut ms = 0.0f32;
        // SAFETY: out-pointer to a local.
        let r = unsafe { (self.rt.cudaEventElapsedTime)(&mut ms, self.ev[from], self.ev[to]) };
        check_cuda(self.rt, "cudaEventElapsedTime", r)?;
        Ok(ms as f64)
    }
}

impl Drop for Events<'_> {
    fn drop(&mut self) {
        for &e in &self.ev {
            // SAFETY: each event is destroyed once.
            unsafe { (self.rt.cudaEventDestroy)(e) };
        }
    }
}
