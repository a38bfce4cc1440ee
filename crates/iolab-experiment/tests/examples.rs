//! The experiment files shipped in examples/ load, and say what their comments promise.

use std::path::Path;

use iolab_kind::table::from_stored;

fn load(name: &str) -> iolab_experiment::ExperimentPlan {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    iolab_experiment::load(&p).unwrap_or_else(|e| panic!("{name}:\n{e}"))
}

#[test]
fn quickstart() {
    let p = load("quickstart.toml");
    assert_eq!(p.configs.len(), 2);
    assert!(
        p.repetitions.rule.max <= 6,
        "the quickstart must stay short"
    );
    // Long enough for the checks to judge steadiness: short-run asks for 5 full intervals
    // of 1 s (the quickstart used to run ~0.5 s and fire it on every run).
    let min = std::time::Duration::from_secs(iolab_check::checks::short_run::MIN_INTERVALS);
    for (i, c) in p.configs.iter().enumerate() {
        match from_stored::<iolab_micro::kind::MicroTable>(p.stored_workload(i)) {
            Ok(m) => {
                assert!(m.time_limit >= Some(min), "{}: {:?}", c.label, m.time_limit);
                assert!(m.loops > 1, "{}: time-limited, not one pass", c.label);
            }
            Err(_) => panic!("{}: {:?}", c.label, c.workload),
        }
    }
}

#[test]
fn ext4_journal_modes_is_seed_report_000() {
    let p = load("ext4-journal-modes.toml");
    assert_eq!(p.configs.len(), 12);
    for c in &p.configs {
        // The seed's setup, and the corrected one: the page cache capped below a third of
        // the data set.
        let cap = c.sut.cache_limit;
        if c.label.ends_with("setup=seed") {
            assert_eq!(cap, None, "{}", c.label);
        } else {
            assert!(c.label.ends_with("setup=corrected"), "{}", c.label);
            assert_eq!(cap, Some(1 << 30), "{}", c.label);
        }
        let data = c.sut.fs.as_ref().unwrap().mount.get("data").unwrap();
        assert!(c.label.contains(&format!("journal={data}")), "{}", c.label);
        let t: Vec<(String, String)> = c
            .sut
            .tunables
            .iter()
            .map(|t| (t.name.to_string(), t.value.clone()))
            .collect();
        assert!(
            t.contains(&("vm.dirty_expire_centisecs".into(), "300".into())),
            "{t:?}"
        );
        assert!(
            t.contains(&("vm.dirty_writeback_centisecs".into(), "100".into())),
            "{t:?}"
        );
    }
    assert!(p.procedure.fresh_fs && p.procedure.drop_caches);
}

#[test]
fn fs_sync_modes_is_seed_report_002() {
    let p = load("fs-sync-modes.toml");
    assert_eq!(p.configs.len(), 9);
}

#[test]
fn bonnie_keeps_bonnies_rule_under_the_cache_cap() {
    let p = load("bonnie.toml");
    assert_eq!(p.configs.len(), 2);
    assert!(p.repetitions.rule.max <= 3, "the example must stay short");
    for (i, c) in p.configs.iter().enumerate() {
        let spec = from_stored::<iolab_bonnie::kind::BonnieTable>(p.stored_workload(i))
            .unwrap_or_else(|_| panic!("{}: {:?}", c.label, c.workload));
        let plan = spec.validate().unwrap();
        let cap = c.sut.cache_limit.expect("a page-cache cap");
        assert!(plan.size >= 2 * cap, "{}: bonnie++'s rule", c.label);
    }
}

#[test]
fn mobibench_sqlite_is_seed_report_002_s_db_experiment() {
    let p = load("mobibench-sqlite.toml");
    assert_eq!(p.configs.len(), 18);
    for (i, c) in p.configs.iter().enumerate() {
        let s = &from_stored::<iolab_sqlite::kind::SqliteTable>(p.stored_workload(i))
            .unwrap_or_else(|_| panic!("{}: {:?}", c.label, c.workload));
        assert_eq!(s.mode, iolab_sqlite::Mode::Insert, "{}", c.label);
        assert!(
            c.label.contains(&format!("journal={}", s.journal))
                && c.label.contains(&format!("synchronous={}", s.synchronous)),
            "{}",
            c.label
        );
        // Long enough for 5 one-second intervals (short-run), with a cap that does not end
        // it first.
        assert!(
            s.time_limit >= Some(std::time::Duration::from_secs(6)),
            "{}",
            c.label
        );
        assert!(s.transactions >= 1_000_000, "{}", c.label);
        // Mobibench's SQLite build settings, as pragmas.
        assert_eq!(s.auto_vacuum, iolab_sqlite::AutoVacuum::Full);
        assert_eq!(s.temp_store, iolab_sqlite::TempStore::Memory);
    }
    assert!(p.procedure.fresh_fs && p.procedure.drop_caches);
}

#[test]
fn seed001_active_sets_iozones_untimed_flush_against_the_timed_one() {
    let p = load("seed001-active.toml");
    assert_eq!(p.configs.len(), 3);
    assert!(p.procedure.trace_syscalls, "every run has the syscall view");
    assert_eq!(p.repetitions.metric, "write_mib_per_s");
    for (i, c) in p.configs.iter().enumerate() {
        let w = p.stored_workload(i);
        assert_eq!(
            w["iozone"]["tests"], "write",
            "{}: the write test only",
            c.label
        );
        let flush = w["iozone"]["flush"].as_str().unwrap();
        assert_eq!(
            flush == "included",
            c.label.ends_with("-e-I"),
            "{}",
            c.label
        );
        assert_eq!(c.sut.cache_limit, Some(128 << 20), "{}", c.label);
    }
}

#[test]
#[ignore = "needs fio on PATH (scripts/test.sh installs it)"]
fn fio_job_sweeps_the_block_size_of_a_job_file() {
    iolab_testkit::require_tool("fio");
    let p = load("fio-job.toml");
    assert_eq!(p.configs.len(), 2);
    assert_eq!(p.repetitions.metric, "ops_per_s");
    let w = p.stored_workload(1);
    assert_eq!(w["exec"]["env"]["BS"], "64k", "{w}");
    assert_eq!(w["exec_tool"], "fio");
}
