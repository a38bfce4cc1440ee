//! Malformed workloads (crates/iolab-wml/tests/malformed: unknown flowops, missing filesets,
//! bad attributes, unterminated quotes, fds out of range, …) are refused by the binary with a
//! located message and exit code 2, before anything is created.

mod common;

use std::path::Path;

use common::{run, stderr};

#[test]
fn every_malformed_file_gives_a_located_error_and_exit_2() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../iolab-wml/tests/malformed");
    let target = tempfile::tempdir().unwrap();
    let t = target.path().to_str().unwrap();
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "f") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // `# expect: LINE:COL fragment` on the first line.
        let expect = text
            .lines()
            .next()
            .unwrap()
            .trim_start_matches("# expect:")
            .trim();
        let loc = expect.split_whitespace().next().unwrap();
        let p = path.to_str().unwrap();
        // As written: no --dir, which would define $dir for files that forget to.
        let o = common::iolab()
            .args(["run", p, "--time", "1s"])
            .current_dir(t)
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{p}: {err}");
        assert!(
            err.contains(&format!("{p}:{loc}: error:")),
            "{p}: expected {loc} in {err}"
        );
        assert!(!err.contains("panicked"), "{p}: {err}");
        n += 1;
    }
    assert!(n >= 20, "only {n} malformed files");
    assert!(
        common::entries(target.path()).is_empty(),
        "nothing may be created"
    );
}

#[test]
fn bad_runs_and_flags() {
    let target = tempfile::tempdir().unwrap();
    let t = target.path().to_str().unwrap();
    // No `run` in the file and no --time.
    let f = target.path().join("norun.f");
    std::fs::write(&f, "define file name=f,path=$dir,size=4k,prealloc\ndefine process name=p { thread name=t { flowop read name=r,filesetname=f,iosize=4k } }\n").unwrap();
    let o = run(&["run", f.to_str().unwrap(), "--dir", t]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--time"), "{}", stderr(&o));
    let o = run(&["run", "no-such-workload"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("iolab workloads"));
    let o = run(&["run", "varmail", "--set", "novalue"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("VAR=VALUE"));
    let o = run(&[
        "run",
        "varmail",
        "--dir",
        "/nonexistent/iolab",
        "--time",
        "1s",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("/nonexistent/iolab"), "{}", stderr(&o));
}
