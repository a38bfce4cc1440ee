//! One line of an instance's `trace_pipe`: parsing and blkparse-style formatting.
//!
//! With the default trace options a line is
//!
//! ```text
//!               dd-22764   [001] ..... 10303.919210: block_rq_issue: 7,1 WS 1048576 () 0 + 2048 be,0,4 [dd]
//! ```
//!
//! that is `TASK-PID [CPU] FLAGS SECONDS.MICROS: EVENT: PAYLOAD`, where the payloads are the
//! events' `print fmt` (see `events/block/*/format`):
//!
//! | event | payload |
//! |---|---|
//! | `block_bio_queue` | `MAJ,MIN RWBS SECTOR + NR [COMM]` |
//! | `block_rq_insert`, `block_rq_issue` | `MAJ,MIN RWBS BYTES (CMD) SECTOR + NR IOPRIO [COMM]` |
//! | `block_rq_complete`, `block_rq_requeue` | `MAJ,MIN RWBS (CMD) SECTOR + NR IOPRIO [ERROR]` |
//!
//! `IOPRIO` (`be,0,4`) appeared in 6.x; older kernels omit it and are accepted too. `CMD` is
//! empty except for passthrough requests (hex bytes, may contain spaces). The text format has
//! microsecond resolution whatever the clock; times here are in nanoseconds (multiples of
//! 1000). When the reader fell behind, the kernel writes `CPU:N [LOST K EVENTS]` instead of
//! events ([`parse_lost_line`]).

use serde::{Deserialize, Serialize};

use crate::rwbs::{Op, Rwbs};
use iolab_sys::DevT;

/// The block-layer action an event records, with blkparse's letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// `Q`: a bio was queued (`block_bio_queue`).
    Queue,
    /// `I`: a request was inserted into the scheduler / software queue (`block_rq_insert`).
    Insert,
    /// `D`: a request was issued to the driver (`block_rq_issue`).
    Issue,
    /// `C`: a request (or part of it) completed (`block_rq_complete`).
    Complete,
    /// `R`: a request was requeued (`block_rq_requeue`).
    Requeue,
}

impl Action {
    /// blkparse's action letter.
    pub fn letter(self) -> char {
        match self {
            Action::Queue => 'Q',
            Action::Insert => 'I',
            Action::Issue => 'D',
            Action::Complete => 'C',
            Action::Requeue => 'R',
        }
    }

    /// The tracefs event that records this action.
    pub fn event_name(self) -> &'static str {
        match self {
            Action::Queue => "block_bio_queue",
            Action::Insert => "block_rq_insert",
            Action::Issue => "block_rq_issue",
            Action::Complete => "block_rq_complete",
            Action::Requeue => "block_rq_requeue",
        }
    }

    /// The action recorded by a tracefs event, `None` for events this module does not use.
    pub fn from_event_name(name: &str) -> Option<Action> {
        Some(match name {
            "block_bio_queue" => Action::Queue,
            "block_rq_insert" => Action::Insert,
            "block_rq_issue" => Action::Issue,
            "block_rq_complete" => Action::Complete,
            "block_rq_requeue" => Action::Requeue,
            _ => return None,
        })
    }
}

/// One block trace event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Timestamp of the trace clock in nanoseconds (microsecond resolution). The tracer sets
    /// the `mono` clock, so this is `CLOCK_MONOTONIC`, the clock of `std::time::Instant`.
    pub time_ns: u64,
    /// CPU that recorded the event.
    pub cpu: u32,
    /// Sequence number per CPU, from 1, assigned by the tracer in reading order (0 from
    /// [`parse_line`]); blkparse prints it.
    pub seq: u64,
    /// PID of the task that was running when the event was recorded (0 for idle / interrupts).
    pub pid: i32,
    /// Name of that task as tracefs prints it (`<idle>`, `<...>` when unknown).
    pub task: String,
    /// What happened.
    pub action: Action,
    /// Device (for request events the whole disk; sectors are then absolute on the disk).
    pub dev: DevT,
    /// The `rwbs` text as the kernel wrote it.
    pub rwbs: String,
    /// `rwbs` decoded.
    pub kind: Rwbs,
    /// First sector (512 B). Flush requests show 0 on issue and `u64::MAX` on completion.
    pub sector: u64,
    /// Length in 512-byte sectors (0 for flushes; for a partial completion, the part done).
    pub nr_sector: u32,
    /// `bytes` field of insert/issue events (equals `nr_sector * 512` except for
    /// passthrough requests).
    pub bytes: Option<u32>,
    /// Completion status (0 ok, negative errno-like), for completions.
    pub error: Option<i32>,
    /// `comm` field of queue/insert/issue events: the task that submitted the I/O or the
    /// worker that issued it.
    pub comm: Option<String>,
}

impl Event {
    /// Bytes the event covers: `nr_sector * 512`.
    pub fn len_bytes(&self) -> u64 {
        u64::from(self.nr_sector) * 512
    }
}

/// Lost events reported in the stream: `CPU:N [LOST K EVENTS]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LostLine {
    /// The CPU whose buffer overflowed.
    pub cpu: u32,
    /// Events lost.
    pub count: u64,
}

/// Parse a `CPU:N [LOST K EVENTS]` line.
pub fn parse_lost_line(line: &str) -> Option<LostLine> {
    let rest = line.trim().strip_prefix("CPU:")?;
    let (cpu, rest) = rest.split_once(' ')?;
    let count = rest.strip_prefix("[LOST ")?.strip_suffix(" EVENTS]")?;
    Some(LostLine {
        cpu: cpu.parse().ok()?,
        count: count.parse().ok()?,
    })
}

/// Parse one `trace_pipe` line into an [`Event`]. `None` for lines that are not one of the
/// five block events of [`Action`] or do not have their layout (the caller counts those).
pub fn parse_line(line: &str) -> Option<Event> {
    let line = line.trim_end_matches(['\n', '\r']);
    let h = split_header(line)?;
    let action = Action::from_event_name(h.event)?;
    let (task, pid) = split_task(h.task)?;
    let p = parse_payload(action, h.payload)?;
    Some(Event {
        time_ns: h.time_ns,
        cpu: h.cpu,
        seq: 0,
        pid,
        task: task.to_owned(),
        action,
        dev: p.dev,
        rwbs: p.rwbs.to_owned(),
        kind: p.kind,
        sector: p.sector,
        nr_sector: p.nr_sector,
        bytes: p.bytes,
        error: p.error,
        comm: p.comm.map(str::to_owned),
    })
}

struct Header<'a> {
    task: &'a str,
    cpu: u32,
    time_ns: u64,
    event: &'a str,
    payload: &'a str,
}

/// Finds `[CPU] [FLAGS] SECONDS.FRACTION: EVENT: ` — the first `[` that starts it; what is
/// before is the task (whose name may itself contain brackets or dashes).
fn split_header(line: &str) -> Option<Header<'_>> {
    let mut from = 0;
    while let Some(off) = line.get(from..)?.find('[') {
        let open = from + off;
        if let Some(h) = try_header(line, open) {
            return Some(h);
        }
        from = open + 1;
    }
    None
}

fn try_header(line: &str, open: usize) -> Option<Header<'_>> {
    let after = &line[open + 1..];
    let close = after.find(']')?;
    let cpu_text = &after[..close];
    if cpu_text.is_empty() || !cpu_text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let cpu = cpu_text.parse().ok()?;
    let mut rest = after[close + 1..].trim_start_matches(' ');
    // Optional irq-info flags ("d.s1."), then the timestamp ending in ':'.
    let (tok, r) = rest.split_once(' ')?;
    let time_ns = match tok.strip_suffix(':').and_then(parse_timestamp) {
        Some(t) => {
            rest = r;
            t
        }
        None => {
            let r = r.trim_start_matches(' ');
            let (tok, r) = r.split_once(' ')?;
            rest = r;
            parse_timestamp(tok.strip_suffix(':')?)?
        }
    };
    let (event, payload) = rest.trim_start_matches(' ').split_once(": ")?;
    if event.contains(' ') {
        return None;
    }
    Some(Header {
        task: line[..open].trim(),
        cpu,
        time_ns,
        event,
        payload,
    })
}

/// `SECONDS.FRACTION` (any number of fraction digits up to 9) as nanoseconds.
fn parse_timestamp(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.')?;
    if secs.is_empty()
        || frac.is_empty()
        || frac.len() > 9
        || !secs.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let scale = 10u64.pow(9 - frac.len() as u32);
    let secs: u64 = secs.parse().ok()?;
    let frac: u64 = frac.parse().ok()?;
    secs.checked_mul(1_000_000_000)?
        .checked_add(frac.checked_mul(scale)?)
}

/// `TASK-PID`, with an optional `(TGID)` after it (the `record-tgid` option).
fn split_task(s: &str) -> Option<(&str, i32)> {
    let mut s = s.trim_end();
    if s.ends_with(')') {
        if let Some(i) = s.rfind(" (") {
            s = s[..i].trim_end();
        }
    }
    let (task, pid) = s.rsplit_once('-')?;
    Some((task.trim_start(), pid.parse().ok()?))
}

struct Payload<'a> {
    dev: DevT,
    rwbs: &'a str,
    kind: Rwbs,
    sector: u64,
    nr_sector: u32,
    bytes: Option<u32>,
    error: Option<i32>,
    comm: Option<&'a str>,
}

/// Next space-separated word, and the rest after it.
fn word(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start_matches(' ');
    if s.is_empty() {
        return None;
    }
    Some(match s.find(' ') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    })
}

fn parse_payload(action: Action, s: &str) -> Option<Payload<'_>> {
    let (dev, s) = word(s)?;
    let (ma, mi) = dev.split_once(',')?;
    let dev = DevT::new(ma.parse().ok()?, mi.parse().ok()?);
    let (rwbs, mut s) = word(s)?;
    let kind = Rwbs::parse(rwbs)?;
    let mut bytes = None;
    if matches!(action, Action::Insert | Action::Issue) {
        let (b, r) = word(s)?;
        bytes = Some(b.parse().ok()?);
        s = r;
    }
    if action != Action::Queue {
        // "(CMD)": hex bytes of a passthrough command, possibly with spaces.
        let r = s.trim_start_matches(' ').strip_prefix('(')?;
        s = &r[r.find(')')? + 1..];
    }
    let (sector, s) = word(s)?;
    let sector = sector.parse().ok()?;
    let (plus, s) = word(s)?;
    if plus != "+" {
        return None;
    }
    let (nr, s) = word(s)?;
    let nr_sector = nr.parse().ok()?;
    let mut s = s.trim_start_matches(' ');
    if !s.starts_with('[') {
        // IOPRIO ("be,0,4"), 6.x kernels.
        s = word(s)?.1.trim_start_matches(' ');
    }
    let inner = s.strip_prefix('[')?.strip_suffix(']')?;
    let (error, comm) = match action {
        Action::Complete => (Some(inner.parse().ok()?), None),
        Action::Requeue => (None, None),
        _ => (None, Some(inner)),
    };
    Some(Payload {
        dev,
        rwbs,
        kind,
        sector,
        nr_sector,
        bytes,
        error,
        comm,
    })
}

/// Format an event like `blkparse`'s default output:
///
/// ```text
///   7,1    1        1     0.000000000 22764  D  WS 0 + 2048 [dd]
/// ```
///
/// (`MAJ,MIN CPU SEQ SECONDS.NANOS PID ACTION RWBS SECTOR + NR [COMM]`; completions end in
/// `[ERROR]`, requeues in `[0]`). The time is relative to `base_ns` (e.g.
/// [`BlockTrace::start_ns`](crate::BlockTrace::start_ns)). Flush requests, which have no
/// sectors, print no `SECTOR + NR`.
pub fn format_blkparse(ev: &Event, base_ns: u64) -> String {
    let rel = ev.time_ns.saturating_sub(base_ns);
    let mut out = format!(
        "{:>3},{:<3} {:>2} {:>8} {:>5}.{:09} {:>5} {:>2} {:>3} ",
        ev.dev.major,
        ev.dev.minor,
        ev.cpu,
        ev.seq,
        rel / 1_000_000_000,
        rel % 1_000_000_000,
        ev.pid,
        ev.action.letter(),
        ev.rwbs
    );
    if !(ev.kind.op == Op::Flush && ev.nr_sector == 0) {
        out.push_str(&format!("{} + {} ", ev.sector, ev.nr_sector));
    }
    match ev.action {
        Action::Complete => out.push_str(&format!("[{}]", ev.error.unwrap_or(0))),
        Action::Requeue => out.push_str("[0]"),
        _ => {
            out.push('[');
            out.push_str(ev.comm.as_deref().unwrap_or(""));
            out.push(']');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISSUE: &str = "              dd-22764   [001] ..... 10303.919210: block_rq_issue: 7,1 WS 1048576 () 0 + 2048 be,0,4 [dd]";

    #[test]
    fn issue_line() {
        let e = parse_line(ISSUE).unwrap();
        assert_eq!(e.time_ns, 10_303_919_210_000);
        assert_eq!(e.cpu, 1);
        assert_eq!(e.pid, 22764);
        assert_eq!(e.task, "dd");
        assert_eq!(e.action, Action::Issue);
        assert_eq!(e.dev, DevT::new(7, 1));
        assert_eq!(e.rwbs, "WS");
        assert_eq!(e.kind.op, Op::Write);
        assert!(e.kind.sync);
        assert_eq!((e.sector, e.nr_sector), (0, 2048));
        assert_eq!(e.bytes, Some(1 << 20));
        assert_eq!(e.comm.as_deref(), Some("dd"));
        assert_eq!(e.error, None);
        assert_eq!(e.len_bytes(), 1 << 20);
    }

    #[test]
    fn other_events() {
        let c = parse_line("     ksoftirqd/1-22      [001] ..s.. 10303.924679: block_rq_complete: 7,1 WS () 0 + 2048 be,0,4 [0]").unwrap();
        assert_eq!(c.action, Action::Complete);
        assert_eq!(c.task, "ksoftirqd/1");
        assert_eq!(c.pid, 22);
        assert_eq!(c.error, Some(0));
        assert_eq!(c.comm, None);
        let q = parse_line("    jbd2/loop1-8-22774   [000] ..... 10304.054480: block_bio_queue: 7,1 FWFSM 229396 + 2 [jbd2/loop1-8]").unwrap();
        assert_eq!(q.action, Action::Queue);
        assert_eq!(q.task, "jbd2/loop1-8");
        assert_eq!(q.pid, 22774);
        assert!(q.kind.preflush && q.kind.fua);
        assert_eq!(q.bytes, None);
        assert_eq!(q.comm.as_deref(), Some("jbd2/loop1-8"));
        let f = parse_line("     ksoftirqd/1-22      [001] ..s.. 10303.955035: block_rq_complete: 7,1 FF () 18446744073709551615 + 0 none,0,0 [0]").unwrap();
        assert_eq!(f.kind.op, Op::Flush);
        assert_eq!(f.sector, u64::MAX);
        let i = parse_line("              dd-22776   [000] .N... 10304.053513: block_rq_insert: 7,1 RAM 1024 () 522 + 2 be,0,4 [dd]").unwrap();
        assert_eq!(i.action, Action::Insert);
        assert!(i.kind.readahead);
        let r = parse_line("  kworker/0:1H-88  [000] d..1. 12.000001: block_rq_requeue: 8,0 W () 100 + 8 be,0,4 [0]").unwrap();
        assert_eq!(r.action, Action::Requeue);
        assert_eq!(r.time_ns, 12_000_001_000);
        let err =
            parse_line("<idle>-0 [003] d.h1. 5.5: block_rq_complete: 254,0 R () 8 + 8 be,0,4 [-5]")
                .unwrap();
        assert_eq!(err.error, Some(-5));
        assert_eq!(err.task, "<idle>");
        assert_eq!(err.time_ns, 5_500_000_000);
    }

    #[test]
    fn layouts_of_other_kernels_and_options() {
        // No irq-info flags, no ioprio (before 6.x), a passthrough command, record-tgid.
        let e = parse_line(
            "  fio-100 [002] 7.000010: block_rq_issue: 8,16 R 4096 (28 00 00 00) 64 + 8 [fio]",
        )
        .unwrap();
        assert_eq!(e.cpu, 2);
        assert_eq!((e.sector, e.nr_sector), (64, 8));
        let e = parse_line(
            "  my task[x]-9 (    9) [000] ..... 1.000000: block_rq_complete: 8,0 W () 8 + 8 [0]",
        )
        .unwrap();
        assert_eq!(e.task, "my task[x]");
        assert_eq!(e.pid, 9);
        // Nanosecond timestamps are kept as they are.
        let e =
            parse_line("a-1 [000] ..... 1.000000123: block_bio_queue: 8,0 R 8 + 8 [a]").unwrap();
        assert_eq!(e.time_ns, 1_000_000_123);
    }

    #[test]
    fn odd_lines_are_none() {
        for l in [
            "",
            "garbage",
            "CPU:1 [LOST 6721 EVENTS]",
            "dd-1 [001] ..... 1.0: block_plug: [dd]",
            "dd-1 [001] ..... 1.0: block_rq_issue: 7,1 WS x () 0 + 8 [dd]",
            "dd-1 [001] ..... 1.0: block_rq_issue: 7,1 WS 4096 () 0 + 8 be,0,4 [dd",
            "dd-1 [001] ..... 1.0: block_rq_issue: 7,1 WS 4096 () 0 - 8 [dd]",
            "dd-1 [001] ..... 1.0: block_rq_issue: 7:1 WS 4096 () 0 + 8 [dd]",
            "dd-1 [001] ..... 1.0: block_rq_issue: 7,1 ? 4096 () 0 + 8 [dd]",
            "dd-1 [001] ..... 1.0: block_rq_complete: 7,1 W () 0 + 8 [ok]",
            "dd-1 [001] ..... 1.0: block_rq_issue: 7,1 W 4096 (0 + 8 [dd]",
            "dd-1 [001] ..... 1.x: block_rq_issue: 7,1 W 4096 () 0 + 8 [dd]",
            "dd-1 [001] ..... 1.0000000001: block_bio_queue: 7,1 W 0 + 8 [dd]",
            "dd-1 [abc] ..... 1.0: block_bio_queue: 7,1 W 0 + 8 [dd]",
            "dd [001] ..... 1.0: block_bio_queue: 7,1 W 0 + 8 [dd]",
            "dd-1 [001] ..... 99999999999999.0: block_bio_queue: 7,1 W 0 + 8 [dd]",
            "dd-1 [001] ..... 1.0: block_bio_queue: 7,1 W 99999999999999999999 + 8 [dd]",
            "é-1 [001] é 1.0: block_bio_queue: é",
        ] {
            assert_eq!(parse_line(l), None, "{l:?}");
        }
    }

    #[test]
    fn lost_lines() {
        assert_eq!(
            parse_lost_line("CPU:1 [LOST 6721 EVENTS]\n"),
            Some(LostLine {
                cpu: 1,
                count: 6721
            })
        );
        assert_eq!(parse_lost_line("CPU:1 [LOST many EVENTS]"), None);
        assert_eq!(parse_lost_line(ISSUE), None);
    }

    #[test]
    fn blkparse_format() {
        let mut e = parse_line(ISSUE).unwrap();
        e.seq = 1;
        e.dev = DevT::new(7, 0);
        e.pid = 1234;
        assert_eq!(
            format_blkparse(&e, e.time_ns),
            "  7,0    1        1     0.000000000  1234  D  WS 0 + 2048 [dd]"
        );
        assert_eq!(
            format_blkparse(&e, e.time_ns - 1_500_000_000),
            "  7,0    1        1     1.500000000  1234  D  WS 0 + 2048 [dd]"
        );
        let mut f = parse_line("     ksoftirqd/1-22      [001] ..s.. 10303.955035: block_rq_complete: 7,1 FF () 18446744073709551615 + 0 none,0,0 [0]").unwrap();
        f.seq = 12;
        assert_eq!(
            format_blkparse(&f, 10_303_955_000_000),
            "  7,1    1       12     0.000035000    22  C  FF [0]"
        );
        let q = parse_line("    jbd2/loop1-8-22774   [000] ..... 10304.054480: block_bio_queue: 7,1 FWFSM 229396 + 2 [jbd2/loop1-8]").unwrap();
        assert!(format_blkparse(&q, 0).ends_with("  Q FWFSM 229396 + 2 [jbd2/loop1-8]"));
    }
}
