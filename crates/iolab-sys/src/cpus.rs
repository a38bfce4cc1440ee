//! CPU sets: the kernel's list format (`0-3,8,10-11`), the CPUs online, and a thread's
//! affinity (what pinning a workload means on the host, and what a container's cpuset and a
//! VM's vCPU threads are held to).

use std::io;

/// Parse a CPU or node list (`0-3,8,10-11`) into its members; `None` if malformed. An empty
/// list (as in `cpu/offline` when all are online) is empty.
pub fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    const MAX: u32 = 1 << 16;
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?),
            None => {
                let a = part.trim().parse::<u32>().ok()?;
                (a, a)
            }
        };
        if b < a || b - a >= MAX || out.len() as u32 + (b - a) >= MAX {
            return None;
        }
        out.extend(a..=b);
    }
    Some(out)
}

/// The kernel's list format of `cpus` (sorted, runs joined): `[0, 1, 2, 5]` → `0-2,5`.
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// The CPUs online (`/sys/devices/system/cpu/online`).
pub fn online() -> io::Result<Vec<u32>> {
    let path = "/sys/devices/system/cpu/online";
    let text = std::fs::read_to_string(path)?;
    parse_cpu_list(&text).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{path}: not a CPU list: {text:?}"),
        )
    })
}

/// The calling thread's CPU affinity.
pub fn affinity() -> io::Result<Vec<u32>> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most its size.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((0..libc::CPU_SETSIZE as u32)
        .filter(|&c| unsafe { libc::CPU_ISSET(c as usize, &set) })
        .collect())
}

/// Pins the calling thread (and the threads it creates from now on) to `cpus`.
pub fn set_affinity(cpus: &[u32]) -> io::Result<()> {
    // SAFETY: as in `affinity`; CPU_SET is bounds-checked against CPU_SETSIZE below.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c as usize >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "CPU {c} is beyond the {} CPUs a set holds",
                    libc::CPU_SETSIZE
                ),
            ));
        }
        unsafe { libc::CPU_SET(c as usize, &mut set) };
    }
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list("0\n"), Some(vec![0]));
        assert_eq!(parse_cpu_list("\n"), Some(vec![]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("a"), None);
        assert_eq!(parse_cpu_list("0-4294967295"), None);
        assert_eq!(format_cpu_list(&[5, 0, 1, 2, 2]), "0-2,5");
        assert_eq!(format_cpu_list(&[]), "");
    }

    #[test]
    fn pinning_a_thread_holds_and_is_undone() {
        // A thread of its own, so the test's other threads keep their affinity.
        std::thread::spawn(|| {
            let before = affinity().unwrap();
            let one = before[before.len() - 1];
            set_affinity(&[one]).unwrap();
            assert_eq!(affinity().unwrap(), vec![one]);
            // A thread made now inherits it.
            let inner = std::thread::spawn(affinity).join().unwrap().unwrap();
            assert_eq!(inner, vec![one]);
            set_affinity(&before).unwrap();
            assert_eq!(affinity().unwrap(), before);
        })
        .join()
        .unwrap();
    }
}
