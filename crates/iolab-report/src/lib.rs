//! Reports of one iolab experiment, made from the results database alone.
//!
//! [`load`] reads everything a report needs in a few bulk queries into a [`ReportData`];
//! the renderers ([`render_html`], [`render_markdown`], [`render_json`]) are pure functions
//! of it that write to any [`std::io::Write`] (this crate never prints).
//!
//! - **HTML**: one self-contained file — inline CSS and inline SVG charts, no scripts, no
//!   fonts or anything else fetched from the network, so it opens offline, in a mail
//!   attachment or an archive years later. Readable on a phone (one column, tables scroll
//!   sideways) and printable. Every text that came from a user file is escaped.
//! - **Markdown**: the tables, for pasting into papers and pull requests.
//! - **JSON**: the [`ReportData`] itself, versioned by `"format": "iolab.report/1"`.
//!
//! One file per format behind one function each (STYLE 2: hyperfine's `export/`).

mod error;
mod escape;
mod html;
mod markdown;
mod model;
mod num;
mod svg;

pub use error::{ReportError, Result};
pub use escape::escape_html;
pub use html::render_html;
pub use markdown::render_markdown;
pub use model::{
    interval_rates, load, ConfigReport, FindingGroup, FlowopRow, HostSummary, MetricSummary,
    Outlier, ReportData, RunTimeline, FORMAT, MAX_TIMELINE_RUNS, MIN_PARTIAL_INTERVAL,
};

/// Writes the report data as pretty JSON (with a final newline).
pub fn render_json(data: &ReportData, out: &mut dyn std::io::Write) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, data)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Markdown,
    Json,
}

impl Format {
    /// The format a file name implies: `.html`/`.htm`, `.md`/`.markdown`, `.json`.
    pub fn from_extension(path: &std::path::Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "html" | "htm" => Some(Format::Html),
            "md" | "markdown" => Some(Format::Markdown),
            "json" => Some(Format::Json),
            _ => None,
        }
    }

    /// Renders `data` in this format.
    pub fn render(self, data: &ReportData, out: &mut dyn std::io::Write) -> Result<()> {
        match self {
            Format::Html => render_html(data, out),
            Format::Markdown => render_markdown(data, out),
            Format::Json => render_json(data, out),
        }
    }
}

#[cfg(test)]
mod tests;
