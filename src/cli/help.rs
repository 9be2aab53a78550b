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
//!
//! A topic with a Chinese version (docs/zh-CN/<topic>.md) is shown in
//! Chinese under a Chinese locale (the printer's language, as for every
//! message), and the topic list names it by its Chinese title; a topic
//! without one is shown in English, and the list says so.

use super::Env;
use crate::error::{CliError, Error, ExitCode, Result};
use crate::i18n::Lang;
use crate::msg;

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

/// `(name, title, text)` of every `docs/zh-CN/*.md`: the Chinese version of
/// the topic of the same name.
pub const TOPICS_ZH: &[(&str, &str, &str)] =
    include!(concat!(env!("OUT_DIR"), "/help_topics_zh.rs"));

/// The text of a topic.
pub fn topic(name: &str) -> Option<&'static str> {
    TOPICS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, text)| *text)
}

/// The topic's Chinese version, where it has one.
fn translated(name: &str) -> Option<(&'static str, &'static str)> {
    TOPICS_ZH
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, title, text)| (*title, *text))
}

/// The text of a topic in `lang`: its translation where there is one, else
/// the English page.
pub fn topic_in(name: &str, lang: Lang) -> Option<&'static str> {
    match lang {
        Lang::ZhCn => translated(name)
            .map(|(_, text)| text)
            .or_else(|| topic(name)),
        Lang::En => topic(name),
    }
}

/// The topic list shown under the top-level `--help` (English, as clap's
/// help is) and by `cudaenv help` (in the printer's language).
pub fn topic_list() -> String {
    topic_list_in(Lang::En)
}

pub fn topic_list_in(lang: Lang) -> String {
    let width = TOPICS.iter().map(|(n, _, _)| n.len()).max().unwrap_or(0);
    let mut s = format!("{}\n", msg!("ui-help-topics").render(lang));
    let english = msg!("ui-help-topic-in-english").render(lang);
    for (name, title, _) in TOPICS {
        let title = match (lang, translated(name)) {
            (Lang::ZhCn, Some((zh, _))) => zh.to_string(),
            // The Chinese quick start is Chinese in every language.
            (Lang::ZhCn, None) if *name != "zh-cn" => format!("{title}{english}"),
            _ => title.to_string(),
        };
        s.push_str(&format!("  {name:width$}  {}\n", title.replace('`', "")));
    }
    s
}

pub fn run(env: &Env, args: Args) -> Result<ExitCode> {
    let lang = env.printer.lang();
    let mut cli = super::examples::command().bin_name("cudaenv");
    if lang != Lang::En {
        cli = cli.after_help(topic_list_in(lang));
    }
    cli.build();
    if let [name] = args.name.as_slice()
        && let Some(text) = topic_in(name, lang)
    {
        env.out(text.as_bytes())?;
        if cli.find_subcommand(name).is_some() {
            env.printer
                .hint_msg(&msg!("ui-help-command-options", command = name));
        }
        return Ok(ExitCode::Success);
    }
    let mut cmd = &mut cli;
    for name in &args.name {
        match cmd.find_subcommand_mut(name) {
            Some(sub) if !sub.is_hide_set() => cmd = sub,
            _ => {
                return Err(Error::Cli(CliError::UnknownHelpTopic {
                    name: args.name.join(" "),
                    topics: TOPICS.iter().map(|(n, _, _)| n.to_string()).collect(),
                }));
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

    /// Every Chinese page translates a topic, starts with a Chinese title,
    /// and is what a Chinese locale gets; English gets the English page.
    #[test]
    fn chinese_versions_are_chosen_by_the_language() {
        assert!(!TOPICS_ZH.is_empty());
        for (name, title, text) in TOPICS_ZH {
            assert!(topic(name).is_some(), "{name}");
            assert!(
                title
                    .chars()
                    .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
                "{name}: {title}"
            );
            assert_eq!(topic_in(name, Lang::ZhCn), Some(*text));
            assert_eq!(topic_in(name, Lang::En), topic(name));
            assert!(
                topic_list_in(Lang::ZhCn).contains(&title.replace('`', "")),
                "{name}"
            );
        }
        assert_eq!(topic_in("layout", Lang::ZhCn), topic("layout"));
        assert!(topic_list_in(Lang::ZhCn).contains("（英文）"));
        assert!(!topic_list().contains("（英文）"));
    }
}
