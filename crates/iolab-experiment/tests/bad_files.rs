//! Each `tests/bad_files/*.toml` contains one mistake, or several independent ones. Its first
//! lines say where each must be reported and what the message says, in the order reported
//! (by place in the file); an optional line after each checks its hint:
//!
//! ```text
//! # expect: [FILE:]LINE:COL MESSAGE FRAGMENT
//! # hint: HINT FRAGMENT
//! # expect: …
//! ```
//!
//! FILE (relative to tests/bad_files) is given when the error is in another file, such as
//! a workload (`.f`) the experiment names. Exactly the errors listed must be reported.

use std::path::{Path, PathBuf};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bad_files");

struct Expect {
    file: Option<String>,
    line: u32,
    column: u32,
    message: String,
    hint: Option<String>,
}

fn expectations(path: &Path, text: &str) -> Vec<Expect> {
    let mut want: Vec<Expect> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# expect: ") {
            want.push(expectation(path, rest));
        } else if let Some(h) = line.strip_prefix("# hint: ") {
            let last = want
                .last_mut()
                .unwrap_or_else(|| panic!("{}: `# hint:` before any `# expect:`", path.display()));
            last.hint = Some(h.to_string());
        } else {
            break;
        }
    }
    assert!(
        !want.is_empty(),
        "{}: first line must be `# expect: [FILE:]LINE:COL FRAGMENT`",
        path.display()
    );
    want
}

fn expectation(path: &Path, rest: &str) -> Expect {
    let (loc, message) = rest.split_once(' ').expect("location and fragment");
    let mut parts: Vec<&str> = loc.rsplitn(3, ':').collect();
    parts.reverse();
    let (file, line, column) = match parts.as_slice() {
        [f, l, c] => (Some(f.to_string()), *l, *c),
        [l, c] => (None, *l, *c),
        _ => panic!("{}: bad location {loc}", path.display()),
    };
    Expect {
        file,
        line: line.parse().expect("line number"),
        column: column.parse().expect("column number"),
        message: message.to_string(),
        hint: None,
    }
}

fn check(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let want = expectations(path, &text);
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let errors = match iolab_experiment::load(path) {
        Ok(plan) => {
            return Err(format!(
                "{name}: loaded without error ({} configurations)",
                plan.configs.len()
            ))
        }
        Err(e) => e.into_vec(),
    };
    let all = || {
        errors
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    if errors.len() != want.len() {
        return Err(format!(
            "{name}: expected exactly {} error{}, got {}:\n{}",
            want.len(),
            if want.len() == 1 { "" } else { "s" },
            errors.len(),
            all()
        ));
    }
    for (e, want) in errors.iter().zip(&want) {
        let want_file = match &want.file {
            Some(f) => Path::new(DIR).join(f),
            None => path.to_path_buf(),
        };
        let same_file =
            std::fs::canonicalize(&e.file).ok() == std::fs::canonicalize(&want_file).ok();
        if !same_file || (e.line, e.column) != (want.line, want.column) {
            return Err(format!(
                "{name}: expected an error at {}:{}:{}, got\n{e}\n(all errors:\n{})",
                want_file.display(),
                want.line,
                want.column,
                all()
            ));
        }
        if !e.message.contains(&want.message) {
            return Err(format!(
                "{name}: expected a message containing {:?}, got\n{e}",
                want.message
            ));
        }
        if let Some(h) = &want.hint {
            if !e.hint.as_deref().unwrap_or_default().contains(h.as_str()) {
                return Err(format!(
                    "{name}: expected a hint containing {h:?}, got\n{e}"
                ));
            }
        }
    }
    Ok(())
}

fn files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(DIR)
        .expect("tests/bad_files")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_bad_file_reports_its_errors_where_it_says() {
    let files = files();
    assert!(files.len() >= 18, "only {} bad files", files.len());
    let failures: Vec<String> = files.iter().filter_map(|p| check(p).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} files failed:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

#[test]
fn a_missing_experiment_file_is_an_error_without_location() {
    let e = iolab_experiment::load(Path::new("/nonexistent/iolab/e.toml")).unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!(e.first().line, 0);
    assert!(e
        .to_string()
        .starts_with("/nonexistent/iolab/e.toml: cannot read the experiment file"));
}

#[test]
fn the_harness_itself_notices_a_missing_or_extra_error() {
    let dir = std::env::temp_dir().join(format!("iolab-exp-harness-n-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let body =
        "bogus = 1\n[sut]\ntarget = { kind = \"tmpfs\", size = \"1G\" }\n[workload]\nmicro = {}\n";
    // One error reported (the unknown key on line 3), two expected.
    let two = dir.join("two.toml");
    std::fs::write(
        &two,
        format!("# expect: 3:1 unknown top-level key\n# expect: 3:1 unknown\n{body}"),
    )
    .unwrap();
    let r = check(&two);
    std::fs::remove_dir_all(&dir).unwrap();
    let msg = r.unwrap_err();
    assert!(msg.contains("expected exactly 2 errors, got 1"), "{msg}");
}

#[test]
fn the_harness_itself_notices_a_wrong_location() {
    // Guards against a checker that accepts anything.
    let dir = std::env::temp_dir().join(format!("iolab-exp-harness-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("wrong.toml");
    std::fs::write(
        &f,
        "# expect: 1:1 unknown top-level key\nbogus = 1\n[sut]\ntarget = { kind = \"tmpfs\", size = \"1G\" }\n[workload]\nmicro = {}\n",
    )
    .unwrap();
    let r = check(&f);
    std::fs::remove_dir_all(&dir).unwrap();
    let msg = r.unwrap_err();
    assert!(msg.contains("expected an error at"), "{msg}");
}
