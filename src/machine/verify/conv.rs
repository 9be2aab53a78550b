//! The cuDNN check: a handle, and one small fp32 convolution forward through
//! the legacy API (`cudnnConvolutionForward`, present in cuDNN 8 and 9),
//! compared element by element with an fp64 CPU reference.
//!
//! The shape is small on purpose (a 4×16×16×16 input, 32 3×3 filters, padding
//! 1): it proves the library loads its kernels and computes a convolution,
//! in milliseconds. FMA math is requested so that fp32 stays fp32 (cuDNN may
//! otherwise use TF32 on Ampere and newer); the bound still admits TF32.

use std::ffi::{c_int, c_void};

use super::ffi::{self, Cudnn, Runtime};
use super::gemm::{self, element_error};
use super::probe::{DevBuf, synchronize};
use super::{ApiError, ConvResult, Outcome};

const N: usize = 4;
const C: usize = 16;
const H: usize = 16;
const W: usize = 16;
const K: usize = 32;
const R: usize = 3;
const S: usize = 3;
const PAD: usize = 1;
const BOUND: f64 = 5e-3;

fn cudnn_error(d: &Cudnn, call: &str, code: c_int) -> ApiError {
    ApiError {
        call: call.into(),
        code,
        // SAFETY: returns a static string for any status.
        name: unsafe { ffi::cstr((d.cudnnGetErrorString)(code)) },
        message: String::new(),
    }
}

fn ok(d: &Cudnn, call: &str, code: c_int) -> Result<(), ApiError> {
    if code == ffi::CUDNN_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(cudnn_error(d, call, code))
    }
}

/// y[n,k,h,w] = Σ_c,r,s x[n,c,h+r-PAD,w+s-PAD] · f[k,c,r,s] in fp64, with
/// the scale sqrt(Σ (x·f)²) for the error measure.
fn reference(x: &[f32], f: &[f32]) -> Vec<(f64, f64)> {
    let mut y = vec![(0.0, 0.0); N * K * H * W];
    for n in 0..N {
        for k in 0..K {
            for h in 0..H {
                for w in 0..W {
                    let (mut acc, mut sq) = (0.0f64, 0.0f64);
                    for c in 0..C {
                        for r in 0..R {
                            for s in 0..S {
                                let (ih, iw) = (
                                    (h + r) as isize - PAD as isize,
                                    (w + s) as isize - PAD as isize,
                                );
                                if ih < 0 || iw < 0 || ih >= H as isize || iw >= W as isize {
                                    continue;
                                }
                                let xv =
                                    x[((n * C + c) * H + ih as usize) * W + iw as usize] as f64;
                                let fv = f[((k * C + c) * R + r) * S + s] as f64;
                                acc += xv * fv;
                                sq += (xv * fv) * (xv * fv);
                            }
                        }
                    }
                    y[((n * K + k) * H + h) * W + w] = (acc, sq.sqrt());
                }
            }
        }
    }
    y
}

/// Largest error of `got` against the reference; NaN if any element is NaN.
fn max_error(got: &[f32], reference: &[(f64, f64)]) -> f64 {
    got.iter().zip(reference).fold(0.0f64, |m, (&g, &(r, s))| {
        let e = element_error(g as f64, r, s);
        if m.is_nan() || e.is_nan() {
            f64::NAN
        } else {
            m.max(e)
        }
    })
}

pub fn run(rt: &Runtime, d: &Cudnn, device: u32, corrupt: bool) -> ConvResult {
    let mut result = ConvResult {
        device,
        outcome: Outcome::Error,
        shape: format!("{N}x{C}x{H}x{W} * {K}x{C}x{R}x{S}, pad {PAD}"),
        algo: None,
        max_error: None,
        bound: BOUND,
        error: None,
        note: None,
    };
    match forward(rt, d, corrupt) {
        Ok((algo, got, want)) => {
            let e = max_error(&got, &want);
            result.algo = Some(algo);
            result.max_error = Some(e).filter(|e| !e.is_nan());
            result.outcome = if gemm::within(result.max_error, BOUND) {
                Outcome::Passed
            } else {
                Outcome::WrongResult
            };
        }
        Err(e) => result.error = Some(e),
    }
    result
}

/// Descriptors, destroyed on drop.
struct Descs<'a> {
    d: &'a Cudnn,
    handle: ffi::CudnnHandle,
    x: ffi::CudnnDesc,
    y: ffi::CudnnDesc,
    f: ffi::CudnnDesc,
    conv: ffi::CudnnDesc,
}

impl Drop for Descs<'_> {
    fn drop(&mut self) {
        // SAFETY: each was created (or is null, which cuDNN tolerates) and is destroyed once.
        unsafe {
            if !self.x.is_null() {
                (self.d.cudnnDestroyTensorDescriptor)(self.x);
            }
            if !self.y.is_null() {
                (self.d.cudnnDestroyTensorDescriptor)(self.y);
            }
            if !self.f.is_null() {
                (self.d.cudnnDestroyFilterDescriptor)(self.f);
            }
            if !self.conv.is_null() {
                (self.d.cudnnDestroyConvolutionDescriptor)(self.conv);
            }
            if !self.handle.is_null() {
                (self.d.cudnnDestroy)(self.handle);
            }
        }
    }
}

impl<'a> Descs<'a> {
    /// A handle and the descriptors of the convolution: NCHW fp32 input,
    /// filters and output, cross-correlation with padding `PAD`, and the
    /// output shape cuDNN computes checked against ours.
    fn new(d: &'a Cudnn) -> Result<Descs<'a>, ApiError> {
        let null = std::ptr::null_mut();
        let mut s = Descs {
            d,
            handle: null,
            x: null,
            y: null,
            f: null,
            conv: null,
        };
        let i = |v: usize| v as c_int;
        // SAFETY: every call gets live descriptors and out-pointers to fields of `s`.
        unsafe {
            ok(d, "cudnnCreate", (d.cudnnCreate)(&mut s.handle))?;
            ok(
                d,
                "cudnnCreateTensorDescriptor",
                (d.cudnnCreateTensorDescriptor)(&mut s.x),
            )?;
            ok(
                d,
                "cudnnCreateTensorDescriptor",
                (d.cudnnCreateTensorDescriptor)(&mut s.y),
            )?;
            ok(
                d,
                "cudnnCreateFilterDescriptor",
                (d.cudnnCreateFilterDescriptor)(&mut s.f),
            )?;
            ok(
                d,
                "cudnnCreateConvolutionDescriptor",
                (d.cudnnCreateConvolutionDescriptor)(&mut s.conv),
            )?;
            ok(
                d,
                "cudnnSetTensor4dDescriptor",
                (d.cudnnSetTensor4dDescriptor)(
                    s.x,
                    ffi::CUDNN_TENSOR_NCHW,
                    ffi::CUDNN_DATA_FLOAT,
                    i(N),
                    i(C),
                    i(H),
                    i(W),
                ),
            )?;
            ok(
                d,
                "cudnnSetFilter4dDescriptor",
                (d.cudnnSetFilter4dDescriptor)(
                    s.f,
                    ffi::CUDNN_DATA_FLOAT,
                    ffi::CUDNN_TENSOR_NCHW,
                    i(K),
                    i(C),
                    i(R),
                    i(S),
                ),
            )?;
            ok(
                d,
                "cudnnSetConvolution2dDescriptor",
                (d.cudnnSetConvolution2dDescriptor)(
                    s.conv,
                    i(PAD),
                    i(PAD),
                    1,
                    1,
                    1,
                    1,
                    ffi::CUDNN_CROSS_CORRELATION,
                    ffi::CUDNN_DATA_FLOAT,
                ),
            )?;
            // Best effort: without it the bound still holds for TF32.
            (d.cudnnSetConvolutionMathType)(s.conv, ffi::CUDNN_FMA_MATH);
            let (mut on, mut ok_, mut oh, mut ow) = (0, 0, 0, 0);
            ok(
                d,
                "cudnnGetConvolution2dForwardOutputDim",
                (d.cudnnGetConvolution2dForwardOutputDim)(
                    s.conv, s.x, s.f, &mut on, &mut ok_, &mut oh, &mut ow,
                ),
            )?;
            if (on, ok_, oh, ow) != (i(N), i(K), i(H), i(W)) {
                return Err(ApiError {
                    call: "cudnnGetConvolution2dForwardOutputDim".into(),
                    code: 0,
                    name: "unexpected output shape".into(),
                    message: format!("{on}x{ok_}x{oh}x{ow}, expected {N}x{K}x{H}x{W}"),
                });
            }
            ok(
                d,
                "cudnnSetTensor4dDescriptor",
                (d.cudnnSetTensor4dDescriptor)(
                    s.y,
                    ffi::CUDNN_TENSOR_NCHW,
                    ffi::CUDNN_DATA_FLOAT,
                    i(N),
                    i(K),
                    i(H),
                    i(W),
                ),
            )?;
        }
        Ok(s)
    }
}

/// Runs the convolution with the first forward algorithm that has a
/// workspace size and runs; returns that algorithm.
fn convolve(
    rt: &Runtime,
    s: &Descs<'_>,
    dx: &DevBuf<'_>,
    df: &DevBuf<'_>,
    dy: &DevBuf<'_>,
) -> Result<i32, ApiError> {
    let d = s.d;
    let (alpha, beta) = (1.0f32, 0.0f32);
    let mut last = None;
    let mut used = None;
    for algo in ffi::CUDNN_FWD_ALGOS {
        let mut ws_bytes = 0usize;
        // SAFETY: live descriptors; out-pointer to a local.
        let r = unsafe {
            (d.cudnnGetConvolutionForwardWorkspaceSize)(
                s.handle,
                s.x,
                s.f,
                s.conv,
                s.y,
                algo,
                &mut ws_bytes,
            )
        };
        if r != ffi::CUDNN_STATUS_SUCCESS {
            last = Some(cudnn_error(d, "cudnnGetConvolutionForwardWorkspaceSize", r));
            continue;
        }
        let ws = if ws_bytes > 0 {
            Some(DevBuf::new(rt, ws_bytes)?)
        } else {
            None
        };
        let ws_ptr = ws.as_ref().map_or(std::ptr::null_mut(), |w| w.ptr);
        // SAFETY: buffers sized by the descriptors above; f32 scalars for a float convolution.
        let r = unsafe {
            (d.cudnnConvolutionForward)(
                s.handle,
                (&alpha as *const f32).cast::<c_void>(),
                s.x,
                dx.ptr,
                s.f,
                df.ptr,
                s.conv,
                algo,
                ws_ptr,
                ws_bytes,
                (&beta as *const f32).cast::<c_void>(),
                s.y,
                dy.ptr,
            )
        };
        if r == ffi::CUDNN_STATUS_SUCCESS {
            synchronize(rt, "cudnnConvolutionForward")?;
            used = Some(algo);
            break;
        }
        last = Some(cudnn_error(d, "cudnnConvolutionForward", r));
    }
    let Some(algo) = used else {
        return Err(last.expect("at least one algorithm was tried"));
    };
    Ok(algo)
}

#[allow(clippy::type_complexity)]
fn forward(
    rt: &Runtime,
    d: &Cudnn,
    corrupt: bool,
) -> Result<(i32, Vec<f32>, Vec<(f64, f64)>), ApiError> {
    let mut x = vec![0.0f32; N * C * H * W];
    let mut f = vec![0.0f32; K * C * R * S];
    gemm::fill_uniform(&mut x, 21);
    gemm::fill_uniform(&mut f, 22);
    let want = reference(&x, &f);

    let s = Descs::new(d)?;
    let mut y = vec![0.0f32; N * K * H * W];
    let ybytes = y.len() * 4;
    let dx = DevBuf::new(rt, x.len() * 4)?;
    let df = DevBuf::new(rt, f.len() * 4)?;
    let dy = DevBuf::new(rt, ybytes)?;
    dx.upload(gemm::bytes(&x))?;
    df.upload(gemm::bytes(&f))?;
    dy.fill(0xFF, ybytes)?;
    let algo = convolve(rt, &s, &dx, &df, &dy)?;
    if corrupt {
        dy.fill(0x3C, ybytes)?;
    }
    dy.download(gemm::bytes_mut(&mut y))?;
    Ok((algo, y, want))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_matches_a_hand_computed_element_and_garbage_fails() {
        let mut x = vec![0.0f32; N * C * H * W];
        let mut f = vec![0.0f32; K * C * R * S];
        gemm::fill_uniform(&mut x, 21);
        gemm::fill_uniform(&mut f, 22);
        let want = reference(&x, &f);
        // Corner output (n=0,k=0,h=0,w=0): only r,s in 1..3 touch the input.
        let mut corner = 0.0f64;
        for c in 0..C {
            for r in 1..R {
                for s in 1..S {
                    corner += x[(c * H + r - 1) * W + s - 1] as f64 * f[(c * R + r) * S + s] as f64;
                }
            }
        }
        assert!((want[0].0 - corner).abs() < 1e-12);
        let exact: Vec<f32> = want.iter().map(|&(v, _)| v as f32).collect();
        assert!(max_error(&exact, &want) < 1e-6);
        let garbage = vec![1.06f32; exact.len()];
        assert!(max_error(&garbage, &want) > BOUND);
        let mut nan = exact.clone();
        nan[7] = f32::NAN;
        assert!(max_error(&nan, &want).is_nan());
    }
}
