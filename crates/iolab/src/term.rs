//! The one status line iolab keeps on a terminal's stderr while it works (fill, population,
//! run progress): redrawn in place, and erased before anything else is printed.

use std::fmt::Arguments;

pub struct StatusLine {
    enabled: bool,
    shown: bool,
}

impl StatusLine {
    /// A line that is only drawn when `enabled` (stderr is a terminal, not --quiet).
    pub fn new(enabled: bool) -> StatusLine {
        StatusLine {
            enabled,
            shown: false,
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Replaces the line's text.
    pub fn show(&mut self, text: Arguments<'_>) {
        if self.enabled {
            say_inline!("\r\x1b[K{text}");
            self.shown = true;
        }
    }

    /// Erases the line.
    pub fn clear(&mut self) {
        if self.shown {
            say_inline!("\r\x1b[K");
            self.shown = false;
        }
    }

    /// Leaves the line as it is and moves to the next one.
    pub fn keep(&mut self) {
        if self.shown {
            say!();
            self.shown = false;
        }
    }
}
