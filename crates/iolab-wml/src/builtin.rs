//! Workloads shipped with iolab (the files in workloads/ at the repository root), embedded so
//! that `iolab run fileserver` and experiment files naming a built-in work from any directory.

/// One shipped workload.
pub struct Builtin {
    /// Its name, without `.f`.
    pub name: &'static str,
    /// One line for `iolab workloads`.
    pub summary: &'static str,
    /// The WML text.
    pub text: &'static str,
}

macro_rules! builtin {
    ($name:literal, $summary:literal) => {
        Builtin {
            name: $name,
            summary: $summary,
            text: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../workloads/",
                $name,
                ".f"
            )),
        }
    };
}

/// All of them, in the order `iolab workloads` lists them.
pub const BUILTIN: &[Builtin] = &[
    builtin!(
        "fileserver",
        "file server: create, write, append, read whole files, delete, stat (50 threads)"
    ),
    builtin!(
        "varmail",
        "mail server: create/append/fsync and read mail files, delete (16 threads)"
    ),
    builtin!(
        "webserver",
        "web server: read whole files, append to a shared log (100 threads)"
    ),
    builtin!(
        "webproxy",
        "web proxy cache: delete, create and write, then read five files (100 threads)"
    ),
    builtin!(
        "oltp",
        "database: random 2 KiB reads and writes on data files, log writes, aio (211 threads)"
    ),
    builtin!(
        "videoserver",
        "video server: stream whole videos out while one writer adds new ones"
    ),
    builtin!(
        "webserver-seed000",
        "seed report 000's web server: 2400 gamma-sized files (mean 2170552 B), 100 readers"
    ),
    builtin!(
        "oltp-seed000",
        "seed report 000's OLTP: oltp with smaller data files"
    ),
    builtin!(
        "videoserver-seed000",
        "seed report 000's video server: fewer, smaller videos"
    ),
];

/// The built-in workload called `name` (with or without `.f`).
pub fn find(name: &str) -> Option<&'static Builtin> {
    let name = name.strip_suffix(".f").unwrap_or(name);
    BUILTIN.iter().find(|b| b.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_validates_and_lowers() {
        for b in BUILTIN {
            let p = crate::parse_str(b.name, b.text).unwrap_or_else(|e| panic!("{e}"));
            crate::validate(&p).unwrap_or_else(|e| panic!("{}: {e}", b.name));
            let opts = crate::LowerOptions {
                overrides: vec![("dir".into(), "/tmp".into())],
            };
            let w = crate::lower(&p, &opts).unwrap_or_else(|e| panic!("{}: {e}", b.name));
            assert!(!w.processes.is_empty(), "{}", b.name);
            crate::check(&p, &w).unwrap_or_else(|e| panic!("{}: {e}", b.name));
        }
    }
}
