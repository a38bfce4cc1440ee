//! `iolab check EXPERIMENT.toml`: what can be judged before running, per configuration.

mod human;

pub use human::Human;

use iolab_store::Finding;
use serde::Serialize;

use super::json::{Document, Kind};

#[derive(Debug, Serialize)]
pub struct CheckReport {
    /// The experiment file, as given.
    pub file: String,
    pub configs: Vec<ConfigCheck>,
}

#[derive(Debug, Serialize)]
pub struct ConfigCheck {
    pub label: String,
    pub findings: Vec<Finding>,
}

impl Document for CheckReport {
    const KIND: Kind = Kind::Check;
}
