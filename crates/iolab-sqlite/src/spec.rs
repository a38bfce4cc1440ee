//! What a SQLite run does, as the user asked for it ([`SqliteSpec`], from the one option
//! table [`OPTIONS`]) and validated ([`SqlitePlan`]).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use iolab_util::option::{apply_defaults, OptionDef, OptionKind, OptionValue};
use iolab_util::phrase;
use iolab_util::setting::{opt, Phrase, Worded};
use serde::Serialize;

/// Declares a closed set of names: the enum, `ALL`, `NAMES` (in the same order), `name()`
/// and `parse()`.
macro_rules! names {
    ($(#[$m:meta])* $ty:ident { $($(#[$vm:meta])* $v:ident = $n:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
        #[serde(rename_all = "lowercase")]
        pub enum $ty { $($(#[$vm])* $v),+ }

        impl $ty {
            pub const ALL: &'static [$ty] = &[$($ty::$v),+];
            /// The names of [`Self::ALL`], in its order.
            pub const NAMES: &'static [&'static str] = &[$($n),+];

            pub fn name(self) -> &'static str {
                Self::NAMES[self as usize]
            }

            pub fn parse(text: &str) -> Option<$ty> {
                Self::ALL.iter().copied().find(|v| v.name() == text)
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

names! {
    /// What each transaction does (Mobibench's `-d`).
    Mode {
        /// One new row per table.
        Insert = "insert",
        /// One row per table gets a new value.
        Update = "update",
        /// One row per table is deleted.
        Delete = "delete",
    }
}

names! {
    /// `PRAGMA journal_mode` (Mobibench's `-j`, in its order).
    Journal {
        Delete = "delete",
        Truncate = "truncate",
        Persist = "persist",
        Wal = "wal",
        Memory = "memory",
        Off = "off",
    }
}

names! {
    /// `PRAGMA synchronous` (Mobibench's `-s`; its value is the level, 0 to 3).
    Synchronous {
        Off = "off",
        Normal = "normal",
        Full = "full",
        Extra = "extra",
    }
}

names! {
    /// `PRAGMA auto_vacuum`, set before the tables exist.
    AutoVacuum {
        None = "none",
        Full = "full",
        Incremental = "incremental",
    }
}

names! {
    /// `PRAGMA temp_store`: where temporary tables and indices live.
    TempStore {
        Default = "default",
        File = "file",
        Memory = "memory",
    }
}

impl Mode {
    /// Mobibench's number for it (`-d`).
    pub fn mobibench_number(self) -> u8 {
        self as u8
    }
}

impl Journal {
    /// Mobibench's number for it (`-j`): the same order.
    pub fn mobibench_number(self) -> u8 {
        self as u8
    }

    /// As `PRAGMA journal_mode` is written and answers (upper case).
    pub fn pragma(self) -> &'static str {
        ["DELETE", "TRUNCATE", "PERSIST", "WAL", "MEMORY", "OFF"][self as usize]
    }
}

impl Synchronous {
    /// The pragma's numeric level: 0 OFF … 3 EXTRA (Mobibench's `-s`).
    pub fn level(self) -> u8 {
        self as u8
    }
}

impl AutoVacuum {
    /// The pragma's numeric value (0 NONE, 1 FULL, 2 INCREMENTAL).
    pub fn level(self) -> u8 {
        self as u8
    }
}

impl TempStore {
    /// The pragma's numeric value (0 DEFAULT, 1 FILE, 2 MEMORY).
    pub fn level(self) -> u8 {
        self as u8
    }
}

/// The most databases a transaction can span: the main one and SQLite's default limit of
/// ten attached ones (`SQLITE_MAX_ATTACHED`).
pub const MAX_DATABASES: u32 = 11;

/// Update and delete runs fill each table with at least this many rows first: Mobibench's
/// minimum ((40 KiB / 4 KiB − 2) pages × 37 rows a page), so that even a short run works on
/// a table of several pages.
pub const MIN_ROWS: u64 = 296;

/// The 100-character value every insert writes (Mobibench's `INSERT_STR`).
pub const INSERT_VALUE: &str = "aaaaaaaaaabbbbbbbbbbccccccccccddddddddddeeeeeeeeeeffffffffffgggggggggghhhhhhhhhhiiiiiiiiiijjjjjjjjjj";

/// The 100-character value every update writes (Mobibench's `UPDATE_STR`).
pub const UPDATE_VALUE: &str = "ffffffffffgggggggggghhhhhhhhhhiiiiiiiiiijjjjjjjjjjaaaaaaaaaabbbbbbbbbbccccccccccddddddddddeeeeeeeeee";

/// One option of a SQLite run, declared once: `--NAME VALUE` for `iolab sqlite`,
/// `NAME = VALUE` in `[workload] sqlite = { … }`, and a row of the option tables in
/// docs/sqlite.md and docs/experiments.md (tests keep those in step).
pub type SqliteOption = OptionDef<SqliteSpec>;

/// Every option, in the order help and docs list them. `dir` and `seed` are not here: the
/// runner sets them (from `--dir`/`--seed`, or the experiment's target and seed).
pub const OPTIONS: &[SqliteOption] = &[
    SqliteOption {
        name: "mode",
        value_name: "MODE",
        kind: OptionKind::Choice(Mode::NAMES),
        default: Some("insert"),
        aliases: &[],
        help: "What each transaction does to every table",
        original: "",
        apply: |s, v| s.mode = Mode::parse(v.name()).unwrap_or(s.mode),
        get: |s| Some(OptionValue::Name(s.mode.name())),
    },
    SqliteOption {
        name: "transactions",
        value_name: "N",
        kind: OptionKind::Count {
            min: 1,
            max: u32::MAX as u64,
        },
        default: Some("1000"),
        aliases: &[],
        help: "Transactions in all, split evenly over the threads (with --time, the most a run does)",
        original: "",
        apply: |s, v| s.transactions = u64::from(v.count_u32()),
        get: |s| Some(OptionValue::Count(s.transactions)),
    },
    SqliteOption {
        name: "time",
        value_name: "DURATION",
        kind: OptionKind::Duration,
        default: None,
        aliases: &[],
        help: "Start no transaction after this long, even if some remain (e.g. 10s; at least 1ms)",
        original: "",
        apply: |s, v| {
            if let OptionValue::Duration(d) = v {
                s.time_limit = Some(d);
            }
        },
        get: |s| s.time_limit.map(OptionValue::Duration),
    },
    SqliteOption {
        name: "journal",
        value_name: "JOURNAL",
        kind: OptionKind::Choice(Journal::NAMES),
        default: Some("truncate"),
        aliases: &[],
        help: "Journal mode (PRAGMA journal_mode)",
        original: "",
        apply: |s, v| s.journal = Journal::parse(v.name()).unwrap_or(s.journal),
        get: |s| Some(OptionValue::Name(s.journal.name())),
    },
    SqliteOption {
        name: "synchronous",
        value_name: "SYNCHRONOUS",
        kind: OptionKind::Choice(Synchronous::NAMES),
        default: Some("full"),
        aliases: &[],
        help: "When SQLite syncs (PRAGMA synchronous)",
        original: "",
        apply: |s, v| s.synchronous = Synchronous::parse(v.name()).unwrap_or(s.synchronous),
        get: |s| Some(OptionValue::Name(s.synchronous.name())),
    },
    SqliteOption {
        name: "tables",
        value_name: "TABLES",
        kind: OptionKind::Count { min: 1, max: 1000 },
        default: Some("3"),
        aliases: &[],
        help: "Tables per database; a transaction touches one row of each",
        original: "",
        apply: |s, v| s.tables = v.count_u32(),
        get: |s| Some(OptionValue::Count(u64::from(s.tables))),
    },
    SqliteOption {
        name: "databases",
        value_name: "DATABASES",
        kind: OptionKind::Count {
            min: 1,
            max: MAX_DATABASES as u64,
        },
        default: Some("1"),
        aliases: &[],
        help: "Database files per thread, 1 to 11; the second and later are ATTACHed, so a transaction spans them all",
        original: "",
        apply: |s, v| s.databases = v.count_u32(),
        get: |s| Some(OptionValue::Count(u64::from(s.databases))),
    },
    SqliteOption {
        name: "threads",
        value_name: "THREADS",
        kind: OptionKind::Count { min: 1, max: 1024 },
        default: Some("1"),
        aliases: &[],
        help: "Threads, each with its own database files",
        original: "",
        apply: |s, v| s.threads = v.count_u32(),
        get: |s| Some(OptionValue::Count(u64::from(s.threads))),
    },
    SqliteOption {
        name: "sleep",
        value_name: "DURATION",
        kind: OptionKind::Duration,
        default: None,
        aliases: &[],
        help: "Pause after every transaction, inside the timed region (e.g. 10ms)",
        original: "",
        apply: |s, v| {
            if let OptionValue::Duration(d) = v {
                s.sleep = Some(d);
            }
        },
        get: |s| s.sleep.map(OptionValue::Duration),
    },
    SqliteOption {
        name: "random",
        value_name: "BOOL",
        kind: OptionKind::Flag,
        default: None,
        aliases: &[],
        help: "Insert rows in a random order of ids instead of ascending (insert mode)",
        original: "",
        apply: |s, v| s.random = v.flag(),
        get: |s| Some(OptionValue::Flag(s.random)),
    },
    SqliteOption {
        name: "auto_vacuum",
        value_name: "AUTO_VACUUM",
        kind: OptionKind::Choice(AutoVacuum::NAMES),
        default: Some("full"),
        aliases: &[],
        help: "PRAGMA auto_vacuum for new databases (full: as Mobibench's SQLite build)",
        original: "",
        apply: |s, v| s.auto_vacuum = AutoVacuum::parse(v.name()).unwrap_or(s.auto_vacuum),
        get: |s| Some(OptionValue::Name(s.auto_vacuum.name())),
    },
    SqliteOption {
        name: "temp_store",
        value_name: "TEMP_STORE",
        kind: OptionKind::Choice(TempStore::NAMES),
        default: Some("memory"),
        aliases: &[],
        help: "PRAGMA temp_store (memory: as Mobibench's SQLite build)",
        original: "",
        apply: |s, v| s.temp_store = TempStore::parse(v.name()).unwrap_or(s.temp_store),
        get: |s| Some(OptionValue::Name(s.temp_store.name())),
    },
];

/// The option called `name`.
pub fn option(name: &str) -> Option<&'static SqliteOption> {
    OPTIONS.iter().find(|o| o.name == name)
}

/// A SQLite run as the user asked for it, before validation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SqliteSpec {
    pub mode: Mode,
    pub transactions: u64,
    /// `time`: no transaction starts after this long from the common start (`transactions`
    /// is then the most a run does); the one under way, its pause and the WAL checkpoint
    /// still finish inside the timed region.
    pub time_limit: Option<Duration>,
    pub journal: Journal,
    pub synchronous: Synchronous,
    pub tables: u32,
    pub databases: u32,
    pub threads: u32,
    pub sleep: Option<Duration>,
    pub random: bool,
    pub auto_vacuum: AutoVacuum,
    pub temp_store: TempStore,
    pub dir: PathBuf,
    pub seed: u64,
}

/// Why a SQLite spec cannot run. Each message says what to change, naming the options
/// ([`Worded`]) that each front end words its way.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SqliteSpecError {
    #[error("{}", self.phrase())]
    ZeroTransactions,
    #[error("{}", self.phrase())]
    ZeroThreads,
    #[error("{}", self.phrase())]
    ZeroTime,
    #[error("{}", self.phrase())]
    FewerTransactionsThanThreads { transactions: u64, threads: u32 },
    #[error("{}", self.phrase())]
    ZeroTables,
    #[error("{}", self.phrase())]
    BadDatabases(u32),
    #[error("{}", self.phrase())]
    RandomNeedsInsert(Mode),
    #[error(
        "unknown journal mode `{0}` (expected one of delete, truncate, persist, wal, memory, off)"
    )]
    UnknownJournal(String),
    #[error("unknown synchronous setting `{0}` (expected one of off, normal, full, extra)")]
    UnknownSynchronous(String),
}

impl Worded for SqliteSpecError {
    fn phrase(&self) -> Phrase {
        match self {
            SqliteSpecError::ZeroTransactions => phrase!(
                "{} must be at least 1",
                opt("transactions"),
            ),
            SqliteSpecError::ZeroThreads => phrase!(
                "{} must be at least 1",
                opt("threads"),
            ),
            SqliteSpecError::ZeroTime => phrase!(
                "{} must be longer than zero",
                opt("time"),
            ),
            SqliteSpecError::FewerTransactionsThanThreads { transactions, threads, .. } => phrase!(
                "{} {} split over {} {} leaves some threads without a transaction (give at least {} transactions)",
                opt("transactions"),
                transactions,
                opt("threads"),
                threads,
                threads,
            ),
            SqliteSpecError::ZeroTables => phrase!(
                "{} must be at least 1",
                opt("tables"),
            ),
            SqliteSpecError::BadDatabases(n) => phrase!(
                "{} must be between 1 and {}, not {} (SQLite attaches at most ten databases to one connection)",
                opt("databases"),
                MAX_DATABASES,
                n,
            ),
            SqliteSpecError::RandomNeedsInsert(n) => phrase!(
                "{} orders the ids of inserts; {} {} always picks its rows at random (drop {})",
                opt("random"),
                opt("mode"),
                n,
                opt("random"),
            ),
            other => Phrase::text(other.to_string()),
        }
    }
}

impl SqliteSpecError {
    /// The option the error is about.
    pub fn option(&self) -> &'static str {
        match self {
            SqliteSpecError::ZeroTransactions
            | SqliteSpecError::FewerTransactionsThanThreads { .. } => "transactions",
            SqliteSpecError::ZeroThreads => "threads",
            SqliteSpecError::ZeroTime => "time",
            SqliteSpecError::ZeroTables => "tables",
            SqliteSpecError::BadDatabases(_) => "databases",
            SqliteSpecError::RandomNeedsInsert(_) => "random",
            SqliteSpecError::UnknownJournal(_) => "journal",
            SqliteSpecError::UnknownSynchronous(_) => "synchronous",
        }
    }
}

impl std::str::FromStr for Journal {
    type Err = SqliteSpecError;
    fn from_str(s: &str) -> Result<Journal, SqliteSpecError> {
        Journal::parse(&s.to_ascii_lowercase())
            .ok_or_else(|| SqliteSpecError::UnknownJournal(s.to_string()))
    }
}

impl std::str::FromStr for Synchronous {
    type Err = SqliteSpecError;
    fn from_str(s: &str) -> Result<Synchronous, SqliteSpecError> {
        Synchronous::parse(&s.to_ascii_lowercase())
            .ok_or_else(|| SqliteSpecError::UnknownSynchronous(s.to_string()))
    }
}

/// A validated SQLite run: the spec, checked (read through `Deref`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct SqlitePlan(SqliteSpec);

impl std::ops::Deref for SqlitePlan {
    type Target = SqliteSpec;
    fn deref(&self) -> &SqliteSpec {
        &self.0
    }
}

impl SqliteSpec {
    /// The defaults of [`OPTIONS`], in `dir` with `seed`.
    pub fn with_defaults(dir: PathBuf, seed: u64) -> SqliteSpec {
        let mut spec = SqliteSpec {
            mode: Mode::Insert,
            transactions: 0,
            time_limit: None,
            journal: Journal::Truncate,
            synchronous: Synchronous::Full,
            tables: 0,
            databases: 0,
            threads: 0,
            sleep: None,
            random: false,
            auto_vacuum: AutoVacuum::Full,
            temp_store: TempStore::Memory,
            dir,
            seed,
        };
        apply_defaults(OPTIONS, &mut spec);
        spec
    }

    /// Checks everything that can be checked without touching the filesystem.
    pub fn validate(&self) -> Result<SqlitePlan, SqliteSpecError> {
        if self.transactions == 0 {
            return Err(SqliteSpecError::ZeroTransactions);
        }
        if self.threads == 0 {
            return Err(SqliteSpecError::ZeroThreads);
        }
        if self.transactions < u64::from(self.threads) {
            return Err(SqliteSpecError::FewerTransactionsThanThreads {
                transactions: self.transactions,
                threads: self.threads,
            });
        }
        if self.time_limit == Some(Duration::ZERO) {
            return Err(SqliteSpecError::ZeroTime);
        }
        if self.tables == 0 {
            return Err(SqliteSpecError::ZeroTables);
        }
        if !(1..=MAX_DATABASES).contains(&self.databases) {
            return Err(SqliteSpecError::BadDatabases(self.databases));
        }
        if self.random && self.mode != Mode::Insert {
            return Err(SqliteSpecError::RandomNeedsInsert(self.mode));
        }
        Ok(SqlitePlan(self.clone()))
    }
}

impl SqlitePlan {
    /// Transactions of thread `t`: an even share, the first threads taking one more when
    /// they do not divide evenly (so that the run does exactly `transactions`).
    pub fn transactions_of(&self, t: u32) -> u64 {
        let n = u64::from(self.threads);
        self.transactions / n + u64::from(u64::from(t) < self.transactions % n)
    }

    /// Rows each table of thread `t`'s databases holds before the timed region: none for
    /// inserts; for updates and deletes one per transaction, and at least [`MIN_ROWS`].
    pub fn rows_of(&self, t: u32) -> u64 {
        match self.mode {
            Mode::Insert => 0,
            Mode::Update | Mode::Delete => self.transactions_of(t).max(MIN_ROWS),
        }
    }

    /// The database file of thread `t`, database `d`.
    pub fn db_file(&self, t: u32, d: u32) -> PathBuf {
        db_file(&self.dir, t, d)
    }

    /// Every database file of the run.
    pub fn db_files(&self) -> Vec<PathBuf> {
        (0..self.threads)
            .flat_map(|t| (0..self.databases).map(move |d| (t, d)))
            .map(|(t, d)| self.db_file(t, d))
            .collect()
    }

    /// Whether the run ends with a WAL checkpoint inside the timed region.
    pub fn checkpoints(&self) -> bool {
        self.journal == Journal::Wal
    }
}

/// The database file of thread `t`, database `d` in `dir`.
pub fn db_file(dir: &std::path::Path, t: u32, d: u32) -> PathBuf {
    dir.join(format!("iolab-sqlite.{t}.{d}.db"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> SqliteSpec {
        SqliteSpec::with_defaults(PathBuf::from("/d"), 1)
    }

    #[test]
    fn defaults_are_mobibench_defaults_except_the_transactions() {
        for o in OPTIONS {
            if let Some(d) = o.default {
                assert!(o.parse(d).is_ok(), "{}: default {d:?}", o.name);
            }
        }
        let s = spec();
        assert_eq!(
            (
                s.mode,
                s.journal,
                s.synchronous,
                s.tables,
                s.databases,
                s.threads
            ),
            (Mode::Insert, Journal::Truncate, Synchronous::Full, 3, 1, 1)
        );
        assert_eq!(s.transactions, 1000);
        assert_eq!(
            (s.auto_vacuum, s.temp_store),
            (AutoVacuum::Full, TempStore::Memory)
        );
        assert!(!s.random && s.sleep.is_none());
        assert!(s.validate().is_ok());
    }

    #[test]
    fn names_and_numbers() {
        for j in Journal::ALL {
            assert_eq!(Journal::parse(j.name()), Some(*j));
            assert_eq!(j.pragma().to_ascii_lowercase(), j.name());
        }
        assert_eq!(Journal::Wal.mobibench_number(), 3);
        assert_eq!(Synchronous::Full.level(), 2);
        assert_eq!(Synchronous::Extra.level(), 3);
        assert_eq!(Mode::Delete.mobibench_number(), 2);
        assert_eq!("WAL".parse::<Journal>(), Ok(Journal::Wal));
        assert_eq!(
            "wall".parse::<Journal>(),
            Err(SqliteSpecError::UnknownJournal("wall".into()))
        );
        assert_eq!(
            "sometimes".parse::<Synchronous>().unwrap_err().option(),
            "synchronous"
        );
        assert_eq!(INSERT_VALUE.len(), 100);
        assert_eq!(UPDATE_VALUE.len(), 100);
    }

    #[test]
    fn validation() {
        let mut s = spec();
        s.transactions = 0;
        assert_eq!(s.validate(), Err(SqliteSpecError::ZeroTransactions));
        let mut s = spec();
        s.threads = 0;
        assert_eq!(s.validate(), Err(SqliteSpecError::ZeroThreads));
        let mut s = spec();
        s.transactions = 3;
        s.threads = 4;
        assert!(matches!(
            s.validate(),
            Err(SqliteSpecError::FewerTransactionsThanThreads { .. })
        ));
        let mut s = spec();
        s.databases = 12;
        assert_eq!(s.validate(), Err(SqliteSpecError::BadDatabases(12)));
        let mut s = spec();
        s.tables = 0;
        assert_eq!(s.validate().unwrap_err().option(), "tables");
        let mut s = spec();
        s.mode = Mode::Delete;
        s.random = true;
        assert_eq!(
            s.validate(),
            Err(SqliteSpecError::RandomNeedsInsert(Mode::Delete))
        );
    }

    #[test]
    fn transactions_are_split_exactly() {
        let mut s = spec();
        s.transactions = 10;
        s.threads = 4;
        let p = s.validate().unwrap();
        let per: Vec<u64> = (0..4).map(|t| p.transactions_of(t)).collect();
        assert_eq!(per, [3, 3, 2, 2]);
        assert_eq!(p.rows_of(0), 0);
        s.mode = Mode::Update;
        let p = s.validate().unwrap();
        assert_eq!(p.rows_of(0), MIN_ROWS);
        s.transactions = 4000;
        let p = s.validate().unwrap();
        assert_eq!(p.rows_of(3), 1000);
        assert_eq!(p.db_files().len(), 4);
        assert!(p.db_file(2, 0).ends_with("iolab-sqlite.2.0.db"));
    }

    #[test]
    fn options_apply() {
        let mut s = spec();
        for (name, text) in [
            ("journal", "wal"),
            ("synchronous", "normal"),
            ("mode", "update"),
            ("sleep", "5ms"),
            ("random", "true"),
            ("temp_store", "file"),
        ] {
            let o = option(name).unwrap();
            o.apply(&mut s, o.parse(text).unwrap());
        }
        assert_eq!(s.journal, Journal::Wal);
        assert_eq!(s.synchronous, Synchronous::Normal);
        assert_eq!(s.mode, Mode::Update);
        assert_eq!(s.sleep, Some(Duration::from_millis(5)));
        assert!(s.random);
        assert_eq!(s.temp_store, TempStore::File);
        assert_eq!(option("temp_store").unwrap().flag(), "temp-store");
        let err = |n: &str, t: &str| option(n).unwrap().parse(t).unwrap_err();
        assert!(err("journal", "wall").starts_with("expected one of delete, truncate"));
        assert_eq!(err("databases", "12"), "must be between 1 and 11");
        assert_eq!(err("transactions", "0"), "must be at least 1");
    }
}
