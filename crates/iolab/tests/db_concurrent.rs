//! Several `iolab` processes started at once on a database that does not exist yet: every one
//! must store its run. The losers of the race to create the file, switch it to WAL and write
//! the schema used to fail at once with "is busy" (SQLite answers them without waiting).

mod common;

use common::Scratch;

#[test]
fn processes_creating_the_same_database_at_once_all_store_their_runs() {
    let _hang = iolab_testkit::timeout(600);
    let s = Scratch::new();
    for round in 0..40 {
        let db = s.path().join(format!("round{round}.db"));
        let children: Vec<_> = (0..8)
            .map(|_| {
                common::iolab()
                    .args([
                        "micro", "--access", "write", "--size", "1m", "--engine", "null",
                    ])
                    .arg("--dir")
                    .arg(s.path())
                    .arg("--db")
                    .arg(&db)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("iolab starts")
            })
            .collect();
        for c in children {
            let o = c.wait_with_output().unwrap();
            assert!(
                o.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
}
