//! `iolab report`: an experiment's report (iolab-report's model) as self-contained HTML,
//! Markdown tables, or the model as JSON; several experiments' (the stages of one file) as
//! one document of each.

use std::io::{self, Write};
use std::path::Path;

use iolab_report::{ReportData, ReportError};
use serde::Serialize;

use super::json::{Document, Kind};
use super::Formatter;

impl Document for ReportData {
    const KIND: Kind = Kind::Report;
}

/// The reports of several experiments, in the order they were named.
#[derive(Debug)]
pub struct Reports(pub Vec<ReportData>);

/// `iolab.reports/1`: each experiment's `iolab.report/1` document, stamped as it is alone.
#[derive(Serialize)]
struct ReportsDoc<'a> {
    experiments: Vec<Stamped<'a>>,
}

#[derive(Serialize)]
struct Stamped<'a> {
    schema: &'static str,
    iolab_version: &'static str,
    #[serde(flatten)]
    report: &'a ReportData,
}

impl Document for ReportsDoc<'_> {
    const KIND: Kind = Kind::Reports;
}

impl Reports {
    /// Writes them in `format`: one experiment exactly as its report alone, several as one
    /// page, one Markdown document, or `iolab.reports/1`.
    pub fn write(&self, format: ReportFormat, out: &mut dyn Write) -> io::Result<()> {
        match &self.0[..] {
            [one] => format.formatter().write(one, out),
            many => match format {
                ReportFormat::Html => iolab_report::render_html_many(many, out).map_err(io_error),
                ReportFormat::Md => iolab_report::render_markdown_many(many, out).map_err(io_error),
                ReportFormat::Json => {
                    let doc = ReportsDoc {
                        experiments: many
                            .iter()
                            .map(|report| Stamped {
                                schema: Kind::Report.schema(),
                                iolab_version: env!("CARGO_PKG_VERSION"),
                                report,
                            })
                            .collect(),
                    };
                    super::json::Json.write(&doc, out)
                }
            },
        }
    }
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
