//! The twelve phases, in bonnie++'s order, with the names its CSV line gives them and the
//! names of iolab's metrics for each.

use serde::Serialize;

/// One of bonnie++'s timed phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Sequential output, a byte per `write`.
    Putc,
    /// Sequential output, a chunk per `write` (the file written anew).
    PutBlock,
    /// Read a chunk, change a byte, seek back, write it.
    Rewrite,
    /// Sequential input, a byte per `read`.
    Getc,
    /// Sequential input, a chunk per `read`.
    GetBlock,
    /// Concurrent seekers: `lseek` + `read` of a random chunk, one in ten rewritten.
    Seeks,
    SeqCreate,
    SeqStat,
    SeqDel,
    RanCreate,
    RanStat,
    RanDel,
}

/// What a phase's rate counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RateUnit {
    /// Bytes moved, shown in MiB/s (bonnie++: K/sec).
    Bytes,
    /// Seeks per second.
    Seeks,
    /// Files per second.
    Files,
}

/// label, title, rate metric, CPU metric, max latency metric, unit, elapsed metric.
type Row = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    RateUnit,
    &'static str,
);

const TABLE: [Row; 12] = [
    (
        "putc",
        "Sequential output, per char",
        "putc_mib_per_s",
        "putc_cpu_pct",
        "putc_lat_max_ns",
        RateUnit::Bytes,
        "putc_elapsed_s",
    ),
    (
        "put_block",
        "Sequential output, block",
        "put_block_mib_per_s",
        "put_block_cpu_pct",
        "put_block_lat_max_ns",
        RateUnit::Bytes,
        "put_block_elapsed_s",
    ),
    (
        "rewrite",
        "Sequential output, rewrite",
        "rewrite_block_mib_per_s",
        "rewrite_block_cpu_pct",
        "rewrite_block_lat_max_ns",
        RateUnit::Bytes,
        "rewrite_block_elapsed_s",
    ),
    (
        "getc",
        "Sequential input, per char",
        "getc_mib_per_s",
        "getc_cpu_pct",
        "getc_lat_max_ns",
        RateUnit::Bytes,
        "getc_elapsed_s",
    ),
    (
        "get_block",
        "Sequential input, block",
        "get_block_mib_per_s",
        "get_block_cpu_pct",
        "get_block_lat_max_ns",
        RateUnit::Bytes,
        "get_block_elapsed_s",
    ),
    (
        "seeks",
        "Random seeks",
        "seeks_per_s",
        "seeks_cpu_pct",
        "seeks_lat_max_ns",
        RateUnit::Seeks,
        "seeks_elapsed_s",
    ),
    (
        "seq_create",
        "Sequential create",
        "seq_create_per_s",
        "seq_create_cpu_pct",
        "seq_create_lat_max_ns",
        RateUnit::Files,
        "seq_create_elapsed_s",
    ),
    (
        "seq_stat",
        "Sequential stat",
        "seq_stat_per_s",
        "seq_stat_cpu_pct",
        "seq_stat_lat_max_ns",
        RateUnit::Files,
        "seq_stat_elapsed_s",
    ),
    (
        "seq_del",
        "Sequential delete",
        "seq_del_per_s",
        "seq_del_cpu_pct",
        "seq_del_lat_max_ns",
        RateUnit::Files,
        "seq_del_elapsed_s",
    ),
    (
        "ran_create",
        "Random create",
        "ran_create_per_s",
        "ran_create_cpu_pct",
        "ran_create_lat_max_ns",
        RateUnit::Files,
        "ran_create_elapsed_s",
    ),
    (
        "ran_stat",
        "Random stat",
        "ran_stat_per_s",
        "ran_stat_cpu_pct",
        "ran_stat_lat_max_ns",
        RateUnit::Files,
        "ran_stat_elapsed_s",
    ),
    (
        "ran_del",
        "Random delete",
        "ran_del_per_s",
        "ran_del_cpu_pct",
        "ran_del_lat_max_ns",
        RateUnit::Files,
        "ran_del_elapsed_s",
    ),
];

impl Phase {
    /// Every phase, in the order bonnie++ runs and reports them.
    pub const ALL: [Phase; 12] = [
        Phase::Putc,
        Phase::PutBlock,
        Phase::Rewrite,
        Phase::Getc,
        Phase::GetBlock,
        Phase::Seeks,
        Phase::SeqCreate,
        Phase::SeqStat,
        Phase::SeqDel,
        Phase::RanCreate,
        Phase::RanStat,
        Phase::RanDel,
    ];

    fn row(self) -> &'static Row {
        &TABLE[self as usize]
    }

    /// bonnie++'s name for it (its CSV header): `putc`, `put_block`, … `ran_del`.
    pub fn label(self) -> &'static str {
        self.row().0
    }

    pub fn title(self) -> &'static str {
        self.row().1
    }

    /// The metric of its rate: `putc_mib_per_s`, `seeks_per_s`, `seq_create_per_s`.
    pub fn rate_metric(self) -> &'static str {
        self.row().2
    }

    /// The metric of its CPU use: `putc_cpu_pct`.
    pub fn cpu_metric(self) -> &'static str {
        self.row().3
    }

    /// The metric of its slowest operation: `putc_lat_max_ns`.
    pub fn latency_metric(self) -> &'static str {
        self.row().4
    }

    /// The metric of its elapsed time: `putc_elapsed_s`.
    pub fn elapsed_metric(self) -> &'static str {
        self.row().6
    }

    pub fn unit(self) -> RateUnit {
        self.row().5
    }

    /// One of the file-creation phases (create, stat, delete).
    pub fn is_file_phase(self) -> bool {
        self.unit() == RateUnit::Files
    }

    /// What one timed operation of the phase is, for docs and output.
    pub fn operation(self) -> &'static str {
        match self {
            Phase::Putc | Phase::Getc => "chunk of 1-byte calls",
            Phase::PutBlock | Phase::Rewrite | Phase::GetBlock => "chunk",
            Phase::Seeks => "seek",
            _ => "file",
        }
    }

    /// The phase that writes its data (for the checks: whether it reads, writes or both).
    pub fn reads(self) -> bool {
        matches!(
            self,
            Phase::Rewrite
                | Phase::Getc
                | Phase::GetBlock
                | Phase::Seeks
                | Phase::SeqStat
                | Phase::RanStat
        )
    }

    pub fn writes(self) -> bool {
        matches!(
            self,
            Phase::Putc
                | Phase::PutBlock
                | Phase::Rewrite
                | Phase::Seeks
                | Phase::SeqCreate
                | Phase::RanCreate
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_bonnies_labels() {
        for p in Phase::ALL {
            // Another kind's rewrite has the plain name (a pass, not read-modify-write).
            let prefix = match p {
                Phase::Rewrite => "rewrite_block",
                _ => p.label(),
            };
            assert!(p.rate_metric().starts_with(prefix), "{p:?}");
            assert_eq!(p.cpu_metric(), format!("{prefix}_cpu_pct"));
            assert_eq!(p.latency_metric(), format!("{prefix}_lat_max_ns"));
            assert_eq!(p.elapsed_metric(), format!("{prefix}_elapsed_s"));
            assert_eq!(Phase::ALL[p as usize], p);
        }
    }
}
