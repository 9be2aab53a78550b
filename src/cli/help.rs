//! `cudaenv help [TOPIC | COMMAND…]`: the documentation, inside the binary.
//!
//! Every page of docs/ is embedded as a topic (build.rs writes the table), so
//! a message can send someone who holds only the binary — installed from a
//! wheel or by `cargo install` — to `cudaenv help shell` instead of a path
//! into a repository they do not have.
//!
//! A name that is a topic shows the topic, even when a command has the same
//! name (`help shell` is the shell-integration guide, which covers the `shell`
//! command), as `git help` shows the manual; the command's options are one
//! `--help` away and the hint says so. A name that is only a command (or a
//! command path, `help cache clean`) shows that command's `--help`, which is
//! what clap's own help subcommand, replaced by this one, did.

use super::Env;
use crate::error::{Error, ExitCode, Result};

/// `(name, title, text)` of every `docs/*.md`, sorted by name.
pub const TOPICS: &[(&str, &str, &str)] = include!(concat!(env!("OUT_DIR"), "/help_topics.rs"));

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    cudaenv help                 the commands and the documentation topics\n  \
    cudaenv help shell           the shell-integration guide (hook, shims, direnv, IDEs)\n  \
    cudaenv help exit-codes      what each exit code means\n  \
    cudaenv help cache clean     the options of `cudaenv cache clean`")]
pub struct Args {
    /// A documentation topic, or a command (and subcommand) whose options to show.
    #[arg(value_name = "TOPIC|COMMAND")]
    pub name: Vec<String>,
}

/// The text of a topic.
pub fn topic(name: &str) -> Option<&'static str> {
    TOPICS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, text)| *text)
}

/// The topic list shown under the top-level `--help` and by `cudaenv help`.
pub fn topic_list() -> String {
    let width = TOPICS.iter().map(|(n, _, _)| n.len()).max().unwrap_or(0);
    let mut s = String::from("Documentation (`cudaenv help TOPIC`):\n");
    for (name, title, _) in TOPICS {
        s.push_str(&format!("  {name:width$}  {}\n", title.replace('`', "")));
    }
    s
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let mut cli = super::examples::command().bin_name("cudaenv");
    cli.build();
    if let [name] = args.name.as_slice()
        && let Some(text) = topic(name)
    {
        env.out(text.as_bytes())?;
        if cli.find_subcommand(name).is_some() {
            env.printer.hint(format!(
                "the options of the `{name}` command: `cudaenv {name} --help`"
            ));
        }
        return Ok(ExitCode::Success);
    }
    let mut cmd = &mut cli;
    for name in &args.name {
        match cmd.find_subcommand_mut(name) {
            Some(sub) if !sub.is_hide_set() => cmd = sub,
            _ => {
                return Err(Error::UnknownHelpTopic {
                    name: args.name.join(" "),
                    topics: TOPICS.iter().map(|(n, _, _)| n.to_string()).collect(),
                });
            }
        }
    }
    // clap colours it for a terminal and honours NO_COLOR, as for `--help`.
    cmd.print_long_help()
        .map_err(Error::io("cannot write to", "standard output"))?;
    Ok(ExitCode::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_of_docs_is_a_topic() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/docs");
        let pages = std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "md")
            })
            .count();
        // Every page of docs/, and the Chinese quick start.
        assert_eq!(TOPICS.len(), pages + 1);
        assert!(
            topic("zh-cn")
                .unwrap()
                .starts_with("# cudaenv 中文快速入门")
        );
        assert!(topic("shell").unwrap().starts_with("# Shell integration"));
        assert!(topic("exit-codes").unwrap().contains("| `3` |"));
        assert!(topic("no-such-topic").is_none());
    }
}
