//! Virtual machines as an execution environment of a run: the workload runs inside a qemu
//! guest instead of on the host.
//!
//! - [`kernel::find`]: the guest's kernel (`scripts/vm-kernel.sh` fetches Debian's).
//! - [`image::build`]: the initramfs, cached: the iolab binary as `/init`, its shared
//!   libraries, the kernel modules for virtio, 9p and the filesystems.
//! - [`guest`]: what the iolab binary does as the guest's init (`main` calls
//!   [`guest::is_init`] and [`guest::run_init`] first thing).
//! - [`Vm`]: qemu on the host, started from a [`VmConfig`]; the guest command's stdin and
//!   stdout are a virtio-serial port, [`Vm::channel`] on the host; [`Vm::wait`] with a bound;
//!   [`Vm::describe`] for the record.
//!
//! The guest runs its command chrooted into the host's root, shared read-only over
//! virtio-9p, with its own /proc, /sys, /dev, /tmp and /run: the host's programs and files,
//! the guest's kernel. Nothing here prints (but the guest's init, on the guest's console);
//! errors are typed ([`Error`]) with a hint.

mod cpio;
mod error;
pub mod guest;
pub mod image;
pub mod kernel;
pub mod modules;
mod vm;

pub use error::{Error, Result, KERNEL_HINT, QEMU_HINT};
pub use image::Image;
pub use kernel::Kernel;
pub use vm::{kvm_check, Accel, CacheMode, Disk, Vm, VmConfig, VmEnd};
