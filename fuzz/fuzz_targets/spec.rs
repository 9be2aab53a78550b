//! Fuzzes the one spec parser with arbitrary strings.
//!
//! Beyond "never panics", it checks the properties the rest of cudaenv relies
//! on: a parsed spec prints back to a string that parses to the same spec, and
//! a version name is a single, safe path component (it is joined onto
//! `versions/` without further checks).
#![no_main]

use cudaenv::spec::{Spec, VersionName};
use libfuzzer_sys::fuzz_target;

fn assert_safe_component(s: &str) {
    assert!(!s.is_empty() && s.len() <= 64, "{s:?}");
    assert!(s != "." && s != ".." && !s.contains(".."), "{s:?}");
    assert!(
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._+-".contains(&b)),
        "{s:?}"
    );
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(spec) = Spec::parse(input) {
        let printed = spec.to_string();
        let again = Spec::parse(&printed).expect("a printed spec parses again");
        assert_eq!(again, spec, "{input:?} -> {printed:?}");
        if let Spec::Name(n) = &spec {
            assert_safe_component(n.as_str());
        }
        if let Spec::Stack(st) = &spec {
            let name = VersionName::for_stack(&st.cuda, st.cudnn.as_ref());
            assert_safe_component(name.as_str());
        }
    }
    if let Ok(name) = VersionName::parse(input) {
        assert_safe_component(name.as_str());
        assert_eq!(name.as_str(), input);
    }
});
