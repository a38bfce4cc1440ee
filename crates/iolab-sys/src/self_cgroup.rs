//! `/proc/self/cgroup`: the cgroups this process is in.
//!
//! Lines are `ID:CONTROLLERS:PATH`; v1 controllers are comma-separated (`4:memory:/a/b`),
//! the v2 line is `0::/path`.

use crate::error::{read_to_string, Error};

/// The file parsed here.
pub const PATH: &str = "/proc/self/cgroup";

/// The cgroup path of the v1 `memory` controller, if it is mounted.
pub fn memory_path(text: &str) -> Option<String> {
    controller_path(text, "memory")
}

/// The cgroup path of a v1 controller (`memory`, `blkio`), if it is mounted.
pub fn controller_path(text: &str, controller: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let mut it = l.splitn(3, ':');
        let _id = it.next()?;
        let ctrls = it.next()?;
        let path = it.next()?;
        ctrls
            .split(',')
            .any(|c| c == controller)
            .then(|| path.to_owned())
    })
}

/// Read /proc/self/cgroup.
pub fn read() -> Result<String, Error> {
    read_to_string(PATH)
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_the_memory_line() {
        let t = "9:name=systemd:/\n4:memory:/process_api/4b13\n0::/\n";
        assert_eq!(super::memory_path(t).as_deref(), Some("/process_api/4b13"));
        assert_eq!(super::memory_path("5:cpu,cpuacct:/x\n0::/\n"), None);
        assert_eq!(super::memory_path("3:cpu,memory:/\n").as_deref(), Some("/"));
    }
}
