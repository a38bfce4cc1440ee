//! `iolab workloads`: the built-in workloads, one line each.

use crate::error::CliError;
use iolab_wml::builtin::BUILTIN;

pub fn list() -> Result<(), CliError> {
    let width = BUILTIN.iter().map(|b| b.name.len()).max().unwrap_or(0);
    for b in BUILTIN {
        println!("{:<width$}  {}", b.name, b.summary);
    }
    Ok(())
}
