//! Runs a SQLite plan: each thread sets up its databases (untimed), all threads are released
//! at once, each runs its transactions and — in WAL mode — a checkpoint, and the threads'
//! measurements are merged.
//!
//! Untimed, per database file: open it, `PRAGMA page_size = 4096`, `auto_vacuum`,
//! `temp_store`, `journal_mode`, `synchronous`; insert mode drops the tables; every mode
//! creates them in one transaction; update and delete fill them, one transaction a row.
//! The second and later databases are then ATTACHed to the first connection. Timed: one
//! `sqlite3_exec` per transaction (`BEGIN;` a statement per table and database `COMMIT;`),
//! the optional pause after each, and the WAL checkpoint after the last (docs/sqlite.md).

use std::ffi::{c_char, CStr};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use iolab_engine::clock::Clock;
use iolab_engine::files::{check_dir, create_error, existing_file};
use iolab_engine::gate::{AbortOnPanic, Crew};
use iolab_engine::order::Order;
use iolab_engine::stats::{merge_intervals, Bucket, IntervalCounter, LatencyHistogram};
use iolab_engine::usage::Usage;
use iolab_engine::EngineError;
use iolab_kind::RunHooks;
use iolab_util::rng::Rng;
use rusqlite::{ffi, Connection, OpenFlags};
use serde::Serialize;

use crate::count::{self, Calls};
use crate::spec::{Mode, SqlitePlan, Synchronous, INSERT_VALUE, UPDATE_VALUE};
use crate::SqliteError;

/// Width of the per-interval counters.
pub const INTERVAL: Duration = Duration::from_secs(1);
/// What SQLite adds to a database's name for its other files; each is removed before and
/// after a run.
const COMPANIONS: [&str; 4] = ["", "-journal", "-wal", "-shm"];

/// The SQLite library iolab runs: stored with every run, since its version and compile-time
/// options change the I/O a transaction makes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Library {
    pub version: String,
    pub source_id: String,
    /// `PRAGMA compile_options`.
    pub compile_options: Vec<String>,
}

/// The library linked into this binary (probed once).
pub fn library() -> &'static Library {
    static LIBRARY: OnceLock<Library> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        // SAFETY: sqlite3_sourceid returns a static NUL-terminated string.
        let source_id = unsafe { CStr::from_ptr(ffi::sqlite3_sourceid()) }
            .to_string_lossy()
            .into_owned();
        let compile_options = Connection::open_in_memory()
            .and_then(|c| {
                let mut s = c.prepare("PRAGMA compile_options")?;
                let rows = s.query_map([], |r| r.get::<_, String>(0))?;
                rows.collect()
            })
            .unwrap_or_default();
        Library {
            version: rusqlite::version().to_string(),
            source_id,
            compile_options,
        }
    })
}

/// The settings as SQLite reports them after the set-up (thread 0's first database).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Settings {
    pub page_size: i64,
    pub journal_mode: String,
    pub synchronous: i64,
    pub auto_vacuum: i64,
    pub temp_store: i64,
}

/// What a SQLite run measured.
#[derive(Debug, Clone)]
pub struct SqliteResult {
    pub plan: SqlitePlan,
    pub library: Library,
    pub settings: Settings,
    /// From the release of the threads to the last thread's end (checkpoint included).
    pub elapsed_ns: u64,
    pub transactions: u64,
    /// The time limit ended the run before all of the plan's transactions.
    pub time_limited: bool,
    /// Per transaction: its `sqlite3_exec`, without the pause after it.
    pub latency: LatencyHistogram,
    /// Longest final WAL checkpoint among the threads (0 in other journal modes).
    pub checkpoint_ns: u64,
    /// CPU usage of the threads during the timed region, summed.
    pub usage: Usage,
    /// System calls SQLite made in the timed region, all threads.
    pub calls: Calls,
    /// The longest set-up of a thread (untimed).
    pub setup_ns: u64,
    pub interval_ns: u64,
    /// Transactions (`ops`) and bytes SQLite wrote (`bytes`) per interval.
    pub intervals: Vec<Bucket>,
    pub threads: Vec<ThreadSummary>,
    /// The database files (removed after the run).
    pub files: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ThreadSummary {
    pub transactions: u64,
    pub elapsed_ns: u64,
    pub checkpoint_ns: u64,
    pub usage: Usage,
    pub calls: Calls,
}

impl SqliteResult {
    /// `count` per transaction (0 without transactions).
    pub fn per_transaction(&self, count: u64) -> f64 {
        if self.transactions == 0 {
            0.0
        } else {
            count as f64 / self.transactions as f64
        }
    }
}

/// Runs `plan`, ending early with [`SqliteError::Interrupted`] once `cancel` is set. The
/// database files (and SQLite's journals) are removed afterwards, whatever happened.
pub fn run_sqlite(
    plan: &SqlitePlan,
    hooks: &mut dyn RunHooks,
    cancel: &AtomicBool,
) -> Result<SqliteResult, SqliteError> {
    check_dir(&plan.dir)?;
    count::install().map_err(SqliteError::Hooks)?;
    let files = companions(plan);
    // Names of ours taken by something iolab did not make are refused before anything is
    // removed.
    for f in &files {
        existing_file(f)?;
    }
    // A run starts from new files: page size and auto_vacuum only apply to a new database,
    // and every repetition must measure the same thing.
    remove(&files).map_err(|(path, e)| create_error(&path, &plan.dir, e))?;
    let result = execute(plan, hooks, cancel);
    let _ = remove(&files);
    remove_super_journals(plan);
    result
}

/// A transaction over several databases in a rollback journal mode writes a super-journal,
/// `<first database>-mj<random>`, which SQLite deletes at commit; one is left only when a run
/// dies in between.
fn remove_super_journals(plan: &SqlitePlan) {
    if plan.databases < 2 {
        return;
    }
    let Ok(entries) = fs::read_dir(&plan.dir) else {
        return;
    };
    let prefixes: Vec<String> = (0..plan.threads)
        .filter_map(|t| {
            let db = plan.db_file(t, 0);
            Some(format!("{}-mj", db.file_name()?.to_str()?))
        })
        .collect();
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if prefixes.iter().any(|p| name.starts_with(p.as_str()))
            && e.file_type().is_ok_and(|t| t.is_file())
        {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// Every file a run may leave: each database and its journal, WAL and shared memory.
fn companions(plan: &SqlitePlan) -> Vec<PathBuf> {
    plan.db_files()
        .iter()
        .flat_map(|db| {
            COMPANIONS.iter().map(move |suffix| {
                let mut name = db.clone().into_os_string();
                name.push(suffix);
                PathBuf::from(name)
            })
        })
        .collect()
}

fn remove(files: &[PathBuf]) -> Result<(), (PathBuf, io::Error)> {
    for f in files {
        match fs::remove_file(f) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err((f.clone(), e)),
            _ => {}
        }
    }
    Ok(())
}

struct Shared<'a> {
    plan: &'a SqlitePlan,
    clock: Clock,
    crew: Crew,
    cancel: &'a AtomicBool,
}

/// What one thread measured.
#[derive(Debug, Default)]
struct ThreadStats {
    summary: ThreadSummary,
    latency: LatencyHistogram,
    intervals: Vec<Bucket>,
    setup_ns: u64,
    settings: Option<Settings>,
}

fn execute(
    plan: &SqlitePlan,
    hooks: &mut dyn RunHooks,
    cancel: &AtomicBool,
) -> Result<SqliteResult, SqliteError> {
    let n = plan.threads as usize;
    let mut crew = Crew::new(n);
    crew.setup_unit = "row";
    let shared = Shared {
        plan,
        clock: Clock::new(),
        crew,
        cancel,
    };
    let outcomes = shared.crew.run(
        "iolab-sql",
        plan.transactions,
        plan.time_limit,
        cancel,
        hooks,
        &|t| worker(t as u32, &shared),
    );
    let mut stats = Vec::with_capacity(n);
    let mut errors = Vec::new();
    for o in outcomes {
        match o {
            Ok(s) => stats.push(s),
            Err(e) => errors.push(e),
        }
    }
    // The cause, not a thread that was only told to stop because of it.
    if let Some(i) = errors.iter().position(|e| !e.is_interrupted()) {
        return Err(errors.swap_remove(i));
    }
    if let Some(e) = errors.pop() {
        return Err(e);
    }
    if cancel.load(Ordering::Relaxed) {
        return Err(SqliteError::Interrupted);
    }
    Ok(merge(plan, stats))
}

fn merge(plan: &SqlitePlan, stats: Vec<ThreadStats>) -> SqliteResult {
    let mut latency = LatencyHistogram::default();
    let mut usage = Usage::default();
    let mut calls = Calls::default();
    let mut transactions = 0;
    let mut series = Vec::with_capacity(stats.len());
    for s in &stats {
        latency.merge(&s.latency);
        usage = usage + s.summary.usage;
        calls = calls + s.summary.calls;
        transactions += s.summary.transactions;
        series.push(s.intervals.clone());
    }
    SqliteResult {
        plan: plan.clone(),
        library: library().clone(),
        settings: stats
            .iter()
            .find_map(|s| s.settings.clone())
            .unwrap_or_default(),
        elapsed_ns: stats
            .iter()
            .map(|s| s.summary.elapsed_ns)
            .max()
            .unwrap_or(0),
        transactions,
        time_limited: transactions < plan.transactions,
        latency,
        checkpoint_ns: stats
            .iter()
            .map(|s| s.summary.checkpoint_ns)
            .max()
            .unwrap_or(0),
        usage,
        calls,
        setup_ns: stats.iter().map(|s| s.setup_ns).max().unwrap_or(0),
        interval_ns: INTERVAL.as_nanos() as u64,
        intervals: merge_intervals(&series),
        threads: stats.iter().map(|s| s.summary).collect(),
        files: plan.db_files(),
    }
}

fn worker(t: u32, shared: &Shared<'_>) -> Result<ThreadStats, SqliteError> {
    let _guard = AbortOnPanic([&shared.crew.ready, &shared.crew.go]);
    let began = Instant::now();
    let stop =
        || shared.cancel.load(Ordering::Relaxed) || shared.crew.abort.load(Ordering::Relaxed);
    let setup = Setup::new(shared.plan, t, &shared.crew, &stop);
    if setup.is_err() {
        shared.crew.abort.store(true, Ordering::Relaxed);
    }
    let setup_ns = began.elapsed().as_nanos() as u64;
    let released = shared.crew.released();
    let mut setup = setup?;
    if !released || shared.crew.abort.load(Ordering::Relaxed) {
        return Ok(ThreadStats::default());
    }
    let start = shared.clock.ticks_at(shared.crew.start());
    let mut stats = setup
        .timed(shared, t, start)
        .inspect_err(|_| shared.crew.abort.store(true, Ordering::Relaxed))?;
    stats.setup_ns = setup_ns;
    Ok(stats)
}

/// One thread's databases, set up and ready for the timed region.
struct Setup {
    /// One connection per database file; the first has the others attached.
    conns: Vec<Connection>,
    paths: Vec<PathBuf>,
    statements: Statements,
    ids: Ids,
    transactions: u64,
    settings: Settings,
}

impl Setup {
    /// `stop` says when to give up (Ctrl-C, or another thread failed); `crew`'s set-up
    /// counters of thread `t` count the rows filled.
    fn new(
        plan: &SqlitePlan,
        t: u32,
        crew: &Crew,
        stop: &dyn Fn() -> bool,
    ) -> Result<Setup, SqliteError> {
        let mut conns = Vec::with_capacity(plan.databases as usize);
        let mut paths = Vec::with_capacity(plan.databases as usize);
        let rows = plan.rows_of(t);
        let filled = &crew.setup_done[t as usize].0;
        crew.setup_total[t as usize]
            .0
            .store(rows * u64::from(plan.databases), Ordering::Relaxed);
        for d in 0..plan.databases {
            let path = plan.db_file(t, d);
            let conn = open(plan, &path)?;
            fill(plan, &conn, &path, rows, filled, stop)?;
            conns.push(conn);
            paths.push(path);
        }
        // The later databases join the first connection, so one transaction spans them all.
        // Mobibench sets only their journal mode this way, leaving them at SQLite's default
        // synchronous level; iolab sets the one asked for on every database.
        for (d, path) in paths.iter().enumerate().skip(1) {
            let name = path.to_str().ok_or_else(|| SqliteError::Sqlite {
                during: "attaching",
                path: path.clone(),
                code: ffi::SQLITE_CANTOPEN,
                message: "the path is not valid UTF-8".into(),
            })?;
            let schema = format!("db{d}");
            conns[0]
                .execute("ATTACH DATABASE ?1 AS ?2", [name, schema.as_str()])
                .map_err(|e| SqliteError::sqlite("attaching", path, &e))?;
            set_journal(plan, &conns[0], Some(&schema), path)?;
            conns[0]
                .pragma_update(
                    Some(schema.as_str()),
                    "synchronous",
                    plan.synchronous.level(),
                )
                .map_err(|e| SqliteError::sqlite("setting synchronous on", path, &e))?;
        }
        let settings =
            settings(&conns[0]).map_err(|e| SqliteError::sqlite("reading", &paths[0], &e))?;
        // Nothing of the set-up may still be dirty when the timed region starts.
        for p in &paths {
            for suffix in ["", "-wal"] {
                let mut name = p.clone().into_os_string();
                name.push(suffix);
                if let Ok(f) = fs::File::open(&name) {
                    f.sync_all().map_err(|e| EngineError::Io {
                        op: "fsync",
                        path: PathBuf::from(&name),
                        source: e,
                    })?;
                }
            }
        }
        let transactions = plan.transactions_of(t);
        Ok(Setup {
            statements: Statements::new(plan),
            ids: Ids::new(plan, transactions, rows),
            conns,
            paths,
            transactions,
            settings,
        })
    }

    /// The timed region of thread `t`, from the common start (in clock ticks).
    fn timed(
        &mut self,
        shared: &Shared<'_>,
        t: u32,
        start: u64,
    ) -> Result<ThreadStats, SqliteError> {
        let plan = shared.plan;
        let clock = shared.clock;
        let progress = &shared.crew.progress[t as usize].0;
        let mut latency = LatencyHistogram::default();
        let mut intervals = IntervalCounter::new(start, clock.ticks_in(INTERVAL), 64);
        // SAFETY: the handle of a connection this thread owns, used only while it lives.
        let db = unsafe { self.conns[0].handle() };
        let usage0 = Usage::thread();
        let calls0 = Calls::thread();
        let mut written = calls0.write_bytes;
        let mut done = 0;
        // Every thread's limit counts from the common start, as the other kinds' do.
        let deadline = plan
            .time_limit
            .map(|d| start.saturating_add(clock.ticks_in(d)));
        for tx in 0..self.transactions {
            let sql = self.statements.build(tx, &mut self.ids);
            let t0 = clock.ticks();
            exec(db, sql).map_err(|(code, message)| SqliteError::Sqlite {
                during: "a transaction on",
                path: self.paths[0].clone(),
                code,
                message,
            })?;
            let t1 = clock.ticks();
            latency.record(clock.ns(t1 - t0));
            let now_written = Calls::thread().write_bytes;
            intervals.add(t1, 1, now_written - written);
            written = now_written;
            done += 1;
            progress.store(done, Ordering::Relaxed);
            if shared.crew.abort.load(Ordering::Relaxed) {
                return Err(SqliteError::Interrupted);
            }
            if let Some(pause) = plan.sleep {
                thread::sleep(pause);
            }
            if let Some(d) = deadline {
                // After the pause, which belongs to the transaction before it; without one,
                // the reading taken after the transaction is still the time.
                let now = if plan.sleep.is_some() {
                    clock.ticks()
                } else {
                    t1
                };
                if now >= d {
                    break;
                }
            }
        }
        let mut checkpoint_ns = 0;
        if plan.checkpoints() {
            let c0 = clock.ticks();
            // Through every connection, as Mobibench does: the first one's checkpoints all
            // attached databases, the others find nothing left.
            for (conn, path) in self.conns.iter().zip(&self.paths) {
                // SAFETY: as above.
                let rc = unsafe { ffi::sqlite3_wal_checkpoint(conn.handle(), std::ptr::null()) };
                if rc != ffi::SQLITE_OK {
                    return Err(SqliteError::Sqlite {
                        during: "checkpointing",
                        path: path.clone(),
                        code: rc,
                        message: ffi::code_to_str(rc).to_string(),
                    });
                }
            }
            checkpoint_ns = clock.ns(clock.ticks() - c0);
        }
        let end = clock.ticks();
        let usage = Usage::thread() - usage0;
        let calls = Calls::thread() - calls0;
        Ok(ThreadStats {
            summary: ThreadSummary {
                transactions: done,
                elapsed_ns: clock.ns(end.saturating_sub(start)),
                checkpoint_ns,
                usage,
                calls,
            },
            latency,
            intervals: intervals.finish(end),
            setup_ns: 0,
            settings: Some(self.settings.clone()),
        })
    }
}

/// Opens a new database through the counting VFS and applies the settings, before any
/// table exists (page size and auto_vacuum only apply then).
fn open(plan: &SqlitePlan, path: &Path) -> Result<Connection, SqliteError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags_and_vfs(path, flags, count::VFS_NAME)
        .map_err(|e| SqliteError::sqlite("opening", path, &e))?;
    let err = |e: rusqlite::Error| SqliteError::sqlite("setting up", path, &e);
    conn.execute_batch("PRAGMA page_size = 4096;")
        .map_err(err)?;
    // Mobibench builds SQLite with SQLITE_DEFAULT_AUTOVACUUM=1 and SQLITE_TEMP_STORE=3:
    // these pragmas give a new database the same (iolab's defaults).
    conn.pragma_update(None, "auto_vacuum", plan.auto_vacuum.level())
        .map_err(err)?;
    conn.pragma_update(None, "temp_store", plan.temp_store.level())
        .map_err(err)?;
    set_journal(plan, &conn, None, path)?;
    conn.execute_batch(&format!("PRAGMA synchronous={};", plan.synchronous.level()))
        .map_err(err)?;
    Ok(conn)
}

/// `PRAGMA [schema.]journal_mode=…`, checking SQLite's answer: it keeps the old mode when it
/// cannot use the new one.
fn set_journal(
    plan: &SqlitePlan,
    conn: &Connection,
    schema: Option<&str>,
    path: &Path,
) -> Result<(), SqliteError> {
    let wanted = plan.journal.pragma();
    let got: String = conn
        .pragma_update_and_check(schema, "journal_mode", wanted, |r| r.get(0))
        .map_err(|e| SqliteError::sqlite("setting the journal mode of", path, &e))?;
    if !got.eq_ignore_ascii_case(wanted) {
        return Err(SqliteError::JournalRefused {
            wanted: plan.journal.name(),
            got,
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// The tables, created in one transaction (insert mode drops them first), and for updates
/// and deletes `rows` rows in each, one transaction a row.
fn fill(
    plan: &SqlitePlan,
    conn: &Connection,
    path: &Path,
    rows: u64,
    progress: &AtomicU64,
    stop: &dyn Fn() -> bool,
) -> Result<(), SqliteError> {
    let err = |e: rusqlite::Error| SqliteError::sqlite("creating the tables of", path, &e);
    if plan.mode == Mode::Insert {
        for i in 0..plan.tables {
            conn.execute_batch(&format!("DROP TABLE IF EXISTS tblMyList{i};"))
                .map_err(err)?;
        }
    }
    let mut sql = String::from("BEGIN;");
    for i in 0..plan.tables {
        sql.push_str(&format!(
            " CREATE TABLE IF NOT EXISTS tblMyList{i} (id INTEGER PRIMARY KEY, Value TEXT not null, creation_date long);"
        ));
    }
    sql.push_str("COMMIT;");
    conn.execute_batch(&sql).map_err(err)?;
    if rows == 0 {
        return Ok(());
    }
    // Row by row as Mobibench fills, but unsynced: the same files, without a sync per row
    // (hundreds of thousands of rows took minutes). They are synced once, after the set-up.
    let sync = |level: u8| {
        conn.execute_batch(&format!("PRAGMA synchronous={level};"))
            .map_err(|e| SqliteError::sqlite("setting synchronous on", path, &e))
    };
    sync(Synchronous::Off.level())?;
    for row in 0..rows {
        if stop() {
            return Err(SqliteError::Interrupted);
        }
        let mut sql = String::from("BEGIN;");
        for i in 0..plan.tables {
            sql.push_str(&format!(
                "INSERT INTO tblMyList{i}(id,Value) VALUES({row},'{INSERT_VALUE}');"
            ));
        }
        sql.push_str("COMMIT;");
        conn.execute_batch(&sql)
            .map_err(|e| SqliteError::sqlite("filling the tables of", path, &e))?;
        progress.fetch_add(1, Ordering::Relaxed);
    }
    sync(plan.synchronous.level())
}

fn settings(conn: &Connection) -> rusqlite::Result<Settings> {
    let int = |name: &str| conn.pragma_query_value(None, name, |r| r.get::<_, i64>(0));
    Ok(Settings {
        page_size: int("page_size")?,
        journal_mode: conn.pragma_query_value(None, "journal_mode", |r| r.get(0))?,
        synchronous: int("synchronous")?,
        auto_vacuum: int("auto_vacuum")?,
        temp_store: int("temp_store")?,
    })
}

/// `sqlite3_exec` of one NUL-terminated SQL text, as Mobibench runs a transaction; the
/// extended result code and message on failure.
fn exec(db: *mut ffi::sqlite3, sql: &CStr) -> Result<(), (i32, String)> {
    let mut err: *mut c_char = std::ptr::null_mut();
    // SAFETY: a live connection handle and a NUL-terminated statement; `err` is freed below.
    let rc = unsafe { ffi::sqlite3_exec(db, sql.as_ptr(), None, std::ptr::null_mut(), &mut err) };
    if rc == ffi::SQLITE_OK {
        return Ok(());
    }
    let message = if err.is_null() {
        ffi::code_to_str(rc).to_string()
    } else {
        // SAFETY: SQLite's message, NUL-terminated, freed once here.
        let m = unsafe { CStr::from_ptr(err) }
            .to_string_lossy()
            .into_owned();
        unsafe { ffi::sqlite3_free(err.cast()) };
        m
    };
    // SAFETY: as above.
    Err((unsafe { ffi::sqlite3_extended_errcode(db) }, message))
}

/// The text of each transaction: fixed parts made once, ids written in per transaction, into
/// one reused buffer (no allocation in the timed loop).
struct Statements {
    /// Per (database, table), in that order: the statement up to its id.
    heads: Vec<Vec<u8>>,
    /// After the id.
    tail: &'static [u8],
    tables: usize,
    buf: Vec<u8>,
}

impl Statements {
    fn new(plan: &SqlitePlan) -> Statements {
        let mut heads = Vec::new();
        for d in 0..plan.databases {
            let schema = if d == 0 {
                String::new()
            } else {
                format!("db{d}.")
            };
            for i in 0..plan.tables {
                heads.push(
                    match plan.mode {
                        Mode::Insert => {
                            format!("INSERT INTO {schema}tblMyList{i}(id,Value) VALUES(")
                        }
                        Mode::Update => format!(
                            "UPDATE {schema}tblMyList{i} SET Value = '{UPDATE_VALUE}' WHERE id = "
                        ),
                        Mode::Delete => format!("DELETE FROM {schema}tblMyList{i} WHERE id="),
                    }
                    .into_bytes(),
                );
            }
        }
        let tail: &'static [u8] = match plan.mode {
            Mode::Insert => INSERT_TAIL
                .get_or_init(|| format!(",'{INSERT_VALUE}');"))
                .as_bytes(),
            Mode::Update | Mode::Delete => b";",
        };
        let len = heads
            .iter()
            .map(|h| h.len() + 20 + tail.len())
            .sum::<usize>()
            + 16;
        Statements {
            heads,
            tail,
            tables: plan.tables as usize,
            buf: Vec::with_capacity(len),
        }
    }

    /// Transaction `tx`'s text.
    fn build(&mut self, tx: u64, ids: &mut Ids) -> &CStr {
        ids.begin(tx);
        self.buf.clear();
        self.buf.extend_from_slice(b"BEGIN;");
        for (k, head) in self.heads.iter().enumerate() {
            let id = ids.next(k / self.tables);
            self.buf.extend_from_slice(head);
            push_decimal(&mut self.buf, id);
            self.buf.extend_from_slice(self.tail);
        }
        self.buf.extend_from_slice(b"COMMIT;\0");
        // The parts hold no NUL: the heads are iolab's text, ids are digits.
        CStr::from_bytes_with_nul(&self.buf).unwrap_or(c"")
    }
}

static INSERT_TAIL: OnceLock<String> = OnceLock::new();

/// Appends `n` in decimal.
fn push_decimal(buf: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

/// The ids transactions touch: deterministic for a seed and a transaction's index, the same
/// in every thread (Mobibench reseeds with the transaction's index).
enum Ids {
    /// Insert: the transaction's index, in every database.
    Ascending { tx: u64 },
    /// Insert with `random`, and delete: per database, a seeded permutation of the ids, one
    /// step per transaction (ids without replacement).
    Permuted { orders: Vec<Order>, tx: u64 },
    /// Update: per table, uniform in 1..=rows from a stream of the transaction's own
    /// (Mobibench's `rand() % rows + 1`: id 0 is never updated, id `rows` matches no row).
    Update { seed: u64, rows: u64, rng: Rng },
}

impl Ids {
    fn new(plan: &SqlitePlan, transactions: u64, rows: u64) -> Ids {
        let permuted = |n: u64, stream: u64| Ids::Permuted {
            orders: (0..u64::from(plan.databases))
                .map(|d| Order::random(n, &mut Rng::stream(plan.seed, stream + d)))
                .collect(),
            tx: 0,
        };
        match plan.mode {
            Mode::Insert if plan.random => permuted(transactions, 2_000_000),
            Mode::Insert => Ids::Ascending { tx: 0 },
            Mode::Delete => permuted(rows, 1_000_000),
            Mode::Update => Ids::Update {
                seed: plan.seed,
                rows,
                rng: Rng::new(0),
            },
        }
    }

    #[inline]
    fn begin(&mut self, index: u64) {
        match self {
            Ids::Ascending { tx } | Ids::Permuted { tx, .. } => *tx = index,
            Ids::Update { seed, rng, .. } => *rng = Rng::stream(*seed, index),
        }
    }

    /// The id of the next statement, on database `d`.
    #[inline]
    fn next(&mut self, d: usize) -> u64 {
        match self {
            Ids::Ascending { tx } => *tx,
            Ids::Permuted { orders, tx } => orders[d].get(*tx),
            Ids::Update { rows, rng, .. } => rng.below(*rows) + 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::SqliteSpec;

    fn plan(mode: Mode, databases: u32) -> SqlitePlan {
        let mut s = SqliteSpec::with_defaults(PathBuf::from("/d"), 3);
        s.mode = mode;
        s.databases = databases;
        s.tables = 2;
        s.transactions = 10;
        s.validate().unwrap()
    }

    #[test]
    fn statements_are_mobibench_s() {
        let p = plan(Mode::Insert, 2);
        let mut st = Statements::new(&p);
        let mut ids = Ids::new(&p, 10, 0);
        let sql = st.build(7, &mut ids).to_str().unwrap().to_string();
        assert_eq!(
            sql,
            format!(
                "BEGIN;INSERT INTO tblMyList0(id,Value) VALUES(7,'{v}');\
                 INSERT INTO tblMyList1(id,Value) VALUES(7,'{v}');\
                 INSERT INTO db1.tblMyList0(id,Value) VALUES(7,'{v}');\
                 INSERT INTO db1.tblMyList1(id,Value) VALUES(7,'{v}');COMMIT;",
                v = INSERT_VALUE
            )
        );
        let p = plan(Mode::Delete, 1);
        let mut st = Statements::new(&p);
        let mut ids = Ids::new(&p, 10, p.rows_of(0));
        let sql = st.build(0, &mut ids).to_str().unwrap().to_string();
        assert!(
            sql.starts_with("BEGIN;DELETE FROM tblMyList0 WHERE id="),
            "{sql}"
        );
        assert!(sql.ends_with(";COMMIT;"), "{sql}");
        let p = plan(Mode::Update, 1);
        let mut st = Statements::new(&p);
        let mut ids = Ids::new(&p, 10, p.rows_of(0));
        let sql = st.build(0, &mut ids).to_str().unwrap().to_string();
        assert!(
            sql.starts_with(&format!(
                "BEGIN;UPDATE tblMyList0 SET Value = '{UPDATE_VALUE}' WHERE id = "
            )),
            "{sql}"
        );
    }

    #[test]
    fn ids_are_deterministic_per_transaction_and_deletes_never_repeat() {
        let p = plan(Mode::Update, 1);
        let rows = p.rows_of(0);
        let mut a = Ids::new(&p, 10, rows);
        let mut b = Ids::new(&p, 10, rows);
        // Transaction 5 gets the same ids whatever came before it.
        a.begin(4);
        a.next(0);
        a.begin(5);
        b.begin(5);
        let (x, y) = (a.next(0), b.next(0));
        assert_eq!(x, y);
        assert!((1..=rows).contains(&x));
        let p = plan(Mode::Delete, 1);
        let rows = p.rows_of(0);
        let mut ids = Ids::new(&p, rows, rows);
        let mut seen = std::collections::BTreeSet::new();
        for tx in 0..rows {
            ids.begin(tx);
            assert!(seen.insert(ids.next(0)));
        }
        assert_eq!(seen.len() as u64, rows);
        assert!(seen.iter().all(|&id| id < rows));
    }

    #[test]
    fn decimals() {
        let mut b = Vec::new();
        for n in [0u64, 7, 10, 296, u64::MAX] {
            b.clear();
            push_decimal(&mut b, n);
            assert_eq!(String::from_utf8(b.clone()).unwrap(), n.to_string());
        }
    }
}
