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
//! parsing it, and text that does not parse as a URL is shown as it is
//! (it cannot have been sent anywhere either).

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
            return self.0.clone();
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
