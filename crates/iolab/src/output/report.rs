//! `iolab report`: an experiment's report (iolab-report's model) as self-contained HTML,
//! Markdown tables, or the model as JSON.

use std::io::{self, Write};
use std::path::Path;

use iolab_report::{ReportData, ReportError};

use super::json::{Document, Kind};
use super::Formatter;

impl Document for ReportData {
    const KIND: Kind = Kind::Report;
}

/// Output formats of `iolab report`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    Html,
    Md,
    Json,
}

impl ReportFormat {
    /// The format a file name implies: `.html`/`.htm`, `.md`/`.markdown`, `.json`.
    pub fn from_extension(path: &Path) -> Option<ReportFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "html" | "htm" => Some(ReportFormat::Html),
            "md" | "markdown" => Some(ReportFormat::Md),
            "json" => Some(ReportFormat::Json),
            _ => None,
        }
    }

    pub fn formatter(self) -> &'static dyn Formatter<ReportData> {
        match self {
            ReportFormat::Html => &Html,
            ReportFormat::Md => &Markdown,
            ReportFormat::Json => &super::json::Json,
        }
    }
}

fn io_error(e: ReportError) -> io::Error {
    match e {
        ReportError::Io(e) => e,
        other => io::Error::other(other),
    }
}

pub struct Html;

impl Formatter<ReportData> for Html {
    fn write(&self, data: &ReportData, out: &mut dyn Write) -> io::Result<()> {
        iolab_report::render_html(data, out).map_err(io_error)
    }
}

pub struct Markdown;

impl Formatter<ReportData> for Markdown {
    fn write(&self, data: &ReportData, out: &mut dyn Write) -> io::Result<()> {
        iolab_report::render_markdown(data, out).map_err(io_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_from_extension() {
        let f = |p: &str| ReportFormat::from_extension(Path::new(p));
        assert_eq!(f("r.HTML"), Some(ReportFormat::Html));
        assert_eq!(f("r.htm"), Some(ReportFormat::Html));
        assert_eq!(f("r.md"), Some(ReportFormat::Md));
        assert_eq!(f("r.json"), Some(ReportFormat::Json));
        assert_eq!(f("r"), None);
        assert_eq!(f("r.pdf"), None);
    }
}
