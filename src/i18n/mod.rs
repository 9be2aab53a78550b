//! Messages in the user's language: one catalogue per language, English
//! the source and the fallback.
//!
//! What a beginner acts on — `explain`'s entries, `doctor`'s findings and
//! fixes, `verify`'s verdicts, the errors' hints — is built as a [`Msg`]: a
//! catalogue key and its arguments, not finished text. It becomes text only
//! when it is shown, in the language the printer was given ([`Lang`]), so
//! the code that finds a problem never knows the language it is told in, and
//! `--json` (which serialises a `Msg` as its English text) stays English and
//! stable whatever the locale.
//!
//! The catalogues are Fluent files (`locales/<lang>/*.ftl`, Project
//! Fluent's syntax: named placeholders `{ $name }`), embedded in the binary
//! and parsed on the first message shown, never on a shim's path. A key the
//! Chinese catalogue lacks falls back to English; `tests/e2e/catalogue_i18n`
//! keeps the two in step (every English key has a Chinese one with the same
//! placeholders, every key the code names exists).

use std::sync::OnceLock;

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource, FluentValue};

/// The languages cudaenv speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Lang {
    #[default]
    En,
    /// Simplified Chinese.
    ZhCn,
}

/// The catalogue files of each language, in the order they are loaded.
const EN: &[&str] = &[
    include_str!("locales/en/ui.ftl"),
    include_str!("locales/en/explain.ftl"),
    include_str!("locales/en/doctor.ftl"),
    include_str!("locales/en/verify.ftl"),
    include_str!("locales/en/hints.ftl"),
];
const ZH_CN: &[&str] = &[
    include_str!("locales/zh-CN/ui.ftl"),
    include_str!("locales/zh-CN/explain.ftl"),
    include_str!("locales/zh-CN/doctor.ftl"),
    include_str!("locales/zh-CN/verify.ftl"),
    include_str!("locales/zh-CN/hints.ftl"),
];

impl Lang {
    pub const ALL: [Lang; 2] = [Lang::En, Lang::ZhCn];

    /// The name the setting takes and `--json` would show (BCP 47).
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::ZhCn => "zh-CN",
        }
    }

    /// The setting's value: `en`, `zh-CN` (`zh`, `zh_CN` too), any case.
    pub fn parse(s: &str) -> Option<Lang> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "en" | "en-us" | "en-gb" | "c" | "posix" => Some(Lang::En),
            "zh" | "zh-cn" | "zh-hans" | "zh-sg" | "zh-hans-cn" => Some(Lang::ZhCn),
            _ => None,
        }
    }

    /// The language a POSIX locale name asks for (`zh_CN.UTF-8`,
    /// `zh_CN`, `en_US.UTF-8`, `C`). Chinese only where cudaenv can write
    /// what the terminal shows: a UTF-8 locale, or one that names no
    /// codeset (`zh_CN` defaults to UTF-8 almost everywhere now), and
    /// Simplified Chinese (`zh_TW`, `zh_HK` get English: there is no
    /// Traditional catalogue; `CUDAENV_LANG=zh-CN` opts in).
    pub fn from_locale(locale: &str) -> Lang {
        let (name, rest) = match locale.split_once('.') {
            Some((n, r)) => (n, Some(r)),
            None => (locale.split('@').next().unwrap_or(locale), None),
        };
        let utf8 = rest.is_none_or(|r| {
            let codeset = r.split('@').next().unwrap_or(r).to_ascii_lowercase();
            codeset == "utf-8" || codeset == "utf8"
        });
        let mut parts = name.split(['_', '-']);
        let language = parts.next().unwrap_or("").to_ascii_lowercase();
        let territory = parts.next().unwrap_or("").to_ascii_uppercase();
        match (language.as_str(), territory.as_str()) {
            ("zh", "" | "CN" | "SG") if utf8 => Lang::ZhCn,
            _ => Lang::En,
        }
    }

    fn sources(self) -> &'static [&'static str] {
        match self {
            Lang::En => EN,
            Lang::ZhCn => ZH_CN,
        }
    }

    /// The separator of a list of clauses (`a; b`).
    fn clause_separator(self) -> &'static str {
        match self {
            Lang::En => "; ",
            Lang::ZhCn => "；",
        }
    }

    /// The word between the items of `Msg::And`.
    fn and(self) -> &'static str {
        match self {
            Lang::En => " and ",
            Lang::ZhCn => " 和 ",
        }
    }

    fn bundle(self) -> &'static FluentBundle<FluentResource> {
        static BUNDLES: [OnceLock<FluentBundle<FluentResource>>; 2] =
            [OnceLock::new(), OnceLock::new()];
        let slot = match self {
            Lang::En => &BUNDLES[0],
            Lang::ZhCn => &BUNDLES[1],
        };
        slot.get_or_init(|| {
            let id: unic_langid::LanguageIdentifier =
                self.tag().parse().expect("a valid language tag");
            let mut bundle = FluentBundle::new_concurrent(vec![id]);
            // Text goes to terminals and logs, not to bidirectional layout:
            // no Unicode isolation marks around placeholders.
            bundle.set_use_isolating(false);
            for source in self.sources() {
                let resource =
                    FluentResource::try_new(source.to_string()).unwrap_or_else(|(_, errors)| {
                        panic!("a catalogue of {} does not parse: {errors:?}", self.tag())
                    });
                bundle.add_resource(resource).unwrap_or_else(|errors| {
                    panic!("a catalogue of {} repeats a key: {errors:?}", self.tag())
                });
            }
            bundle
        })
    }

    /// The text of `key` with `args`, or `None` when this catalogue lacks it.
    fn lookup(self, key: &str, args: &FluentArgs) -> Option<String> {
        let bundle = self.bundle();
        let pattern = bundle.get_message(key)?.value()?;
        let mut errors = Vec::new();
        let text = bundle.format_pattern(pattern, Some(args), &mut errors);
        errors.is_empty().then(|| text.into_owned())
    }
}

/// Something to tell the user, in whichever language it is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    /// A catalogue message and the values of its placeholders.
    Key {
        key: &'static str,
        args: Vec<(&'static str, Arg)>,
    },
    /// Text that reads the same in every language: a command, a path, a name.
    Verbatim(String),
    /// Clauses said one after the other (`a; b`).
    Clauses(Vec<Msg>),
    /// Items of a list (`a, b`).
    List(Vec<Msg>),
    /// Items joined by "and" (`a and b`).
    And(Vec<Msg>),
}

/// A placeholder's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    Text(String),
    /// A message of its own, shown in the same language.
    Msg(Box<Msg>),
}

/// A catalogue message: `msg!("key", name = value, …)` (values by
/// `Display`), `msg!("key", name => other_msg)` for a nested message.
#[macro_export]
macro_rules! msg {
    ($key:literal $(, $name:ident $op:tt $value:expr)* $(,)?) => {
        $crate::i18n::Msg::Key {
            key: $key,
            args: vec![$((stringify!($name), $crate::msg!(@arg $op $value))),*],
        }
    };
    (@arg = $value:expr) => { $crate::i18n::Arg::Text(::std::string::ToString::to_string(&$value)) };
    (@arg => $value:expr) => { $crate::i18n::Arg::Msg(::std::boxed::Box::new($value)) };
}

impl Msg {
    pub fn verbatim(text: impl Into<String>) -> Msg {
        Msg::Verbatim(text.into())
    }

    /// A catalogue message without placeholders, by a key held in data
    /// (`msg!` is for keys written in code).
    pub fn key(key: &'static str) -> Msg {
        Msg::Key {
            key,
            args: Vec::new(),
        }
    }

    /// The text in `lang`, English where its catalogue lacks the key.
    pub fn render(&self, lang: Lang) -> String {
        match self {
            Msg::Verbatim(t) => t.clone(),
            Msg::Clauses(parts) => join(parts, lang, lang.clause_separator()),
            Msg::List(parts) => join(parts, lang, ", "),
            Msg::And(parts) => join(parts, lang, lang.and()),
            Msg::Key { key, args } => {
                let mut fargs = FluentArgs::new();
                for (name, value) in args {
                    let text = match value {
                        Arg::Text(t) => t.clone(),
                        Arg::Msg(m) => m.render(lang),
                    };
                    fargs.set(*name, value_of(text));
                }
                lang.lookup(key, &fargs)
                    .or_else(|| Lang::En.lookup(key, &fargs))
                    .unwrap_or_else(|| key.to_string())
            }
        }
    }

    /// The English text (what `--json` and `Display` show).
    pub fn en(&self) -> String {
        self.render(Lang::En)
    }
}

fn join(parts: &[Msg], lang: Lang, separator: &str) -> String {
    parts
        .iter()
        .map(|m| m.render(lang))
        .collect::<Vec<_>>()
        .join(separator)
}

/// A whole number is handed to Fluent as a number, so that a catalogue can
/// choose a plural form by it (`{ $errors -> [one] … *[other] … }`); it
/// prints as the same digits. Everything else (versions such as `11.0`,
/// which a number would print as `11`) stays text.
fn value_of(text: String) -> FluentValue<'static> {
    let integer = !text.is_empty()
        && text.len() <= 15
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    match integer {
        true => FluentValue::from(text.parse::<u64>().expect("digits") as f64),
        false => FluentValue::from(text),
    }
}

/// English, as in `--json`.
impl std::fmt::Display for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.en())
    }
}

impl From<String> for Msg {
    fn from(s: String) -> Msg {
        Msg::Verbatim(s)
    }
}

impl From<&str> for Msg {
    fn from(s: &str) -> Msg {
        Msg::Verbatim(s.to_string())
    }
}

/// A message equals a text when its English text does (as `--json` shows it).
impl PartialEq<&str> for Msg {
    fn eq(&self, other: &&str) -> bool {
        self.en() == *other
    }
}

/// `--json` is English and stable: a message is its English text.
impl serde::Serialize for Msg {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.en())
    }
}

/// Read back (a `doctor --json` report) as the text it was.
impl<'de> serde::Deserialize<'de> for Msg {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Msg, D::Error> {
        String::deserialize(d).map(Msg::Verbatim)
    }
}

#[cfg(test)]
mod tests {
    //! The catalogues in step: every English key has a Chinese one with the
    //! same placeholders, no catalogue has a key English lacks, and every key
    //! the code names is in the English catalogue.

    use std::collections::{BTreeMap, BTreeSet};

    use super::*;

    /// Keys with their placeholders, from Fluent's own parser.
    fn keys(lang: Lang) -> BTreeMap<String, BTreeSet<String>> {
        use fluent_syntax::ast;
        let mut out = BTreeMap::new();
        for source in lang.sources() {
            let resource = fluent_syntax::parser::parse(*source)
                .unwrap_or_else(|(_, e)| panic!("{}: {e:?}", lang.tag()));
            for entry in resource.body {
                if let ast::Entry::Message(m) = entry {
                    let mut vars = BTreeSet::new();
                    if let Some(p) = &m.value {
                        variables(p, &mut vars);
                    }
                    let id = m.id.name.to_string();
                    assert!(
                        out.insert(id.clone(), vars).is_none(),
                        "{}: `{id}` twice",
                        lang.tag()
                    );
                }
            }
        }
        out
    }

    fn variables(p: &fluent_syntax::ast::Pattern<&str>, out: &mut BTreeSet<String>) {
        use fluent_syntax::ast::{Expression, InlineExpression, PatternElement};
        let inline = |e: &InlineExpression<&str>, out: &mut BTreeSet<String>| {
            if let InlineExpression::VariableReference { id } = e {
                out.insert(id.name.to_string());
            }
        };
        for element in &p.elements {
            if let PatternElement::Placeable { expression } = element {
                match expression {
                    Expression::Inline(e) => inline(e, out),
                    Expression::Select { selector, variants } => {
                        inline(selector, out);
                        for v in variants {
                            variables(&v.value, out);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_english_key_has_a_chinese_one_with_the_same_placeholders() {
        let en = keys(Lang::En);
        let zh = keys(Lang::ZhCn);
        let missing: Vec<&String> = en.keys().filter(|k| !zh.contains_key(*k)).collect();
        assert!(missing.is_empty(), "zh-CN lacks {missing:?}");
        let extra: Vec<&String> = zh.keys().filter(|k| !en.contains_key(*k)).collect();
        assert!(extra.is_empty(), "zh-CN has keys English lacks: {extra:?}");
        for (key, vars) in &en {
            assert_eq!(&zh[key], vars, "placeholders of `{key}`");
        }
        assert!(en.len() > 300, "{} keys", en.len());
    }

    /// Every `msg!("key"…)` and `Msg::key("key")`-style literal of the
    /// source names a key of the English catalogue, so a mistyped key fails
    /// here rather than printing the key to a user.
    #[test]
    fn every_key_the_code_names_exists() {
        let en = keys(Lang::En);
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut named = BTreeSet::new();
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    // This module's own examples are not keys.
                    if !path.ends_with("i18n") {
                        stack.push(path);
                    }
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    collect_keys(&text, &mut named);
                }
            }
        }
        assert!(
            named.len() > 200,
            "found only {} keys in the source",
            named.len()
        );
        let unknown: Vec<&String> = named.iter().filter(|k| !en.contains_key(*k)).collect();
        assert!(
            unknown.is_empty(),
            "keys the code names that English lacks: {unknown:?}"
        );
    }

    /// The string literals right after `msg!(` and the quoted keys of the
    /// rule tables (`"explain-…"`, `"doctor-…"`, `"hint-…"`, `"verify-…"`).
    fn collect_keys(text: &str, out: &mut BTreeSet<String>) {
        let mut rest = text;
        while let Some(i) = rest.find("msg!(") {
            rest = &rest[i + 5..];
            let t = rest.trim_start();
            if let Some(lit) = t.strip_prefix('"')
                && let Some(end) = lit.find('"')
            {
                let key = &lit[..end];
                assert!(is_key(key), "`msg!(\"{key}\"` is not a catalogue key");
                out.insert(key.to_string());
            }
        }
        for prefix in ["\"explain-", "\"doctor-", "\"hint-", "\"verify-", "\"ui-"] {
            let mut rest = text;
            while let Some(i) = rest.find(prefix) {
                let lit = &rest[i + 1..];
                let end = lit.find('"').unwrap_or(0);
                let key = &lit[..end];
                if is_key(key) {
                    out.insert(key.to_string());
                }
                rest = &lit[end.max(1)..];
            }
        }
    }

    fn is_key(s: &str) -> bool {
        s.starts_with(|c: char| c.is_ascii_lowercase())
            && !s.ends_with('-')
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    }

    #[test]
    fn messages_render_in_each_language_and_fall_back_to_english() {
        let m = msg!("explain-missing-cudnn", file = "libcudnn.so.8", major = 8, windows => Msg::verbatim(""));
        assert_eq!(
            m.render(Lang::En),
            "the program needs cuDNN 8 (libcudnn.so.8) and the dynamic loader found none"
        );
        assert_eq!(
            m.render(Lang::ZhCn),
            "程序需要 cuDNN 8（libcudnn.so.8），动态链接器一份也没找到"
        );
        // JSON is English whatever the language.
        assert_eq!(serde_json::to_string(&m).unwrap(), format!("{:?}", m.en()));
        // A version is text, never a number that would lose its `.0`.
        let v = msg!("explain-upgrade-driver-to", driver = "11.0");
        assert_eq!(v.en(), "upgrade the NVIDIA driver to ≥ 11.0");
        // The leading space of a note survives Fluent's trimming in English.
        assert!(msg!("explain-windows-dll-note").en().starts_with(" ("));
    }

    #[test]
    fn plural_forms_follow_the_count() {
        let s = |e: u64, w: u64| msg!("doctor-summary", errors = e, warnings = w);
        assert_eq!(s(1, 0).en(), "1 error, 0 warnings");
        assert_eq!(s(2, 1).en(), "2 errors, 1 warning");
        assert_eq!(s(2, 1).render(Lang::ZhCn), "2 个错误，1 个警告");
    }

    #[test]
    fn locales_choose_the_language() {
        for (locale, lang) in [
            ("zh_CN.UTF-8", Lang::ZhCn),
            ("zh_CN.utf8", Lang::ZhCn),
            ("zh_CN", Lang::ZhCn),
            ("zh_SG.UTF-8", Lang::ZhCn),
            ("zh", Lang::ZhCn),
            ("zh_CN.GB18030", Lang::En),
            ("zh_TW.UTF-8", Lang::En),
            ("en_US.UTF-8", Lang::En),
            ("C.UTF-8", Lang::En),
            ("C", Lang::En),
            ("POSIX", Lang::En),
            ("", Lang::En),
        ] {
            assert_eq!(Lang::from_locale(locale), lang, "{locale:?}");
        }
        assert_eq!(Lang::parse("zh-CN"), Some(Lang::ZhCn));
        assert_eq!(Lang::parse("zh_cn"), Some(Lang::ZhCn));
        assert_eq!(Lang::parse("EN"), Some(Lang::En));
        assert_eq!(Lang::parse("fr"), None);
    }
}
