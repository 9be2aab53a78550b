//! The NVIDIA driver API (`libcuda.so.1`, installed with the kernel
//! driver): the one binding `doctor` (its driver probe) and `verify` use.

#![allow(non_snake_case)]

use std::ffi::{c_char, c_int, c_uint};

use crate::os::dylib::{Loaded, api, open_first};

/// The driver's library on this platform (`libcuda.so.1`, `nvcuda.dll`).
pub fn file_name() -> String {
    crate::machine::compat::libraries::file_names(
        "cuda",
        &[],
        crate::os::platform::Platform::host(),
    )
    .remove(0)
}

pub type CuDevice = c_int;

api! {
    /// The driver API (`libcuda.so.1`, installed with the kernel driver).
    Driver {
        cuInit: fn(c_uint) -> c_int;
        cuDriverGetVersion: fn(*mut c_int) -> c_int;
        cuDeviceGetCount: fn(*mut c_int) -> c_int;
        cuDeviceGet: fn(*mut CuDevice, c_int) -> c_int;
        cuDeviceGetName: fn(*mut c_char, c_int, CuDevice) -> c_int;
        cuDeviceGetAttribute: fn(*mut c_int, c_int, CuDevice) -> c_int;
        cuDeviceTotalMem_v2: fn(*mut usize, CuDevice) -> c_int;
        cuGetErrorName: fn(c_int, *mut *const c_char) -> c_int;
    }
}

pub const CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: c_int = 16;
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;

/// Opens the driver library the loader finds.
pub fn open() -> Result<Loaded, String> {
    open_first(&[file_name()], "cuInit").map_err(|e| e.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With a driver the table binds whole; without one the error names
    /// the soname (both are checked, whichever this machine is).
    #[test]
    fn the_driver_binds_whole_or_its_absence_is_named() {
        match open() {
            Ok(l) => {
                Driver::bind(l).unwrap();
            }
            Err(e) => assert!(e.contains(&file_name()), "{e}"),
        }
    }
}
