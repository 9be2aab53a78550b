//! A shell session's activation: what the hook and `cudaenv shell` apply, and
//! how they take it back.
//!
//! `cudaenv env` prints a one-way activation. A long-lived shell needs more:
//! leaving a pinned directory must give back exactly what the user had, so
//! every transition first undoes the previous one and then applies the new
//! one, and remembers what it did in one exported variable, `__CUDAENV_STATE`
//! (exported so that a child shell can undo what its parent applied).
//!
//! What is remembered, and how it is undone:
//! - list variables (PATH, LD_LIBRARY_PATH): the entries we put in front, and
//!   whether the variable was unset, empty or set before. Undo removes the first
//!   occurrence of each of our entries from the *current* value, so whatever
//!   the user added or removed meanwhile survives; if nothing is left, the
//!   variable goes back to unset (or empty) as it was. The user's entries are
//!   kept verbatim, and we never add an empty element.
//! - single-valued variables (CUDA_HOME, CUDA_PATH, CUDNN_PATH,
//!   CUDAENV_ACTIVE): the value before and the value we set. Undo restores the
//!   old value (or unsets) only if the variable still holds ours; a value the
//!   user set since wins.
//!
//! What to apply comes from `activation::plan`, so the hook sets exactly the
//! variables and values `cudaenv env` does.
//!
//! The state is text: space-separated records whose fields are percent-encoded
//! bytes, so any path (spaces, quotes, newlines, non-UTF-8) survives the trip
//! through the shell. A state that does not parse is ignored, never trusted.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use crate::activation::select::Active;
use crate::activation::{self, EnvDelta};
use crate::context::Context;
use crate::context::env_vars;
use crate::error::Result;
use crate::store::Store;

const FORMAT: &str = "cudaenv-state-1";

/// How a list variable looked before we touched it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Before {
    Unset,
    Empty,
    Set,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Change {
    /// Entries prepended to a `:`-separated list.
    List {
        name: String,
        added: Vec<OsString>,
        before: Before,
    },
    /// A variable replaced (`ours: None` means we unset it).
    Value {
        name: String,
        before: Option<OsString>,
        ours: Option<OsString>,
    },
}

/// Everything one activation did to the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct State {
    changes: Vec<Change>,
}

type Env = BTreeMap<OsString, OsString>;

fn get<'a>(env: &'a Env, name: &str) -> Option<&'a OsStr> {
    env.get(OsStr::new(name)).map(OsString::as_os_str)
}

fn put(env: &mut Env, name: &str, value: Option<OsString>) {
    match value {
        Some(v) => env.insert(name.into(), v),
        None => env.remove(OsStr::new(name)),
    };
}

fn split(v: &OsStr) -> Vec<OsString> {
    crate::os::path_list::entries(v)
        .map(OsStr::to_owned)
        .collect()
}

fn join(parts: &[OsString]) -> OsString {
    crate::os::path_list::join(parts)
}

impl State {
    /// Reads the state from the environment; absent or unreadable means none.
    pub fn from_env(ctx: &Context) -> State {
        ctx.var_os(env_vars::CUDAENV_STATE)
            .and_then(|s| State::decode(s.as_bytes()))
            .unwrap_or_default()
    }

    /// Takes back every change in `env`.
    fn undo(&self, env: &mut Env) {
        for change in self.changes.iter().rev() {
            match change {
                Change::List {
                    name,
                    added,
                    before,
                } => {
                    let Some(current) = get(env, name) else {
                        continue; // the user unset it: nothing of ours is left
                    };
                    let mut parts = split(current);
                    if parts.len() == 1 && parts[0].is_empty() {
                        parts.clear();
                    }
                    for entry in added {
                        if let Some(i) = parts.iter().position(|p| p == entry) {
                            parts.remove(i);
                        }
                    }
                    let value = match (parts.is_empty(), before) {
                        (false, _) => Some(join(&parts)),
                        (true, Before::Empty) => Some(OsString::new()),
                        (true, _) => None,
                    };
                    put(env, name, value);
                }
                Change::Value { name, before, ours } => {
                    if get(env, name) == ours.as_deref() {
                        put(env, name, before.clone());
                    }
                }
            }
        }
    }

    fn encode(&self) -> OsString {
        let mut out = FORMAT.as_bytes().to_vec();
        for change in &self.changes {
            out.push(b' ');
            match change {
                Change::List {
                    name,
                    added,
                    before,
                } => {
                    out.extend_from_slice(b"L:");
                    out.extend(pct(name.as_bytes()));
                    out.extend_from_slice(match before {
                        Before::Unset => b":u:",
                        Before::Empty => b":e:",
                        Before::Set => b":s:",
                    });
                    for (i, a) in added.iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        out.extend(pct(a.as_bytes()));
                    }
                }
                Change::Value { name, before, ours } => {
                    out.extend_from_slice(b"V:");
                    out.extend(pct(name.as_bytes()));
                    for v in [before, ours] {
                        out.push(b':');
                        match v {
                            Some(v) => out.extend(pct(v.as_bytes())),
                            None => out.push(b'~'),
                        }
                    }
                }
            }
        }
        OsString::from_vec(out)
    }

    fn decode(s: &[u8]) -> Option<State> {
        let mut records = s.split(|&b| b == b' ');
        if records.next()? != FORMAT.as_bytes() {
            return None;
        }
        let mut changes = Vec::new();
        for rec in records {
            let fields: Vec<&[u8]> = rec.split(|&b| b == b':').collect();
            let name = String::from_utf8(unpct(fields.get(1)?)?).ok()?;
            if !is_managed(&name) {
                return None;
            }
            match (fields[0], fields.len()) {
                (b"L", 4) => {
                    let before = match fields[2] {
                        b"u" => Before::Unset,
                        b"e" => Before::Empty,
                        b"s" => Before::Set,
                        _ => return None,
                    };
                    let added = if fields[3].is_empty() {
                        Vec::new()
                    } else {
                        fields[3]
                            .split(|&b| b == b',')
                            .map(|a| unpct(a).map(OsString::from_vec))
                            .collect::<Option<_>>()?
                    };
                    changes.push(Change::List {
                        name,
                        added,
                        before,
                    });
                }
                (b"V", 4) => {
                    let value = |f: &[u8]| -> Option<Option<OsString>> {
                        if f == b"~" {
                            Some(None)
                        } else {
                            unpct(f).map(|v| Some(OsString::from_vec(v)))
                        }
                    };
                    changes.push(Change::Value {
                        name,
                        before: value(fields[2])?,
                        ours: value(fields[3])?,
                    });
                }
                _ => return None,
            }
        }
        Some(State { changes })
    }
}

/// Only variables activation may write are ever restored from a state: a
/// forged state cannot make the hook set, say, LD_PRELOAD.
fn is_managed(name: &str) -> bool {
    [
        env_vars::PATH,
        env_vars::LD_LIBRARY_PATH,
        env_vars::CUDA_HOME,
        env_vars::CUDA_PATH,
        env_vars::CUDA_ROOT,
        env_vars::CUDNN_PATH,
        env_vars::CUDNN_HOME,
        env_vars::CUDAENV_ACTIVE,
        env_vars::XLA_FLAGS,
        env_vars::TRITON_PTXAS_PATH,
    ]
    .contains(&name)
}

fn pct(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"/._+-=@".contains(&b) {
            out.push(b);
        } else {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        }
    }
    out
}

fn unpct(s: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' {
            let hex = std::str::from_utf8(s.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    Some(out)
}

/// Applies `active` on top of `base`, recording what was done.
fn apply(
    base: &Context,
    store: &Store,
    active: &Active,
    env: &mut Env,
    notes: &mut Vec<activation::Note>,
) -> Result<State> {
    let mut state = State::default();
    if active.installed().is_none() {
        // `system`: undoing our own changes is all there is to do.
        return Ok(state);
    }
    // Planned against an environment without the lists, the plan's PATH and
    // LD_LIBRARY_PATH are exactly the entries to put in front.
    let probe = base
        .with_var(env_vars::PATH, None)
        .with_var(env_vars::LD_LIBRARY_PATH, None);
    let plan = activation::plan(&probe, store, active)?;
    notes.extend(plan.notes.iter().cloned());
    for (name, value) in &plan.changes {
        let name = *name;
        if name == env_vars::PATH || name == env_vars::LD_LIBRARY_PATH {
            let Some(ours) = value else { continue };
            let added: Vec<OsString> = split(ours).into_iter().filter(|p| !p.is_empty()).collect();
            if added.is_empty() {
                continue;
            }
            let current = get(env, name).map(OsStr::to_owned);
            let (before, mut parts) = match &current {
                None => (Before::Unset, Vec::new()),
                Some(c) if c.is_empty() => (Before::Empty, Vec::new()),
                Some(c) => (Before::Set, split(c)),
            };
            let mut all = added.clone();
            all.append(&mut parts);
            put(env, name, Some(join(&all)));
            state.changes.push(Change::List {
                name: name.into(),
                added,
                before,
            });
        } else {
            let before = get(env, name).map(OsStr::to_owned);
            if before.as_ref() == value.as_ref() {
                continue;
            }
            put(env, name, value.clone());
            state.changes.push(Change::Value {
                name: name.into(),
                before,
                ours: value.clone(),
            });
        }
    }
    Ok(state)
}

/// The outcome of a transition: the changes to make, and a problem to report
/// (the shell still gets the undo when the new selection is broken).
pub struct Transition {
    pub delta: EnvDelta,
    pub problem: Option<crate::Error>,
}

/// Undoes the previous activation recorded in `ctx` and applies `target`
/// (`Err` when selecting it failed: then only the undo happens).
pub fn transition(
    ctx: &Context,
    store: &Store,
    target: std::result::Result<Active, crate::Error>,
) -> Result<Transition> {
    let current = ctx.vars_map();
    let mut env = current.clone();
    State::from_env(ctx).undo(&mut env);
    let mut problem = None;
    let mut notes = Vec::new();
    let state = match target {
        Ok(active) => {
            let base = Context::new(env.clone(), ctx.cwd().to_path_buf())?;
            apply(&base, store, &active, &mut env, &mut notes)?
        }
        Err(e) => {
            problem = Some(e);
            State::default()
        }
    };
    if state.changes.is_empty() {
        env.remove(OsStr::new(env_vars::CUDAENV_STATE));
    } else {
        env.insert(env_vars::CUDAENV_STATE.into(), state.encode());
    }
    // Emit only what differs, in a fixed order.
    let mut delta = EnvDelta {
        notes,
        ..EnvDelta::default()
    };
    for name in touched() {
        let (old, new) = (get(&current, name), get(&env, name));
        if old != new {
            delta.changes.push((name, new.map(OsStr::to_owned)));
        }
    }
    Ok(Transition { delta, problem })
}

fn touched() -> [&'static str; 11] {
    [
        env_vars::PATH,
        env_vars::LD_LIBRARY_PATH,
        env_vars::CUDA_HOME,
        env_vars::CUDA_PATH,
        env_vars::CUDA_ROOT,
        env_vars::CUDNN_PATH,
        env_vars::CUDNN_HOME,
        env_vars::CUDAENV_ACTIVE,
        env_vars::CUDAENV_STATE,
        env_vars::XLA_FLAGS,
        env_vars::TRITON_PTXAS_PATH,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_any_bytes() {
        let s = State {
            changes: vec![
                Change::List {
                    name: "PATH".into(),
                    added: vec![
                        OsString::from("/a b/it's \"q\"/bin"),
                        OsString::from_vec(b"/x\n\xff,%:".to_vec()),
                    ],
                    before: Before::Empty,
                },
                Change::Value {
                    name: "CUDA_HOME".into(),
                    before: None,
                    ours: Some("/r/v 1".into()),
                },
            ],
        };
        let enc = s.encode();
        assert!(!enc.as_bytes().contains(&b'\n'));
        assert_eq!(State::decode(enc.as_bytes()), Some(s));
    }

    #[test]
    fn forged_or_garbled_states_are_ignored() {
        for bad in [
            &b""[..],
            b"x",
            b"cudaenv-state-1 V:LD_PRELOAD:~:%2Fevil.so",
            b"cudaenv-state-1 L:PATH:z:",
            b"cudaenv-state-1 V:PATH:%zz:~",
            b"cudaenv-state-1 V:PATH",
        ] {
            assert_eq!(State::decode(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    fn env(pairs: &[(&str, &str)]) -> Env {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn undo_keeps_user_edits_and_unset_stays_unset() {
        let state = State {
            changes: vec![
                Change::List {
                    name: "PATH".into(),
                    added: vec!["/v/bin".into()],
                    before: Before::Set,
                },
                Change::List {
                    name: "LD_LIBRARY_PATH".into(),
                    added: vec!["/v/lib".into()],
                    before: Before::Unset,
                },
                Change::List {
                    name: "CUDNN_HOME".into(),
                    added: vec!["/v/c".into()],
                    before: Before::Empty,
                },
                Change::Value {
                    name: "CUDA_HOME".into(),
                    before: Some("/usr/local/cuda".into()),
                    ours: Some("/v".into()),
                },
                Change::Value {
                    name: "CUDA_PATH".into(),
                    before: None,
                    ours: Some("/v".into()),
                },
            ],
        };
        let mut e = env(&[
            ("PATH", "/mine:/v/bin:/usr/bin::/v/bin"),
            ("LD_LIBRARY_PATH", "/v/lib"),
            ("CUDNN_HOME", "/v/c"),
            ("CUDA_HOME", "/v"),
            ("CUDA_PATH", "/user/changed"),
        ]);
        state.undo(&mut e);
        assert_eq!(
            e,
            env(&[
                // Only our first entry goes; the user's own (and their empty one) stay.
                ("PATH", "/mine:/usr/bin::/v/bin"),
                ("CUDNN_HOME", ""),
                ("CUDA_HOME", "/usr/local/cuda"),
                ("CUDA_PATH", "/user/changed"),
            ])
        );
    }
}
