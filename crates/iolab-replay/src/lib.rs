//! File-list replay (docs/replay.md): the list format ([`list`]), its validation against a
//! simulated namespace ([`check`]), the install/boot/workday generators ([`generate`]) and
//! the replay with real system calls ([`run`]); `iolab replay` and `iolab filelist`
//! ([`command`]), the replay's formats ([`output`]) and its part of the report ([`report`]).
//! Never prints: the commands write through the binary's [`iolab_kind::cli::Host`].

pub mod check;
pub mod command;
pub mod generate;
pub mod kind;
pub mod list;
pub mod output;
pub mod report;
pub mod run;

use std::path::Path;

pub use check::{check, Lists, PhaseKind, Program};
pub use generate::{sample, scan, GenError, Generated, Schedule};
pub use list::{parse, List, ListError, Op, Role};
pub use run::{replay, DayEnd, DayEndReport, DayResult, PhaseResult, ReplayError, ReplayResult};

/// Reads and parses the list at `path` (the error is located at the file when it cannot be
/// read, at the first bad byte when it is not UTF-8).
pub fn read_list(path: &Path, role: Role) -> Result<List, ListError> {
    let at = |line: usize, col: usize| list::Loc {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        col: u32::try_from(col).unwrap_or(u32::MAX),
    };
    let bytes = std::fs::read(path).map_err(|e| {
        ListError::new(
            path,
            at(1, 1),
            format!("cannot read the list: {e}"),
            "give the path of an existing file list (relative paths start at the experiment file's directory)",
        )
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = good.len() - good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        ListError::new(
            path,
            at(line, col),
            "the list is not UTF-8 text",
            "write other bytes of a name as %XX (e.g. %FF)",
        )
    })?;
    parse(path, &text, role)
}

/// Reads the lists at the given paths and validates them together.
pub fn load(
    install: Option<&Path>,
    boot: Option<&Path>,
    days: Option<&Path>,
) -> Result<Program, ListError> {
    let lists = Lists {
        install: install.map(|p| read_list(p, Role::Plain)).transpose()?,
        boot: boot.map(|p| read_list(p, Role::Plain)).transpose()?,
        days: days.map(|p| read_list(p, Role::Days)).transpose()?,
    };
    check(&lists)
}

/// What this place gives the rest of iolab (see [`iolab_kind::Plugin`]); its one line in the
/// registry is `&iolab_replay::PLUGIN`.
pub static PLUGIN: iolab_kind::Plugin = iolab_kind::Plugin {
    kinds: &[&kind::REPLAY],
    commands: &[&command::ReplayCommand, &command::FilelistCommand],
    files: &[],
    sections: &[&report::ReplaySection],
    schemas: &[output::SCHEMA],
};
