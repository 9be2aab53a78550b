//! Fuzzes the tar unpacker (the code behind .tar.xz, .tgz and runfile
//! payloads) with an arbitrary uncompressed tar stream in a sandbox.
#![no_main]

mod sandbox;

use cudaenv::install::sources::Layout;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let sb = sandbox::Sandbox::new();
    let layout = match data.first().map(|b| b % 3) {
        Some(0) => Layout::StripTop,
        Some(1) => Layout::LegacyCudnn,
        _ => Layout::Runfile {
            members: vec!["builds/cuda_cudart".into()],
            optional: vec![],
        },
    };
    let _ = cudaenv::install::unpack::tar::unpack(
        data,
        "a.tar",
        layout,
        &sb.dest,
        sandbox::LIMITS,
        &mut |_| {},
    );
    sb.check();
});
