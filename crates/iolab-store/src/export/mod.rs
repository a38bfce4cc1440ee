//! Exporting an experiment: one file per format behind [`ExportFormat`].

mod csv;
mod json;

use std::io::Write;

use crate::error::Result;
use crate::store::Store;
use crate::types::ExperimentId;

/// What `iolab export --format` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExportFormat {
    /// Everything about the experiment, nested: see [`JSON_FORMAT_VERSION`].
    Json,
    /// One row per run with its factors and metrics as columns, for spreadsheets and R.
    Csv,
}

/// Version of the JSON export's layout, stamped into every export as `format_version`.
/// Bump it when a field changes meaning or disappears (adding one is compatible).
pub const JSON_FORMAT_VERSION: u32 = 1;

impl ExportFormat {
    pub fn parse(s: &str) -> Option<ExportFormat> {
        match s {
            "json" => Some(ExportFormat::Json),
            "csv" => Some(ExportFormat::Csv),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ExportFormat::Json => "json",
            ExportFormat::Csv => "csv",
        }
    }
}

impl Store {
    /// Writes experiment `id` to `out` in `format`.
    pub fn export(
        &self,
        id: ExperimentId,
        format: ExportFormat,
        out: &mut dyn Write,
    ) -> Result<()> {
        match format {
            ExportFormat::Json => json::export(self, id, out),
            ExportFormat::Csv => csv::export(self, id, out),
        }
    }
}
