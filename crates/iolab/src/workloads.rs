//! Workloads shipped with iolab (the files in workloads/ at the repository root), embedded in
//! the binary so that `iolab run fileserver` works from any directory.

pub struct Builtin {
    pub name: &'static str,
    pub summary: &'static str,
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

pub fn find(name: &str) -> Option<&'static Builtin> {
    BUILTIN.iter().find(|b| b.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_validates_and_lowers() {
        for b in BUILTIN {
            let p = iolab_wml::parse_str(b.name, b.text).unwrap_or_else(|e| panic!("{e}"));
            iolab_wml::validate(&p).unwrap_or_else(|e| panic!("{}: {e}", b.name));
            let opts = iolab_wml::LowerOptions {
                overrides: vec![("dir".into(), "/tmp".into())],
            };
            let w = iolab_wml::lower(&p, &opts).unwrap_or_else(|e| panic!("{}: {e}", b.name));
            assert!(!w.processes.is_empty(), "{}", b.name);
        }
    }
}
