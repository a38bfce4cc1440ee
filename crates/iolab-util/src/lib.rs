//! iolab-util: the small utilities every other crate uses, in one leaf crate that depends on
//! nothing of iolab's.
//!
//! - [`errno`]: system errors named by their errno (`Input/output error (os error 5, EIO)`);
//! - [`units`]: sizes and durations as people write them (`64k`, `1.5G`, `30s`), and back;
//! - [`suggest`]: "did you mean" for a mistyped name;
//! - [`rng`]: SplitMix64, the engine's seeded generator (cheap, independent streams);
//!   [`xoshiro`]: xoshiro256++, for statistics and synthetic traces (normal variates too);
//! - [`option`]: the option type every kind's one option table is made of;
//! - [`math`]: ln Γ;
//! - [`setting`]: settings named in messages, worded by the front end that prints them;
//! - [`text`]: control characters in text from strangers made visible.

pub mod errno;
pub mod math;
pub mod option;
pub mod rng;
pub mod setting;
pub mod suggest;
pub mod text;
pub mod units;
pub mod xoshiro;

pub use units::{duration_text, format_bytes, format_ns, parse_duration, parse_size, UnitError};
