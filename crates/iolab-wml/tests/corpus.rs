//! Every workload filebench ships must parse and validate. The corpus is not copied into the
//! repository: it comes from `$IOLAB_FILEBENCH_CORPUS` (see iolab-testkit); without it these
//! tests do not run (and fail under CI).

use std::path::PathBuf;

/// The corpus's workload files, sorted; `None` when the corpus is not here.
fn corpus_files() -> Option<Vec<PathBuf>> {
    let dir = iolab_testkit::filebench_corpus()?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "f"))
        .collect();
    files.sort();
    Some(files)
}

#[test]
fn all_47_corpus_files_parse_and_validate() {
    let Some(files) = corpus_files() else {
        return;
    };
    assert_eq!(files.len(), 47, "expected filebench's 47 workloads");
    let mut failures = Vec::new();
    for f in &files {
        match iolab_wml::load_file(f) {
            Ok((parsed, _warnings)) => {
                if parsed.commands.is_empty() {
                    failures.push(format!("{}: no commands", f.display()));
                }
            }
            Err(errors) => failures.push(errors.to_string()),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus files failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

/// Exactly the ten files written in the 1.4 dialect (`cached`, `define randvar`, arithmetic)
/// carry a legacy warning; the master-dialect files do not, so the warning means something.
#[test]
fn legacy_files_are_flagged() {
    let Some(files) = corpus_files() else {
        return;
    };
    let mut legacy = Vec::new();
    for f in files {
        let (_, warnings) = iolab_wml::load_file(&f).unwrap();
        if warnings
            .iter()
            .any(|w| w.kind == iolab_wml::WarningKind::Legacy)
        {
            legacy.push(f.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    legacy.sort();
    assert_eq!(
        legacy,
        [
            "filemicro_rread.f",
            "filemicro_rwrite.f",
            "filemicro_rwritefsync.f",
            "filemicro_seqread.f",
            "filemicro_seqwrite.f",
            "filemicro_seqwriterand.f",
            "filemicro_seqwriterandvargam.f",
            "filemicro_seqwriterandvartab.f",
            "networkfs.f",
            "randomfileaccess.f",
        ]
    );
}
