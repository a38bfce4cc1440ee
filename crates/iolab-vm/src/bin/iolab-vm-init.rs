//! The guest init of iolab's VMs alone: what the `iolab` binary does when it is a guest's
//! `/init`, in a small program (for iolab-vm's tests, and for a VM image whose guest runs
//! something other than iolab).

fn main() -> std::process::ExitCode {
    if iolab_vm::guest::is_init() {
        iolab_vm::guest::run_init()
    }
    eprintln!("iolab-vm-init: this program is the init of an iolab VM's initramfs (/init, PID 1)");
    std::process::ExitCode::from(2)
}
