//! The workload model: what to run, independent of how the engine runs it.
//!
//! Front ends (WML files, experiment files, the command line) produce these types; the
//! engine consumes only validated plans. Parsing and validation live here so that
//! every front end reports the same errors for the same mistakes.

pub mod model;
pub mod rv;
