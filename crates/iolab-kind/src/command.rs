//! A command's runs as the kind makes them ([`CommandPlan`]: one configuration per run, each
//! run once, on an existing directory), and how bad input found while making them is said
//! ([`UsageError`], in the words of where the input came from, [`Origin`]).

use std::path::PathBuf;
use std::sync::Arc;

use iolab_util::setting::{CommandLine, Phrase, Setting, Words};
use serde_json::{Map, Value};

use crate::kind::{DynWorkload, Outputs, Workload};

/// What a kind's command gives the runner: one or more configurations, each run once, in
/// order, in an existing directory (`--dir`, used as it is).
#[derive(Debug)]
pub struct CommandPlan {
    /// As `iolab list` shows it: the command and its main settings.
    pub name: String,
    /// The workload file, or the command.
    pub source: String,
    /// The run directory (`--dir`).
    pub dir: PathBuf,
    pub seed: u64,
    pub configs: Vec<CommandConfig>,
    /// The factors the configurations vary, as an experiment file's `[factors]` would be
    /// stored (`[{"name": …, "levels": […]}]`); empty when there is one configuration or the
    /// report should not draw metrics against them.
    pub factors: Vec<Value>,
}

/// A command's runs and where their typed outputs go.
pub struct Runs<O> {
    pub plan: CommandPlan,
    /// Each run's output, by run number.
    pub outputs: Outputs<O>,
}

impl<O> std::fmt::Debug for Runs<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.plan.fmt(f)
    }
}

impl<O: Send + 'static> Runs<O> {
    /// One run of `workload` in `dir`, its output kept.
    pub fn one<W: Workload<Output = O>>(
        name: String,
        source: &str,
        dir: PathBuf,
        seed: u64,
        workload: W,
        workload_json: Value,
    ) -> Runs<O> {
        let outputs = Outputs::default();
        let workload = outputs.wrap(workload);
        Runs {
            plan: CommandPlan::one(name, source, dir, seed, workload, workload_json),
            outputs,
        }
    }
}

/// One configuration of a [`CommandPlan`].
#[derive(Debug)]
pub struct CommandConfig {
    /// `default` for a command's only configuration.
    pub label: String,
    /// Factor name → level.
    pub factors: Map<String, Value>,
    pub workload: Arc<dyn DynWorkload>,
    /// The `[workload]` section an experiment file would have for it.
    pub workload_json: Value,
}

impl CommandPlan {
    /// The plan of one run of `workload`.
    pub fn one(
        name: String,
        source: &str,
        dir: PathBuf,
        seed: u64,
        workload: Arc<dyn DynWorkload>,
        workload_json: Value,
    ) -> CommandPlan {
        CommandPlan {
            name,
            source: source.into(),
            dir,
            seed,
            configs: vec![CommandConfig {
                label: "default".into(),
                factors: Map::new(),
                workload,
                workload_json,
            }],
            factors: Vec::new(),
        }
    }
}

/// Where a plan came from: errors and hints name settings the way the user wrote them (a
/// flag on the command line, a key in an experiment file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    CommandLine,
    File,
}

impl Origin {
    /// How the user writes the setting `key` of workload kind `kind`: `--size` or
    /// `workload.KIND.size`.
    pub fn setting(self, kind: &str, key: &str) -> String {
        match self {
            Origin::CommandLine => format!("--{}", key.replace('_', "-")),
            Origin::File if kind.is_empty() => format!("workload.{key}"),
            Origin::File => format!("workload.{kind}.{key}"),
        }
    }

    /// How the user names the run directory: `--dir`, or the experiment's target.
    pub fn dir(self) -> &'static str {
        match self {
            Origin::CommandLine => "--dir",
            Origin::File => "sut.target",
        }
    }
}

/// Bad input found while building a plan from the command line: exit code 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct UsageError {
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
    /// The message is a located diagnostic (`FILE:LINE:COL: error: …`) that says "error:"
    /// itself.
    pub located: bool,
}

impl UsageError {
    pub fn new(message: impl Into<String>) -> UsageError {
        UsageError {
            message: message.into(),
            hint: None,
            located: false,
        }
    }

    /// Diagnostics already located in a file (`FILE:LINE:COL: error: …`).
    pub fn located(diagnostics: impl Into<String>) -> UsageError {
        UsageError {
            located: true,
            ..UsageError::new(diagnostics)
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> UsageError {
        self.hint = Some(hint.into());
        self
    }
}

/// How a kind's settings are worded where they came from: on the command line `--NAME` and
/// `--dir`; in an experiment file `` `workload.KIND.NAME` `` for an option of the kind's
/// table and `` `sut.target` `` for the run directory. An option outside the table (a
/// library's hint may name another front end's flag) keeps the command line's words.
#[derive(Debug, Clone, Copy)]
pub struct KindWords<'a> {
    pub origin: Origin,
    pub kind: &'a str,
    /// The table's options; an experiment file words only these as its keys.
    pub options: &'a [&'a str],
}

impl Words for KindWords<'_> {
    fn setting(&self, s: Setting) -> String {
        match (self.origin, s) {
            (Origin::File, Setting::Dir) => "`sut.target`".into(),
            (Origin::File, Setting::Option(name)) if self.options.contains(&name) => {
                format!("`{}`", self.origin.setting(self.kind, name))
            }
            _ => CommandLine.setting(s),
        }
    }
}

impl Origin {
    /// `phrase` in this origin's words for kind `kind` with table `options`.
    pub fn word(self, phrase: &Phrase, kind: &str, options: &[&str]) -> String {
        phrase.render(&KindWords {
            origin: self,
            kind,
            options,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_util::phrase;
    use iolab_util::setting::opt;

    #[test]
    fn settings_in_each_vocabulary() {
        assert_eq!(Origin::CommandLine.setting("micro", "size"), "--size");
        assert_eq!(Origin::File.setting("micro", "size"), "workload.micro.size");
        assert_eq!(
            Origin::CommandLine.setting("", "size_scale"),
            "--size-scale"
        );
        assert_eq!(
            Origin::File.setting("", "size_scale"),
            "workload.size_scale"
        );
        let t = phrase!(
            "the filesystem is full: use a smaller {} or another {} (--sizes, {} 4k)",
            opt("size"),
            Setting::Dir,
            opt("bs")
        );
        let options = ["size", "bs"];
        assert_eq!(
            Origin::CommandLine.word(&t, "k", &options),
            "the filesystem is full: use a smaller --size or another --dir (--sizes, --bs 4k)"
        );
        assert_eq!(
            Origin::File.word(&t, "k", &options),
            "the filesystem is full: use a smaller `workload.k.size` or another \
             `sut.target` (--sizes, `workload.k.bs` 4k)"
        );
        // Another front end's flag keeps its words.
        assert_eq!(
            Origin::File.word(&phrase!("use {}", opt("iosize")), "k", &options),
            "use --iosize"
        );
    }
}
