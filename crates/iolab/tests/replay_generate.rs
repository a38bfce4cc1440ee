//! `iolab filelist`: the generators are deterministic (same input and seed → byte-identical
//! files, another seed → other choices), and `workday` follows the schedule of
//! docs/replay.md — twice the creations at the start until M sets exist, all sets read while
//! fewer than r exist, the regularly used set read every day and never deleted.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{run, stderr};

fn gen(dir: &Path, name: &str, args: &[&str]) -> Vec<u8> {
    let out = dir.join(name);
    let mut a: Vec<&str> = vec!["filelist"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["-o", out.to_str().unwrap()]);
    let o = run(&a);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    std::fs::read(&out).unwrap()
}

/// A small tree: nested directories, an empty one, a name with a comma, files of a few sizes.
fn tree(root: &Path) {
    for d in ["usr/bin", "usr/lib/x", "etc", "var/empty"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for (i, f) in [
        "usr/bin/ls",
        "usr/bin/cat",
        "usr/lib/x/libx.so",
        "usr/lib/a,b",
        "etc/passwd",
        "etc/hosts",
    ]
    .iter()
    .enumerate()
    {
        std::fs::write(root.join(f), vec![7u8; 1000 * (i + 1)]).unwrap();
    }
    std::os::unix::fs::symlink("ls", root.join("usr/bin/dir")).unwrap();
}

#[test]
fn the_same_seed_gives_byte_identical_lists() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("tree");
    tree(&t);
    let t = t.to_str().unwrap();
    let a = gen(d.path(), "a.list", &["scan", t]);
    let b = gen(d.path(), "b.list", &["scan", t]);
    assert_eq!(a, b);
    let text = String::from_utf8(a).unwrap();
    let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        body,
        [
            "etc, 0, m",
            "etc/hosts, 6000, c",
            "etc/passwd, 5000, c",
            "usr, 0, m",
            "usr/bin, 0, m",
            "usr/bin/cat, 2000, c",
            "usr/bin/ls, 1000, c",
            "usr/lib, 0, m",
            "usr/lib/a%2Cb, 4000, c",
            "usr/lib/x, 0, m",
            "usr/lib/x/libx.so, 3000, c",
            "var, 0, m",
            "var/empty, 0, m",
        ]
    );
    let install = d.path().join("a.list");
    let i = install.to_str().unwrap();
    let s1 = gen(
        d.path(),
        "s1.list",
        &["sample", i, "--bytes", "9000", "--seed", "5"],
    );
    let s2 = gen(
        d.path(),
        "s2.list",
        &["sample", i, "--bytes", "9000", "--seed", "5"],
    );
    assert_eq!(s1, s2);
    let picked: Vec<(String, u64)> = String::from_utf8(s1)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split(", ").collect();
            assert_eq!(f[2], "s", "{l}");
            (f[0].to_string(), f[1].parse().unwrap())
        })
        .collect();
    let total: u64 = picked.iter().map(|p| p.1).sum();
    assert!((8000..=9000).contains(&total), "{picked:?}");
    // Some seed picks another set of files.
    let other = (6..30)
        .map(|s| {
            gen(
                d.path(),
                "s3.list",
                &["sample", i, "--bytes", "9000", "--seed", &s.to_string()],
            )
        })
        .any(|o| o != s2);
    assert!(other, "every seed picked the same files");

    let w = [
        "workday",
        "--sets",
        "5",
        "--read",
        "3",
        "--create",
        "1",
        "--delete",
        "1",
        "--days",
        "6",
        "--set-bytes",
        "200k",
    ];
    let w1 = gen(d.path(), "w1.list", &[&w[..], &["--seed", "9"]].concat());
    let w2 = gen(d.path(), "w2.list", &[&w[..], &["--seed", "9"]].concat());
    let w3 = gen(d.path(), "w3.list", &[&w[..], &["--seed", "10"]].concat());
    assert_eq!(w1, w2);
    assert_ne!(w1, w3);
}

/// Per day of a days list: the sets read, created and deleted (by their directory).
#[derive(Debug, Default)]
struct Day {
    read: BTreeSet<String>,
    created: BTreeSet<String>,
    deleted: BTreeSet<String>,
}

fn set_of(name: &str) -> String {
    name.split('/').take(2).collect::<Vec<_>>().join("/")
}

fn days(text: &str) -> Vec<Day> {
    let mut out: Vec<Day> = Vec::new();
    for l in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        if let Some(n) = l.strip_prefix("[day ") {
            assert_eq!(n.trim_end_matches(']'), (out.len() + 1).to_string());
            out.push(Day::default());
            continue;
        }
        let f: Vec<&str> = l.split(", ").collect();
        let day = out.last_mut().expect("a [day N] first");
        match f[2] {
            "s" => day.read.insert(set_of(f[0])),
            "c" => day.created.insert(set_of(f[0])),
            // A set is gone when its directory is removed.
            "x" if f[0].matches('/').count() == 1 => day.deleted.insert(f[0].to_string()),
            "x" | "d" => true,
            other => panic!("unexpected operation {other} in {l}"),
        };
    }
    out
}

#[test]
fn the_workday_schedule_on_four_sets() {
    let d = tempfile::tempdir().unwrap();
    let text = gen(
        d.path(),
        "days.list",
        &[
            "workday",
            "--sets",
            "4",
            "--read",
            "2",
            "--create",
            "1",
            "--delete",
            "1",
            "--days",
            "8",
            "--set-bytes",
            "300k",
            "--seed",
            "3",
        ],
    );
    let days = days(&String::from_utf8(text).unwrap());
    assert_eq!(days.len(), 8);
    let counts: Vec<(usize, usize, usize)> = days
        .iter()
        .map(|d| (d.read.len(), d.created.len(), d.deleted.len()))
        .collect();
    // Day 1: nothing exists, two sets are created (twice c); day 2: the two are read (fewer
    // than... exactly r exist) and two more created, reaching M = 4; then c and d each day.
    assert_eq!(
        counts,
        [
            (0, 2, 0),
            (2, 2, 0),
            (2, 1, 1),
            (2, 1, 1),
            (2, 1, 1),
            (2, 1, 1),
            (2, 1, 1),
            (2, 1, 1)
        ]
    );
    let regular = "data/set-0000".to_string();
    let mut existing: BTreeSet<String> = BTreeSet::new();
    for (i, day) in days.iter().enumerate() {
        // Reads are of sets that exist when the day starts; set 0 is read every day after
        // its creation and never deleted.
        assert!(day.read.is_subset(&existing), "day {}: {day:?}", i + 1);
        if i > 0 {
            assert!(
                day.read.contains(&regular),
                "day {} does not read set 0",
                i + 1
            );
        }
        assert!(!day.deleted.contains(&regular));
        for s in &day.deleted {
            assert!(
                existing.remove(s),
                "day {}: deletes {s}, which does not exist",
                i + 1
            );
        }
        for s in &day.created {
            assert!(
                existing.insert(s.clone()),
                "day {}: creates {s} again",
                i + 1
            );
        }
        let want = if i == 0 { 2 } else { 4 };
        assert_eq!(existing.len(), want, "sets at the end of day {}", i + 1);
    }
}

#[test]
fn a_set_has_the_asked_bytes_and_mostly_small_files() {
    let d = tempfile::tempdir().unwrap();
    let text = gen(
        d.path(),
        "days.list",
        &[
            "workday",
            "--sets",
            "1",
            "--read",
            "1",
            "--create",
            "1",
            "--delete",
            "0",
            "--days",
            "1",
            "--set-bytes",
            "20m",
        ],
    );
    let sizes: Vec<u64> = String::from_utf8(text)
        .unwrap()
        .lines()
        .filter(|l| l.ends_with(", c"))
        .map(|l| l.split(", ").nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(sizes.iter().sum::<u64>(), 20 << 20);
    let small = sizes.iter().filter(|&&s| s <= 64 << 10).count();
    assert!(
        small * 10 >= sizes.len() * 8,
        "{small} of {} files ≤ 64 KiB",
        sizes.len()
    );
}
