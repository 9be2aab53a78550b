//! `:`-separated lists of directories (`PATH`, `LD_LIBRARY_PATH`,
//! `CPATH` …): splitting, joining, putting directories in front, and
//! looking a program up in them, the way `execvp` does.
//!
//! Lists are handled as bytes (`OsStr`), never as UTF-8: a directory name
//! is whatever the file system allows, and an entry must come back out
//! exactly as it went in. An empty entry means the working directory to
//! the loader and to `execvp`; `entries` keeps it, for the code that
//! reports on a list as it is, while `dirs`, `prepend` and the searches
//! skip it.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// The separator of every list handled here.
pub const SEPARATOR: u8 = b':';

/// Every entry of `list`, empty ones included, in order.
pub fn entries(list: &OsStr) -> impl Iterator<Item = &OsStr> {
    list.as_bytes()
        .split(|&b| b == SEPARATOR)
        .map(OsStr::from_bytes)
}

/// The non-empty entries of `list`, as paths.
pub fn dirs(list: &OsStr) -> impl Iterator<Item = &Path> {
    entries(list).filter(|e| !e.is_empty()).map(Path::new)
}

/// `parts` joined with `:`, as they are.
pub fn join<I, S>(parts: I) -> OsString
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut out = Vec::new();
    for (i, p) in parts.into_iter().enumerate() {
        if i > 0 {
            out.push(SEPARATOR);
        }
        out.extend_from_slice(p.as_ref().as_bytes());
    }
    OsString::from_vec(out)
}

/// Whether `p` can be an entry: it must not contain the separator.
pub fn can_hold(p: &Path) -> bool {
    !p.as_os_str().as_bytes().contains(&SEPARATOR)
}

/// `front`, then the entries of `current` that are not empty, not already
/// in `front` and not `drop`ped. `None` when nothing is left (so that the
/// variable is unset rather than set to "").
pub fn prepend(
    front: &[PathBuf],
    current: Option<&OsStr>,
    drop: impl Fn(&Path) -> bool,
) -> Option<OsString> {
    let mut parts: Vec<&OsStr> = front.iter().map(|d| d.as_os_str()).collect();
    for entry in current.into_iter().flat_map(dirs) {
        if !drop(entry) && !front.iter().any(|d| d == entry) {
            parts.push(entry.as_os_str());
        }
    }
    (!parts.is_empty()).then(|| join(parts))
}

/// The first `dir/program` in `dirs` that `accept`s (`super::executable_file`
/// gives its metadata).
pub fn find_where<'a>(
    program: &OsStr,
    dirs: impl IntoIterator<Item = &'a Path>,
    accept: impl Fn(&Path, &std::fs::Metadata) -> bool,
) -> Option<PathBuf> {
    dirs.into_iter()
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(program))
        .find(|c| super::executable_file(c).is_some_and(|m| accept(c, &m)))
}

/// The first executable `dir/program` in `dirs`.
pub fn find<'a>(program: &OsStr, dirs: impl IntoIterator<Item = &'a Path>) -> Option<PathBuf> {
    find_where(program, dirs, |_, _| true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_and_joins_bytes_exactly() {
        let odd = OsStr::from_bytes(b"/a b::/\xff/bin:");
        let e: Vec<&OsStr> = entries(odd).collect();
        assert_eq!(e.len(), 4);
        assert_eq!(e[1], "");
        assert_eq!(join(&e), odd);
        let d: Vec<&Path> = dirs(odd).collect();
        assert_eq!(
            d,
            [
                Path::new("/a b"),
                Path::new(OsStr::from_bytes(b"/\xff/bin"))
            ]
        );
        assert_eq!(join(Vec::<&OsStr>::new()), "");
        assert!(can_hold(Path::new("/opt/cuda 12/bin")));
        assert!(!can_hold(Path::new("/opt/a:b")));
    }

    #[test]
    fn prepend_puts_dirs_first_once_and_drops_what_is_asked() {
        let front = [PathBuf::from("/new/bin"), PathBuf::from("/usr/bin")];
        let cur = OsStr::new("/old/bin:/usr/bin::/bin:/new/bin");
        let got = prepend(&front, Some(cur), |p| p == Path::new("/old/bin"));
        assert_eq!(got.unwrap(), "/new/bin:/usr/bin:/bin");
        assert_eq!(prepend(&[], Some(OsStr::new("::")), |_| false), None);
        assert_eq!(prepend(&[], None, |_| false), None);
    }

    #[test]
    fn finds_the_first_executable_file() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        std::fs::create_dir_all(a.join("tool")).unwrap(); // a directory is no program
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(b.join("tool"), "").unwrap();
        let list = join([a.as_os_str(), b.as_os_str()]);
        assert_eq!(find(OsStr::new("tool"), dirs(&list)), None);
        std::fs::set_permissions(b.join("tool"), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find(OsStr::new("tool"), dirs(&list)), Some(b.join("tool")));
        assert_eq!(
            find_where(OsStr::new("tool"), dirs(&list), |p, _| !p.starts_with(&b)),
            None
        );
    }
}
