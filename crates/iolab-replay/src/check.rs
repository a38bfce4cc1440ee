//! Validation: the lists of a replay (install, boot, days) run through a simulated namespace
//! in the order the replay will run them, so every impossible operation — reading a file never
//! created, deleting one twice, creating one that exists, a size that disagrees with the
//! file's — is found, located, before anything touches the disk. What comes out is the
//! [`Program`]: every phase's system-call-level steps, parents to make included.

use std::collections::HashMap;
use std::ffi::CString;
use std::path::Path;

use crate::list::{Entry, List, ListError, Op};

/// The lists of one replay.
#[derive(Debug, Clone, Default)]
pub struct Lists {
    pub install: Option<List>,
    pub boot: Option<List>,
    pub days: Option<List>,
}

/// Which part of the replay a phase is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseKind {
    /// The install list, once, before the first day.
    Install,
    /// The boot list, at the start of a day.
    Boot,
    /// A day's own operations.
    Work,
}

impl PhaseKind {
    pub fn name(self) -> &'static str {
        match self {
            PhaseKind::Install => "install",
            PhaseKind::Boot => "boot",
            PhaseKind::Work => "work",
        }
    }
}

/// One system-call-level step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Create { size: u64, fsync: bool },
    Read { size: u64 },
    ReadAt { offset: u64, len: u64 },
    Fsync,
    Delete,
    Mkdir,
    Rmdir,
}

/// One phase: its steps, on names relative to the replay's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    pub kind: PhaseKind,
    /// 0 for the install, 1… for the days.
    pub day: u32,
    pub steps: Vec<(CString, Step)>,
    /// What the steps will move: bytes written, bytes read, files created, read, deleted.
    pub write_bytes: u64,
    pub read_bytes: u64,
    pub files: u64,
}

/// A validated replay: the install phase (if any), then per day its boot and work phases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub phases: Vec<Phase>,
    /// Days replayed.
    pub days: u32,
    /// Names (files and directories) left at the end, each before its parent, for clean-up.
    pub leftover: Vec<(CString, bool)>,
    /// Largest number of bytes present at once (for the target's size).
    pub peak_bytes: u64,
    /// The first components of every name the replay makes: none may exist beforehand, so
    /// that everything under them is the replay's to remove.
    pub roots: Vec<CString>,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    dir: bool,
    size: u64,
    children: u32,
    /// (list index, line) of its creation.
    at: (usize, u32),
}

/// The simulated namespace.
struct Sim<'a> {
    files: [Option<&'a Path>; 3],
    nodes: HashMap<Vec<u8>, Node>,
    gone: HashMap<Vec<u8>, (usize, u32)>,
    // Wider than any size: a list's sizes (each up to 2^64 − 1) may add up past 64 bits.
    bytes: u128,
    peak: u128,
}

fn shown(n: &[u8]) -> String {
    String::from_utf8_lossy(n).into_owned()
}

fn cstr(n: &[u8]) -> CString {
    // Names hold no NUL (the parser refuses them).
    CString::new(n).unwrap_or_default()
}

fn parent(n: &[u8]) -> Option<&[u8]> {
    n.iter().rposition(|&b| b == b'/').map(|i| &n[..i])
}

impl<'a> Sim<'a> {
    fn place(&self, at: (usize, u32)) -> String {
        let f = self.files[at.0].map_or_else(String::new, |p| p.display().to_string());
        format!("{f}:{}", at.1)
    }

    fn err(&self, li: usize, e: &Entry, field: usize, msg: String, hint: String) -> ListError {
        ListError::new(
            self.files[li].unwrap_or(Path::new("")),
            e.loc(field),
            msg,
            hint,
        )
    }

    /// Makes the missing parents of `name` (as steps), refusing a parent that is a file.
    fn parents(
        &mut self,
        li: usize,
        e: &Entry,
        steps: &mut Vec<(CString, Step)>,
    ) -> Result<(), ListError> {
        let mut missing: Vec<&[u8]> = Vec::new();
        let mut cur = parent(&e.name);
        while let Some(p) = cur {
            match self.nodes.get(p) {
                Some(n) if n.dir => break,
                Some(n) => {
                    let msg = format!(
                        "`{}` is a file (created at {}), not a directory",
                        shown(p),
                        self.place(n.at)
                    );
                    return Err(self.err(
                        li,
                        e,
                        0,
                        msg,
                        format!("`{}` needs a directory there", shown(&e.name)),
                    ));
                }
                None => missing.push(p),
            }
            cur = parent(p);
        }
        for p in missing.into_iter().rev() {
            self.add(p, true, 0, (li, e.line));
            steps.push((cstr(p), Step::Mkdir));
        }
        Ok(())
    }

    fn add(&mut self, name: &[u8], dir: bool, size: u64, at: (usize, u32)) {
        if let Some(p) = parent(name) {
            if let Some(n) = self.nodes.get_mut(p) {
                n.children += 1;
            }
        }
        self.gone.remove(name);
        self.nodes.insert(
            name.to_vec(),
            Node {
                dir,
                size,
                children: 0,
                at,
            },
        );
        self.bytes += u128::from(size);
        self.peak = self.peak.max(self.bytes);
    }

    fn remove(&mut self, name: &[u8], at: (usize, u32)) {
        if let Some(n) = self.nodes.remove(name) {
            self.bytes -= u128::from(n.size);
        }
        if let Some(p) = parent(name) {
            if let Some(n) = self.nodes.get_mut(p) {
                n.children -= 1;
            }
        }
        self.gone.insert(name.to_vec(), at);
    }

    /// The existing file `e` names, or why not.
    fn file(&self, li: usize, e: &Entry, day: &str) -> Result<Node, ListError> {
        match self.nodes.get(&e.name) {
            Some(n) if !n.dir => Ok(*n),
            Some(n) => Err(self.err(
                li,
                e,
                0,
                format!(
                    "`{}` is a directory (made at {}){day}",
                    shown(&e.name),
                    self.place(n.at)
                ),
                format!("`{}` works on files", e.op.letter()),
            )),
            None => Err(match self.gone.get(&e.name) {
                Some(&at) if e.op == Op::Delete => self.err(
                    li,
                    e,
                    0,
                    format!(
                        "`{}` is deleted twice (first at {}){day}",
                        shown(&e.name),
                        self.place(at)
                    ),
                    "delete a file once, or create it again in between".into(),
                ),
                Some(&at) => self.err(
                    li,
                    e,
                    0,
                    format!(
                        "`{}` was deleted at {}{day}",
                        shown(&e.name),
                        self.place(at)
                    ),
                    "a deleted file must be created again before it is used".into(),
                ),
                None => self.err(
                    li,
                    e,
                    0,
                    format!("`{}` was never created{day}", shown(&e.name)),
                    "create it first: in the install list or on an earlier line or day".into(),
                ),
            }),
        }
    }

    fn step(&mut self, li: usize, e: &Entry, day: &str, ph: &mut Phase) -> Result<(), ListError> {
        let at = (li, e.line);
        let same_size = |s: &Self, n: Node| -> Result<(), ListError> {
            if n.size == e.size {
                return Ok(());
            }
            Err(s.err(
                li,
                e,
                1,
                format!(
                    "`{}` has {} bytes here, the list says {}{day}",
                    shown(&e.name),
                    n.size,
                    e.size
                ),
                format!("give the size it was created with ({})", s.place(n.at)),
            ))
        };
        match e.op {
            Op::Create { .. } | Op::Mkdir if self.nodes.contains_key(&e.name) => {
                let n = self.nodes[&e.name];
                let what = if n.dir { "directory" } else { "file" };
                Err(self.err(
                    li,
                    e,
                    0,
                    format!(
                        "`{}` exists already ({what} made at {}){day}",
                        shown(&e.name),
                        self.place(n.at)
                    ),
                    "a name is created once; delete it first to create it again".into(),
                ))
            }
            Op::Create { fsync } => {
                self.parents(li, e, &mut ph.steps)?;
                self.add(&e.name, false, e.size, at);
                ph.steps.push((
                    cstr(&e.name),
                    Step::Create {
                        size: e.size,
                        fsync,
                    },
                ));
                ph.write_bytes = ph.write_bytes.saturating_add(e.size);
                ph.files += 1;
                Ok(())
            }
            Op::Mkdir => {
                self.parents(li, e, &mut ph.steps)?;
                self.add(&e.name, true, 0, at);
                ph.steps.push((cstr(&e.name), Step::Mkdir));
                Ok(())
            }
            Op::Read => {
                let n = self.file(li, e, day)?;
                same_size(self, n)?;
                ph.steps.push((cstr(&e.name), Step::Read { size: n.size }));
                ph.read_bytes = ph.read_bytes.saturating_add(n.size);
                ph.files += 1;
                Ok(())
            }
            Op::ReadAt { offset } => {
                let n = self.file(li, e, day)?;
                if offset.checked_add(e.size).is_none_or(|end| end > n.size) {
                    return Err(self.err(
                        li,
                        e,
                        3,
                        format!(
                            "reading {} bytes at {offset} goes past the end of `{}` ({} bytes){day}",
                            e.size,
                            shown(&e.name),
                            n.size
                        ),
                        "read within the file: offset + length ≤ its size".into(),
                    ));
                }
                ph.steps.push((
                    cstr(&e.name),
                    Step::ReadAt {
                        offset,
                        len: e.size,
                    },
                ));
                ph.read_bytes = ph.read_bytes.saturating_add(e.size);
                ph.files += 1;
                Ok(())
            }
            Op::Fsync => {
                self.file(li, e, day)?;
                ph.steps.push((cstr(&e.name), Step::Fsync));
                Ok(())
            }
            Op::Delete => {
                let n = self.file(li, e, day)?;
                same_size(self, n)?;
                self.remove(&e.name, at);
                ph.steps.push((cstr(&e.name), Step::Delete));
                ph.files += 1;
                Ok(())
            }
            Op::Rmdir => match self.nodes.get(&e.name).copied() {
                Some(n) if n.dir && n.children == 0 => {
                    self.remove(&e.name, at);
                    ph.steps.push((cstr(&e.name), Step::Rmdir));
                    Ok(())
                }
                Some(n) if n.dir => Err(self.err(
                    li,
                    e,
                    0,
                    format!(
                        "`{}` is not empty ({} entries){day}",
                        shown(&e.name),
                        n.children
                    ),
                    "delete what it holds first".into(),
                )),
                Some(n) => Err(self.err(
                    li,
                    e,
                    0,
                    format!(
                        "`{}` is a file (created at {}){day}",
                        shown(&e.name),
                        self.place(n.at)
                    ),
                    "delete files with `d`".into(),
                )),
                None => Err(self.err(
                    li,
                    e,
                    0,
                    format!("the directory `{}` does not exist{day}", shown(&e.name)),
                    "make it first (`m`, or by creating a file in it)".into(),
                )),
            },
        }
    }
}

/// Runs `lists` through the namespace: install, then per day the boot list and the day's
/// operations. The days are the days list's sections, or one day when only a boot list is
/// given.
pub fn check(lists: &Lists) -> Result<Program, ListError> {
    let mut sim = Sim {
        files: [
            lists.install.as_ref().map(|l| l.file.as_path()),
            lists.boot.as_ref().map(|l| l.file.as_path()),
            lists.days.as_ref().map(|l| l.file.as_path()),
        ],
        nodes: HashMap::new(),
        gone: HashMap::new(),
        bytes: 0,
        peak: 0,
    };
    let mut phases = Vec::new();
    let empty = |kind, day| Phase {
        kind,
        day,
        steps: Vec::new(),
        write_bytes: 0,
        read_bytes: 0,
        files: 0,
    };
    if let Some(l) = &lists.install {
        let mut ph = empty(PhaseKind::Install, 0);
        for e in l.entries() {
            sim.step(0, e, "", &mut ph)?;
        }
        phases.push(ph);
    }
    let days: Vec<Option<&crate::list::Section>> = match (&lists.days, &lists.boot) {
        (Some(d), _) => d.sections.iter().map(Some).collect(),
        (None, Some(_)) => vec![None],
        (None, None) => Vec::new(),
    };
    for (i, section) in days.iter().enumerate() {
        let day = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let on = format!(" (on day {day})");
        if let Some(b) = &lists.boot {
            let mut ph = empty(PhaseKind::Boot, day);
            for e in b.entries() {
                sim.step(1, e, &on, &mut ph)?;
            }
            phases.push(ph);
        }
        if let Some(s) = section {
            let mut ph = empty(PhaseKind::Work, day);
            for e in &s.entries {
                sim.step(2, e, "", &mut ph)?;
            }
            phases.push(ph);
        }
    }
    let mut leftover: Vec<(CString, bool)> = sim
        .nodes
        .iter()
        .map(|(n, node)| (cstr(n), node.dir))
        .collect();
    // Every name before its parent: descending byte order (a descendant is its ancestor's
    // name and more), a directory's entries together.
    leftover.sort_by(|a, b| b.0.cmp(&a.0));
    let mut roots: Vec<CString> = phases
        .iter()
        .flat_map(|p| p.steps.iter())
        .filter(|(_, s)| matches!(s, Step::Create { .. } | Step::Mkdir))
        .map(|(n, _)| {
            let b = n.as_bytes();
            cstr(&b[..b.iter().position(|&c| c == b'/').unwrap_or(b.len())])
        })
        .collect();
    roots.sort();
    roots.dedup();
    Ok(Program {
        roots,
        phases,
        days: u32::try_from(days.len()).unwrap_or(u32::MAX),
        leftover,
        // Past 2^64 − 1 bytes no filesystem holds it; the run refuses it for lack of room.
        peak_bytes: u64::try_from(sim.peak).unwrap_or(u64::MAX),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::list::{parse, Role};

    fn lists(install: &str, boot: &str, days: &str) -> Lists {
        let l = |f: &str, t: &str, r| (!t.is_empty()).then(|| parse(Path::new(f), t, r).unwrap());
        Lists {
            install: l("i.list", install, Role::Plain),
            boot: l("b.list", boot, Role::Plain),
            days: l("d.list", days, Role::Days),
        }
    }

    #[test]
    fn a_replay_becomes_steps_with_parents_made() {
        let p = check(&lists(
            "a/b/c, 5, c\na/d, 3, c\n",
            "a/d, 3, s\n",
            "[day 1]\na/b/c, 5, d\n[day 2]\n",
        ))
        .unwrap();
        assert_eq!(p.days, 2);
        let kinds: Vec<_> = p.phases.iter().map(|p| (p.kind, p.day)).collect();
        assert_eq!(
            kinds,
            vec![
                (PhaseKind::Install, 0),
                (PhaseKind::Boot, 1),
                (PhaseKind::Work, 1),
                (PhaseKind::Boot, 2),
                (PhaseKind::Work, 2)
            ]
        );
        let s: Vec<_> = p.phases[0]
            .steps
            .iter()
            .map(|(n, s)| (n.to_str().unwrap(), s.clone()))
            .collect();
        assert_eq!(
            s,
            vec![
                ("a", Step::Mkdir),
                ("a/b", Step::Mkdir),
                (
                    "a/b/c",
                    Step::Create {
                        size: 5,
                        fsync: false
                    }
                ),
                (
                    "a/d",
                    Step::Create {
                        size: 3,
                        fsync: false
                    }
                ),
            ]
        );
        assert_eq!(p.peak_bytes, 8);
        let left: Vec<_> = p
            .leftover
            .iter()
            .map(|(n, _)| n.to_str().unwrap())
            .collect();
        assert_eq!(left, vec!["a/d", "a/b", "a"]);
        let p = check(&lists("a/b, 1, c\na-x, 1, c\na/b-c/d, 1, c\n", "", "")).unwrap();
        let left: Vec<_> = p
            .leftover
            .iter()
            .map(|(n, _)| n.to_str().unwrap())
            .collect();
        assert_eq!(left, vec!["a/b-c/d", "a/b-c", "a/b", "a-x", "a"]);
    }

    fn fails(install: &str, boot: &str, days: &str) -> ListError {
        check(&lists(install, boot, days)).unwrap_err()
    }

    #[test]
    fn impossible_operations_are_located() {
        let e = fails("a, 1, c\nb, 1, s\n", "", "");
        assert_eq!((e.file.to_str().unwrap(), e.line, e.col), ("i.list", 2, 1));
        assert!(e.message.contains("never created"), "{e}");
        let e = fails("a, 1, c\na, 1, d\na, 1, d\n", "", "");
        assert!(
            e.message.contains("deleted twice (first at i.list:2)"),
            "{e}"
        );
        let e = fails("a, 1, c\na, 1, c\n", "", "");
        assert!(e.message.contains("exists already"), "{e}");
        let e = fails("a, 1, c\na, 2, s\n", "", "");
        assert_eq!(e.col, 4);
        let e = fails("a, 1, c\n", "a, 1, s\n", "[day 1]\na, 1, d\n[day 2]\n");
        assert!(e.message.contains("deleted at d.list:2 (on day 2)"), "{e}");
        let e = fails("a, 1, c\na/b, 1, c\n", "", "");
        assert!(e.message.contains("is a file"), "{e}");
        let e = fails("a/b, 1, c\na, 0, x\n", "", "");
        assert!(e.message.contains("not empty"), "{e}");
        let e = fails("a, 10, c\na, 5, r, 6\n", "", "");
        assert!(e.message.contains("past the end"), "{e}");
    }
}
