//! Errors located in an experiment file (or, for a workload file it names, in that file).

use std::path::{Path, PathBuf};

use crate::input::tree::Span;

/// One mistake in an experiment, with where it is and what to do about it.
///
/// `Display` gives `FILE:LINE:COL: MESSAGE` (the shape compilers use, so editors can jump to
/// it) and, when there is one, an indented `hint:` line. An error without a place in the file
/// (the file could not be read) has line 0 and prints as `FILE: MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct ExperimentError {
    /// The experiment file, or the workload (`.f`) file the error is in.
    pub file: PathBuf,
    /// 1-based line; 0 when the error has no location.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl ExperimentError {
    pub fn new(file: &Path, line: u32, column: u32, message: impl Into<String>) -> Self {
        ExperimentError {
            file: file.to_path_buf(),
            line,
            column,
            message: message.into(),
            hint: None,
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn hint_opt(mut self, hint: Option<String>) -> Self {
        if hint.is_some() {
            self.hint = hint;
        }
        self
    }

    fn render(&self) -> String {
        let mut s = if self.line == 0 {
            format!("{}: {}", self.file.display(), self.message)
        } else {
            format!(
                "{}:{}:{}: {}",
                self.file.display(),
                self.line,
                self.column,
                self.message
            )
        };
        if let Some(h) = &self.hint {
            s.push_str("\n  hint: ");
            s.push_str(h);
        }
        s
    }
}

/// Every error found in an experiment (never empty), experiment-file errors first, each
/// group in file order: a user fixes a file in one round trip.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct ExperimentErrors(Vec<ExperimentError>);

impl ExperimentErrors {
    /// `None` when there is nothing to report.
    pub fn from_vec(mut errors: Vec<ExperimentError>, source: &Path) -> Option<Self> {
        errors.sort_by(|a, b| {
            (a.file != source, &a.file, a.line, a.column).cmp(&(
                b.file != source,
                &b.file,
                b.line,
                b.column,
            ))
        });
        errors.dedup();
        (!errors.is_empty()).then_some(ExperimentErrors(errors))
    }

    /// The first error.
    pub fn first(&self) -> &ExperimentError {
        &self.0[0]
    }

    pub fn iter(&self) -> std::slice::Iter<'_, ExperimentError> {
        self.0.iter()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always false; present because clippy expects it next to `len`.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn into_vec(self) -> Vec<ExperimentError> {
        self.0
    }

    fn render(&self) -> String {
        let lines: Vec<String> = self.0.iter().map(|e| e.to_string()).collect();
        lines.join("\n")
    }
}

impl<'a> IntoIterator for &'a ExperimentErrors {
    type Item = &'a ExperimentError;
    type IntoIter = std::slice::Iter<'a, ExperimentError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// A list of one error.
pub fn one(e: ExperimentError) -> ExperimentErrors {
    ExperimentErrors(vec![e])
}

/// The experiment file's text, for turning byte offsets into line:column.
#[derive(Debug)]
pub struct Source {
    pub path: PathBuf,
    pub text: String,
    line_starts: Vec<usize>,
}

impl Source {
    pub fn new(path: &Path, text: &str) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Source {
            path: path.to_path_buf(),
            text: text.to_string(),
            line_starts,
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (u32, u32) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let col = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (line as u32 + 1, col as u32 + 1)
    }

    /// An error at the start of `span`.
    pub fn error(&self, span: &Span, message: impl Into<String>) -> ExperimentError {
        let (line, col) = self.line_col(span.start);
        ExperimentError::new(&self.path, line, col, message)
    }
}

/// Errors collected while reading, in the order found.
#[derive(Debug, Default)]
pub struct Diag {
    pub errors: Vec<ExperimentError>,
}

impl Diag {
    pub fn push(&mut self, e: ExperimentError) {
        self.errors.push(e);
    }

    pub fn len(&self) -> usize {
        self.errors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_with_and_without_location() {
        let e = ExperimentError::new(Path::new("e.toml"), 3, 7, "bad").hint("fix it");
        assert_eq!(e.to_string(), "e.toml:3:7: bad\n  hint: fix it");
        let e = ExperimentError::new(Path::new("e.toml"), 0, 0, "cannot read");
        assert_eq!(e.to_string(), "e.toml: cannot read");
    }

    #[test]
    fn line_col_counts_characters() {
        let s = Source::new(Path::new("x"), "a = 1\nb = \"é\" x\n");
        assert_eq!(s.line_col(0), (1, 1));
        assert_eq!(s.line_col(4), (1, 5));
        assert_eq!(s.line_col(6), (2, 1));
        // After the two-byte `é` and the closing quote.
        assert_eq!(s.line_col(6 + 9), (2, 9));
    }

    #[test]
    fn errors_sort_experiment_file_first() {
        let src = Path::new("e.toml");
        let errs = ExperimentErrors::from_vec(
            vec![
                ExperimentError::new(Path::new("w.f"), 1, 1, "w"),
                ExperimentError::new(src, 9, 1, "late"),
                ExperimentError::new(src, 2, 4, "early"),
            ],
            src,
        )
        .unwrap();
        let order: Vec<&str> = errs.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(order, ["early", "late", "w"]);
        assert_eq!(errs.to_string().lines().count(), 3);
    }
}
