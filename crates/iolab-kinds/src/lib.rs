//! The registry of workload kinds: every kind iolab knows, one line each, in the order
//! messages list them. The loader, the runner, the command line and the reports iterate
//! this list and never name a kind; adding a kind is its own crate and a line here
//! (docs/architecture.md).

use iolab_kind::Kind;

/// Every kind.
pub static KINDS: &[&dyn Kind] = &[
    &iolab_wml::kind::WML,
    &iolab_wml::kind::BUILTIN,
    &iolab_micro::kind::MICRO,
    &iolab_iozone::kind::IOZONE,
    &iolab_sqlite::kind::SQLITE,
    &iolab_bonnie::kind::BONNIE,
    &iolab_replay::kind::REPLAY,
    &iolab_cachesim::kind::CACHESIM,
];
