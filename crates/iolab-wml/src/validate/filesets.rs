//! The filesets section: `define fileset` and `define file`.

use std::collections::HashMap;

use crate::ast::*;
use crate::env::StaticValue;
use crate::error::{ErrorKind, WarningKind};
use crate::schema;

use super::context::Ctx;

/// Checks the fileset definitions in file order.
#[derive(Default)]
pub(super) struct Filesets {
    /// The names defined so far, where.
    seen: HashMap<String, Span>,
}

impl Filesets {
    /// Checks `define fileset` or `define file`.
    pub(super) fn visit(&mut self, cx: &mut Ctx<'_>, f: &FilesetDef) {
        let (specs, ctx) = match f.kind {
            FilesetKind::Fileset => (schema::FILESET_ATTRS, "`define fileset`"),
            FilesetKind::File => (schema::FILE_ATTRS, "`define file`"),
        };
        cx.attrs(&f.attrs, specs, ctx, None);
        cx.required(&f.attrs, "name", f.span, "define", ctx);
        cx.required(&f.attrs, "path", f.span, "define", ctx);
        if let Some(v) = find_attr(&f.attrs, "name").and_then(|a| a.value.as_ref()) {
            if let StaticValue::Str(name) = cx.resolve(v, None) {
                if let Some(prev) = self.seen.get(&name) {
                    let msg = format!("fileset `{name}` is already defined at {prev}");
                    cx.error(ErrorKind::Duplicate, v.span, &name, msg).hint =
                        Some("give each file and fileset its own name".into());
                } else {
                    self.seen.insert(name, v.span);
                }
            }
        }
        if f.kind == FilesetKind::Fileset {
            match find_attr(&f.attrs, "dirwidth") {
                None => cx.warn(
                    WarningKind::Suspicious,
                    f.span,
                    "fileset without `dirwidth`: filebench puts every file in its own directory",
                ),
                Some(Attr { value: Some(v), .. }) if cx.resolve(v, None) == StaticValue::Int(0) => {
                    cx.warn(
                        WarningKind::Suspicious,
                        v.span,
                        "`dirwidth=0`: filebench puts every file in its own directory",
                    )
                }
                _ => {}
            }
        }
    }
}
