//! The registry of iolab's workload kinds: one line per kind's place, in the order messages,
//! help and reports list them. The loader, the command line and the reports iterate this
//! list and never name a kind; adding one is its own crate and a line here
//! (docs/architecture.md).

use iolab_kind::cli::Subcommand;
use iolab_kind::{Kind, Plugin};
use iolab_report::section::Section;

/// Every kind's place.
pub static PLUGINS: &[&Plugin] = &[
    &iolab_wml::PLUGIN,
    &iolab_micro::PLUGIN,
    &iolab_iozone::PLUGIN,
    &iolab_sqlite::PLUGIN,
    &iolab_bonnie::PLUGIN,
    &iolab_ior::PLUGIN,
    &iolab_replay::PLUGIN,
    &iolab_cachesim::PLUGIN,
    &iolab_exec::PLUGIN,
    &iolab_mdtest::PLUGIN,
    &iolab_io500::PLUGIN,
];

/// Every `[workload]` kind.
pub fn kinds() -> impl Iterator<Item = &'static dyn Kind> + Clone {
    PLUGINS.iter().flat_map(|p| p.kinds.iter().copied())
}

/// Every kind's command.
pub fn commands() -> impl Iterator<Item = &'static dyn Subcommand> {
    PLUGINS.iter().flat_map(|p| p.commands.iter().copied())
}

/// Every kind's runner of workload files (`iolab run FILE`).
pub fn files() -> impl Iterator<Item = &'static dyn iolab_kind::cli::FileRunner> {
    PLUGINS.iter().flat_map(|p| p.files.iter().copied())
}

/// The runner of `file`: one that knows its kind of file, else one that takes any file.
pub fn file_runner(file: &str) -> Option<&'static dyn iolab_kind::cli::FileRunner> {
    files()
        .find(|f| !f.catch_all() && f.accepts(file))
        .or_else(|| files().find(|f| f.catch_all() && f.accepts(file)))
}

/// Every kind's parts of the report, in the registry's order.
pub fn sections() -> Vec<&'static dyn Section> {
    PLUGINS
        .iter()
        .flat_map(|p| p.sections.iter().copied())
        .collect()
}

/// The JSON schemas the kinds' formats write.
pub fn schemas() -> impl Iterator<Item = &'static str> {
    PLUGINS.iter().flat_map(|p| p.schemas.iter().copied())
}
