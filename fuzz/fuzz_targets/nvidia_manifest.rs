//! Fuzzes NVIDIA redist manifest parsing: an accepted manifest only yields
//! archive paths that are relative, without `..`, and lower-case sha256s.
#![no_main]

use cudaenv::install::sources::nvidia::{Product, parse_manifest};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let product = if data.len() % 2 == 0 {
        Product::Cuda
    } else {
        Product::Cudnn
    };
    if let Ok(release) = parse_manifest("redistrib_12.4.1.json", text, product) {
        for c in &release.components {
            for a in &c.archives {
                let p = a.relative_path.as_str();
                assert!(!p.starts_with('/') && !p.contains("://"), "{p:?}");
                assert!(!p.split('/').any(|s| s == ".." || s.is_empty()), "{p:?}");
                assert!(
                    !p.contains('\\') && !p.contains('?') && !p.contains('#'),
                    "{p:?}"
                );
                assert_eq!(a.sha256.len(), 64, "{:?}", a.sha256);
                assert!(
                    a.sha256
                        .bytes()
                        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
                );
            }
        }
    }
});
