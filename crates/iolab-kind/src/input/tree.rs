//! The TOML document as a plain tree in which every key and value keeps its byte span.
//!
//! Reading goes through this tree rather than serde so that every error (unknown key, wrong
//! type, bad value, a placeholder's mistake found only after substitution) can be located in
//! the original file, and so that several independent errors can be reported at once.

use std::ops::Range;

use serde_json::Value as Json;

/// Byte offsets into the experiment file.
pub type Span = Range<usize>;

/// A value and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The value as written; for a `[table]`, its header; for a table that only exists because
    /// a dotted key or header implies it, the key that implies it.
    pub span: Span,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    String(String),
    Integer(i64),
    Float(f64),
    Boolean(bool),
    /// Kept as its text: experiments have no use for dates beyond passing them on.
    Datetime(String),
    Array(Vec<Node>),
    Table(Table),
}

/// Keys in the order written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub entries: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_span: Span,
    pub node: Node,
}

impl Table {
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key == key)
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.key.as_str())
    }
}

impl Entry {
    /// Where to point for a mistake in this entry as a whole: a table is pointed at by its key
    /// (its own span is a header or brace far from the name), anything else by its value.
    pub fn point(&self) -> &Span {
        match self.node.value {
            Value::Table(_) => &self.key_span,
            _ => &self.node.span,
        }
    }
}

impl Value {
    /// With an article, for messages: "expected an integer, found a string".
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::String(_) => "a string",
            Value::Integer(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Boolean(_) => "a boolean",
            Value::Datetime(_) => "a date-time",
            Value::Array(_) => "an array",
            Value::Table(_) => "a table",
        }
    }

    pub fn as_table(&self) -> Option<&Table> {
        match self {
            Value::Table(t) => Some(t),
            _ => None,
        }
    }

    /// The text of a scalar as interpolated into strings and used in labels; `None` for
    /// arrays and tables. Floats keep a decimal point (`1.0`) so they stay visibly floats.
    pub fn scalar_text(&self) -> Option<String> {
        match self {
            Value::String(s) => Some(s.clone()),
            Value::Integer(i) => Some(i.to_string()),
            Value::Float(f) => Some(format!("{f:?}")),
            Value::Boolean(b) => Some(b.to_string()),
            Value::Datetime(d) => Some(d.clone()),
            Value::Array(_) | Value::Table(_) => None,
        }
    }
}

impl Node {
    pub fn to_json(&self) -> Json {
        match &self.value {
            Value::String(s) | Value::Datetime(s) => Json::String(s.clone()),
            Value::Integer(i) => Json::from(*i),
            // Non-finite floats have no JSON form; they become null, which serde then rejects
            // with a located type error.
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
            Value::Boolean(b) => Json::Bool(*b),
            Value::Array(a) => Json::Array(a.iter().map(Node::to_json).collect()),
            Value::Table(t) => Json::Object(
                t.entries
                    .iter()
                    .map(|e| (e.key.clone(), e.node.to_json()))
                    .collect(),
            ),
        }
    }

    /// The same value with every span (also nested ones) replaced: a value substituted for a
    /// placeholder is located at the placeholder.
    pub fn respanned(&self, span: &Span) -> Node {
        let value = match &self.value {
            Value::Array(a) => Value::Array(a.iter().map(|n| n.respanned(span)).collect()),
            Value::Table(t) => Value::Table(Table {
                entries: t
                    .entries
                    .iter()
                    .map(|e| Entry {
                        key: e.key.clone(),
                        key_span: span.clone(),
                        node: e.node.respanned(span),
                    })
                    .collect(),
            }),
            v => v.clone(),
        };
        Node {
            span: span.clone(),
            value,
        }
    }
}

/// One step of a path into the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// Where a path leads: the deepest entry that exists along it, and whether that is the whole
/// path.
pub struct Found<'a> {
    pub node: &'a Node,
    pub key_span: Option<&'a Span>,
    pub complete: bool,
}

impl Found<'_> {
    /// The value, or for a table (or a path that ended early) its key.
    pub fn point(&self) -> &Span {
        match (&self.node.value, self.key_span) {
            (Value::Table(_), Some(k)) => k,
            (_, Some(k)) if !self.complete => k,
            _ => &self.node.span,
        }
    }
}

/// Follows `path` from `root` as far as it exists.
pub fn find<'a>(root: &'a Node, path: &[Seg]) -> Found<'a> {
    let mut found = Found {
        node: root,
        key_span: None,
        complete: true,
    };
    for seg in path {
        let next = match (seg, &found.node.value) {
            (Seg::Key(k), Value::Table(t)) => t.get(k).map(|e| (&e.node, Some(&e.key_span))),
            (Seg::Index(i), Value::Array(a)) => a.get(*i).map(|n| (n, None)),
            _ => None,
        };
        match next {
            Some((node, key_span)) => {
                found.node = node;
                if key_span.is_some() {
                    found.key_span = key_span;
                }
            }
            None => {
                found.complete = false;
                break;
            }
        }
    }
    found
}

/// A syntax error: where and what.
pub struct SyntaxError {
    pub span: Span,
    pub message: String,
}

/// Parses TOML text into a tree.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    let doc = toml_edit::Document::parse(text).map_err(|e| SyntaxError {
        span: e.span().unwrap_or(0..0),
        message: e.message().trim().to_string(),
    })?;
    Ok(Node {
        span: 0..0,
        value: Value::Table(table(doc.as_table())),
    })
}

fn table(t: &toml_edit::Table) -> Table {
    Table {
        entries: t
            .iter()
            .filter_map(|(k, item)| {
                let key_span = t.key(k).and_then(|k| k.span()).unwrap_or(0..0);
                item_node(item, &key_span).map(|node| Entry {
                    key: k.to_string(),
                    key_span,
                    node,
                })
            })
            .collect(),
    }
}

fn inline_table(t: &toml_edit::InlineTable) -> Table {
    Table {
        entries: t
            .iter()
            .map(|(k, v)| {
                let node = value_node(v);
                let key_span = t
                    .key(k)
                    .and_then(|k| k.span())
                    .unwrap_or_else(|| node.span.clone());
                Entry {
                    key: k.to_string(),
                    key_span,
                    node,
                }
            })
            .collect(),
    }
}

fn item_node(item: &toml_edit::Item, key_span: &Span) -> Option<Node> {
    Some(match item {
        toml_edit::Item::None => return None,
        toml_edit::Item::Value(v) => value_node(v),
        toml_edit::Item::Table(t) => {
            let span = t.span().unwrap_or_else(|| key_span.clone());
            Node {
                value: Value::Table(table(t)),
                span,
            }
        }
        toml_edit::Item::ArrayOfTables(a) => Node {
            span: a.span().unwrap_or_else(|| key_span.clone()),
            value: Value::Array(
                a.iter()
                    .map(|t| {
                        let span = t.span().unwrap_or_else(|| key_span.clone());
                        Node {
                            value: Value::Table(table(t)),
                            span,
                        }
                    })
                    .collect(),
            ),
        },
    })
}

fn value_node(v: &toml_edit::Value) -> Node {
    use toml_edit::Value as V;
    let value = match v {
        V::String(s) => Value::String(s.value().clone()),
        V::Integer(i) => Value::Integer(*i.value()),
        V::Float(f) => Value::Float(*f.value()),
        V::Boolean(b) => Value::Boolean(*b.value()),
        V::Datetime(d) => Value::Datetime(d.value().to_string()),
        V::Array(a) => Value::Array(a.iter().map(value_node).collect()),
        V::InlineTable(t) => Value::Table(inline_table(t)),
    };
    Node {
        span: v.span().unwrap_or(0..0),
        value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Node {
        parse(text).unwrap_or_else(|e| panic!("{}", e.message))
    }

    #[test]
    fn spans_of_keys_values_and_headers() {
        let text = "a = 1\n[sut]\ntarget = { kind = \"tmpfs\" }\n[[x]]\nk = true\n";
        let r = root(text);
        let t = r.value.as_table().unwrap();
        assert_eq!(t.keys().collect::<Vec<_>>(), ["a", "sut", "x"]);
        let sut = t.get("sut").unwrap();
        assert_eq!(&text[sut.key_span.clone()], "sut");
        assert_eq!(&text[sut.node.span.clone()], "[sut]");
        let f = find(
            &r,
            &[
                Seg::Key("sut".into()),
                Seg::Key("target".into()),
                Seg::Key("kind".into()),
            ],
        );
        assert!(f.complete);
        assert_eq!(&text[f.point().clone()], "\"tmpfs\"");
        // A path that ends early points at the deepest key that exists.
        let f = find(
            &r,
            &[
                Seg::Key("sut".into()),
                Seg::Key("target".into()),
                Seg::Key("size".into()),
            ],
        );
        assert!(!f.complete);
        assert_eq!(&text[f.point().clone()], "target");
        let x = find(&r, &[Seg::Key("x".into()), Seg::Index(0)]);
        assert_eq!(&text[x.node.span.clone()], "[[x]]");
    }

    #[test]
    fn json_and_scalar_text() {
        let r = root("a = [1, 2.0, \"s\", true]\nb = { c = 1 }\n");
        assert_eq!(
            r.to_json(),
            serde_json::json!({"a": [1, 2.0, "s", true], "b": {"c": 1}})
        );
        assert_eq!(Value::Float(1.0).scalar_text().unwrap(), "1.0");
        assert_eq!(Value::Integer(-3).scalar_text().unwrap(), "-3");
        assert_eq!(Value::Array(vec![]).scalar_text(), None);
    }

    #[test]
    fn syntax_errors_have_a_span() {
        let e = parse("a = [1,\nb = 2\n").err().unwrap();
        assert_eq!(e.span.start, 10);
        assert!(e.message.contains("array"), "{}", e.message);
    }
}
