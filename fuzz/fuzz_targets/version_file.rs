//! Fuzzes the `.cuda-version` reader (`version_file::parse`) with arbitrary
//! bytes: never a panic, and whatever it accepts is a spec that prints as a
//! safe, single-line string (it ends up in shell code and in paths).
#![no_main]

use std::path::Path;

use cudaenv::spec::Spec;
use cudaenv::activation::version_file;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("/fuzz/.cuda-version");
    match version_file::parse(data, path) {
        Ok(pinned) => {
            let printed = pinned.spec.to_string();
            assert!(
                printed
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._+-".contains(&b)),
                "{printed:?}"
            );
            assert_eq!(Spec::parse(&printed).unwrap(), pinned.spec);
            assert!(pinned.line >= 1);
        }
        Err(e) => {
            // Every refusal names the file, so a user can find it.
            assert!(e.to_string().contains("/fuzz/.cuda-version"), "{e}");
        }
    }
});
