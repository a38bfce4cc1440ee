//! Settings named in messages. A library that tells the user to change a setting names it as
//! a [`Setting`] inside a [`Phrase`]; the front end that prints the message words it in its
//! own vocabulary ([`Words`]): the command line writes `--bs`, an experiment file
//! `` `workload.KIND.bs` ``. No library writes a flag, and no front end rewrites another's
//! text.

use std::fmt;

/// A setting the user gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// The directory a run works in (`--dir`; an experiment's target).
    Dir,
    /// The results database (`--db`).
    Db,
    /// An option of a workload kind's table, by its name in the table (`bs`, `size`).
    Option(&'static str),
}

/// How a front end words settings.
pub trait Words {
    /// `s` as the user writes it, ready to be put in a sentence.
    fn setting(&self, s: Setting) -> String;
}

/// The command line's words: `--dir`, `--db`, `--NAME` (underscores written as dashes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommandLine;

impl Words for CommandLine {
    fn setting(&self, s: Setting) -> String {
        match s {
            Setting::Dir => "--dir".into(),
            Setting::Db => "--db".into(),
            Setting::Option(name) => format!("--{}", name.replace('_', "-")),
        }
    }
}

/// A piece of a [`Phrase`].
#[derive(Debug, Clone, PartialEq)]
enum Part {
    Text(String),
    Setting(Setting),
}

/// A message that names settings, worded when it is printed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Phrase(Vec<Part>);

impl Phrase {
    /// A phrase of `text` alone.
    pub fn text(text: impl Into<String>) -> Phrase {
        Phrase(vec![Part::Text(text.into())])
    }

    /// `template` with each `{}` replaced by the next of `settings`, in order (a `{}` without
    /// a setting stays as it is).
    pub fn with(template: &str, settings: &[Setting]) -> Phrase {
        let mut parts = Vec::new();
        let mut settings = settings.iter();
        let mut rest = template;
        while let Some(i) = rest.find("{}") {
            match settings.next() {
                Some(&s) => {
                    parts.push(Part::Text(rest[..i].to_string()));
                    parts.push(Part::Setting(s));
                }
                None => parts.push(Part::Text(rest[..i + 2].to_string())),
            }
            rest = &rest[i + 2..];
        }
        parts.push(Part::Text(rest.to_string()));
        Phrase(parts)
    }

    /// The phrase in `words`.
    pub fn render(&self, words: &dyn Words) -> String {
        self.0
            .iter()
            .map(|p| match p {
                Part::Text(t) => t.clone(),
                Part::Setting(s) => words.setting(*s),
            })
            .collect()
    }

    /// The settings it names, in order.
    pub fn settings(&self) -> impl Iterator<Item = Setting> + '_ {
        self.0.iter().filter_map(|p| match p {
            Part::Setting(s) => Some(*s),
            Part::Text(_) => None,
        })
    }
}

/// In the command line's words, as `Display` (and so `to_string`) gives it.
impl fmt::Display for Phrase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&CommandLine))
    }
}

/// A [`Phrase`] from a template and its settings: `phrase!("use a smaller {} or another {}",
/// Setting::Option("size"), Setting::Dir)`.
#[macro_export]
macro_rules! phrase {
    ($template:expr $(, $setting:expr)* $(,)?) => {
        $crate::setting::Phrase::with($template, &[$($setting),*])
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    struct File;

    impl Words for File {
        fn setting(&self, s: Setting) -> String {
            match s {
                Setting::Dir => "`sut.target`".into(),
                Setting::Db => "the database".into(),
                Setting::Option(n) => format!("`workload.k.{n}`"),
            }
        }
    }

    #[test]
    fn each_front_end_words_the_settings() {
        let p = phrase!(
            "the filesystem is full: use a smaller {} or another {}",
            Setting::Option("chunk_size"),
            Setting::Dir
        );
        assert_eq!(
            p.to_string(),
            "the filesystem is full: use a smaller --chunk-size or another --dir"
        );
        assert_eq!(
            p.render(&File),
            "the filesystem is full: use a smaller `workload.k.chunk_size` or another `sut.target`"
        );
        assert_eq!(
            p.settings().collect::<Vec<_>>(),
            [Setting::Option("chunk_size"), Setting::Dir]
        );
        assert_eq!(Phrase::text("no settings").to_string(), "no settings");
        assert_eq!(phrase!("{} and {}", Setting::Db).to_string(), "--db and {}");
    }
}
