//! iolab under `mpirun`: whether this process is one rank of an MPI job ([`launched`]), and,
//! in a build with the `mpi` feature, the job's ranks as the runner drives them (an
//! [`iolab_kind::Group`] over MPI's communicator, [`start`]).
//!
//! Without the feature iolab needs no MPI to build or to run; launched by `mpirun` with more
//! than one rank it says how to build the feature instead of running every rank alone (which
//! would store N unrelated experiments). With one rank everything is as without MPI.
//!
//! Every wait of the group polls the cancel flag (Ctrl-C, and the SIGTERM with which
//! `mpirun` ends the other ranks when one dies): a rank blocked at a barrier ends its run as
//! interrupted and cleans up instead of waiting for a rank that is gone.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[cfg(feature = "mpi")]
mod world;

/// Whether this build has MPI.
pub const ENABLED: bool = cfg!(feature = "mpi");

/// How the launcher said this process is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    pub rank: usize,
    /// `None`: the launcher does not say (PMIx alone).
    pub size: Option<usize>,
    pub launcher: &'static str,
}

/// This process's place in an MPI job, from the environment its launcher sets: Open MPI's
/// `mpirun`, MPICH's Hydra (`PMI_*`), or any PMIx launcher. `None` when not launched so.
pub fn launched() -> Option<Launch> {
    launched_from(|k| std::env::var(k).ok())
}

fn launched_from(var: impl Fn(&str) -> Option<String>) -> Option<Launch> {
    let num = |k: &str| var(k).and_then(|v| v.trim().parse::<usize>().ok());
    for (rank, size, launcher) in [
        ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI"),
        ("PMI_RANK", "PMI_SIZE", "PMI"),
        ("PMIX_RANK", "", "PMIx"),
    ] {
        if let Some(r) = num(rank) {
            return Some(Launch {
                rank: r,
                size: num(size),
                launcher,
            });
        }
    }
    None
}

/// What identifies a "node" to the ranks: ranks with the same key share a kernel, its page
/// cache and a mount namespace (they see the same mounts), so one of them prepares the
/// system under test and drops caches for all. Host name, boot id, mount namespace.
pub fn node_key() -> String {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_owned())
            .unwrap_or_default()
    };
    let mnt = std::fs::read_link("/proc/self/ns/mnt")
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    format!(
        "{}|{}|{}",
        hostname(),
        read("/proc/sys/kernel/random/boot_id"),
        mnt
    )
}

/// This machine's host name (the UTS namespace's).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "?".into())
}

/// Why the ranks could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "iolab was launched by {launcher} as one of {size} ranks, but this build has no MPI: \
         every rank would run the whole experiment alone"
    )]
    NotBuilt { launcher: &'static str, size: usize },
    #[error("starting MPI: {0}")]
    Init(String),
}

impl Error {
    /// What to do about it.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            Error::NotBuilt { .. } => Some(
                "build iolab with MPI (Open MPI's libopenmpi-dev, clang and libclang-dev \
                 installed): cargo build --release --features mpi",
            ),
            Error::Init(_) => Some(
                "check that the iolab binary was built against the MPI whose mpirun launched \
                 it",
            ),
        }
    }
}

/// The MPI job this process is a rank of; MPI ends when it is dropped.
pub struct Mpi {
    #[cfg(feature = "mpi")]
    inner: world::World,
    #[cfg(not(feature = "mpi"))]
    _never: std::convert::Infallible,
}

impl Mpi {
    /// The ranks, as the runner drives them.
    pub fn group(&self) -> Arc<dyn iolab_kind::Group + Send + Sync> {
        #[cfg(feature = "mpi")]
        {
            self.inner.group()
        }
        #[cfg(not(feature = "mpi"))]
        match self._never {}
    }

    /// Ends the job at once on every rank (MPI_Abort), for a rank that cannot go on and
    /// cannot tell the others in order.
    pub fn abort(&self, code: i32) -> ! {
        #[cfg(feature = "mpi")]
        {
            self.inner.abort(code)
        }
        #[cfg(not(feature = "mpi"))]
        {
            let _ = code;
            match self._never {}
        }
    }
}

/// Starts MPI when this process is one of several ranks of an MPI job: `Ok(None)` when it was
/// not launched by MPI or is its only rank (iolab then runs as without MPI). `cancel` is
/// polled while the group waits.
pub fn start(cancel: Arc<AtomicBool>) -> Result<Option<Mpi>, Error> {
    let Some(launch) = launched() else {
        return Ok(None);
    };
    if launch.size == Some(1) {
        return Ok(None);
    }
    #[cfg(feature = "mpi")]
    {
        let _ = launch;
        world::World::start(cancel).map(|inner| inner.map(|inner| Mpi { inner }))
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = cancel;
        Err(Error::NotBuilt {
            launcher: launch.launcher,
            size: launch.size.unwrap_or(0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn launchers_are_recognised_by_their_environment() {
        assert_eq!(launched_from(env(&[])), None);
        assert_eq!(
            launched_from(env(&[
                ("OMPI_COMM_WORLD_RANK", "2"),
                ("OMPI_COMM_WORLD_SIZE", "4")
            ])),
            Some(Launch {
                rank: 2,
                size: Some(4),
                launcher: "Open MPI"
            })
        );
        assert_eq!(
            launched_from(env(&[("PMI_RANK", "0"), ("PMI_SIZE", "2")])).map(|l| l.size),
            Some(Some(2))
        );
        assert_eq!(
            launched_from(env(&[("PMIX_RANK", "1")])).map(|l| (l.rank, l.size)),
            Some((1, None))
        );
        assert_eq!(launched_from(env(&[("PMI_RANK", "x")])), None);
    }

    #[test]
    fn the_node_key_names_this_kernel_and_mount_namespace() {
        let k = node_key();
        assert_eq!(k.split('|').count(), 3);
        assert!(k.contains("mnt:["), "{k}");
        assert_eq!(k, node_key());
    }
}
