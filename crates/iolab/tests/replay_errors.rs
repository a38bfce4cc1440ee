//! Bad input to `iolab replay`, `[workload] replay = { … }` and `iolab filelist` gets a
//! located message (FILE:LINE:COL of the list line, or the TOML key, or the flag), exit code
//! 2, no panic, and nothing left behind.

mod common;

use common::{assert_clean_failure, entries, run, stderr, Scratch};

/// Each bad list, and the line:column its error is at and a piece of its message.
const BAD: &[(&str, &str, &str)] = &[
    ("a, 12k, c\n", ":1:4:", "`12k` is not a size"),
    ("a, 1, c\na, 1, q\n", ":2:7:", "unknown operation `q`"),
    ("a, 1, c\nb, 1, s\n", ":2:1:", "`b` was never created"),
    (
        "a, 1, c\na, 1, d\na, 1, d\n",
        ":3:1:",
        "`a` is deleted twice (first at",
    ),
    ("a, 1, c\na, 1, c\n", ":2:1:", "`a` exists already"),
    (
        "a, 5, c\na, 6, s\n",
        ":2:4:",
        "`a` has 5 bytes here, the list says 6",
    ),
    ("x/../../a, 1, c\n", ":1:1:", "leaves the directory"),
    ("/etc/a, 1, c\n", ":1:1:", "is absolute"),
    ("a, 1\n", ":1:1:", "2 fields"),
];

#[test]
fn bad_lists_are_located_and_nothing_runs() {
    let s = Scratch::new();
    let dir = s.path().join("run");
    std::fs::create_dir(&dir).unwrap();
    for (text, at, msg) in BAD {
        let list = s.write("bad.list", &format!("ok/file, 10, c\n{text}"));
        let o = run(&[
            "replay",
            "--dir",
            dir.to_str().unwrap(),
            "--install",
            list.to_str().unwrap(),
            "--no-db",
        ]);
        // The lines moved down by one.
        let (line, col) = at.trim_matches(':').split_once(':').unwrap();
        let at = format!("bad.list:{}:{col}:", line.parse::<u32>().unwrap() + 1);
        assert_clean_failure(&o, 2, msg);
        assert!(
            stderr(&o).contains(&at),
            "{text:?}: expected {at} in {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains("hint:"), "{}", stderr(&o));
        assert!(
            entries(&dir).is_empty(),
            "{text:?} left {:?}",
            entries(&dir)
        );
    }
    // Across lists: the boot list reads what a day deleted, on day 2.
    let install = s.write("i.list", "a, 3, c\n");
    let boot = s.write("b.list", "a, 3, s\n");
    let days = s.write("d.list", "[day 1]\na, 3, d\n[day 2]\n");
    let o = run(&[
        "replay",
        "--dir",
        dir.to_str().unwrap(),
        "--install",
        install.to_str().unwrap(),
        "--boot",
        boot.to_str().unwrap(),
        "--days",
        days.to_str().unwrap(),
        "--no-db",
    ]);
    assert_clean_failure(&o, 2, "b.list:1:1: error: `a` was deleted at");
    assert!(stderr(&o).contains("d.list:2 (on day 2)"), "{}", stderr(&o));
    let days = s.write("d.list", "[day 2]\n");
    let o = run(&[
        "replay",
        "--dir",
        dir.to_str().unwrap(),
        "--days",
        days.to_str().unwrap(),
        "--no-db",
    ]);
    assert_clean_failure(&o, 2, "d.list:1:1: error: day 2 follows day 0");
    assert!(entries(&dir).is_empty());
}

#[test]
fn names_that_exist_already_are_refused_and_kept() {
    let s = Scratch::new();
    let dir = s.path().join("run");
    std::fs::create_dir_all(dir.join("usr")).unwrap();
    std::fs::write(dir.join("usr/mine"), "keep").unwrap();
    let list = s.write("i.list", "etc/a, 10, c\nusr/mine, 4, c\n");
    let o = run(&[
        "replay",
        "--dir",
        dir.to_str().unwrap(),
        "--install",
        list.to_str().unwrap(),
        "--no-db",
    ]);
    assert_clean_failure(&o, 2, "usr exists already: the replay makes it");
    assert_eq!(
        std::fs::read_to_string(dir.join("usr/mine")).unwrap(),
        "keep"
    );
    assert_eq!(entries(&dir), ["usr"]);
}

#[test]
fn bad_flags_are_refused() {
    let s = Scratch::new();
    let dir = s.path().join("run");
    std::fs::create_dir(&dir).unwrap();
    let d = dir.to_str().unwrap();
    let list = s.write("ok.list", "a, 1, c\n");
    let l = list.to_str().unwrap();
    assert_clean_failure(
        &run(&["replay", "--dir", d, "--no-db"]),
        2,
        "no list to replay",
    );
    assert_clean_failure(
        &run(&[
            "replay",
            "--dir",
            d,
            "--install",
            l,
            "--between-days",
            "remount",
            "--no-db",
        ]),
        2,
        "--between-days remount",
    );
    assert_clean_failure(
        &run(&[
            "replay",
            "--dir",
            d,
            "--install",
            l,
            "--between-days",
            "sometimes",
        ]),
        2,
        "--between-days",
    );
    let missing = s.path().join("missing.list");
    assert_clean_failure(
        &run(&[
            "replay",
            "--dir",
            d,
            "--install",
            missing.to_str().unwrap(),
            "--no-db",
        ]),
        2,
        "cannot read the list",
    );
    assert!(entries(&dir).is_empty());

    let out = s.path().join("out.list");
    let o = out.to_str().unwrap();
    let wd = |read: &str, delete: &str, set_bytes: &str| {
        run(&[
            "filelist",
            "workday",
            "--sets",
            "4",
            "--read",
            read,
            "--create",
            "1",
            "--delete",
            delete,
            "--days",
            "3",
            "--set-bytes",
            set_bytes,
            "-o",
            o,
        ])
    };
    assert!(wd("2", "1", "1m").status.success());
    std::fs::remove_file(&out).unwrap();
    assert_clean_failure(&wd("5", "1", "1m"), 2, "--read 5 is more than --sets 4");
    assert_clean_failure(&wd("2", "2", "1m"), 2, "--delete 2 is more than --create 1");
    assert_clean_failure(&wd("2", "1", "lots"), 2, "--set-bytes");
    assert!(!out.exists(), "a refused generator wrote {o}");
    assert_clean_failure(
        &run(&["filelist", "sample", l, "--bytes", "1m", "-o", o]),
        2,
        "--bytes 1048576 is more than the 1 bytes",
    );
    let bad = s.write("bad.list", "a, 1, c\na, 1, c\n");
    assert_clean_failure(
        &run(&[
            "filelist",
            "sample",
            bad.to_str().unwrap(),
            "--bytes",
            "1",
            "-o",
            o,
        ]),
        2,
        "bad.list:2:1: error: `a` exists already",
    );
    assert_clean_failure(
        &run(&[
            "filelist",
            "scan",
            s.path().join("nowhere").to_str().unwrap(),
        ]),
        2,
        "nowhere",
    );
    assert!(!out.exists());
}

#[test]
fn experiment_files_get_located_errors() {
    let s = Scratch::new();
    let target = s.path().join("target");
    std::fs::create_dir(&target).unwrap();
    s.write("good.list", "a, 10, c\n");
    s.write("bad.list", "a, 10, c\nb, 10, s\n");
    for (line, needle, at) in [
        (
            r#"replay = { install = "bad.list", between_days = "none" }"#,
            "`b` was never created",
            "bad.list:2:1:",
        ),
        (
            r#"replay = { install = "good.list" }"#,
            "`workload.replay.between_days` = \"remount\" needs a filesystem iolab mounts",
            "replay.toml:5:",
        ),
        (
            r#"replay = { install = "good.list", between_days = "weekly" }"#,
            "workload.replay.between_days",
            "replay.toml:5:",
        ),
        (
            r#"replay = { install = "missing.list", between_days = "none" }"#,
            "cannot read the list",
            "missing.list:1:1:",
        ),
        (
            r#"replay = { between_days = "none" }"#,
            "`workload.replay` names no list",
            "replay.toml:5:",
        ),
        (
            r#"replay = { install = "good.list", colour = "red" }"#,
            "colour",
            "replay.toml:5:",
        ),
    ] {
        let file = s.write(
            "replay.toml",
            &format!(
                "name = \"bad\"\n[sut]\ntarget = {{ kind = \"directory\", path = \"{}\" }}\n\
                 [workload]\n{line}\n[procedure]\ndrop_caches = false\n",
                target.display()
            ),
        );
        let o = s.run(&["run", file.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{line}: {err}");
        assert!(err.contains(needle), "{line}: expected `{needle}` in {err}");
        assert!(err.contains(at), "{line}: expected {at} in {err}");
        assert!(entries(&target).is_empty());
    }
}
