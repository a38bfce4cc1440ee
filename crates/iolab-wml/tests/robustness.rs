//! Bad input gives an error, never a panic: every corpus file (filebench's own workloads, from
//! `$IOLAB_FILEBENCH_CORPUS`, see iolab-testkit) truncated at many points and with single
//! characters deleted or replaced must still go through parse and validate.

use std::panic::{catch_unwind, AssertUnwindSafe};

fn survive(name: &str, text: &str) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(|| {
        if let Ok(parsed) = iolab_wml::parse_str(name, text) {
            let _ = iolab_wml::validate(&parsed);
        }
    }))
    .map_err(|_| format!("{name}: panicked on:\n{text}"))
}

#[test]
fn mutated_corpus_never_panics() {
    let Some(corpus) = iolab_testkit::filebench_corpus() else {
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap_or_else(|e| panic!("{}: {e}", corpus.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "f"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    let mut cases = 0usize;
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let chars: Vec<char> = text.chars().collect();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // Skip most of the license header: mutations there only hit comments.
        let start = text.find("\nset ").map_or(0, |i| text[..i].chars().count());
        for (i, _) in chars.iter().enumerate().skip(start).step_by(47) {
            let truncated: String = chars[..i].iter().collect();
            let deleted: String = chars[..i].iter().chain(&chars[i + 1..]).collect();
            let replaced: String = chars[..i]
                .iter()
                .chain(std::iter::once(
                    &['{', '"', '$', '=', ',', '}', '-', '('][i % 8],
                ))
                .chain(&chars[i + 1..])
                .collect();
            for t in [truncated, deleted, replaced] {
                cases += 1;
                if let Err(f) = survive(&name, &t) {
                    failures.push(f);
                }
            }
        }
    }
    assert!(cases > 1_500, "only {cases} cases");
    assert!(
        failures.is_empty(),
        "{} of {cases} mutations panicked; first:\n{}",
        failures.len(),
        failures[0]
    );
}
