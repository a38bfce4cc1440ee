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
    prev: Vec<u32>,
    next: Vec<u32>,
    head: Vec<u32>,
    tail: Vec<u32>,
}

impl Lists {
    /// Empty lists.
    pub fn new(lists: usize, nodes: usize) -> Lists {
        Lists {
            prev: vec![NIL; nodes],
            next: vec![NIL; nodes],
            head: vec![NIL; lists],
            tail: vec![NIL; lists],
        }
    }

    /// The first node (most recently pushed to the front), or [`NIL`].
    #[inline(always)]
    pub fn front(&self, list: usize) -> u32 {
        self.head[list]
    }

    /// The last node, or [`NIL`].
    #[inline(always)]
    pub fn back(&self, list: usize) -> u32 {
        self.tail[list]
    }

    /// The node after `node` (towards the back), or [`NIL`].
    #[inline(always)]
    pub fn next(&self, node: u32) -> u32 {
        self.next[node as usize]
    }

    /// The node before `node` (towards the front), or [`NIL`].
    #[inline(always)]
    pub fn prev(&self, node: u32) -> u32 {
        self.prev[node as usize]
    }

    /// Puts `node` (in no list) at the front of `list`.
    #[inline(always)]
    pub fn push_front(&mut self, list: usize, node: u32) {
        let h = self.head[list];
        self.prev[node as usize] = NIL;
        self.next[node as usize] = h;
        if h == NIL {
            self.tail[list] = node;
        } else {
            self.prev[h as usize] = node;
        }
        self.head[list] = node;
    }

    /// Puts `node` (in no list) at the back of `list`.
    #[inline(always)]
    pub fn push_back(&mut self, list: usize, node: u32) {
        let t = self.tail[list];
        self.next[node as usize] = NIL;
        self.prev[node as usize] = t;
        if t == NIL {
            self.head[list] = node;
        } else {
            self.next[t as usize] = node;
        }
        self.tail[list] = node;
    }

    /// Takes `node` out of `list`.
    #[inline(always)]
    pub fn unlink(&mut self, list: usize, node: u32) {
        let p = self.prev[node as usize];
        let n = self.next[node as usize];
        if p == NIL {
            self.head[list] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail[list] = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    /// Moves `node` (in `list`) to the front of `list`.
    #[inline(always)]
    pub fn move_to_front(&mut self, list: usize, node: u32) {
        if self.head[list] != node {
            self.unlink(list, node);
            self.push_front(list, node);
        }
    }

    /// Takes the last node of `list` out, or [`NIL`] when it is empty.
    #[inline(always)]
    pub fn pop_back(&mut self, list: usize) -> u32 {
        let t = self.tail[list];
        if t != NIL {
            self.unlink(list, t);
        }
        t
    }

    /// Bytes of the index arrays.
    pub fn bytes(&self) -> usize {
        4 * (self.prev.len() + self.next.len() + self.head.len() + self.tail.len())
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
