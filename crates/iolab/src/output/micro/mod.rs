//! Formats for `iolab micro`.

pub mod human;
pub mod json;
pub mod mobibench;
