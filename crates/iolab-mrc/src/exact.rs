//! The exact LRU miss-ratio curve in one pass: stack distances from a Fenwick tree over
//! last-access times.
//!
//! Every tracked block has one live time slot, the time of its last request. The stack
//! distance of a request is the number of live slots after its block's slot (the blocks
//! requested since); the slot then moves to the current time. When the times run past the
//! tree, the live slots are renumbered 0 .. blocks in order (compaction), so the tree has
//! about twice as many slots as there are distinct blocks — memory grows with the blocks
//! of the trace, not with its length — and each request costs one hash lookup and three
//! O(log blocks) tree walks.

use super::fenwick::Fenwick;
use super::table::Table;
use super::Mrc;

/// Stack distances of a request stream.
pub struct StackDistance {
    table: Table,
    tree: Fenwick,
    now: usize,
    live: u32,
}

impl Default for StackDistance {
    fn default() -> Self {
        StackDistance::new(1 << 16)
    }
}

impl StackDistance {
    /// An empty history, sized for about `blocks` distinct blocks (it grows as needed).
    pub fn new(blocks: usize) -> StackDistance {
        StackDistance {
            table: Table::with_capacity(blocks),
            tree: Fenwick::new((2 * blocks).max(1 << 16)),
            now: 0,
            live: 0,
        }
    }

    /// Blocks tracked.
    pub fn blocks(&self) -> u32 {
        self.live
    }

    /// A request for `id`: the number of distinct other blocks requested since its previous
    /// request, or `None` for its first request.
    #[inline]
    pub fn access(&mut self, id: u64) -> Option<u32> {
        if self.now == self.tree.len() {
            self.compact();
        }
        let t = self.now;
        self.now += 1;
        self.tree.inc(t);
        match self.table.replace(id, t as u32) {
            Some(old) => {
                // Live slots after `old`, not counting the new one at `t`.
                let d = self.live - self.tree.prefix(old as usize);
                self.tree.dec(old as usize);
                Some(d)
            }
            None => {
                self.live += 1;
                None
            }
        }
    }

    /// Distances of a run of requests, in order, passed to `out` (`None`: first request).
    /// Looks ahead to prefetch the map entries and tree leaves of requests a few positions
    /// later, so that their cache misses overlap with the work on the current one.
    #[inline]
    pub fn access_all(&mut self, ids: &[u64], mut out: impl FnMut(Option<u32>)) {
        const MAP_AHEAD: usize = 16;
        const TREE_AHEAD: usize = 8;
        for (i, &id) in ids.iter().enumerate() {
            if let Some(&next) = ids.get(i + MAP_AHEAD) {
                self.table.prefetch(next);
            }
            if let Some(&soon) = ids.get(i + TREE_AHEAD) {
                if let Some(t) = self.table.get(soon) {
                    self.tree.prefetch(t as usize);
                }
            }
            out(self.access(id));
        }
    }

    /// Forgets `id` (SHARDS drops blocks when it lowers its threshold).
    pub fn remove(&mut self, id: u64) {
        if let Some(old) = self.table.remove(id) {
            self.tree.dec(old as usize);
            self.live -= 1;
        }
    }

    /// Renumbers the live slots 0 .. live, keeping their order, into a tree of at least
    /// twice as many slots.
    fn compact(&mut self) {
        let old_len = self.tree.len();
        let mut rank = vec![0u32; old_len];
        self.table.map_values(|v| {
            rank[v as usize] = 1;
            v
        });
        let mut r = 0u32;
        for x in rank.iter_mut() {
            let live = *x;
            *x = r;
            r += live;
        }
        self.table.map_values(|v| rank[v as usize]);
        drop(rank);
        let live = self.live as usize;
        let len = (2 * live).max(1 << 16).max(live + 1).next_power_of_two();
        if len != old_len {
            self.tree = Fenwick::new(len);
        }
        self.tree.fill_prefix(live);
        self.now = live;
    }

    /// Bytes of the structures.
    pub fn bytes(&self) -> usize {
        self.table.bytes() + self.tree.bytes()
    }
}

/// The exact LRU miss-ratio curve of a stream of block ids.
pub fn exact(ids: impl IntoIterator<Item = u64>) -> Mrc {
    match try_exact(ids.into_iter().map(Ok::<u64, std::convert::Infallible>)) {
        Ok((mrc, _)) => mrc,
        Err(never) => match never {},
    }
}

/// The exact curve of a trace being read (block ids, or the reader's first error, which
/// ends it), and the bytes its structures took.
pub fn try_exact<E>(mut ids: impl Iterator<Item = Result<u64, E>>) -> Result<(Mrc, usize), E> {
    let mut h = Histogram::default();
    let mut buf = Vec::with_capacity(CHUNK);
    loop {
        buf.clear();
        for id in ids.by_ref().take(CHUNK) {
            buf.push(id?);
        }
        if buf.is_empty() {
            break;
        }
        h.add(&buf);
    }
    let bytes = h.bytes();
    Ok((h.finish(), bytes))
}

/// Requests handed to [`StackDistance::access_all`] at a time.
pub const CHUNK: usize = 1 << 14;

/// The exact curve built chunk by chunk (for callers that read a trace themselves).
#[derive(Default)]
pub struct Histogram {
    sd: StackDistance,
    hist: Vec<u64>,
    requests: u64,
    cold: u64,
}

impl Histogram {
    /// The next requests of the trace.
    pub fn add(&mut self, ids: &[u64]) {
        let (hist, cold) = (&mut self.hist, &mut self.cold);
        self.requests += ids.len() as u64;
        self.sd.access_all(ids, |d| match d {
            None => *cold += 1,
            Some(d) => {
                let d = d as usize;
                if d >= hist.len() {
                    hist.resize((d + 1).max(2 * hist.len()), 0);
                }
                hist[d] += 1;
            }
        });
    }

    /// Bytes of the structures.
    pub fn bytes(&self) -> usize {
        self.sd.bytes() + 8 * self.hist.capacity()
    }

    /// The curve.
    pub fn finish(mut self) -> Mrc {
        while self.hist.last() == Some(&0) {
            self.hist.pop();
        }
        Mrc {
            requests: self.requests as f64,
            cold: self.cold as f64,
            hist: self.hist.into_iter().map(|c| c as f64).collect(),
            unit: 1.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_distances() {
        // a b c a b b d a: a⁻ b⁻ c⁻ a(2: b c) b(2: c a) b(0) d⁻ a(2: b d)
        let mut sd = StackDistance::new(4);
        let got: Vec<Option<u32>> = [1, 2, 3, 1, 2, 2, 4, 1]
            .iter()
            .map(|&i| sd.access(i))
            .collect();
        assert_eq!(
            got,
            [None, None, None, Some(2), Some(2), Some(0), None, Some(2)]
        );
        let m = exact([1u64, 2, 3, 1, 2, 2, 4, 1]);
        assert_eq!(m.cold, 4.0);
        assert_eq!(m.hist, [1.0, 0.0, 3.0]);
        // 1 block: only the b b repeat hits → 7 misses; 3 blocks: 4 cold misses.
        assert_eq!(m.misses(1), 7.0);
        assert_eq!(m.misses(2), 7.0);
        assert_eq!(m.misses(3), 4.0);
        assert_eq!(
            m.curve(&[1, 3, 100]),
            [(1, 7.0 / 8.0), (3, 0.5), (100, 0.5)]
        );
    }

    #[test]
    fn compaction_keeps_distances() {
        // Far more requests than tree slots: compare with a naive LRU stack.
        let mut sd = StackDistance::new(8);
        let mut stack: Vec<u64> = Vec::new();
        let mut x: u64 = 5;
        for _ in 0..300_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let id = x % 700;
            let want = stack.iter().position(|&s| s == id).map(|p| {
                stack.remove(p);
                p as u32
            });
            stack.insert(0, id);
            assert_eq!(sd.access(id), want);
        }
    }
}
