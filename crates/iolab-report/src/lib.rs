//! Reports of iolab experiments, made from the results database alone: one experiment's, or
//! several in one document (the stages of an experiment file: [`render_html_many`],
//! [`latest_file_run`]).
//!
//! [`load`] reads everything a report needs in a few bulk queries into a [`ReportData`];
//! the renderers ([`render_html`], [`render_markdown`]) are pure functions of it that write
//! to any [`std::io::Write`] (this crate never prints).
//!
//! - **HTML**: one self-contained file — inline CSS and inline SVG charts, no scripts, no
//!   fonts or anything else fetched from the network, so it opens offline, in a mail
//!   attachment or an archive years later. Readable on a phone (one column, tables scroll
//!   sideways) and printable. Every text that came from a user file is escaped.
//! - **Markdown**: the tables, for pasting into papers and pull requests.
//! - **JSON**: the [`ReportData`] itself (it serializes; the binary stamps it
//!   `"schema": "iolab.report/1"` with its other JSON kinds).
//!
//! One file per format behind one function each (STYLE 2: hyperfine's `export/`); the
//! binary puts them behind its `Formatter` trait.

pub mod answer;
mod error;
pub mod escape;
mod html;
mod many;
mod markdown;
mod model;
mod mrc;
pub mod num;
pub mod section;
pub mod svg;
mod sweep;
pub mod testing;

pub use error::{ReportError, Result};
pub use escape::escape_html;
pub use html::render_html;
pub use many::{latest_file_run, render_html_many, render_markdown_many};
pub use markdown::render_markdown;
pub use model::{
    interval_rates, load, CheckFindings, CheckHit, ConfigReport, Evidence, FlowopRow, HostSummary,
    MetricSummary, Outlier, ReportData, RunTimeline, MAX_TIMELINE_RUNS, MIN_PARTIAL_INTERVAL,
};
pub use mrc::{ConfigCurve, MissRatioCurves};
pub use sweep::{FactorLevels, MAX_LINES};

#[cfg(test)]
mod tests;
