//! `iolab workloads`: the built-in workloads, one line each.

use std::io::{self, Write};

use iolab_kind::output::Formatter;

use crate::builtin::Builtin;

pub struct Human;

impl Formatter<[Builtin]> for Human {
    fn write(&self, list: &[Builtin], out: &mut dyn Write) -> io::Result<()> {
        let width = list.iter().map(|b| b.name.len()).max().unwrap_or(0);
        for b in list {
            writeln!(out, "{:<width$}  {}", b.name, b.summary)?;
        }
        Ok(())
    }
}
