//! The source tree's layering, checked over its source (docs/layout.md).
//!
//! Each folder of `src/` is one capability, and capabilities stand in
//! layers: a module imports from its own folder and from folders below its
//! own, never from above. Each capability's errors are in its `error.rs`,
//! and `error` wraps them: every capability returns that wrapper, so it
//! stands beside the layers and imports only those files and the
//! vocabulary below all of them (`i18n`, `spec`, `context::env_vars`). The
//! capabilities' `error.rs` files are leaves in turn: they import only that
//! vocabulary and `error::exit` (the exit codes and the trait), never the
//! wrapper, so the wrapper and its parts form no circle. And no import
//! circle joins more than two files: a circle of three or more is a knot no
//! reader can start from.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::suite::{code_only, rust_files};

/// The capabilities, bottom first.
const LAYERS: &[&str] = &[
    "os",
    "i18n",
    "spec",
    "context",
    "registry",
    "store",
    "activation",
    "machine",
    "install",
    "ui",
    "cli",
];

/// What `error` may import: module paths (prefixes) below every layer that
/// returns it.
const ERROR_MAY_IMPORT: &[&str] = &[
    "i18n",
    "spec",
    "context::env_vars",
    "spec::error",
    "context::error",
    "store::error",
    "activation::error",
    "machine::error",
    "install::error",
    "cli::error",
];

/// What a capability's `error.rs` may import: the vocabulary, and the exit
/// codes with their trait.
const CAPABILITY_ERROR_MAY_IMPORT: &[&str] = &[
    "i18n",
    "spec::source",
    "spec::size",
    "context::env_vars",
    "error::exit",
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// A file's module path: `src/install/fetch/mod.rs` → `install::fetch`.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src_dir()).unwrap().with_extension("");
    let mut segs: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if segs.last().is_some_and(|s| s == "mod") {
        segs.pop();
    }
    segs
}

/// Every `crate::a::b…` path in `code` (comments and strings blanked),
/// `crate::{a, b::c}` groups expanded, `$crate` in macros included.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    fn ident(c: char) -> bool {
        c.is_alphanumeric() || c == '_'
    }
    /// The paths of a `{…}` group starting at `code[at]` == '{', each with
    /// `prefix` in front; returns them and where the group ends.
    fn group(code: &str, at: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
        let mut i = at + 1;
        let mut cur: Vec<String> = Vec::new();
        let mut word = String::new();
        let b: Vec<char> = code[at..].chars().collect();
        let mut k = 1;
        let flush = |cur: &mut Vec<String>, word: &mut String, out: &mut Vec<Vec<String>>| {
            if !word.is_empty() {
                cur.push(std::mem::take(word));
            }
            if !cur.is_empty() {
                let mut p = prefix.to_vec();
                p.extend(cur.drain(..).filter(|s| s != "self"));
                out.push(p);
            }
        };
        while k < b.len() {
            let c = b[k];
            if ident(c) {
                word.push(c);
            } else if c == ':' {
                if !word.is_empty() {
                    cur.push(std::mem::take(&mut word));
                }
            } else if c == '{' {
                if !word.is_empty() {
                    cur.push(std::mem::take(&mut word));
                }
                let mut p = prefix.to_vec();
                p.append(&mut cur);
                let offset: usize = b[..k].iter().map(|c| c.len_utf8()).sum();
                let end = group(code, at + offset, &p, out);
                let consumed = code[at + offset..end].chars().count();
                k += consumed;
                continue;
            } else if c == ',' || c == '}' {
                if word == "as" {
                    word.clear();
                }
                flush(&mut cur, &mut word, out);
                if c == '}' {
                    let offset: usize = b[..=k].iter().map(|c| c.len_utf8()).sum();
                    return at + offset;
                }
            } else if c.is_whitespace() && word == "as" {
                word.clear();
            } else if c.is_whitespace() && !word.is_empty() {
                // `a as b`: keep `a`, drop what follows until , or }.
                cur.push(std::mem::take(&mut word));
                let rest: String = b[k..].iter().collect();
                let skip = rest.find([',', '}']).unwrap_or(rest.len());
                k += rest[..skip].chars().count();
                continue;
            }
            k += 1;
            i += 1;
        }
        let _ = i;
        code.len()
    }
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(n) = code[at..].find("crate::") {
        let start = at + n;
        at = start + 7;
        if code[..start].chars().next_back().is_some_and(ident) {
            continue;
        }
        let mut segs = Vec::new();
        let mut i = at;
        loop {
            let rest = &code[i..];
            if rest.starts_with('{') {
                group(code, i, &segs, &mut out);
                segs.clear();
                break;
            }
            let len = rest.find(|c: char| !ident(c)).unwrap_or(rest.len());
            if len == 0 {
                break;
            }
            segs.push(rest[..len].to_string());
            i += len;
            if code[i..].starts_with("::") {
                i += 2;
            } else {
                break;
            }
        }
        if !segs.is_empty() {
            out.push(segs);
        }
    }
    out
}

struct Tree {
    /// Module path → file.
    modules: BTreeMap<Vec<String>, PathBuf>,
    /// File → the files it imports (itself left out).
    imports: BTreeMap<PathBuf, BTreeSet<PathBuf>>,
}

fn tree() -> Tree {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let modules: BTreeMap<Vec<String>, PathBuf> =
        files.iter().map(|f| (module_of(f), f.clone())).collect();
    let mut imports = BTreeMap::new();
    for f in &files {
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        let mut to = BTreeSet::new();
        for path in crate_paths(&code) {
            // The longest module prefix that is a file.
            let target = (1..=path.len())
                .rev()
                .find_map(|n| modules.get(&path[..n]))
                .cloned();
            if let Some(t) = target.filter(|t| t != f) {
                to.insert(t);
            }
        }
        imports.insert(f.clone(), to);
    }
    Tree { modules, imports }
}

fn rel(p: &Path) -> String {
    p.strip_prefix(src_dir()).unwrap().display().to_string()
}

/// The capability a module path belongs to (its first segment), or `None`
/// for the crate's root files (lib.rs, main.rs) and `error`.
fn layer(module: &[String]) -> Option<usize> {
    LAYERS
        .iter()
        .position(|l| module.first().is_some_and(|m| m == l))
}

#[test]
fn every_folder_of_src_is_a_layer() {
    let mut unknown = BTreeSet::new();
    for m in tree().modules.keys() {
        let known = matches!(
            m.first().map(String::as_str),
            Some("lib" | "main" | "error")
        ) || layer(m).is_some();
        if !known {
            unknown.insert(m.join("::"));
        }
    }
    assert!(
        unknown.is_empty(),
        "modules outside the layers of tests/e2e/layout.rs (add the capability there and to docs/layout.md): {unknown:?}"
    );
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let t = tree();
    // The scan sees the tree's real imports (a scan that found none would
    // pass everything).
    let engine = src_dir().join("install/engine.rs");
    assert!(
        t.imports[&src_dir().join("cli/install.rs")].contains(&engine),
        "the scan missed cli/install.rs → install/engine.rs"
    );
    let mut upward = Vec::new();
    for (from, tos) in &t.imports {
        let fm = module_of(from);
        for to in tos {
            let tm = module_of(to);
            let bad = match (fm.first().map(String::as_str), layer(&fm), layer(&tm)) {
                (Some("error"), _, _) => !ERROR_MAY_IMPORT.iter().any(|allowed| {
                    let a: Vec<&str> = allowed.split("::").collect();
                    tm.len() >= a.len() && tm.iter().zip(&a).all(|(x, y)| x == y)
                }),
                (_, Some(f), Some(t)) => t > f,
                _ => false,
            };
            if bad {
                upward.push(format!("{} → {}", rel(from), rel(to)));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that run upward (move the shared piece down, or the importer up):\n{}",
        upward.join("\n")
    );
}

#[test]
fn each_capabilitys_errors_import_only_the_vocabulary() {
    let t = tree();
    let mut seen = 0;
    let mut bad = Vec::new();
    for (from, tos) in &t.imports {
        let fm = module_of(from);
        if fm.len() != 2 || fm[1] != "error" || layer(&fm).is_none() {
            continue;
        }
        seen += 1;
        for to in tos {
            let tm = module_of(to);
            let allowed = CAPABILITY_ERROR_MAY_IMPORT.iter().any(|a| {
                let a: Vec<&str> = a.split("::").collect();
                tm.len() >= a.len() && tm.iter().zip(&a).all(|(x, y)| x == y)
            });
            if !allowed {
                bad.push(format!("{} → {}", rel(from), rel(to)));
            }
        }
    }
    assert!(seen >= 7, "found only {seen} capability error files");
    assert!(
        bad.is_empty(),
        "a capability's error.rs imports more than the vocabulary:\n{}",
        bad.join("\n")
    );
}

/// The strongly connected parts of the import graph (Tarjan), largest first.
fn circles(imports: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct S<'a> {
        g: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on: BTreeSet<&'a PathBuf>,
        out: Vec<Vec<PathBuf>>,
    }
    fn visit<'a>(s: &mut S<'a>, v: &'a PathBuf) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut part = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                part.push(w.clone());
                if w == v {
                    break;
                }
            }
            s.out.push(part);
        }
    }
    let mut s = S {
        g: imports,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in imports.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out.sort_by_key(|p| std::cmp::Reverse(p.len()));
    s.out
}

#[test]
fn no_import_circle_joins_more_than_two_files() {
    let t = tree();
    let knots: Vec<String> = circles(&t.imports)
        .into_iter()
        .filter(|p| p.len() > 2)
        .map(|p| p.iter().map(|f| rel(f)).collect::<Vec<_>>().join(", "))
        .collect();
    assert!(
        knots.is_empty(),
        "import circles of more than two files:\n{}",
        knots.join("\n")
    );
}

/// The checks above see what they must: a made-up tree with an upward
/// import, a group import and a circle of three.
#[test]
fn the_import_scan_reads_every_form() {
    let code = code_only(
        "use crate::{os::lock::{self, LockFile}, spec as s};\n\
         fn f() { crate::install::engine::run(); $crate::os::dylib::x!(); }\n\
         // crate::cli::in_a_comment\n\
         const S: &str = \"crate::ui::in_a_string\";\n",
    );
    let got: BTreeSet<String> = crate_paths(&code).iter().map(|p| p.join("::")).collect();
    let want: BTreeSet<String> = [
        "os::lock",
        "os::lock::LockFile",
        "spec",
        "install::engine::run",
        "os::dylib::x",
    ]
    .map(String::from)
    .into();
    assert_eq!(got, want);
    let p = |s: &str| PathBuf::from(s);
    let g: BTreeMap<PathBuf, BTreeSet<PathBuf>> = [
        (p("a"), [p("b")].into()),
        (p("b"), [p("c")].into()),
        (p("c"), [p("a")].into()),
        (p("d"), [p("e")].into()),
        (p("e"), [p("d")].into()),
    ]
    .into();
    let sizes: Vec<usize> = circles(&g).iter().map(Vec::len).collect();
    assert_eq!(sizes[..2], [3, 2]);
}
