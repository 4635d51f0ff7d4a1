//! The arguments of a declaring call (`FetchContent_Declare`, `ExternalProject_Add`,
//! `CPMAddPackage`): keyword grouping, and CPM's keyword and shorthand forms.

use super::{Arg, Command, Declaration};

/// Keywords of `FetchContent_Declare`, `ExternalProject_Add` and `CPMAddPackage`: each ends the
/// value list of the keyword before it. `LOG_*`, `USES_TERMINAL_*` and `DOWNLOAD_*` are matched
/// by prefix in [`is_keyword`].
const KEYWORDS: &[&str] = &[
    // directories
    "PREFIX",
    "TMP_DIR",
    "STAMP_DIR",
    "LOG_DIR",
    "DOWNLOAD_DIR",
    "SOURCE_DIR",
    "BINARY_DIR",
    "INSTALL_DIR",
    "SOURCE_SUBDIR",
    // download
    "URL",
    "URL_HASH",
    "URL_MD5",
    "HTTP_USERNAME",
    "HTTP_PASSWORD",
    "HTTP_HEADER",
    "NETRC",
    "NETRC_FILE",
    "TLS_VERSION",
    "TLS_VERIFY",
    "TLS_CAINFO",
    "TIMEOUT",
    "INACTIVITY_TIMEOUT",
    "GIT_REPOSITORY",
    "GIT_TAG",
    "GIT_REMOTE_NAME",
    "GIT_SUBMODULES",
    "GIT_SUBMODULES_RECURSE",
    "GIT_SHALLOW",
    "GIT_PROGRESS",
    "GIT_CONFIG",
    "GIT_REMOTE_UPDATE_STRATEGY",
    "SVN_REPOSITORY",
    "SVN_REVISION",
    "SVN_USERNAME",
    "SVN_PASSWORD",
    "SVN_TRUST_CERT",
    "HG_REPOSITORY",
    "HG_TAG",
    "CVS_REPOSITORY",
    "CVS_MODULE",
    "CVS_TAG",
    // steps
    "UPDATE_COMMAND",
    "UPDATE_DISCONNECTED",
    "PATCH_COMMAND",
    "CONFIGURE_COMMAND",
    "CONFIGURE_HANDLED_BY_BUILD",
    "CMAKE_COMMAND",
    "CMAKE_GENERATOR",
    "CMAKE_GENERATOR_PLATFORM",
    "CMAKE_GENERATOR_TOOLSET",
    "CMAKE_GENERATOR_INSTANCE",
    "CMAKE_ARGS",
    "CMAKE_CACHE_ARGS",
    "CMAKE_CACHE_DEFAULT_ARGS",
    "BUILD_COMMAND",
    "BUILD_IN_SOURCE",
    "BUILD_ALWAYS",
    "BUILD_BYPRODUCTS",
    "BUILD_JOB_SERVER_AWARE",
    "INSTALL_COMMAND",
    "INSTALL_BYPRODUCTS",
    "INSTALL_JOB_SERVER_AWARE",
    "TEST_COMMAND",
    "TEST_BEFORE_INSTALL",
    "TEST_AFTER_INSTALL",
    "TEST_EXCLUDE_FROM_MAIN",
    "DEPENDS",
    "EXCLUDE_FROM_ALL",
    "STEP_TARGETS",
    "INDEPENDENT_STEP_TARGETS",
    "LIST_SEPARATOR",
    // FetchContent
    "FIND_PACKAGE_ARGS",
    "OVERRIDE_FIND_PACKAGE",
    "SYSTEM",
    // CPM
    "NAME",
    "VERSION",
    "GITHUB_REPOSITORY",
    "GITLAB_REPOSITORY",
    "BITBUCKET_REPOSITORY",
    "OPTIONS",
    "DOWNLOAD_ONLY",
    "FIND_PACKAGE_ARGUMENTS",
    "NO_CACHE",
    "CUSTOM_CACHE_KEY",
    "PATCHES",
    "URI",
];

/// Keywords that say where the source is downloaded from; without one, `SOURCE_DIR` is a local
/// directory used instead of any pin.
pub(super) const DOWNLOADS: &[&str] = &[
    "GIT_REPOSITORY",
    "URL",
    "SVN_REPOSITORY",
    "HG_REPOSITORY",
    "CVS_REPOSITORY",
    "DOWNLOAD_COMMAND",
    "GITHUB_REPOSITORY",
    "GITLAB_REPOSITORY",
    "BITBUCKET_REPOSITORY",
];

pub(super) fn is_keyword(s: &str) -> bool {
    KEYWORDS.contains(&s)
        || s.starts_with("LOG_")
        || s.starts_with("USES_TERMINAL_")
        || s.starts_with("DOWNLOAD_")
}

/// One evaluated argument of a call.
#[derive(Debug, Clone)]
pub(super) struct Item {
    /// The argument as written.
    pub raw: String,
    /// Its value; `None` when it could not be resolved.
    pub value: Option<String>,
    pub line: u32,
}

impl Item {
    fn value(&self) -> Option<&str> {
        self.value.as_deref()
    }

    fn arg(&self) -> Arg {
        Arg {
            raw: self.raw.clone(),
            value: self.value.clone(),
            line: self.line,
        }
    }
}

/// `KEYWORD values...` groups, in order; values before the first keyword sit under `""`.
fn group(items: &[Item]) -> Vec<(&str, Vec<&Item>)> {
    let mut groups: Vec<(&str, Vec<&Item>)> = vec![("", Vec::new())];
    for item in items {
        let current = groups.last().map(|g| g.0).unwrap_or("");
        let continues_command = item.value() == Some("COMMAND") && current.ends_with("_COMMAND");
        match item.value() {
            Some(k) if is_keyword(k) && !continues_command => groups.push((k, Vec::new())),
            _ => {
                if let Some(last) = groups.last_mut() {
                    last.1.push(item);
                }
            }
        }
    }
    groups
}

/// The values of the last occurrence of `keyword`.
fn values<'a>(groups: &[(&str, Vec<&'a Item>)], keyword: &str) -> Option<Vec<&'a Item>> {
    groups
        .iter()
        .rev()
        .find(|g| g.0 == keyword)
        .map(|g| g.1.clone())
}

fn first(groups: &[(&str, Vec<&Item>)], keyword: &str) -> Option<Arg> {
    values(groups, keyword).and_then(|v| v.first().map(|i| i.arg()))
}

/// CPM's keyword and shorthand forms.
fn cpm(decl: &mut Declaration, groups: &[(&str, Vec<&Item>)], uri: Option<&Item>) {
    let short = uri.map(|item| {
        let raw = Shorthand::parse(&item.raw);
        let value = item.value().map(Shorthand::parse);
        (item, raw, value)
    });
    let part = |f: fn(&Shorthand) -> Option<String>| -> Option<Arg> {
        let (item, raw, value) = short.as_ref()?;
        Some(Arg {
            raw: f(raw)?,
            value: value.as_ref().and_then(f),
            line: item.line,
        })
    };
    // Repository: GIT_REPOSITORY, then GITHUB/GITLAB/BITBUCKET_REPOSITORY, then the shorthand.
    let hosted = [
        ("GITHUB_REPOSITORY", "https://github.com/"),
        ("GITLAB_REPOSITORY", "https://gitlab.com/"),
        ("BITBUCKET_REPOSITORY", "https://bitbucket.org/"),
    ];
    if decl.git_repository.is_none() {
        decl.git_repository = hosted.iter().find_map(|(k, host)| {
            first(groups, k).map(|a| Arg {
                value: a.value.map(|v| format!("{host}{v}")),
                ..a
            })
        });
    }
    if decl.git_repository.is_none()
        && let Some((item, raw, value)) = &short
        && let Some(repo) = raw.repo.clone().filter(|_| !raw.is_url)
    {
        decl.git_repository = Some(Arg {
            raw: repo,
            value: value.as_ref().and_then(Shorthand::repo_url),
            line: item.line,
        });
    }
    if decl.url.is_none() {
        decl.url = part(|s| s.repo.clone().filter(|_| s.is_url));
    }

    // Tag: GIT_TAG, the shorthand's `#tag`, else `v<VERSION>` as CPM does.
    if decl.git_tag.is_none() {
        decl.git_tag = part(|s| s.tag.clone());
    }
    if decl.git_tag.is_none() {
        let version = first(groups, "VERSION").or_else(|| part(|s| s.version.clone()));
        decl.git_tag = version.map(|a| Arg {
            value: a.value.map(|v| format!("v{v}")),
            ..a
        });
    }

    // Name: NAME, else the shorthand's, else the repository's last path segment.
    decl.name = first(groups, "NAME")
        .map(|a| a.value.unwrap_or(a.raw))
        .or_else(|| {
            let (_, raw, value) = short.as_ref()?;
            value.as_ref().unwrap_or(raw).name.clone()
        })
        .or_else(|| {
            let repo = decl.git_repository.as_ref()?;
            let text = repo.value.as_deref().unwrap_or(&repo.raw);
            Some(basename(text).to_string())
        })
        .unwrap_or_default();
}

fn basename(url: &str) -> &str {
    let last = url.trim_end_matches('/').rsplit('/').next().unwrap_or(url);
    last.strip_suffix(".git").unwrap_or(last)
}

/// CPM's single-string form: `gh:owner/repo@version#tag`, `gl:`, `bb:`, `https://host/x.git@v`,
/// or `name@version#tag`.
#[derive(Debug, Default)]
struct Shorthand {
    host: Option<&'static str>,
    repo: Option<String>,
    is_url: bool,
    version: Option<String>,
    tag: Option<String>,
    name: Option<String>,
}

impl Shorthand {
    fn parse(s: &str) -> Shorthand {
        let (body, tag) = match s.rsplit_once('#') {
            Some((b, t)) => (b, Some(t.to_string())),
            None => (s, None),
        };
        let mut out = Shorthand {
            tag,
            ..Shorthand::default()
        };
        let host = [
            ("gh:", "https://github.com/"),
            ("gl:", "https://gitlab.com/"),
            ("bb:", "https://bitbucket.org/"),
        ]
        .into_iter()
        .find(|(p, _)| body.starts_with(p));
        // `@version` only after the last `/`, so `user@host` in a URL is not a version.
        let split_version = |b: &str| -> (String, Option<String>) {
            let slash = b.rfind('/').map_or(0, |i| i + 1);
            match b.get(slash..).and_then(|t| t.rfind('@')) {
                Some(at) => (
                    b.get(..slash + at).unwrap_or(b).to_string(),
                    b.get(slash + at + 1..).map(str::to_string),
                ),
                None => (b.to_string(), None),
            }
        };
        if let Some((prefix, url)) = host {
            let (repo, version) = split_version(body.get(prefix.len()..).unwrap_or(""));
            out.host = Some(url);
            out.name = Some(basename(&repo).to_string());
            out.repo = Some(repo);
            out.version = version;
        } else if body.contains("://") {
            let (repo, version) = split_version(body);
            out.is_url = !repo.ends_with(".git");
            out.name = Some(basename(&repo).to_string());
            out.repo = Some(repo);
            out.version = version;
        } else {
            let (name, version) = split_version(body);
            out.name = Some(name);
            out.version = version;
        }
        out
    }

    fn repo_url(&self) -> Option<String> {
        let repo = self.repo.as_ref()?;
        Some(match self.host {
            Some(host) => format!("{host}{repo}"),
            None => repo.clone(),
        })
    }
}

/// `KEYWORD values...` groups of evaluated arguments, in order; values before the first
/// keyword sit under `""`.
pub(super) fn group_args(args: &[super::value::Arg]) -> Vec<(&str, Vec<&super::value::Arg>)> {
    let mut groups: Vec<(&str, Vec<&super::value::Arg>)> = vec![("", Vec::new())];
    for a in args {
        let current = groups.last().map(|g| g.0).unwrap_or("");
        let continues_command = a.text == "COMMAND" && current.ends_with("_COMMAND");
        if is_keyword(&a.text) && !continues_command {
            groups.push((a.text.as_str(), Vec::new()));
        } else if let Some(last) = groups.last_mut() {
            last.1.push(a);
        }
    }
    groups
}

/// What `CPMAddPackage` with these evaluated arguments fetches: name, repository, tag, URL.
pub(super) fn cpm_of(args: &[super::value::Arg]) -> Declaration {
    let items: Vec<Item> = args
        .iter()
        .map(|a| Item {
            raw: a.text.clone(),
            value: Some(a.text.clone()),
            line: a.line,
        })
        .collect();
    let (name_item, rest) = match items.split_first() {
        Some((f, rest)) if !is_keyword(&f.raw) => (Some(f), rest),
        _ => (None, items.as_slice()),
    };
    let groups = group(rest);
    let mut decl = Declaration {
        command: Command::CpmAddPackage,
        name: String::new(),
        file: String::new(),
        line: 0,
        git_repository: first(&groups, "GIT_REPOSITORY"),
        git_tag: first(&groups, "GIT_TAG"),
        url: first(&groups, "URL"),
        source_dir: first(&groups, "SOURCE_DIR"),
        patches: Vec::new(),
        overrides: Vec::new(),
    };
    let uri = name_item.or_else(|| values(&groups, "URI").and_then(|v| v.first().copied()));
    cpm(&mut decl, &groups, uri);
    decl
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(texts: &[&str]) -> Vec<super::super::value::Arg> {
        texts
            .iter()
            .map(|t| super::super::value::Arg {
                text: t.to_string(),
                taint: Default::default(),
                quoted: false,
                line: 1,
                alts: crate::pin::cmake::value::Alts::new(),
            })
            .collect()
    }

    #[test]
    fn prefixed_keywords_end_the_values_before_them() {
        let a = args(&[
            "GIT_TAG",
            "t",
            "LOG_DOWNLOAD",
            "ON",
            "USES_TERMINAL_BUILD",
            "ON",
            "DOWNLOAD_NO_PROGRESS",
            "1",
            "PATCH_COMMAND",
            "git",
            "COMMAND",
            "sh",
            "BUILD_COMMAND",
            "make",
        ]);
        let groups: Vec<(&str, Vec<&str>)> = group_args(&a)
            .into_iter()
            .map(|(k, v)| (k, v.iter().map(|a| a.text.as_str()).collect()))
            .collect();
        assert_eq!(
            groups,
            vec![
                ("", vec![]),
                ("GIT_TAG", vec!["t"]),
                ("LOG_DOWNLOAD", vec!["ON"]),
                ("USES_TERMINAL_BUILD", vec!["ON"]),
                ("DOWNLOAD_NO_PROGRESS", vec!["1"]),
                ("PATCH_COMMAND", vec!["git", "COMMAND", "sh"]),
                ("BUILD_COMMAND", vec!["make"]),
            ]
        );
        assert!(!is_keyword("LOGS"));
        assert!(!is_keyword("git"));
    }

    #[test]
    fn a_cpm_shorthand_url_is_a_url_unless_it_names_a_git_repository() {
        let archive = cpm_of(&args(&["https://example.invalid/x.tar.gz@1.0"]));
        assert_eq!(
            archive.url.and_then(|a| a.value).as_deref(),
            Some("https://example.invalid/x.tar.gz")
        );
        assert!(archive.git_repository.is_none());
        let git = cpm_of(&args(&["https://example.invalid/y.git@2.1#t9"]));
        assert_eq!(
            git.git_repository.and_then(|a| a.value).as_deref(),
            Some("https://example.invalid/y.git")
        );
        assert!(git.url.is_none());
        assert_eq!(git.git_tag.and_then(|a| a.value).as_deref(), Some("t9"));
        assert_eq!(git.name, "y");
    }

    #[test]
    fn cpm_shorthands_name_host_repository_version_and_tag() {
        let value = |a: Option<Arg>| a.and_then(|a| a.value);
        let d = cpm_of(&args(&["gh:owner/proj@1.2.3"]));
        assert_eq!(
            value(d.git_repository).as_deref(),
            Some("https://github.com/owner/proj")
        );
        assert_eq!(value(d.git_tag).as_deref(), Some("v1.2.3"));
        assert_eq!(d.name, "proj");
        let d = cpm_of(&args(&["gl:group/pkg#abc123"]));
        assert_eq!(
            value(d.git_repository).as_deref(),
            Some("https://gitlab.com/group/pkg")
        );
        assert_eq!(value(d.git_tag).as_deref(), Some("abc123"));
        let d = cpm_of(&args(&["bb:team/lib@2.0#t2"]));
        assert_eq!(
            value(d.git_repository).as_deref(),
            Some("https://bitbucket.org/team/lib")
        );
        assert_eq!(value(d.git_tag).as_deref(), Some("t2"));
        // A bare name and version: no repository, the tag from the version.
        let d = cpm_of(&args(&["fmt@10.2.1"]));
        assert_eq!(d.name, "fmt");
        assert!(d.git_repository.is_none());
        assert_eq!(value(d.git_tag).as_deref(), Some("v10.2.1"));
        // `user@` in a URL's host is not a version.
        let d = cpm_of(&args(&["https://user@example.invalid/z.git"]));
        assert_eq!(
            value(d.git_repository).as_deref(),
            Some("https://user@example.invalid/z.git")
        );
        assert!(d.git_tag.is_none());
        assert_eq!(d.name, "z");
        // The keyword form's URI takes the same shorthand.
        let d = cpm_of(&args(&["URI", "gh:o/r@0.1", "NAME", "named"]));
        assert_eq!(d.name, "named");
        assert_eq!(value(d.git_tag).as_deref(), Some("v0.1"));
    }

    #[test]
    fn a_cpm_keyword_after_a_command_still_starts_its_group() {
        let d = cpm_of(&args(&[
            "NAME",
            "x",
            "GIT_REPOSITORY",
            "https://example.invalid/x.git",
            "PATCH_COMMAND",
            "git",
            "apply",
            "COMMAND",
            "true",
            "GIT_TAG",
            "t1",
            "VERSION",
            "2.0",
        ]));
        assert_eq!(d.name, "x");
        assert_eq!(d.git_tag.and_then(|a| a.value).as_deref(), Some("t1"));
        assert_eq!(
            d.git_repository.and_then(|a| a.value).as_deref(),
            Some("https://example.invalid/x.git")
        );
    }
}
