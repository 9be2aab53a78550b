//! URLs that may carry credentials, and never show them.
//!
//! A package index or mirror can be given as `https://user:token@host/simple`
//! (in `CUDAENV_PYPI_INDEX`, `PIP_INDEX_URL`, pip's configuration, a mirror
//! setting), and every artifact URL derived from it carries the same
//! credentials. Such a URL is a [`DisplaySafeUrl`]: its `Display`, `Debug`
//! and `Serialize` write it as `https://user:****@host/…` (a lone user name,
//! usually a token, as `****@host`), so whatever prints or serialises it —
//! errors, progress, `--json`, logs — shows no secret. The real text is
//! reached only through [`DisplaySafeUrl::expose`], which is called where a
//! request is made and nowhere else; files that outlive the command
//! (`meta.toml`, `cuda.lock`, the index cache) record
//! [`DisplaySafeUrl::without_credentials`], and the credentials are applied
//! again from the configured index or mirror when the URL is used
//! ([`DisplaySafeUrl::with_credentials_of`], by origin, as pip and uv do).
//!
//! The text is kept as given (not re-serialised by a URL parser), so a URL
//! without credentials round-trips byte for byte; credentials are found by
//! parsing it. Text that does not parse as a URL (a port out of range, an
//! unclosed IPv6 bracket, an unknown or missing scheme: a typo in a
//! setting) still has its user information masked, by
//! [`mask_credentials`], which finds it by shape rather than by parsing; the
//! printer and the JSON writer pass every message through it too, so a URL
//! that reaches a message as plain text is masked as well.

use std::fmt;

/// A URL whose printed forms hide its credentials (see the module docs).
#[derive(Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct DisplaySafeUrl(String);

impl DisplaySafeUrl {
    pub fn new(url: impl Into<String>) -> DisplaySafeUrl {
        DisplaySafeUrl(url.into())
    }

    /// The URL with its credentials: for making the request, never for
    /// output or files.
    pub fn expose(&self) -> &str {
        &self.0
    }

    fn parsed_with_credentials(&self) -> Option<reqwest::Url> {
        let u = reqwest::Url::parse(&self.0).ok()?;
        (!u.username().is_empty() || u.password().is_some()).then_some(u)
    }

    /// Whether the URL carries a user name or password.
    pub fn has_credentials(&self) -> bool {
        self.parsed_with_credentials().is_some()
    }

    /// The URL as shown: credentials masked.
    pub fn redacted(&self) -> String {
        let Some(mut u) = self.parsed_with_credentials() else {
            return mask_credentials(&self.0).into_owned();
        };
        match u.password() {
            Some(_) => {
                let _ = u.set_password(Some("****"));
            }
            None => {
                let _ = u.set_username("****");
            }
        }
        u.to_string()
    }

    /// The URL with its credentials removed, as files record it.
    pub fn without_credentials(&self) -> String {
        let Some(mut u) = self.parsed_with_credentials() else {
            return self.0.clone();
        };
        let _ = u.set_password(None);
        let _ = u.set_username("");
        u.to_string()
    }

    /// `scheme://host:port` of the URL, when it has one.
    fn origin(&self) -> Option<reqwest::Url> {
        reqwest::Url::parse(&self.0).ok().filter(|u| u.has_host())
    }

    /// This URL with the credentials of `of` when it has none of its own and
    /// lives on the same origin (scheme, host and port): an index's
    /// credentials apply to the files it links on its own host, wherever
    /// their paths are, and to no other host.
    pub fn with_credentials_of(self, of: &DisplaySafeUrl) -> DisplaySafeUrl {
        let (Some(mut mine), Some(theirs)) = (self.origin(), of.parsed_with_credentials()) else {
            return self;
        };
        if self.has_credentials() || mine.origin() != theirs.origin() {
            return self;
        }
        if mine.set_username(theirs.username()).is_err()
            || mine.set_password(theirs.password()).is_err()
        {
            return self;
        }
        DisplaySafeUrl(mine.to_string())
    }
}

impl fmt::Display for DisplaySafeUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl fmt::Debug for DisplaySafeUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.redacted())
    }
}

impl serde::Serialize for DisplaySafeUrl {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.redacted())
    }
}

/// Compares the real text (tests compare with literals; nothing is shown).
impl PartialEq<&str> for DisplaySafeUrl {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl From<String> for DisplaySafeUrl {
    fn from(s: String) -> DisplaySafeUrl {
        DisplaySafeUrl(s)
    }
}

impl From<&str> for DisplaySafeUrl {
    fn from(s: &str) -> DisplaySafeUrl {
        DisplaySafeUrl(s.to_string())
    }
}

/// Characters that end a URL's authority, or a word, in running text.
fn ends_word(c: char) -> bool {
    c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '<' | '>' | '(' | ')')
}

/// `text` with the user information of everything that looks like a URL
/// masked as [`DisplaySafeUrl`] shows it (`user:****@`, a lone name as
/// `****@`): after any `scheme://`, up to the last `@` of the authority, and
/// a `user:password@host` word without a scheme. Found by shape, so it works
/// on text no URL parser accepts; an address such as `git@host` (no
/// password, no scheme) is left alone.
pub fn mask_credentials(text: &str) -> std::borrow::Cow<'_, str> {
    fn masked(userinfo: &str) -> String {
        match userinfo.split_once(':') {
            Some((user, _)) if !user.is_empty() => format!("{user}:****"),
            _ => "****".to_string(),
        }
    }
    if !text.contains('@') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        // The next word (up to a separator), copied with its userinfo masked.
        let start = rest.find(|c: char| !ends_word(c)).unwrap_or(rest.len());
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find(ends_word).unwrap_or(rest.len());
        let word = &rest[..end];
        rest = &rest[end..];
        let mut w = word;
        while let Some(i) = w.find("://") {
            out.push_str(&w[..i + 3]);
            w = &w[i + 3..];
            let auth_end = w.find(['/', '?', '#']).unwrap_or(w.len());
            if let Some(at) = w[..auth_end].rfind('@') {
                out.push_str(&masked(&w[..at]));
                w = &w[at..];
            }
        }
        // No scheme: `user:password@host…` (the password must be there, so
        // that `git@host` and e-mail addresses stay as they are).
        if !word.contains("://")
            && let Some(at) = w.find('@')
            && let Some((user, pass)) = w[..at].split_once(':')
            && !user.is_empty()
            && !pass.is_empty()
            && !w[..at].contains('/')
        {
            out.push_str(&masked(&w[..at]));
            w = &w[at..];
        }
        out.push_str(w);
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_reach_output_of_a_url() {
        let u = DisplaySafeUrl::new("https://me:s3cret@mirror.example/simple/x/");
        assert_eq!(u.to_string(), "https://me:****@mirror.example/simple/x/");
        assert_eq!(
            format!("{u:?}"),
            "\"https://me:****@mirror.example/simple/x/\""
        );
        assert_eq!(
            serde_json::to_string(&u).unwrap(),
            "\"https://me:****@mirror.example/simple/x/\""
        );
        assert_eq!(u.without_credentials(), "https://mirror.example/simple/x/");
        assert_eq!(u.expose(), "https://me:s3cret@mirror.example/simple/x/");
        let token = DisplaySafeUrl::new("https://tok3n@host.example/simple");
        assert_eq!(token.to_string(), "https://****@host.example/simple");
        assert_eq!(token.without_credentials(), "https://host.example/simple");
    }

    /// Defect: an index URL with a typo was printed whole, token included.
    #[test]
    fn credentials_are_masked_in_text_that_does_not_parse() {
        for (text, shown) in [
            (
                "http://me:tok@host:99999/simple",
                "http://me:****@host:99999/simple",
            ),
            ("http://me:tok@[::1/simple", "http://me:****@[::1/simple"),
            ("htps://me:tok@h/simple", "htps://me:****@h/simple"),
            ("https://tok@host name/x", "https://****@host name/x"),
            ("me:tok@pypi.example/simple", "me:****@pypi.example/simple"),
            ("http://me:p@ss@host/x", "http://me:****@host/x"),
            (
                "invalid CUDAENV_PYPI_INDEX=`http://a:b@h:0x/`: expected a URL",
                "invalid CUDAENV_PYPI_INDEX=`http://a:****@h:0x/`: expected a URL",
            ),
            (
                "download failed: http://u:t@h/a/ and https://v:w@g/b",
                "download failed: http://u:****@h/a/ and https://v:****@g/b",
            ),
            ("git@github.com:org/repo", "git@github.com:org/repo"),
            ("mail me@example.com", "mail me@example.com"),
            ("https://host/a@b", "https://host/a@b"),
        ] {
            assert_eq!(mask_credentials(text), shown, "{text}");
            assert!(
                !DisplaySafeUrl::new(text).to_string().contains("tok"),
                "{text}"
            );
        }
    }

    #[test]
    fn urls_without_credentials_are_kept_as_given() {
        for s in [
            "https://pypi.org/simple",
            "file:///srv/my%20mirror",
            "not a url",
        ] {
            let u = DisplaySafeUrl::new(s);
            assert_eq!(u.to_string(), s);
            assert_eq!(u.without_credentials(), s);
            assert!(!u.has_credentials());
        }
    }

    #[test]
    fn credentials_apply_to_the_same_origin_only() {
        let index = DisplaySafeUrl::new("https://me:pw@idx.example/simple");
        let same = DisplaySafeUrl::new("https://idx.example/files/a.whl");
        assert_eq!(
            same.clone().with_credentials_of(&index).expose(),
            "https://me:pw@idx.example/files/a.whl"
        );
        for other in [
            "https://files.example/a.whl",
            "http://idx.example/a.whl",
            "https://idx.example:8443/a.whl",
            "https://you:other@idx.example/a.whl",
        ] {
            let u = DisplaySafeUrl::new(other);
            assert_eq!(u.clone().with_credentials_of(&index), u, "{other}");
        }
        let plain = DisplaySafeUrl::new("https://idx.example/simple");
        assert_eq!(same.clone().with_credentials_of(&plain), same);
    }
}
