//! What a check says: a [`Finding`] with its [`Severity`].

use serde::Serialize;
use serde_json::Value;
use std::fmt;

/// How much a finding matters. Ordered: `Info < Warning < Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; the number still means what it says (e.g. the journal doubled the
    /// writes).
    Info,
    /// The number may not measure what it claims to (e.g. the page cache served the reads).
    Warning,
    /// The number measures something other than what was asked for (e.g. "durable" writes
    /// that never reached the device).
    Error,
}

impl Severity {
    /// `info`, `warning` or `error` — the text iolab-store keeps.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A check's verdict about a run (or, for `did-not-converge`, a configuration), like a
/// linter's diagnostic.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// The check's id, e.g. `cache-fit` (see `docs/checks.md`).
    pub id: &'static str,
    pub severity: Severity,
    /// The numbers behind the verdict, as a JSON object (bytes, ratios, thresholds).
    pub evidence: Value,
    /// What the finding means, with the numbers.
    pub explanation: String,
    /// What to do about it.
    pub fix: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severities_order_and_print_as_the_store_expects() {
        assert!(Severity::Info < Severity::Warning && Severity::Warning < Severity::Error);
        for (s, text) in [
            (Severity::Info, "info"),
            (Severity::Warning, "warning"),
            (Severity::Error, "error"),
        ] {
            assert_eq!(s.as_str(), text);
            assert_eq!(s.to_string(), text);
            assert_eq!(serde_json::to_value(s).unwrap(), Value::from(text));
        }
    }
}
