//! The workload model: what to run, independent of how the engine runs it.
//!
//! Front ends (WML files, experiment files, the command line) produce these types; the
//! engine consumes only validated plans. Parsing and validation live here so that
//! every front end reports the same errors for the same mistakes.

pub mod model;
pub mod rv;

// Moved to iolab-util (the one leaf crate of utilities); re-exported here only until every
// user imports them from there.
pub use iolab_util::{option, rng, suggest, units};

pub use iolab_util::units::{
    duration_text, format_bytes, format_ns, parse_duration, parse_size, UnitError,
};
