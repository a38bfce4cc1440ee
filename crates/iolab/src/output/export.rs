//! `iolab export`: an experiment with everything measured in it, as JSON (the document
//! itself, stamped) or CSV (one row per run; the layout is iolab-store's).

use std::io::{self, Write};

use iolab_store::ExportDocument;

use super::json::{Document, Kind};
use super::Formatter;

impl Document for ExportDocument {
    const KIND: Kind = Kind::Export;
}

pub struct Csv;

impl Formatter<ExportDocument> for Csv {
    fn write(&self, doc: &ExportDocument, out: &mut dyn Write) -> io::Result<()> {
        doc.write_csv(out)
    }
}
