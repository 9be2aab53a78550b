//! The host side of the GEMM checks: random inputs, the fp64 reference, the
//! error measure, and a CPU GEMM for the speed-up figure.
//!
//! Correctness is judged two ways, both cheap at 8192³ where a full CPU
//! reference is not (1.1 TFLOP):
//! - a few hundred sampled elements, each recomputed as an fp64 dot product
//!   of the inputs exactly as the GPU saw them (after rounding to fp16/bf16);
//! - every column's sum, checked against `(1ᵀA)·B` in fp64 (an algorithm-based
//!   checksum), so a wrong block anywhere in C shows up, not only where the
//!   samples happen to land.
//!
//! Both use one relative measure, |c - ref| / (|ref| + s) with
//! s = sqrt(Σ (a_k b_k)²): the rounding error of a dot product scales with s,
//! so the measure neither explodes when the exact result cancels to ~0 nor
//! hides garbage the way normalising by Σ|a_k b_k| would. NaN never passes:
//! comparisons are written so that NaN fails them.
//!
//! Inputs are uniform in (-1, 1), never 0, from a counter-based generator
//! (splitmix64), so every thread fills its own chunk and the data does not
//! depend on the thread count.

use half::{bf16, f16};

use super::{CpuGemm, Dtype};

/// Rows and columns are column-major throughout, as cuBLAS expects.
pub enum HostMatrix {
    F32(Vec<f32>),
    F16(Vec<f16>),
    Bf16(Vec<bf16>),
    F64(Vec<f64>),
}

impl HostMatrix {
    /// An uninitialised-looking (NaN-free, zero) output buffer for `dtype`.
    pub fn output(dtype: Dtype, len: usize) -> HostMatrix {
        match dtype {
            Dtype::Fp32 | Dtype::Tf32 => HostMatrix::F32(vec![0.0; len]),
            Dtype::Fp16 => HostMatrix::F16(vec![f16::ZERO; len]),
            Dtype::Bf16 => HostMatrix::Bf16(vec![bf16::ZERO; len]),
            Dtype::Fp64 => HostMatrix::F64(vec![0.0; len]),
        }
    }

    /// The inputs for `dtype`: `src` rounded to the element type the GPU reads.
    pub fn input(dtype: Dtype, src: &[f32]) -> HostMatrix {
        match dtype {
            Dtype::Fp32 | Dtype::Tf32 => HostMatrix::F32(src.to_vec()),
            Dtype::Fp16 => HostMatrix::F16(par_map(src, f16::from_f32)),
            Dtype::Bf16 => HostMatrix::Bf16(par_map(src, bf16::from_f32)),
            Dtype::Fp64 => HostMatrix::F64(par_map(src, f64::from)),
        }
    }

    #[inline]
    pub fn get(&self, i: usize) -> f64 {
        match self {
            HostMatrix::F32(v) => v[i] as f64,
            HostMatrix::F16(v) => v[i].to_f64(),
            HostMatrix::Bf16(v) => v[i].to_f64(),
            HostMatrix::F64(v) => v[i],
        }
    }

    pub fn len(&self) -> usize {
        match self {
            HostMatrix::F32(v) => v.len(),
            HostMatrix::F16(v) => v.len(),
            HostMatrix::Bf16(v) => v.len(),
            HostMatrix::F64(v) => v.len(),
        }
    }

    pub fn elem_size(&self) -> usize {
        match self {
            HostMatrix::F32(_) => 4,
            HostMatrix::F16(_) | HostMatrix::Bf16(_) => 2,
            HostMatrix::F64(_) => 8,
        }
    }

    pub fn bytes(&self) -> usize {
        self.len() * self.elem_size()
    }

    /// The elements' bytes, as the GPU reads them.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            HostMatrix::F32(v) => bytes(v),
            HostMatrix::F16(v) => bytes(v),
            HostMatrix::Bf16(v) => bytes(v),
            HostMatrix::F64(v) => bytes(v),
        }
    }

    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        match self {
            HostMatrix::F32(v) => bytes_mut(v),
            HostMatrix::F16(v) => bytes_mut(v),
            HostMatrix::Bf16(v) => bytes_mut(v),
            HostMatrix::F64(v) => bytes_mut(v),
        }
    }

    /// Sum of column `j` (length `rows`) in fp64; NaN if any element is.
    fn column_sum(&self, j: usize, rows: usize) -> f64 {
        let start = j * rows;
        match self {
            HostMatrix::F32(v) => v[start..start + rows].iter().map(|&x| x as f64).sum(),
            HostMatrix::F16(v) => v[start..start + rows].iter().map(|x| x.to_f64()).sum(),
            HostMatrix::Bf16(v) => v[start..start + rows].iter().map(|x| x.to_f64()).sum(),
            HostMatrix::F64(v) => v[start..start + rows].iter().sum(),
        }
    }
}

/// Floating-point element types: no padding, and every bit pattern is a value.
///
/// `bytes_mut` hands out a slice's memory as bytes that anyone may write, so
/// an implementation for a type with invalid bit patterns (`bool`, a `char`,
/// an enum, a reference) or with padding would let safe code create invalid
/// values. The trait is therefore sealed: only the four float types below
/// implement it, and no other module can add one (the seal's module is
/// private to this file, and this module to the crate).
pub trait Element: Copy + sealed::Sealed {}
impl sealed::Sealed for f32 {}
impl sealed::Sealed for f64 {}
impl sealed::Sealed for f16 {}
impl sealed::Sealed for bf16 {}
impl Element for f32 {}
impl Element for f64 {}
impl Element for f16 {}
impl Element for bf16 {}

mod sealed {
    /// Implemented only for types with no padding and no invalid bit
    /// pattern: the invariant `bytes_mut` relies on.
    pub trait Sealed {}
}

/// A slice of floats as bytes (for copies to and from the GPU).
pub fn bytes<T: Element>(v: &[T]) -> &[u8] {
    // SAFETY: `Element` types have no padding; u8 has alignment 1.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

/// A mutable slice of floats as bytes; any bytes written form valid floats.
pub fn bytes_mut<T: Element>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: as `bytes`, and every bit pattern is a valid `Element`.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), std::mem::size_of_val(v)) }
}

/// splitmix64: a counter-based generator, so chunk `i` of a buffer can be
/// filled by any thread and the data depends only on the seed.
#[inline]
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Maps 64 random bits to an odd multiple of 2⁻²⁴ in (-1, 1): exact in f32 and never 0.
#[inline]
fn uniform(bits: u64) -> f32 {
    let k = (bits >> 40) as i64; // 24 bits
    ((2 * k + 1 - (1 << 24)) as f64 / (1u64 << 24) as f64) as f32
}

/// Fills `out` with uniform values in (-1, 1), none of them zero.
pub fn fill_uniform(out: &mut [f32], seed: u64) {
    let base = splitmix64(seed);
    par_chunks(out, |offset, chunk| {
        for (i, x) in chunk.iter_mut().enumerate() {
            *x = uniform(splitmix64(base ^ (offset + i) as u64));
        }
    });
}

/// Error of one result element; NaN when `c` is NaN (and NaN fails every bound).
#[inline]
pub fn element_error(c: f64, reference: f64, scale: f64) -> f64 {
    (c - reference).abs() / (reference.abs() + scale)
}

/// `err <= bound`, with NaN failing.
pub fn within(err: Option<f64>, bound: f64) -> bool {
    matches!(err, Some(e) if e <= bound)
}

/// The verdict on one GPU result.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// `None` when a sampled element or checksum was NaN or infinite.
    pub max_error: Option<f64>,
    pub checksum_error: Option<f64>,
    pub non_finite: bool,
    pub samples: usize,
}

impl Check {
    pub fn passes(&self, bound: f64) -> bool {
        !self.non_finite && within(self.max_error, bound) && within(self.checksum_error, bound)
    }
}

/// NaN-propagating maximum.
fn max_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// Checks C = A·B (all n×n, column-major) by samples and column checksums.
pub fn check(a: &HostMatrix, b: &HostMatrix, c: &HostMatrix, n: usize, samples: usize) -> Check {
    // Sampled elements, at positions that cover corners and the interior.
    let mut worst = 0.0f64;
    let mut non_finite = false;
    for s in 0..samples {
        let r = splitmix64(0xC0FFEE ^ s as u64);
        let (i, j) = match s {
            0 => (0, 0),
            1 => (n - 1, n - 1),
            _ => ((r % n as u64) as usize, ((r >> 32) % n as u64) as usize),
        };
        let (mut dot, mut sq) = (0.0f64, 0.0f64);
        for k in 0..n {
            let p = a.get(i + k * n) * b.get(k + j * n);
            dot += p;
            sq += p * p;
        }
        let got = c.get(i + j * n);
        non_finite |= !got.is_finite();
        worst = max_nan(worst, element_error(got, dot, sq.sqrt()));
    }

    // Column checksums: Σ_i C[i,j] against Σ_k (Σ_i A[i,k]) B[k,j], with the
    // scale sqrt(Σ_i Σ_k (A[i,k] B[k,j])²) = sqrt(Σ_k B[k,j]² Σ_i A[i,k]²).
    let mut col_a = vec![(0.0f64, 0.0f64); n];
    par_chunks(&mut col_a, |offset, chunk| {
        for (dk, slot) in chunk.iter_mut().enumerate() {
            let k = offset + dk;
            let (mut s, mut sq) = (0.0, 0.0);
            for i in 0..n {
                let x = a.get(i + k * n);
                s += x;
                sq += x * x;
            }
            *slot = (s, sq);
        }
    });
    let mut col_err = vec![0.0f64; n];
    par_chunks(&mut col_err, |offset, chunk| {
        for (dj, slot) in chunk.iter_mut().enumerate() {
            let j = offset + dj;
            let (mut reference, mut sq) = (0.0, 0.0);
            for (k, &(s, asq)) in col_a.iter().enumerate() {
                let x = b.get(k + j * n);
                reference += s * x;
                sq += x * x * asq;
            }
            let got = c.column_sum(j, n);
            *slot = element_error(got, reference, sq.sqrt());
        }
    });
    let checksum = col_err.iter().fold(0.0f64, |m, &e| max_nan(m, e));
    non_finite |= checksum.is_nan();
    Check {
        max_error: Some(worst).filter(|e| !e.is_nan()),
        checksum_error: Some(checksum).filter(|e| !e.is_nan()),
        non_finite,
        samples,
    }
}

/// Threads to use on the host.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `f(offset, chunk)` over contiguous chunks of `data`, one per thread.
pub fn par_chunks<T: Send>(data: &mut [T], f: impl Fn(usize, &mut [T]) + Sync) {
    let t = threads().min(data.len().max(1));
    let per = data.len().div_ceil(t).max(1);
    std::thread::scope(|s| {
        for (idx, chunk) in data.chunks_mut(per).enumerate() {
            let f = &f;
            s.spawn(move || f(idx * per, chunk));
        }
    });
}

fn par_map<A: Sync + Copy, B: Send + Default + Clone>(
    src: &[A],
    f: impl Fn(A) -> B + Sync,
) -> Vec<B> {
    let mut out = vec![B::default(); src.len()];
    par_chunks(&mut out, |offset, chunk| {
        for (i, o) in chunk.iter_mut().enumerate() {
            *o = f(src[offset + i]);
        }
    });
    out
}

/// Floating-point operations of an n×n×n GEMM.
pub fn flops(n: usize) -> f64 {
    2.0 * (n as f64).powi(3)
}

/// The median of a non-empty list.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

// --- CPU GEMM -------------------------------------------------------------------

/// Rows of C kept in registers/L1 per block, and the k-panel length.
const MB: usize = 128;
const KB: usize = 256;

/// C[:, jc..jc+4] += A · B[:, jb..jb+4] for rows `rows` and k in `ks`, where
/// `c` holds this thread's columns (`jc` counts from its first) and `jb` is
/// the absolute column: four columns share each load of A.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn kernel4(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    n: usize,
    jc: usize,
    jb: usize,
    rows: (usize, usize),
    ks: (usize, usize),
) {
    let (i0, i1) = rows;
    let (c0, rest) = c[jc * n..].split_at_mut(n);
    let (c1, rest) = rest.split_at_mut(n);
    let (c2, c3) = rest.split_at_mut(n);
    let (c0, c1, c2, c3) = (
        &mut c0[i0..i1],
        &mut c1[i0..i1],
        &mut c2[i0..i1],
        &mut c3[i0..i1],
    );
    for k in ks.0..ks.1 {
        let col = &a[k * n + i0..k * n + i1];
        let (b0, b1, b2, b3) = (
            b[k + jb * n],
            b[k + (jb + 1) * n],
            b[k + (jb + 2) * n],
            b[k + (jb + 3) * n],
        );
        for i in 0..col.len() {
            let x = col[i];
            c0[i] += x * b0;
            c1[i] += x * b1;
            c2[i] += x * b2;
            c3[i] += x * b3;
        }
    }
}

/// One thread's share: columns `j0..j1` of C (a multiple of 4 wide).
#[inline(always)]
fn gemm_columns(a: &[f32], b: &[f32], c: &mut [f32], n: usize, j0: usize, j1: usize) {
    for k0 in (0..n).step_by(KB) {
        let k1 = (k0 + KB).min(n);
        for i0 in (0..n).step_by(MB) {
            let i1 = (i0 + MB).min(n);
            for j in (j0..j1).step_by(4) {
                kernel4(a, b, c, n, j - j0, j, (i0, i1), (k0, k1));
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn gemm_columns_avx2(a: &[f32], b: &[f32], c: &mut [f32], n: usize, j0: usize, j1: usize) {
    gemm_columns(a, b, c, n, j0, j1)
}

fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// C = A·B on the CPU, all threads; `n` must be a multiple of 4.
pub fn cpu_gemm(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    assert!(n.is_multiple_of(4) && a.len() == n * n && b.len() == n * n && c.len() == n * n);
    c.fill(0.0);
    let t = threads();
    let cols_per = (n / 4).div_ceil(t) * 4;
    let avx2 = has_avx2();
    std::thread::scope(|s| {
        for (idx, cols) in c.chunks_mut(cols_per * n).enumerate() {
            let j0 = idx * cols_per;
            let j1 = j0 + cols.len() / n;
            s.spawn(move || {
                #[cfg(target_arch = "x86_64")]
                if avx2 {
                    // SAFETY: the CPU has AVX2 and FMA (checked above).
                    unsafe { gemm_columns_avx2(a, b, cols, n, j0, j1) };
                    return;
                }
                let _ = avx2;
                gemm_columns(a, b, cols, n, j0, j1);
            });
        }
    });
}

/// Times the CPU GEMM at `n`³ (median of `repeats`).
pub fn cpu_benchmark(n: usize, repeats: usize) -> CpuGemm {
    let mut a = vec![0.0f32; n * n];
    let mut b = vec![0.0f32; n * n];
    fill_uniform(&mut a, 11);
    fill_uniform(&mut b, 12);
    let mut c = vec![0.0f32; n * n];
    cpu_gemm(&a, &b, &mut c, n); // warm-up: page in, spin up cores
    let mut times: Vec<f64> = (0..repeats.max(1))
        .map(|_| {
            let t = std::time::Instant::now();
            cpu_gemm(&a, &b, &mut c, n);
            t.elapsed().as_secs_f64()
        })
        .collect();
    let secs = median(&mut times);
    CpuGemm {
        size: n,
        threads: threads(),
        isa: if has_avx2() { "avx2+fma" } else { "baseline" }.into(),
        gflops: flops(n) / secs / 1e9,
        median_ms: secs * 1e3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_mut_writes_the_floats_it_views() {
        let mut v = [1.0f32];
        bytes_mut(&mut v).copy_from_slice(&2.0f32.to_ne_bytes());
        assert_eq!(v, [2.0]);
    }

    fn naive(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
        let mut c = vec![0.0f64; n * n];
        for j in 0..n {
            for k in 0..n {
                for i in 0..n {
                    c[i + j * n] += a[i + k * n] as f64 * b[k + j * n] as f64;
                }
            }
        }
        c.into_iter().map(|x| x as f32).collect()
    }

    fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
        let mut a = vec![0.0; n * n];
        let mut b = vec![0.0; n * n];
        fill_uniform(&mut a, 1);
        fill_uniform(&mut b, 2);
        (a, b)
    }

    #[test]
    fn random_inputs_are_nonzero_bounded_and_deterministic() {
        let mut x = vec![0.0f32; 100_003];
        fill_uniform(&mut x, 7);
        assert!(x.iter().all(|&v| v != 0.0 && v > -1.0 && v < 1.0));
        let mean: f64 = x.iter().map(|&v| v as f64).sum::<f64>() / x.len() as f64;
        assert!(mean.abs() < 0.01, "mean {mean}");
        let mut y = vec![0.0f32; 100_003];
        fill_uniform(&mut y, 7);
        assert_eq!(x, y);
        fill_uniform(&mut y, 8);
        assert_ne!(x, y);
    }

    #[test]
    fn correct_results_pass_and_each_kind_of_garbage_fails() {
        let n = 96;
        let (a, b) = inputs(n);
        let c = naive(&a, &b, n);
        let (ha, hb) = (HostMatrix::F32(a.clone()), HostMatrix::F32(b.clone()));
        let good = check(&ha, &hb, &HostMatrix::F32(c.clone()), n, 200);
        assert!(good.passes(Dtype::Fp32.bound()), "{good:?}");
        assert!(good.max_error.unwrap() < 1e-6);

        // All zeros, a constant, one NaN, one bad element the samples miss,
        // C transposed: every one must fail.
        let zeros = vec![0.0f32; n * n];
        let mut nan = c.clone();
        nan[5 + 7 * n] = f32::NAN;
        let mut one_bad = c.clone();
        one_bad[3 + 90 * n] += 100.0;
        let mut transposed = c.clone();
        for i in 0..n {
            for j in 0..n {
                transposed[i + j * n] = c[j + i * n];
            }
        }
        for (what, bad) in [
            ("zeros", zeros),
            ("constant", vec![1.06f32; n * n]),
            ("nan", nan),
            ("one element", one_bad),
            ("transposed", transposed),
        ] {
            let r = check(&ha, &hb, &HostMatrix::F32(bad), n, 8);
            assert!(!r.passes(Dtype::Bf16.bound()), "{what} passed: {r:?}");
        }
    }

    #[test]
    fn half_precision_rounding_stays_within_bounds() {
        let n = 128;
        let (a, b) = inputs(n);
        for dtype in [Dtype::Fp16, Dtype::Bf16] {
            let (ha, hb) = (HostMatrix::input(dtype, &a), HostMatrix::input(dtype, &b));
            let mut exact = vec![0.0f64; n * n];
            for j in 0..n {
                for k in 0..n {
                    for i in 0..n {
                        exact[i + j * n] += ha.get(i + k * n) * hb.get(k + j * n);
                    }
                }
            }
            let c = match dtype {
                Dtype::Fp16 => HostMatrix::F16(exact.iter().map(|&x| f16::from_f64(x)).collect()),
                _ => HostMatrix::Bf16(exact.iter().map(|&x| bf16::from_f64(x)).collect()),
            };
            let r = check(&ha, &hb, &c, n, 300);
            assert!(r.passes(dtype.bound()), "{dtype}: {r:?}");
        }
    }

    #[test]
    fn nan_never_passes() {
        assert!(!within(None, 1.0));
        assert!(!within(Some(f64::NAN), 1.0));
        assert!(within(Some(0.5), 1.0));
        assert!(element_error(f64::NAN, 1.0, 1.0).is_nan());
    }

    #[test]
    fn cpu_gemm_matches_reference() {
        let n = 132; // not a multiple of the block sizes
        let (a, b) = inputs(n);
        let mut c = vec![0.0f32; n * n];
        cpu_gemm(&a, &b, &mut c, n);
        let r = check(
            &HostMatrix::F32(a),
            &HostMatrix::F32(b),
            &HostMatrix::F32(c),
            n,
            300,
        );
        assert!(r.passes(Dtype::Fp32.bound()), "{r:?}");
    }

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
