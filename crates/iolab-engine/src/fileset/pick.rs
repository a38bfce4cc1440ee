//! Lock-free picking of entries by worker threads.
//!
//! filebench keeps, per fileset, AVL trees of existing / non-existing / free entries under one
//! process-shared mutex (`fileset_pick`, `fileset_unbusy` in fileset.c), and a thread that
//! finds every candidate busy either sleeps on a condition variable or gives up. iolab keeps
//! one 32-bit state word per entry and walks the array from a rotor: a pick is a few relaxed
//! loads and one compare-exchange, and threads never wait for each other.
//!
//! State word: bit 0 = exists, bit 1 = busy (claimed by one thread for the length of an op),
//! bits 2‥31 = how many fd slots hold the entry open. As in filebench, an open file is *not*
//! busy (`fileset_openfile` unbusies it after the open), so many threads can keep the same file
//! open — a `define file` shared by 200 threads works — and a thread that wants to delete a
//! file can ask for one that nobody holds open ([`Want::ExistsNotOpen`]).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

const EXISTS: u32 = 1;
const BUSY: u32 = 2;
const OPEN_ONE: u32 = 4;

/// Which entries a pick accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// An existing entry (openfile, statfile, readwholefile without a slot, removedir).
    Exists,
    /// An entry that does not exist (createfile, makedir).
    Missing,
    /// Either (listdir's directories, which always exist).
    Any,
    /// An existing entry that no fd slot holds open (deletefile: filebench picks any existing
    /// file and then silently skips it when another thread has it open, which starves
    /// createfile until the run aborts; iolab picks a file it can delete instead).
    ExistsNotOpen,
}

impl Want {
    #[inline]
    fn accepts(self, state: u32) -> bool {
        match self {
            Want::Exists => state & EXISTS != 0,
            Want::Missing => state & EXISTS == 0,
            Want::Any => true,
            Want::ExistsNotOpen => state & EXISTS != 0 && state < OPEN_ONE,
        }
    }

    /// filebench keeps one rotor for non-existing entries (`fs_file_nerotor`) and one for
    /// existing ones (`fs_file_exrotor`); everything that wants an existing entry shares it.
    #[inline]
    fn rotor(self) -> usize {
        match self {
            Want::Missing => 1,
            _ => 0,
        }
    }
}

/// Where a pick starts walking.
#[derive(Debug)]
pub enum Cursor<'a> {
    /// The fileset's shared round-robin rotor (filebench's default): each pick starts after
    /// the previous one, so successive picks visit entries 0, 1, 2, … and wrap.
    Shared,
    /// A rotor owned by the calling thread (`opennext`; filebench's per-thread
    /// `fs_file_exrotor[tid]`). Start it at 0; the pick advances it.
    Own(&'a mut u64),
    /// An explicit index (the `indexed` random variable; reduced modulo the number of
    /// entries): the pick takes the first acceptable entry at or after it, wrapping, and moves
    /// no rotor (filebench's `FILESET_PICKBYINDEX`).
    At(u64),
}

/// Keeps hot shared counters on their own cache lines so that threads bumping one rotor do not
/// invalidate another.
#[repr(align(64))]
#[derive(Debug, Default)]
struct Padded(AtomicU64);

/// Entries of one kind (files, leaf directories or directories) and their states.
#[derive(Debug)]
pub(super) struct Pool {
    state: Vec<AtomicU32>,
    existing: Padded,
    rotors: [Padded; 2],
}

impl Pool {
    pub fn new(n: usize) -> Pool {
        Pool {
            state: (0..n).map(|_| AtomicU32::new(0)).collect(),
            existing: Padded::default(),
            rotors: Default::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.state.len()
    }

    pub fn heap_bytes(&self) -> usize {
        self.state.capacity() * std::mem::size_of::<AtomicU32>()
    }

    /// Sets every entry idle, existing or not as `exists(i)` says, and rewinds the rotors.
    /// Not for use while other threads pick.
    pub fn reset(&self, mut exists: impl FnMut(usize) -> bool) {
        let mut count = 0;
        for (i, s) in self.state.iter().enumerate() {
            let e = exists(i);
            count += u64::from(e);
            s.store(if e { EXISTS } else { 0 }, Ordering::Relaxed);
        }
        self.existing.0.store(count, Ordering::Relaxed);
        for r in &self.rotors {
            r.0.store(0, Ordering::Relaxed);
        }
    }

    pub fn existing(&self) -> u64 {
        self.existing.0.load(Ordering::Relaxed)
    }

    #[inline]
    pub fn exists(&self, i: usize) -> bool {
        self.state[i].load(Ordering::Relaxed) & EXISTS != 0
    }

    #[inline]
    pub fn open_count(&self, i: usize) -> u32 {
        self.state[i].load(Ordering::Relaxed) / OPEN_ONE
    }

    #[inline]
    pub fn is_busy(&self, i: usize) -> bool {
        self.state[i].load(Ordering::Relaxed) & BUSY != 0
    }

    /// Walks from the cursor to the first idle entry that `want` accepts and claims it.
    /// `None` when a whole cycle finds none: the set "ran dry" for this want.
    ///
    /// Exact round-robin when one thread picks; under contention two threads may start from
    /// the same rotor value, in which case the loser of the claim simply takes the next entry.
    /// Cost: O(1) when most entries are acceptable, O(n / acceptable) in general, O(1) through
    /// the existence count when none can be (`Exists` on an empty set, `Missing` on a full one).
    #[inline]
    pub fn pick(&self, want: Want, cursor: Cursor<'_>) -> Option<usize> {
        self.pick_adding(want, cursor, BUSY)
    }

    /// Like [`Pool::pick`], but instead of claiming the entry registers one more open of it
    /// in the same compare-exchange: no busy window during which other openers would miss it,
    /// and no deletion can slip in between (deletion needs "not open" and "not busy" in the
    /// same word).
    #[inline]
    pub fn pick_open(&self, cursor: Cursor<'_>) -> Option<usize> {
        self.pick_adding(Want::Exists, cursor, OPEN_ONE)
    }

    #[inline]
    fn pick_adding(&self, want: Want, cursor: Cursor<'_>, add: u32) -> Option<usize> {
        let n = self.state.len();
        if n == 0 {
            return None;
        }
        let existing = self.existing();
        let hopeless = match want {
            Want::Exists | Want::ExistsNotOpen => existing == 0,
            Want::Missing => existing >= n as u64,
            Want::Any => false,
        };
        if hopeless {
            return None;
        }
        let start = match &cursor {
            Cursor::Shared => self.rotors[want.rotor()].0.load(Ordering::Relaxed),
            Cursor::Own(r) => **r,
            Cursor::At(i) => *i,
        } % n as u64;
        let start = start as usize;
        let found = self
            .scan(want, start, n, add)
            .or_else(|| self.scan(want, 0, start, add))?;
        let next = if found + 1 == n { 0 } else { found as u64 + 1 };
        match cursor {
            Cursor::Shared => self.rotors[want.rotor()].0.store(next, Ordering::Relaxed),
            Cursor::Own(r) => *r = next,
            Cursor::At(_) => {}
        }
        Some(found)
    }

    #[inline]
    fn scan(&self, want: Want, from: usize, to: usize, add: u32) -> Option<usize> {
        (from..to).find(|&i| self.try_add_if(i, want, add))
    }

    /// Claims entry `i` if it is idle and `want` accepts it.
    #[inline]
    pub fn try_claim_if(&self, i: usize, want: Want) -> bool {
        self.try_add_if(i, want, BUSY)
    }

    /// Adds `add` (BUSY: a claim; OPEN_ONE: an open) to entry `i`'s state if it is not busy
    /// and `want` accepts it.
    #[inline]
    fn try_add_if(&self, i: usize, want: Want, add: u32) -> bool {
        let a = &self.state[i];
        let mut s = a.load(Ordering::Relaxed);
        loop {
            if s & BUSY != 0 || !want.accepts(s) {
                return false;
            }
            // Acquire pairs with the Release of the previous holder's release, so the new
            // holder sees what the previous one did (its size update, its file).
            let Some(new) = s.checked_add(add) else {
                return false; // 2³⁰ opens of one entry: treat as unavailable
            };
            match a.compare_exchange_weak(s, new, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
    }

    /// Ends a claim: clears busy, records whether the entry now exists and, with `opened`,
    /// that one more fd slot holds it open.
    #[inline]
    pub fn release(&self, i: usize, exists: bool, opened: bool) {
        let a = &self.state[i];
        let mut s = a.load(Ordering::Relaxed);
        loop {
            debug_assert!(s & BUSY != 0, "releasing entry {i}, which is not claimed");
            let mut new = (s & !(BUSY | EXISTS)) | if exists { EXISTS } else { 0 };
            if opened {
                new += OPEN_ONE;
            }
            match a.compare_exchange_weak(s, new, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        let was = s & EXISTS != 0;
        if was != exists {
            if exists {
                self.existing.0.fetch_add(1, Ordering::Relaxed);
            } else {
                self.existing.0.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    /// One fd slot no longer holds entry `i` open. A close without an open is ignored (and
    /// caught by a debug assertion) rather than corrupting the state word.
    #[inline]
    pub fn closed(&self, i: usize) {
        let r = self.state[i].fetch_update(Ordering::Release, Ordering::Relaxed, |s| {
            s.checked_sub(OPEN_ONE).filter(|_| s >= OPEN_ONE)
        });
        debug_assert!(r.is_ok(), "closing entry {i}, which is not open");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(exists: &[bool]) -> Pool {
        let p = Pool::new(exists.len());
        p.reset(|i| exists[i]);
        p
    }

    #[test]
    fn shared_rotor_is_exact_round_robin_and_wraps() {
        let p = pool(&[true; 4]);
        let mut order = Vec::new();
        for _ in 0..6 {
            let i = p.pick(Want::Exists, Cursor::Shared).unwrap();
            order.push(i);
            p.release(i, true, false);
        }
        assert_eq!(order, [0, 1, 2, 3, 0, 1]);
    }

    #[test]
    fn skips_busy_and_wrong_state_entries() {
        let p = pool(&[true, false, true, true, false]);
        // Entry 2 is held by someone else.
        assert!(p.try_claim_if(2, Want::Any));
        let mut got = Vec::new();
        for _ in 0..4 {
            let i = p.pick(Want::Exists, Cursor::Shared).unwrap();
            got.push(i);
            p.release(i, true, false);
        }
        assert_eq!(got, [0, 3, 0, 3]);
        // The missing rotor is separate from the existing one (filebench's nerotor/exrotor).
        assert_eq!(p.pick(Want::Missing, Cursor::Shared), Some(1));
        assert_eq!(p.pick(Want::Missing, Cursor::Shared), Some(4));
        // Both missing entries are now claimed: ran dry.
        assert_eq!(p.pick(Want::Missing, Cursor::Shared), None);
    }

    #[test]
    fn ran_dry_and_shortcuts() {
        let full = pool(&[true; 3]);
        assert_eq!(full.pick(Want::Missing, Cursor::Shared), None);
        let empty = pool(&[false; 3]);
        assert_eq!(empty.pick(Want::Exists, Cursor::Shared), None);
        assert_eq!(empty.pick(Want::ExistsNotOpen, Cursor::Shared), None);
        // All claimed: a whole cycle finds nothing.
        let all = pool(&[true; 3]);
        for _ in 0..3 {
            all.pick(Want::Any, Cursor::Shared).unwrap();
        }
        assert_eq!(all.pick(Want::Any, Cursor::Shared), None);
        assert_eq!(Pool::new(0).pick(Want::Any, Cursor::Shared), None);
    }

    #[test]
    fn release_moves_entries_between_states_and_counts() {
        let p = pool(&[false, false]);
        assert_eq!(p.existing(), 0);
        let i = p.pick(Want::Missing, Cursor::Shared).unwrap();
        p.release(i, true, false); // createfile
        assert_eq!(p.existing(), 1);
        assert!(p.exists(i));
        let j = p.pick(Want::Exists, Cursor::Shared).unwrap();
        assert_eq!(i, j);
        p.release(j, false, false); // deletefile
        assert_eq!(p.existing(), 0);
        assert!(!p.exists(j));
    }

    #[test]
    fn open_entries_stay_pickable_except_for_deletion() {
        let p = pool(&[true, true]);
        let a = p.pick(Want::Exists, Cursor::Shared).unwrap();
        p.release(a, true, true); // openfile into a slot
        assert_eq!(p.open_count(a), 1);
        assert!(!p.is_busy(a));
        // Another thread may open it too (filebench unbusies after open).
        assert!(p.try_claim_if(a, Want::Exists));
        p.release(a, true, true);
        assert_eq!(p.open_count(a), 2);
        // deletefile skips it.
        let d = p.pick(Want::ExistsNotOpen, Cursor::At(a as u64)).unwrap();
        assert_ne!(d, a);
        p.release(d, false, false);
        assert_eq!(p.pick(Want::ExistsNotOpen, Cursor::Shared), None);
        p.closed(a);
        p.closed(a);
        assert_eq!(p.open_count(a), 0);
        assert_eq!(p.pick(Want::ExistsNotOpen, Cursor::Shared), Some(a));
    }

    #[test]
    fn pick_open_registers_the_open_without_a_busy_window() {
        let p = pool(&[false, true, true]);
        let a = p.pick_open(Cursor::Shared).unwrap();
        assert_eq!(a, 1);
        assert!(!p.is_busy(a));
        assert_eq!(p.open_count(a), 1);
        // The same rotor as other existing-entry picks: next is 2, then 1 again.
        assert_eq!(p.pick_open(Cursor::Shared), Some(2));
        assert_eq!(p.pick_open(Cursor::Shared), Some(1));
        assert_eq!(p.open_count(1), 2);
        // Not deletable while open; a claimed (busy) entry is not opened.
        assert_eq!(p.pick(Want::ExistsNotOpen, Cursor::Shared), None);
        p.closed(2);
        assert!(p.try_claim_if(2, Want::ExistsNotOpen));
        assert_eq!(p.pick_open(Cursor::At(2)), Some(1));
        p.release(2, false, false);
        assert_eq!(p.pick_open(Cursor::At(2)), Some(1));
        // Missing entries are never opened.
        assert_eq!(p.open_count(0), 0);
    }

    #[test]
    fn own_and_indexed_cursors() {
        let p = pool(&[true; 5]);
        let mut mine = 3;
        let i = p.pick(Want::Exists, Cursor::Own(&mut mine)).unwrap();
        assert_eq!((i, mine), (3, 4));
        p.release(i, true, false);
        let i = p.pick(Want::Exists, Cursor::Own(&mut mine)).unwrap();
        assert_eq!((i, mine), (4, 0));
        p.release(i, true, false);
        // Indexed: reduced modulo n, the shared rotor untouched.
        assert_eq!(p.pick(Want::Exists, Cursor::At(7)), Some(2));
        assert_eq!(p.pick(Want::Exists, Cursor::At(2)), Some(3));
        assert_eq!(p.pick(Want::Exists, Cursor::Shared), Some(0));
    }

    #[test]
    fn two_threads_never_hold_the_same_entry() {
        let _hang = iolab_testkit::timeout(120);
        use std::sync::atomic::AtomicBool;
        let n = 64;
        let p = pool(&vec![true; n]);
        let held: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
        let opens: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
        let deleting: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
        let picks = AtomicU64::new(0);
        std::thread::scope(|s| {
            for t in 0..2u64 {
                let (p, held, opens, deleting, picks) = (&p, &held, &opens, &deleting, &picks);
                s.spawn(move || {
                    let mut own = t * 7;
                    for k in 0..200_000u64 {
                        if k % 11 == 0 {
                            // An open never overlaps a deletion's claim (other claims may
                            // overlap it: statfile on an open file is fine).
                            if let Some(i) = p.pick_open(Cursor::Shared) {
                                opens[i].fetch_add(1, Ordering::AcqRel);
                                assert!(
                                    !deleting[i].load(Ordering::Acquire),
                                    "{i} opened while being deleted"
                                );
                                opens[i].fetch_sub(1, Ordering::AcqRel);
                                p.closed(i);
                            }
                            continue;
                        }
                        let cursor = match k % 3 {
                            0 => Cursor::Shared,
                            1 => Cursor::Own(&mut own),
                            _ => Cursor::At(k),
                        };
                        let want = match k % 5 {
                            0 => Want::Missing,
                            1 => Want::ExistsNotOpen,
                            _ => Want::Exists,
                        };
                        let Some(i) = p.pick(want, cursor) else {
                            continue;
                        };
                        assert!(
                            !held[i].swap(true, Ordering::AcqRel),
                            "entry {i} handed out twice"
                        );
                        if want == Want::ExistsNotOpen {
                            assert_eq!(
                                opens[i].load(Ordering::Acquire),
                                0,
                                "{i} claimed while open"
                            );
                        }
                        picks.fetch_add(1, Ordering::Relaxed);
                        std::hint::spin_loop();
                        held[i].store(false, Ordering::Release);
                        // Flip existence now and then so every want stays satisfiable.
                        p.release(i, k % 7 != 0, false);
                    }
                });
            }
        });
        assert!(picks.load(Ordering::Relaxed) > 100_000);
        let counted = (0..n).filter(|&i| p.exists(i)).count() as u64;
        assert_eq!(p.existing(), counted);
        assert!((0..n).all(|i| !p.is_busy(i) && p.open_count(i) == 0));
    }
}
