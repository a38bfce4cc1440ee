//! Doubly linked lists threaded through flat `u32` index arrays.
//!
//! Policies keep one or more lists per set (LRU order, FIFO queues, ghosts). All lists of
//! all sets share the `prev`/`next` arrays (one entry per node, a node is usually a slot)
//! and the `head`/`tail` arrays (one entry per list), so a cache of many small sets costs
//! two `u32` per node and two per list, and nothing is allocated per request.

/// No node.
pub const NIL: u32 = u32::MAX;

/// `lists` lists over `nodes` nodes; each node is in at most one list.
#[derive(Debug, Clone)]
pub struct Lists {
    /// Per node: `[prev, next]`, side by side so that one cache line holds both.
    links: Vec<[u32; 2]>,
    /// Per list: `[head, tail]`.
    ends: Vec<[u32; 2]>,
}

impl Lists {
    /// Empty lists.
    pub fn new(lists: usize, nodes: usize) -> Lists {
        Lists {
            links: crate::mem::filled(nodes, [NIL; 2]),
            ends: vec![[NIL; 2]; lists],
        }
    }

    /// The first node (most recently pushed to the front), or [`NIL`].
    #[inline(always)]
    pub fn front(&self, list: usize) -> u32 {
        self.ends[list][0]
    }

    /// The last node, or [`NIL`].
    #[inline(always)]
    pub fn back(&self, list: usize) -> u32 {
        self.ends[list][1]
    }

    /// The node after `node` (towards the back), or [`NIL`].
    #[inline(always)]
    pub fn next(&self, node: u32) -> u32 {
        self.links[node as usize][1]
    }

    /// The node before `node` (towards the front), or [`NIL`].
    #[inline(always)]
    pub fn prev(&self, node: u32) -> u32 {
        self.links[node as usize][0]
    }

    /// Prefetches `node`'s links.
    #[inline(always)]
    pub fn prefetch(&self, node: u32) {
        crate::prefetch(&self.links[node as usize]);
    }

    /// Prefetches for the next evictions from the back of `list`: the map entries of the ids
    /// of the back node and the one before it (`ids` holds each node's id), and the id and
    /// links of the node before that. Each call so reads only lines an earlier call (or the
    /// previous eviction) brought in, and a map entry is fetched two evictions ahead.
    #[inline(always)]
    pub fn prefetch_back(&self, list: usize, ids: &[u64], map: &crate::map::IdMap) {
        let t = self.back(list);
        if t == NIL {
            return;
        }
        map.prefetch(ids[t as usize]);
        let p = self.prev(t);
        if p == NIL {
            return;
        }
        map.prefetch(ids[p as usize]);
        let pp = self.prev(p);
        if pp != NIL {
            crate::prefetch(&ids[pp as usize]);
            self.prefetch(pp);
        }
    }

    /// Puts `node` (in no list) at the front of `list`.
    #[inline(always)]
    pub fn push_front(&mut self, list: usize, node: u32) {
        let h = self.ends[list][0];
        self.links[node as usize][0] = NIL;
        self.links[node as usize][1] = h;
        if h == NIL {
            self.ends[list][1] = node;
        } else {
            self.links[h as usize][0] = node;
        }
        self.ends[list][0] = node;
    }

    /// Puts `node` (in no list) at the back of `list`.
    #[inline(always)]
    pub fn push_back(&mut self, list: usize, node: u32) {
        let t = self.ends[list][1];
        self.links[node as usize][1] = NIL;
        self.links[node as usize][0] = t;
        if t == NIL {
            self.ends[list][0] = node;
        } else {
            self.links[t as usize][1] = node;
        }
        self.ends[list][1] = node;
    }

    /// Takes `node` out of `list`.
    #[inline(always)]
    pub fn unlink(&mut self, list: usize, node: u32) {
        let p = self.links[node as usize][0];
        let n = self.links[node as usize][1];
        if p == NIL {
            self.ends[list][0] = n;
        } else {
            self.links[p as usize][1] = n;
        }
        if n == NIL {
            self.ends[list][1] = p;
        } else {
            self.links[n as usize][0] = p;
        }
    }

    /// Moves `node` (in `list`) to the front of `list`.
    #[inline(always)]
    pub fn move_to_front(&mut self, list: usize, node: u32) {
        if self.ends[list][0] != node {
            self.unlink(list, node);
            self.push_front(list, node);
        }
    }

    /// Takes the last node of `list` out, or [`NIL`] when it is empty.
    #[inline(always)]
    pub fn pop_back(&mut self, list: usize) -> u32 {
        let t = self.ends[list][1];
        if t != NIL {
            self.unlink(list, t);
        }
        t
    }

    /// Bytes of the index arrays.
    pub fn bytes(&self) -> usize {
        8 * (self.links.len() + self.ends.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(l: &Lists, list: usize) -> Vec<u32> {
        let mut out = Vec::new();
        let mut n = l.front(list);
        while n != NIL {
            out.push(n);
            n = l.next(n);
        }
        out
    }

    #[test]
    fn lists_of_two_sets_stay_apart() {
        let mut l = Lists::new(2, 6);
        l.push_front(0, 0);
        l.push_front(0, 1);
        l.push_back(1, 3);
        l.push_back(1, 4);
        l.push_front(0, 2);
        assert_eq!(collect(&l, 0), [2, 1, 0]);
        assert_eq!(collect(&l, 1), [3, 4]);
        l.move_to_front(0, 0);
        assert_eq!(collect(&l, 0), [0, 2, 1]);
        assert_eq!(l.pop_back(0), 1);
        l.unlink(0, 0);
        assert_eq!(collect(&l, 0), [2]);
        assert_eq!(l.back(0), 2);
        assert_eq!(l.pop_back(1), 4);
        assert_eq!(l.pop_back(1), 3);
        assert_eq!(l.pop_back(1), NIL);
    }
}
