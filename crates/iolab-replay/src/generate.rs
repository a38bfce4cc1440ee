//! The list generators (docs/replay.md), all deterministic: the same input and seed give the
//! same bytes.
//!
//! - [`scan`]: an install list from a real tree — its directories (`m`) and regular files
//!   (`c` with their sizes), depth first, entries in byte order of their names.
//! - [`sample`]: a boot read set — files of a list, chosen at random, summing to a byte
//!   budget, read (`s`) in the list's order.
//! - [`workday`]: the days of a working machine — data sets of about `set_bytes`, mostly small
//!   files, each generated once from the seed; per day `read` sets are read, `create` created
//!   and `delete` deleted, on the schedule [`Schedule`] describes.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use iolab_util::rng::Rng;

use crate::list::{encode, List, Op};

/// Why a generator could not run.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Input(String),
}

impl GenError {
    pub fn is_bad_input(&self) -> bool {
        match self {
            GenError::Input(_) => true,
            GenError::Io { source, .. } => source.kind() == std::io::ErrorKind::NotFound,
        }
    }
}

/// A generated list and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    pub text: String,
    pub files: u64,
    pub dirs: u64,
    pub bytes: u64,
    /// Entries left out (symbolic links, devices, sockets, unreadable directories).
    pub skipped: u64,
}

/// An install list of the tree under `root`: `m` for every directory (unless `files_only`,
/// the bare three-field form whose creates make their parents), `c` for every regular file.
pub fn scan(root: &Path, files_only: bool) -> Result<Generated, GenError> {
    let meta = std::fs::metadata(root).map_err(|source| GenError::Io {
        path: root.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(GenError::Input(format!(
            "{} is not a directory",
            root.display()
        )));
    }
    let mut g = Generated {
        text: String::new(),
        files: 0,
        dirs: 0,
        bytes: 0,
        skipped: 0,
    };
    let mut body = String::new();
    walk(root, &mut Vec::new(), files_only, &mut g, &mut body)?;
    let _ = writeln!(
        g.text,
        "# install list: {} files, {} directories, {} bytes",
        g.files, g.dirs, g.bytes
    );
    g.text.push_str(&body);
    Ok(g)
}

fn walk(
    dir: &Path,
    prefix: &mut Vec<u8>,
    files_only: bool,
    g: &mut Generated,
    out: &mut String,
) -> Result<(), GenError> {
    let io = |source| GenError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries: Vec<(Vec<u8>, std::fs::DirEntry)> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(Result::ok)
        .map(|e| (e.file_name().as_bytes().to_vec(), e))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, e) in entries {
        let Ok(ft) = e.file_type() else {
            g.skipped += 1;
            continue;
        };
        let len = prefix.len();
        if !prefix.is_empty() {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(&name);
        if ft.is_dir() {
            if std::fs::read_dir(e.path()).is_err() {
                g.skipped += 1;
            } else {
                if !files_only {
                    let _ = writeln!(out, "{}, 0, m", encode(prefix));
                }
                g.dirs += 1;
                walk(&e.path(), prefix, files_only, g, out)?;
            }
        } else if ft.is_file() {
            let size = e.metadata().map_err(io)?.len();
            let _ = writeln!(out, "{}, {size}, c", encode(prefix));
            g.files += 1;
            g.bytes += size;
        } else {
            g.skipped += 1;
        }
        prefix.truncate(len);
    }
    Ok(())
}

/// The files that exist at the end of `list`, with their sizes, in creation order.
fn final_files(list: &List) -> Vec<(Vec<u8>, u64)> {
    let mut order: Vec<Vec<u8>> = Vec::new();
    let mut size: HashMap<Vec<u8>, u64> = HashMap::new();
    for e in list.entries() {
        match e.op {
            Op::Create { .. } => {
                order.push(e.name.clone());
                size.insert(e.name.clone(), e.size);
            }
            Op::Delete => {
                size.remove(&e.name);
            }
            _ => {}
        }
    }
    order
        .into_iter()
        .filter_map(|n| size.remove(&n).map(|s| (n, s)))
        .collect()
}

/// A boot read set: non-empty files of `list` (those it leaves existing), in a random order
/// from `seed`, each taken while the total stays within `bytes`; read in the list's order.
pub fn sample(list: &List, bytes: u64, seed: u64) -> Result<Generated, GenError> {
    let files = final_files(list);
    let total: u64 = files.iter().map(|f| f.1).sum();
    if bytes > total {
        return Err(GenError::Input(format!(
            "--bytes {bytes} is more than the {total} bytes of the files {} leaves",
            list.file.display()
        )));
    }
    let mut idx: Vec<usize> = (0..files.len()).filter(|&i| files[i].1 > 0).collect();
    let mut rng = Rng::new(seed);
    for i in (1..idx.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        idx.swap(i, j);
    }
    let mut sum = 0u64;
    let mut picked = Vec::new();
    for i in idx {
        if sum + files[i].1 <= bytes {
            sum += files[i].1;
            picked.push(i);
            if sum == bytes {
                break;
            }
        }
    }
    picked.sort_unstable();
    let mut text = format!(
        "# boot read set: {} files, {sum} bytes (asked {bytes}), seed {seed}\n",
        picked.len()
    );
    for &i in &picked {
        let _ = writeln!(text, "{}, {}, s", encode(&files[i].0), files[i].1);
    }
    Ok(Generated {
        text,
        files: picked.len() as u64,
        dirs: 0,
        bytes: sum,
        skipped: 0,
    })
}

/// The workday generator's parameters (the command's flags).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// M: the number of sets kept once the start is over.
    pub sets: u32,
    /// r: sets read per day.
    pub read: u32,
    /// c: sets created per day (2c per day at the start, until M exist).
    pub create: u32,
    /// d: sets deleted per day.
    pub delete: u32,
    pub days: u32,
    /// Bytes per set.
    pub set_bytes: u64,
    pub seed: u64,
}

/// Files per directory of a set.
pub const FILES_PER_DIR: usize = 64;
/// The directory that holds the sets.
pub const SETS_DIR: &str = "data";

/// What one day does with the sets (numbers of sets, 0 = the regularly used set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayPlan {
    pub day: u32,
    pub read: Vec<u32>,
    pub created: Vec<u32>,
    pub deleted: Vec<u32>,
    /// Sets existing at the day's end.
    pub existing: u32,
}

impl Schedule {
    pub fn validate(&self) -> Result<(), GenError> {
        let bad = |m: String| Err(GenError::Input(m));
        if self.sets == 0 || self.days == 0 || self.read == 0 || self.create == 0 {
            return bad("--sets, --read, --create and --days must be at least 1".into());
        }
        if self.read > self.sets {
            return bad(format!(
                "--read {} is more than --sets {}: a day cannot read more sets than exist",
                self.read, self.sets
            ));
        }
        if self.delete > self.create {
            return bad(format!(
                "--delete {} is more than --create {}: the sets would run out",
                self.delete, self.create
            ));
        }
        if self.delete > 0 && self.sets <= self.delete {
            return bad(format!(
                "--sets {} leaves nothing to delete besides the regularly used set (--delete {})",
                self.sets, self.delete
            ));
        }
        if self.set_bytes < 512 {
            return bad(format!(
                "--set-bytes {} is less than one file (512 bytes)",
                self.set_bytes
            ));
        }
        Ok(())
    }

    /// Which sets each day reads, creates and deletes. At the day's start `n` sets exist.
    /// While `n` < M the day creates 2c sets (at most M − n) and deletes none; afterwards it
    /// creates c and deletes d, chosen at random among the existing sets other than set 0.
    /// It reads every existing set while `n` < r, otherwise set 0 (the regularly used set:
    /// the first created, never deleted) and r − 1 others at random. Reads come first (of
    /// the sets that exist when the day starts), then deletes, then creates.
    pub fn plan(&self) -> Vec<DayPlan> {
        let mut rng = Rng::stream(self.seed, 0xda75);
        let mut existing: Vec<u32> = Vec::new();
        let mut next = 0u32;
        let mut out = Vec::new();
        for day in 1..=self.days {
            let n = existing.len() as u32;
            let read = if n < self.read {
                existing.clone()
            } else {
                let mut others: Vec<u32> = existing.iter().copied().filter(|&s| s != 0).collect();
                let mut r = vec![0];
                for _ in 1..self.read {
                    let j = rng.below(others.len() as u64) as usize;
                    r.push(others.swap_remove(j));
                }
                r.sort_unstable();
                r
            };
            let ramp = n < self.sets;
            let (ncreate, ndelete) = if ramp {
                ((2 * self.create).min(self.sets - n), 0)
            } else {
                (self.create, self.delete)
            };
            let mut deleted = Vec::new();
            for _ in 0..ndelete {
                let others: Vec<usize> =
                    (0..existing.len()).filter(|&i| existing[i] != 0).collect();
                let j = others[rng.below(others.len() as u64) as usize];
                deleted.push(existing.remove(j));
            }
            deleted.sort_unstable();
            let created: Vec<u32> = (next..next + ncreate).collect();
            next += ncreate;
            existing.extend(&created);
            out.push(DayPlan {
                day,
                read,
                created,
                deleted,
                existing: existing.len() as u32,
            });
        }
        out
    }

    /// Set `k`'s files (name within the set, size): generated once from the seed and `k`.
    /// Sizes are log-uniform, 90 % from 512 B to 64 KiB and 10 % from 64 KiB to 4 MiB, drawn
    /// until the set holds `set_bytes` (the last file cut to fit exactly).
    pub fn set_files(&self, k: u32) -> Vec<(String, u64)> {
        let mut rng = Rng::stream(self.seed, 0x5e7 << 32 | u64::from(k));
        let mut files = Vec::new();
        let mut left = self.set_bytes;
        while left > 0 {
            let (lo, hi) = if rng.below(10) == 0 {
                (16.0, 22.0)
            } else {
                (9.0, 16.0)
            };
            let size = (2f64.powf(lo + (hi - lo) * rng.next_f64())) as u64;
            let size = size.clamp(1, left);
            let i = files.len();
            files.push((format!("d{:02}/f{:05}", i / FILES_PER_DIR, i), size));
            left -= size;
        }
        files
    }

    /// The days list: `[day N]` sections with the day's reads, deletes and creates.
    pub fn generate(&self) -> Result<Generated, GenError> {
        self.validate()?;
        let plan = self.plan();
        let mut cache: HashMap<u32, Vec<(String, u64)>> = HashMap::new();
        let mut files_of = |k: u32| cache.entry(k).or_insert_with(|| self.set_files(k)).clone();
        let set = |k: u32| format!("{SETS_DIR}/set-{k:04}");
        let names = |v: &[u32]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.iter().map(|&k| set(k)).collect::<Vec<_>>().join(" ")
            }
        };
        let mut text = format!(
            "# workdays: M = {} sets of {} bytes, r = {}, c = {}, d = {}, {} days, seed {}\n",
            self.sets, self.set_bytes, self.read, self.create, self.delete, self.days, self.seed
        );
        let (mut nfiles, mut bytes) = (0u64, 0u64);
        for d in &plan {
            let _ = writeln!(
                text,
                "[day {}]\n# read: {}\n# delete: {}\n# create: {}\n# sets at the end of the day: {}",
                d.day,
                names(&d.read),
                names(&d.deleted),
                names(&d.created),
                d.existing
            );
            for &k in &d.read {
                for (f, size) in files_of(k) {
                    let _ = writeln!(text, "{}/{f}, {size}, s", set(k));
                    nfiles += 1;
                    bytes += size;
                }
            }
            for &k in &d.deleted {
                let files = files_of(k);
                for (f, size) in &files {
                    let _ = writeln!(text, "{}/{f}, {size}, d", set(k));
                }
                let ndirs = files.len().div_ceil(FILES_PER_DIR);
                for i in 0..ndirs {
                    let _ = writeln!(text, "{}/d{i:02}, 0, x", set(k));
                }
                let _ = writeln!(text, "{}, 0, x", set(k));
            }
            for &k in &d.created {
                for (f, size) in files_of(k) {
                    let _ = writeln!(text, "{}/{f}, {size}, c", set(k));
                    nfiles += 1;
                    bytes += size;
                }
            }
        }
        Ok(Generated {
            text,
            files: nfiles,
            dirs: 0,
            bytes,
            skipped: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{check, Lists};
    use crate::list::{parse, Role};

    fn sched(m: u32, r: u32, c: u32, d: u32, days: u32) -> Schedule {
        Schedule {
            sets: m,
            read: r,
            create: c,
            delete: d,
            days,
            set_bytes: 300_000,
            seed: 7,
        }
    }

    #[test]
    fn the_start_creates_twice_as_many_sets_until_m_exist() {
        let p = sched(4, 2, 1, 1, 6).plan();
        let counts: Vec<(usize, usize, usize, u32)> = p
            .iter()
            .map(|d| (d.read.len(), d.created.len(), d.deleted.len(), d.existing))
            .collect();
        assert_eq!(
            counts,
            vec![
                (0, 2, 0, 2),
                (2, 2, 0, 4),
                (2, 1, 1, 4),
                (2, 1, 1, 4),
                (2, 1, 1, 4),
                (2, 1, 1, 4)
            ]
        );
        for d in &p[1..] {
            assert!(d.read.contains(&0), "day {} does not read set 0", d.day);
            assert!(!d.deleted.contains(&0));
        }
    }

    #[test]
    fn the_days_list_is_valid_and_deterministic() {
        let s = sched(5, 3, 1, 1, 8);
        let a = s.generate().unwrap();
        assert_eq!(a, s.generate().unwrap());
        let days = parse(Path::new("d"), &a.text, Role::Days).unwrap();
        assert_eq!(days.sections.len(), 8);
        check(&Lists {
            days: Some(days),
            ..Lists::default()
        })
        .unwrap();
        let other = Schedule {
            seed: 8,
            ..s.clone()
        }
        .generate()
        .unwrap();
        assert_ne!(a.text, other.text);
        let files = s.set_files(3);
        assert_eq!(files.iter().map(|f| f.1).sum::<u64>(), 300_000);
    }

    #[test]
    fn a_sample_sums_to_the_budget_and_scan_sees_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("b/c")).unwrap();
        std::fs::write(dir.path().join("a"), vec![0; 100]).unwrap();
        std::fs::write(dir.path().join("b/c/x,y"), vec![0; 50]).unwrap();
        std::fs::write(dir.path().join("b/z"), vec![0; 25]).unwrap();
        let g = scan(dir.path(), false).unwrap();
        let body: Vec<&str> = g.text.lines().skip(1).collect();
        assert_eq!(
            body,
            [
                "a, 100, c",
                "b, 0, m",
                "b/c, 0, m",
                "b/c/x%2Cy, 50, c",
                "b/z, 25, c"
            ]
        );
        let l = parse(Path::new("i"), &g.text, Role::Plain).unwrap();
        let s = sample(&l, 75, 1).unwrap();
        assert!((50..=75).contains(&s.bytes), "{}", s.text);
        assert!(sample(&l, 1000, 1).is_err());
    }
}
