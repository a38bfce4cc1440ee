//! System errors as messages name them: the errno's symbolic name beside the system's text
//! (`Input/output error (os error 5, EIO)`), so that a stored failure can be searched for the
//! errno a man page or a kernel log speaks of. The name goes last: messages and tests that
//! look for the system's words keep finding them where they were.

use std::io;

/// Linux's numbers of the errnos a storage run meets.
const NAMES: &[(i32, &str)] = &[
    (1, "EPERM"),
    (2, "ENOENT"),
    (4, "EINTR"),
    (5, "EIO"),
    (6, "ENXIO"),
    (9, "EBADF"),
    (11, "EAGAIN"),
    (12, "ENOMEM"),
    (13, "EACCES"),
    (14, "EFAULT"),
    (16, "EBUSY"),
    (17, "EEXIST"),
    (18, "EXDEV"),
    (19, "ENODEV"),
    (20, "ENOTDIR"),
    (21, "EISDIR"),
    (22, "EINVAL"),
    (23, "ENFILE"),
    (24, "EMFILE"),
    (26, "ETXTBSY"),
    (27, "EFBIG"),
    (28, "ENOSPC"),
    (29, "ESPIPE"),
    (30, "EROFS"),
    (31, "EMLINK"),
    (36, "ENAMETOOLONG"),
    (38, "ENOSYS"),
    (39, "ENOTEMPTY"),
    (40, "ELOOP"),
    (61, "ENODATA"),
    (95, "EOPNOTSUPP"),
    (107, "ENOTCONN"),
    (110, "ETIMEDOUT"),
    (117, "EUCLEAN"),
    (121, "EREMOTEIO"),
    (122, "EDQUOT"),
];

/// `EIO` for 5; `None` for a number not in the table.
pub fn name(code: i32) -> Option<&'static str> {
    NAMES.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

/// The error's text, with its errno's name when it is a system error with one:
/// `No space left on device (os error 28, ENOSPC)`.
pub fn describe(e: &io::Error) -> String {
    let text = e.to_string();
    let Some((code, n)) = e.raw_os_error().and_then(|c| Some((c, name(c)?))) else {
        return text;
    };
    match text.strip_suffix(&format!("(os error {code})")) {
        Some(head) => format!("{head}(os error {code}, {n})"),
        None => format!("{text} ({n})"),
    }
}

/// Whether `message` reports system error `code` as [`describe`] or `io::Error` words it.
pub fn reports(message: &str, code: i32) -> bool {
    message.contains(&format!("(os error {code})"))
        || name(code).is_some_and(|n| message.contains(&format!("(os error {code}, {n})")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_errors_carry_their_name_and_others_are_left_alone() {
        let eio = io::Error::from_raw_os_error(5);
        assert_eq!(describe(&eio), "Input/output error (os error 5, EIO)");
        let full = describe(&io::Error::from_raw_os_error(28));
        assert!(
            full.starts_with("No space left on device (os error 28, ENOSPC)"),
            "{full}"
        );
        assert!(reports(&full, 28) && reports(&eio.to_string(), 5));
        assert!(!reports(&describe(&io::Error::from_raw_os_error(122)), 12));
        let other = io::Error::other("no such thing");
        assert_eq!(describe(&other), "no such thing");
        assert_eq!(name(9999), None);
        // The table is sorted and each number named once.
        assert!(NAMES.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
