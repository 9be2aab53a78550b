//! Fuzzes the zip/wheel unpacker with arbitrary bytes in a temporary sandbox:
//! it may refuse anything, but what it writes must stay inside `dest`.
#![no_main]

mod sandbox;

use cudaenv::install::sources::Layout;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let sb = sandbox::Sandbox::new();
    let archive = sb.tmp.path().join("a.whl");
    std::fs::write(&archive, data).unwrap();
    let layout = if data.first().is_some_and(|b| b & 1 == 1) {
        Layout::StripTop
    } else {
        Layout::Wheel
    };
    let _ = cudaenv::install::unpack::zip::unpack(&archive, "a.whl", layout, &sb.dest, sandbox::LIMITS, 1);
    sb.check();
});
