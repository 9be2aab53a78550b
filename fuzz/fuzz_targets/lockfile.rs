//! Fuzzes the `cuda.lock` reader (`lockfile::parse`) with arbitrary bytes:
//! never a panic; every refusal names the file; whatever it accepts has
//! plain file names, hex sha256s and sane sizes, and renders to a file that
//! parses back to the same lock (what `cudaenv lock` writes is readable).
#![no_main]

use std::path::Path;

use cudaenv::install::lockfile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("/fuzz/cuda.lock");
    match lockfile::parse(data, path) {
        Ok(lock) => {
            for a in &lock.artifacts {
                assert!(
                    !a.file.is_empty()
                        && !a.file.starts_with('.')
                        && a.file
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b"._+-~%".contains(&b)),
                    "{:?}",
                    a.file
                );
                assert!(a.sha256.len() == 64 && a.sha256.bytes().all(|b| b.is_ascii_hexdigit()));
                assert!(a.size.is_none_or(|s| s > 0 && s <= 64 << 30));
            }
            let again = lockfile::parse(lock.render().as_bytes(), path).expect("renders readably");
            assert_eq!(again, lock);
        }
        Err(e) => assert!(e.to_string().contains("/fuzz/cuda.lock"), "{e}"),
    }
});
