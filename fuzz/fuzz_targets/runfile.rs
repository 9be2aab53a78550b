//! Fuzzes the runfile (makeself) header parser: whatever it accepts must
//! describe a payload inside the file.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(data).unwrap();
    let path = std::path::Path::new("/fuzz/cuda.run");
    if let Ok(h) = cudaenv::install::unpack::runfile::parse_header(&mut f, path, data.len() as u64) {
        assert!(h.offset <= data.len() as u64, "{h:?}");
        assert!(
            h.offset
                .checked_add(h.length)
                .is_some_and(|e| e <= data.len() as u64),
            "{h:?}"
        );
    }
});
