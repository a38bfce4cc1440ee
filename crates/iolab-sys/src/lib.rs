//! iolab-sys: one small pure parser per /proc or /sys file iolab reads, shared by the system
//! under test (`iolab-sut`), the samplers (`iolab-monitor`) and the block tracer
//! (`iolab-blocktrace`), and the one device-number type they all use.
//!
//! Each module parses one file (`parse(&str)`, tested on captured text) and has a thin
//! `read()` for the real file; units and kernel quirks are documented next to the fields.
//! Errors are typed: [`ParseError`] names the file, the line and what is wrong; [`Error`]
//! adds the file that could not be read.
//!
//! | module | file |
//! |---|---|
//! | [`dev`] | `major:minor` as in `/sys/class/block/*/dev`, `st_dev` / `st_rdev` → [`DevT`] |
//! | [`meminfo`] | `/proc/meminfo`: memory, page cache, dirty data |
//! | [`mountinfo`] | `/proc/self/mountinfo`: the mount table |
//! | [`block`] | `/sys/class/block`, `/sys/dev/block`: device names and numbers, partitions, stacking, loop attributes (`loop/backing_file`, `loop/dio`, …) |
//! | [`swaps`] | `/proc/swaps`: active swap areas |
//! | [`self_cgroup`] | `/proc/self/cgroup`: this process's cgroups |
//! | [`process`] | `/proc/PID/stat`, `boot_id`: a process recognisable after PID reuse or a reboot |
//!
//! This crate never prints.

pub mod block;
pub mod cpus;
pub mod dev;
pub mod error;
pub mod meminfo;
pub mod mountinfo;
pub mod process;
pub mod self_cgroup;
pub mod swaps;

pub use block::SysBlock;
pub use dev::DevT;
pub use error::{Error, ParseError, ParseErrorKind};

#[cfg(any(test, feature = "testutil"))]
#[doc(hidden)]
pub mod testutil;
