//! Formats for `iolab sqlite`.

pub mod human;
pub mod json;
pub mod mobibench;
