//! Real runs of real SQLite in a temporary directory: what each mode does, as iolab's own
//! system-call counts and the databases' contents show it.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use iolab_sqlite::{
    run_sqlite, Journal, Mode, SqliteError, SqlitePlan, SqliteResult, SqliteSpec, Synchronous,
};

fn plan(dir: &Path, f: impl FnOnce(&mut SqliteSpec)) -> SqlitePlan {
    let mut s = SqliteSpec::with_defaults(dir.to_path_buf(), 7);
    s.transactions = 10;
    f(&mut s);
    s.validate().unwrap()
}

fn run(p: &SqlitePlan) -> SqliteResult {
    let _hang = iolab_testkit::timeout(600);
    run_sqlite(p, &mut (), &AtomicBool::new(false)).unwrap()
}

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn rollback_journals_sync_the_journal_its_directory_and_the_database() {
    for (journal, fsync, unlink, ftruncate) in [
        (Journal::Delete, 4, 1, 0),
        (Journal::Truncate, 5, 0, 1),
        (Journal::Persist, 5, 0, 0),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let p = plan(dir.path(), |s| s.journal = journal);
        let r = run(&p);
        let c = r.calls;
        assert_eq!(r.transactions, 10);
        assert!(!r.time_limited);
        assert_eq!(c.fsync, 10 * fsync, "{journal}: {c:?}");
        assert_eq!(c.unlink, 10 * unlink, "{journal}: {c:?}");
        assert_eq!(c.ftruncate, 10 * ftruncate, "{journal}: {c:?}");
        // The journal is opened (with O_CREAT) by every transaction, and its directory synced
        // each time, even where the file is kept (TRUNCATE empties it, PERSIST zeroes its
        // header and syncs it once more).
        assert_eq!(c.dir_fsync, 10, "{journal}: {c:?}");
        assert_eq!(r.checkpoint_ns, 0);
        assert_eq!(r.latency.count(), 10);
        assert!(
            leftovers(dir.path()).is_empty(),
            "{:?}",
            leftovers(dir.path())
        );
    }
}

#[test]
fn a_time_limit_ends_every_thread_early_and_still_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    // A million transactions with a 20 ms pause after each would take hours: the limit ends
    // them after a few, in both threads.
    let p = plan(dir.path(), |s| {
        s.journal = Journal::Wal;
        s.threads = 2;
        s.transactions = 1_000_000;
        s.sleep = Some(std::time::Duration::from_millis(20));
        s.time_limit = Some(std::time::Duration::from_millis(100));
    });
    let r = run(&p);
    assert!(r.time_limited);
    assert!(r.transactions < 1_000_000, "{}", r.transactions);
    assert_eq!(r.threads.len(), 2);
    for t in &r.threads {
        assert!(t.transactions >= 1, "{:?}", r.threads);
        // The thread's region still ends with its checkpoint (the WAL's and the database's
        // syncs).
        assert!(t.checkpoint_ns > 0, "{:?}", r.threads);
    }
    assert_eq!(r.latency.count(), r.transactions);
    assert_eq!(r.calls.fsync, r.transactions + 2 * 2, "{:?}", r.calls);
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn wal_syncs_once_per_transaction_and_checkpoints_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let p = plan(dir.path(), |s| s.journal = Journal::Wal);
    let r = run(&p);
    // One fsync of the WAL per commit; the checkpoint syncs the WAL and the database.
    assert_eq!(r.calls.fsync, 10 + 2, "{:?}", r.calls);
    assert_eq!(r.calls.unlink, 0);
    assert!(r.checkpoint_ns > 0);
    assert_eq!(r.settings.journal_mode, "wal");
    // synchronous=normal: no sync per commit, only the checkpoint's.
    let p = plan(dir.path(), |s| {
        s.journal = Journal::Wal;
        s.synchronous = Synchronous::Normal;
    });
    assert_eq!(run(&p).calls.fsync, 2);
    // off: none at all.
    let p = plan(dir.path(), |s| {
        s.journal = Journal::Wal;
        s.synchronous = Synchronous::Off;
    });
    assert_eq!(run(&p).calls.fsync, 0);
}

#[test]
fn settings_are_mobibench_s_build_settings_as_pragmas() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(&plan(dir.path(), |_| {}));
    let s = &r.settings;
    assert_eq!(
        (
            s.page_size,
            s.journal_mode.as_str(),
            s.synchronous,
            s.auto_vacuum,
            s.temp_store
        ),
        (4096, "truncate", 2, 1, 2)
    );
    assert!(r.library.version.starts_with("3."), "{:?}", r.library);
    assert!(!r.library.compile_options.is_empty());
}

#[test]
fn updates_deletes_threads_and_attached_databases_run() {
    for mode in [Mode::Update, Mode::Delete] {
        let dir = tempfile::tempdir().unwrap();
        let p = plan(dir.path(), |s| {
            s.mode = mode;
            s.threads = 2;
            s.databases = 3;
            s.transactions = 9;
            s.journal = Journal::Wal;
            s.synchronous = Synchronous::Off;
        });
        let r = run(&p);
        assert_eq!(r.transactions, 9, "{mode}");
        assert_eq!(r.threads.len(), 2);
        assert_eq!(
            r.threads.iter().map(|t| t.transactions).collect::<Vec<_>>(),
            [5, 4]
        );
        assert!(r.calls.write > 0, "{mode}: {:?}", r.calls);
        assert!(
            leftovers(dir.path()).is_empty(),
            "{:?}",
            leftovers(dir.path())
        );
    }
    // Random inserts: every id once, so no transaction fails on a duplicate key.
    let dir = tempfile::tempdir().unwrap();
    let r = run(&plan(dir.path(), |s| {
        s.random = true;
        s.transactions = 50;
        s.synchronous = Synchronous::Off;
    }));
    assert_eq!(r.transactions, 50);
}

/// The set-up progress a run reports, as the caller's observer sees it.
#[derive(Default)]
struct SetUp(Vec<(u64, u64, &'static str)>);

impl iolab_kind::RunHooks for SetUp {
    fn run_files(&mut self, _: Vec<std::path::PathBuf>) {}
    fn timed_start(&mut self) {}
    fn timed_end(&mut self) {}
    fn event(&mut self, event: &iolab_kind::Event<'_>) {
        if let iolab_kind::Event::SettingUp { done, total, unit } = *event {
            self.0.push((done, total, unit));
        }
    }
}

#[test]
fn the_fill_reports_its_rows_and_leaves_the_synchronous_level_asked_for() {
    let _hang = iolab_testkit::timeout(600);
    let dir = tempfile::tempdir().unwrap();
    let p = plan(dir.path(), |s| {
        s.mode = Mode::Update;
        s.journal = Journal::Wal;
        s.threads = 2;
        s.transactions = 20;
    });
    let mut seen = SetUp::default();
    let r = run_sqlite(&p, &mut seen, &AtomicBool::new(false)).unwrap();
    // 10 transactions a thread fill the minimum of 296 rows in each thread's database, and
    // the last report says all of them are in.
    assert_eq!(
        seen.0.last(),
        Some(&(2 * 296, 2 * 296, "row")),
        "{:?}",
        seen.0
    );
    // The fill ran unsynced; the run itself is at FULL: a WAL sync per commit, and each
    // thread's checkpoint syncs its WAL and its database.
    assert_eq!(r.settings.synchronous, 2);
    assert_eq!(r.calls.fsync, 20 + 2 * 2, "{:?}", r.calls);
}

#[test]
fn a_transaction_over_attached_databases_commits_through_a_super_journal() {
    let dir = tempfile::tempdir().unwrap();
    let one = run(&plan(dir.path(), |s| s.journal = Journal::Delete));
    let two = run(&plan(dir.path(), |s| {
        s.journal = Journal::Delete;
        s.databases = 2;
    }));
    // Two journals, and the super-journal that ties them (created, synced, deleted).
    assert!(
        two.calls.fsync > 2 * one.calls.fsync,
        "{:?} vs {:?}",
        two.calls,
        one.calls
    );
    assert!(two.calls.unlink > 2 * one.calls.unlink, "{:?}", two.calls);
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

#[test]
fn a_cancelled_run_is_interrupted_and_leaves_nothing() {
    let _hang = iolab_testkit::timeout(600);
    let dir = tempfile::tempdir().unwrap();
    let p = plan(dir.path(), |s| s.mode = Mode::Update);
    let e = run_sqlite(&p, &mut (), &AtomicBool::new(true)).unwrap_err();
    assert!(matches!(e, SqliteError::Interrupted), "{e}");
    assert!(e.is_interrupted());
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

#[test]
fn a_name_taken_by_a_link_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("iolab-sqlite.0.0.db-wal");
    std::os::unix::fs::symlink("/etc/passwd", &link).unwrap();
    let p = plan(dir.path(), |_| {});
    let e = run_sqlite(&p, &mut (), &AtomicBool::new(false)).unwrap_err();
    assert!(e.is_bad_input(), "{e}");
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert!(link.symlink_metadata().is_ok(), "the link is left alone");
}
