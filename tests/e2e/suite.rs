//! Rules about the test suite itself, checked over its source.
//!
//! A test that cannot run on a machine must say so: `#[ignore = "reason"]`,
//! or a `cfg_attr` that ignores it where it cannot run (build.rs sets the
//! cfgs), so the test harness and `scripts/test.sh` count it as ignored. A
//! test that returns early instead passes without checking anything, and
//! nobody learns that it did not run.

use std::path::{Path, PathBuf};

/// `src` with comments and the contents of string and character literals
/// blanked (same length, line breaks kept), so that braces and keywords can
/// be found without a Rust parser.
pub(crate) fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        let next = b.get(i + 1).copied();
        match b[i] {
            b'/' if next == Some(b'/') => {
                let end = src[i..].find('\n').map_or(b.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if next == Some(b'*') => {
                let (mut depth, mut j) = (1, i + 2);
                while j < b.len() && depth > 0 {
                    if b[j..].starts_with(b"/*") {
                        depth += 1;
                        j += 2;
                    } else if b[j..].starts_with(b"*/") {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j);
                i = j;
            }
            // A raw string: r"…", r#"…"#, br"…".
            b'r' if (i == 0
                || !ident(b[i - 1])
                || (b[i - 1] == b'b' && (i < 2 || !ident(b[i - 2]))))
                && matches!(next, Some(b'"' | b'#')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                let open = i + 1 + hashes;
                if b.get(open) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                let end = b[open + 1..]
                    .windows(close.len())
                    .position(|w| w == close.as_slice())
                    .map_or(b.len(), |n| open + 1 + n);
                blank(&mut out, open + 1, end);
                i = end + close.len();
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i + 1, j);
                i = j + 1;
            }
            // A character literal ('x', '\n', '\u{1b}', 'é'), not a lifetime ('a).
            b'\'' => {
                let end = if next == Some(b'\\') {
                    src[i + 2..].find('\'').map(|n| i + 2 + n)
                } else {
                    src[i + 1..]
                        .chars()
                        .next()
                        .map(|c| i + 1 + c.len_utf8())
                        .filter(|&e| b.get(e) == Some(&b'\''))
                };
                match end {
                    Some(e) => {
                        blank(&mut out, i + 1, e);
                        i = e + 1;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).expect("only whole characters are blanked")
}

/// Every test function in `src` (a file's text) that leaves early without a
/// failure: a bare `return;` (or `return Ok(())`) in its body, or a message
/// that it is skipping. As `name: line`.
fn early_returns(src: &str) -> Vec<String> {
    let code = code_only(src);
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(n) = code[at..].find("test]") {
        let attr = at + n;
        at = attr + 5;
        // `#[test]` and `#[tokio::test]`.
        let head = code[..attr].trim_end_matches("tokio::");
        if !head.ends_with("#[") {
            continue;
        }
        let Some(f) = code[at..].find("fn ") else {
            break;
        };
        let name_at = at + f + 3;
        let name: String = code[name_at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let Some(open) = code[name_at..].find('{').map(|n| name_at + n) else {
            break;
        };
        let mut depth = 0;
        let mut close = code.len();
        for (k, c) in code[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let body = &code[open..close];
        let line = |offset: usize| code[..open + offset].matches('\n').count() + 1;
        let word = |k: usize, len: usize| {
            let before = body[..k].chars().next_back();
            let after = body[k + len..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        };
        for (k, _) in body.match_indices("return") {
            if !word(k, 6) {
                continue;
            }
            let rest = body[k + 6..].trim_start();
            if rest.starts_with(';') || rest.starts_with('}') || rest.starts_with("Ok(())") {
                found.push(format!("{name}: line {}", line(k)));
            }
        }
        // `println!` and `eprintln!` (in code: their text is blanked in `body`).
        for (k, _) in body.match_indices("println!(") {
            let text = src[open + k + 9..].trim_start_matches('"').to_lowercase();
            if text.starts_with("skip") {
                found.push(format!("{name}: line {} (says it skips)", line(k)));
            }
        }
        at = close;
    }
    found
}

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Defect: six tests returned early where they could not run (four `verify`
/// tests on machines with a driver, two disk tests without root), so they
/// passed having checked nothing, and the summary counted them as passed.
#[test]
fn tests_never_silently_pass_by_returning_early() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&repo.join("src"), &mut files);
    rust_files(&repo.join("tests"), &mut files);
    assert!(files.len() > 50, "{files:?}");
    let mut tests = 0;
    let mut offenders = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        tests += src.matches("#[test]").count();
        for hit in early_returns(&src) {
            offenders.push(format!(
                "{}: {hit}",
                f.strip_prefix(repo).unwrap().display()
            ));
        }
    }
    assert!(
        tests > 300,
        "found only {tests} tests: is the scan looking in the right place?"
    );
    assert!(
        offenders.is_empty(),
        "these tests return early and pass without checking anything; mark them \
         #[ignore = \"reason\"] or #[cfg_attr(CONDITION, ignore = \"reason\")] instead:\n{}",
        offenders.join("\n")
    );
}

/// An ignored test says why (`#[ignore = "reason"]`): scripts/test.sh lists
/// every ignored test with its reason, and a bare `#[ignore]` tells the
/// reader of that list nothing.
#[test]
fn every_ignored_test_says_why() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&repo.join("src"), &mut files);
    rust_files(&repo.join("tests"), &mut files);
    let mut bare = Vec::new();
    for f in &files {
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        let squeezed: String = code.split_whitespace().collect();
        if squeezed.contains("#[ignore]") || squeezed.contains(",ignore)]") {
            bare.push(f.strip_prefix(repo).unwrap().display().to_string());
        }
    }
    assert!(
        bare.is_empty(),
        "an ignore without its reason (write #[ignore = \"reason\"]) in: {bare:?}"
    );
}

/// The scan itself finds what it is meant to, and nothing in literals or
/// comments.
#[test]
fn the_early_return_scan_finds_each_form() {
    let bad = r##"
#[test]
fn gated_by_hand() {
    if !have_gpu() {
        return;
    }
    assert!(true);
}

#[tokio::test]
async fn let_else() -> Result<(), String> {
    let Some(x) = thing() else { return Ok(()) };
    Ok(())
}

#[test]
fn says_it_skips() {
    if cond() {
        eprintln!("skipping: no root");
    }
}
"##;
    assert_eq!(
        early_returns(bad),
        [
            "gated_by_hand: line 5",
            "let_else: line 12",
            "says_it_skips: line 19 (says it skips)"
        ]
    );
    let good = r##"
/// A comment with `return;` and a brace {.
#[test]
#[ignore = "needs a GPU"]
fn runs_or_is_ignored() {
    let s = "return; }";
    let r = r#"return;"#;
    let c = '{';
    let f = |x: u32| -> u32 { if x > 1 { return x; } 0 };
    fn helper<'a>(v: &'a str) -> Option<&'a str> { Some(v) }
    assert_eq!(f(2), 2);
}

fn not_a_test() {
    return;
}
"##;
    assert_eq!(early_returns(good), Vec::<String>::new());
}
