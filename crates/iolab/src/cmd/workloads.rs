//! `iolab workloads`: the built-in workloads, one line each.

use crate::error::CliError;
use crate::output::{self, workloads};
use iolab_wml::builtin::BUILTIN;

pub fn list() -> Result<(), CliError> {
    output::print(&workloads::Human, BUILTIN)
}
