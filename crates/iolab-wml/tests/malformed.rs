//! Each file in tests/malformed/ contains exactly one mistake. Its first line says where it
//! must be reported and what the message says; an optional second line checks the hint:
//!
//! ```text
//! # expect: LINE:COL MESSAGE FRAGMENT
//! # hint: HINT FRAGMENT
//! ```

use std::path::{Path, PathBuf};

use iolab_wml::{parse_str, validate, WmlError};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/malformed");

struct Expect {
    line: u32,
    col: u32,
    message: String,
    hint: Option<String>,
}

fn expectation(path: &Path, text: &str) -> Expect {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    let rest = first.strip_prefix("# expect: ").unwrap_or_else(|| {
        panic!(
            "{}: first line must be `# expect: LINE:COL FRAGMENT`",
            path.display()
        )
    });
    let (loc, message) = rest.split_once(' ').expect("location and fragment");
    let (line, col) = loc.split_once(':').expect("LINE:COL");
    let hint = lines
        .next()
        .and_then(|l| l.strip_prefix("# hint: "))
        .map(str::to_string);
    Expect {
        line: line.parse().expect("line number"),
        col: col.parse().expect("column number"),
        message: message.to_string(),
        hint,
    }
}

/// Parse, then validate: all errors of the first step that fails.
fn errors_of(name: &str, text: &str) -> Vec<WmlError> {
    match parse_str(name, text) {
        Err(e) => vec![e],
        Ok(parsed) => match validate(&parsed) {
            Ok(_) => Vec::new(),
            Err(errors) => errors.into_vec(),
        },
    }
}

fn check(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let want = expectation(path, &text);
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let errors = errors_of(&name, &text);
    let all = || {
        errors
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let [e] = errors.as_slice() else {
        return Err(format!(
            "{name}: expected exactly one error, got {}:\n{}",
            errors.len(),
            all()
        ));
    };
    if (e.span.line, e.span.col) != (want.line, want.col) {
        return Err(format!(
            "{name}: expected the error at {}:{}, got\n{e}",
            want.line, want.col
        ));
    }
    if !e.message.contains(&want.message) {
        return Err(format!("{name}: message lacks `{}`:\n{e}", want.message));
    }
    if let Some(h) = &want.hint {
        if !e.hint.as_deref().is_some_and(|eh| eh.contains(h.as_str())) {
            return Err(format!("{name}: hint lacks `{h}`:\n{e}"));
        }
    }
    let prefix = format!("{name}:{}:{}: error: ", want.line, want.col);
    if !e.to_string().starts_with(&prefix) {
        return Err(format!(
            "{name}: display does not start with `{prefix}`:\n{e}"
        ));
    }
    Ok(())
}

#[test]
fn every_malformed_file_reports_its_error_where_expected() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(DIR)
        .expect("tests/malformed exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "f"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 22,
        "only {} malformed files in {DIR}",
        files.len()
    );
    let failures: Vec<String> = files.iter().filter_map(|f| check(f).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} malformed files misreported:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}
