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
pub enum Part {
    Text(String),
    Setting(Setting),
}

/// What may fill a `{}` of [`phrase!`]: a [`Setting`], worded when the phrase is printed, or
/// any displayable value, written as it is.
pub trait IntoPart {
    fn into_part(self) -> Part;
}

impl IntoPart for Setting {
    fn into_part(self) -> Part {
        Part::Setting(self)
    }
}

impl<T: fmt::Display> IntoPart for T {
    fn into_part(self) -> Part {
        Part::Text(self.to_string())
    }
}

/// A message that names settings, worded when it is printed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Phrase(Vec<Part>);

impl Phrase {
    /// A phrase of `text` alone.
    pub fn text(text: impl Into<String>) -> Phrase {
        Phrase(vec![Part::Text(text.into())])
    }

    /// `template` with each `{}` replaced by the next of `parts`, in order (a `{}` without a
    /// part stays as it is); what [`phrase!`] builds.
    pub fn with(template: &str, parts: Vec<Part>) -> Phrase {
        let mut out = Vec::new();
        let mut parts = parts.into_iter();
        let mut rest = template;
        while let Some(i) = rest.find("{}") {
            match parts.next() {
                Some(p) => {
                    out.push(Part::Text(rest[..i].to_string()));
                    out.push(p);
                }
                None => out.push(Part::Text(rest[..i + 2].to_string())),
            }
            rest = &rest[i + 2..];
        }
        out.push(Part::Text(rest.to_string()));
        Phrase(out)
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

    /// This phrase followed by `more`.
    pub fn then(mut self, more: Phrase) -> Phrase {
        self.0.extend(more.0);
        self
    }

    /// The settings it names, in order.
    pub fn settings(&self) -> impl Iterator<Item = Setting> + '_ {
        self.0.iter().filter_map(|p| match p {
            Part::Setting(s) => Some(*s),
            Part::Text(_) => None,
        })
    }

    /// The options of a kind's table it names, in order.
    pub fn options(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.settings().filter_map(|s| match s {
            Setting::Option(name) => Some(name),
            _ => None,
        })
    }
}

/// A message, and what to do about it, that name settings: a library's error that tells the
/// user which setting to change says so here, and each front end words it.
pub trait Worded {
    /// What went wrong.
    fn phrase(&self) -> Phrase;
    /// What to do about it, when there is something to say.
    fn advice(&self) -> Option<Phrase> {
        None
    }
}

/// In the command line's words, as `Display` (and so `to_string`) gives it.
impl fmt::Display for Phrase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&CommandLine))
    }
}

/// A [`Phrase`] from a template whose `{}` are filled, in order, by [`Setting`]s (worded when
/// printed) and displayable values (written as they are):
/// `phrase!("{} {} is not a multiple of {}", opt("size"), size, opt("chunk_size"))`. Format
/// a value first where it needs a precision or padding.
#[macro_export]
macro_rules! phrase {
    ($template:expr $(, $part:expr)* $(,)?) => {
        $crate::setting::Phrase::with(
            $template,
            vec![$($crate::setting::IntoPart::into_part($part)),*],
        )
    };
}

/// The option `name` of a kind's table, for [`phrase!`].
pub const fn opt(name: &'static str) -> Setting {
    Setting::Option(name)
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

    #[test]
    fn values_are_written_as_they_are() {
        let p = phrase!(
            "{} {} is not a multiple of {} {}",
            opt("size"),
            1000,
            opt("chunk_size"),
            "8 KiB"
        );
        assert_eq!(
            p.to_string(),
            "--size 1000 is not a multiple of --chunk-size 8 KiB"
        );
        assert_eq!(
            p.render(&File),
            "`workload.k.size` 1000 is not a multiple of `workload.k.chunk_size` 8 KiB"
        );
        assert_eq!(p.options().collect::<Vec<_>>(), ["size", "chunk_size"]);
    }
}
