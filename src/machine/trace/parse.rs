//! The loader's log (`LD_DEBUG=libs,files`) parsed into process images:
//! for each library, the request, the search list it was found by, and the
//! file mapped. A pure function over the text, tested on logs the real
//! loader wrote.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Serialize;

/// How the loader found a library.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Rule {
    /// A `DT_RPATH` of the requesting object (or of its loaders).
    Rpath {
        from: String,
    },
    /// A `DT_RUNPATH` of the requesting object.
    Runpath {
        from: String,
    },
    LdLibraryPath,
    /// `/etc/ld.so.cache` (what `ldconfig` indexed).
    Cache,
    /// The built-in system directories.
    SystemDirs,
    /// `dlopen` of a path, or a `DT_NEEDED` entry with a `/`: no search at all.
    Path {
        by: String,
    },
    /// The log did not say (a library loaded before logging started, or `LD_PRELOAD`).
    Unknown,
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rule::Rpath { from } => write!(f, "RPATH of {from}"),
            Rule::Runpath { from } => write!(f, "RUNPATH of {from}"),
            Rule::LdLibraryPath => f.write_str("LD_LIBRARY_PATH"),
            Rule::Cache => f.write_str("ld.so.cache"),
            Rule::SystemDirs => f.write_str("system directories"),
            Rule::Path { by } => write!(f, "opened by path by {by}"),
            Rule::Unknown => f.write_str("unknown rule"),
        }
    }
}

/// One library as the loader reported it (before classification).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawLoad {
    /// The name requested (`libcudart.so.13`, or a path).
    pub name: String,
    /// The file the loader mapped.
    pub path: String,
    pub rule: Rule,
    /// The object that asked for it.
    pub requested_by: String,
    pub dlopen: bool,
}

/// One process image: a pid, and the program it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawImage {
    pub pid: u32,
    pub program: Option<String>,
    pub loads: Vec<RawLoad>,
    /// Names searched for that no search found (a `dlopen` that failed, or
    /// the loader's "cannot open shared object file").
    pub searched: Vec<String>,
}

#[derive(Default)]
struct ImageState {
    image: Option<RawImage>,
    /// Pending requests by name: (requested by, dlopen).
    requests: HashMap<String, (String, bool)>,
    /// The search under way: the name and the rule of the list being searched.
    search_name: Option<String>,
    rule: Option<Rule>,
    /// Last file tried per name, with the rule that listed it.
    tried: HashMap<String, (String, Rule)>,
    /// `transferring control` seen: start-up of this image is over.
    started: bool,
}

impl ImageState {
    fn image(&mut self, pid: u32) -> &mut RawImage {
        self.image.get_or_insert_with(|| RawImage {
            pid,
            program: None,
            loads: Vec::new(),
            searched: Vec::new(),
        })
    }

    /// Is `who` this image's program or one of its loaded objects?
    fn knows(&self, who: &str) -> bool {
        let Some(img) = &self.image else {
            return false;
        };
        img.program.as_deref() == Some(who)
            || img.loads.iter().any(|l| {
                l.name == who
                    || l.path == who
                    || Path::new(&l.path).file_name() == Path::new(who).file_name()
            })
    }
}

/// Parses the loader's log lines (`  PID:\tmessage`) into process images.
pub fn parse(text: &str) -> Vec<RawImage> {
    let mut states: BTreeMap<u32, ImageState> = BTreeMap::new();
    let mut done: Vec<RawImage> = Vec::new();
    for line in text.lines() {
        let Some((pid, msg)) = line.trim_start().split_once(':') else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        let msg = msg.strip_prefix('\t').unwrap_or(msg);
        let st = states.entry(pid).or_default();
        let body = msg.trim_start();
        if let Some(rest) = body.strip_prefix("file=") {
            let Some((name, tail)) = rest.split_once(" [") else {
                continue;
            };
            let tail = tail.split_once("];").map(|(_, t)| t.trim()).unwrap_or("");
            if let Some(by) = tail.strip_prefix("needed by ") {
                let by = strip_ns(by);
                // A new program after `exec`: its first request names a
                // requester this image never loaded.
                if st.started && !st.knows(&by) {
                    if let Some(img) = st.image.take() {
                        done.push(img);
                    }
                    *st = ImageState::default();
                    st.image(pid).program = Some(by.clone());
                }
                if st.image.as_ref().is_some_and(|i| i.program.is_none()) || st.image.is_none() {
                    st.image(pid).program = Some(by.clone());
                }
                st.requests.insert(name.to_string(), (by, false));
            } else if let Some(by) = tail.strip_prefix("dynamically loaded by ") {
                st.requests.insert(name.to_string(), (strip_ns(by), true));
            } else if tail.starts_with("generating link map") {
                let (requested_by, dlopen) = st
                    .requests
                    .remove(name)
                    .unwrap_or_else(|| (String::new(), false));
                let (path, rule) = if name.contains('/') {
                    (
                        name.to_string(),
                        Rule::Path {
                            by: requested_by.clone(),
                        },
                    )
                } else {
                    st.tried
                        .remove(name)
                        .unwrap_or_else(|| (name.to_string(), Rule::Unknown))
                };
                st.image(pid).loads.push(RawLoad {
                    name: name.to_string(),
                    path,
                    rule,
                    requested_by,
                    dlopen,
                });
            }
        } else if let Some(rest) = body.strip_prefix("find library=") {
            st.search_name = rest.split_once(" [").map(|(n, _)| n.to_string());
            if let Some(n) = st.search_name.clone() {
                let img = st.image(pid);
                if !img.searched.contains(&n) {
                    img.searched.push(n);
                }
            }
            st.rule = None;
        } else if let Some(rest) = body.strip_prefix("search path=") {
            let why = rest.rsplit_once('(').map(|(_, w)| w.trim_end_matches(')'));
            st.rule = Some(match why {
                Some(w) if w.starts_with("RPATH from file ") => Rule::Rpath {
                    from: w["RPATH from file ".len()..].to_string(),
                },
                Some(w) if w.starts_with("RUNPATH from file ") => Rule::Runpath {
                    from: w["RUNPATH from file ".len()..].to_string(),
                },
                Some("LD_LIBRARY_PATH") => Rule::LdLibraryPath,
                Some("system search path") => Rule::SystemDirs,
                _ => Rule::Unknown,
            });
        } else if body.starts_with("search cache=") {
            st.rule = Some(Rule::Cache);
        } else if let Some(file) = body.strip_prefix("trying file=") {
            if let Some(name) = st.search_name.clone() {
                let rule = st.rule.clone().unwrap_or(Rule::Unknown);
                st.tried.insert(name, (file.to_string(), rule));
            }
        } else if let Some(prog) = body.strip_prefix("initialize program: ") {
            st.image(pid).program = Some(prog.to_string());
        } else if body.starts_with("transferring control") {
            st.started = true;
        }
    }
    done.extend(states.into_values().filter_map(|s| s.image));
    done.retain(|i| !i.loads.is_empty() || i.program.is_some());
    done.sort_by_key(|i| i.pid);
    done
}

/// `./main [0]` → `./main`.
fn strip_ns(s: &str) -> String {
    match s.rsplit_once(" [") {
        Some((n, _)) => n.to_string(),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written by glibc 2.36's loader for a program with a RUNPATH that links
    /// libcudart.so.13, dlopens another copy by path, then forks and execs
    /// /bin/true (trimmed of the hwcaps subdirectories it also tries).
    const LOG: &str = "     13805:\t
     13805:\tfile=libcudart.so.13 [0];  needed by ./main [0]
     13805:\tfind library=libcudart.so.13 [0]; searching
     13805:\t search path=/tmp/ldt/a/x86_64:/tmp/ldt/a\t\t(RUNPATH from file ./main)
     13805:\t  trying file=/tmp/ldt/a/x86_64/libcudart.so.13
     13805:\t  trying file=/tmp/ldt/a/libcudart.so.13
     13805:\t
     13805:\tfile=libcudart.so.13 [0];  generating link map
     13805:\tfile=libc.so.6 [0];  needed by ./main [0]
     13805:\tfind library=libc.so.6 [0]; searching
     13805:\t search path=/tmp/ldt/a\t\t(RUNPATH from file ./main)
     13805:\t  trying file=/tmp/ldt/a/libc.so.6
     13805:\t search cache=/etc/ld.so.cache
     13805:\t  trying file=/lib/x86_64-linux-gnu/libc.so.6
     13805:\t
     13805:\tfile=libc.so.6 [0];  generating link map
     13805:\tcalling init: /tmp/ldt/a/libcudart.so.13
     13805:\tinitialize program: ./main
     13805:\ttransferring control: ./main
     13805:\tfile=/tmp/ldt/b/libcudart.so.13 [0];  dynamically loaded by ./main [0]
     13805:\tfile=/tmp/ldt/b/libcudart.so.13 [0];  generating link map
     13806:\tfile=libc.so.6 [0];  needed by true [0]
     13806:\tfind library=libc.so.6 [0]; searching
     13806:\t search cache=/etc/ld.so.cache
     13806:\t  trying file=/lib/x86_64-linux-gnu/libc.so.6
     13806:\tfile=libc.so.6 [0];  generating link map
     13806:\tinitialize program: true
     13806:\ttransferring control: true
";

    #[test]
    fn parses_rules_paths_and_children() {
        let images = parse(LOG);
        assert_eq!(images.len(), 2);
        let main = &images[0];
        assert_eq!(main.program.as_deref(), Some("./main"));
        let paths: Vec<(&str, &Rule)> = main
            .loads
            .iter()
            .map(|l| (l.path.as_str(), &l.rule))
            .collect();
        assert_eq!(
            paths,
            [
                (
                    "/tmp/ldt/a/libcudart.so.13",
                    &Rule::Runpath {
                        from: "./main".into()
                    }
                ),
                ("/lib/x86_64-linux-gnu/libc.so.6", &Rule::Cache),
                (
                    "/tmp/ldt/b/libcudart.so.13",
                    &Rule::Path {
                        by: "./main".into()
                    }
                ),
            ]
        );
        assert!(main.loads[2].dlopen);
        assert_eq!(images[1].pid, 13806);
        assert_eq!(images[1].program.as_deref(), Some("true"));
    }

    #[test]
    fn an_exec_in_the_same_pid_starts_a_new_image() {
        let log = "  7:\tfile=libc.so.6 [0];  needed by sh [0]
  7:\tfind library=libc.so.6 [0]; searching
  7:\t search cache=/etc/ld.so.cache
  7:\t  trying file=/lib/libc.so.6
  7:\tfile=libc.so.6 [0];  generating link map
  7:\ttransferring control: sh
  7:\tfile=libcudnn.so.9 [0];  needed by ./prog [0]
  7:\tfind library=libcudnn.so.9 [0]; searching
  7:\t search path=/opt/x\t\t(LD_LIBRARY_PATH)
  7:\t  trying file=/opt/x/libcudnn.so.9
  7:\tfile=libcudnn.so.9 [0];  generating link map
  7:\tfile=libcudnn_cnn.so.9 [0];  dynamically loaded by /opt/x/libcudnn.so.9 [0]
  7:\tfind library=libcudnn_cnn.so.9 [0]; searching
  7:\t search path=/lib:/usr/lib\t\t(system search path)
  7:\t  trying file=/usr/lib/libcudnn_cnn.so.9
  7:\tfile=libcudnn_cnn.so.9 [0];  generating link map
";
        let images = parse(log);
        assert_eq!(images.len(), 2, "{images:#?}");
        assert_eq!(images[0].program.as_deref(), Some("sh"));
        let prog = &images[1];
        assert_eq!(prog.program.as_deref(), Some("./prog"));
        assert_eq!(prog.loads[0].rule, Rule::LdLibraryPath);
        assert_eq!(prog.loads[1].rule, Rule::SystemDirs);
        assert!(prog.loads[1].dlopen);
        assert_eq!(prog.loads[1].requested_by, "/opt/x/libcudnn.so.9");
    }
}
