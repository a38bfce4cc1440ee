//! A stored `[workload]` section is read again through TOML text
//! (`iolab_kind::input::reread`): every JSON value an experiment can store must come back
//! as it was stored, or a stored experiment would rerun or reparse something else.

use iolab_kind::input::reread;
use proptest::prelude::*;
use serde_json::{Map, Value};

/// Strings with what TOML escapes differently from JSON: quotes, backslashes, every
/// control character (DEL included), and characters beyond the BMP.
fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9 ./_-]{0,12}",
        "[\\x00-\\x1f\\x7f\"\\\\é€😀a]{0,8}",
        any::<String>(),
    ]
}

/// JSON as a stored section holds it: no nulls (a section leaves a missing key out).
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e300f64..1e300).prop_map(Value::from),
        prop::sample::select(&[0.1, 0.5, 1.0, 2.5e-8, 1e21, -0.0][..]).prop_map(Value::from),
        string().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            // TOML arrays before 1.0 hold one type; the stored ones are lists of like values.
            prop::collection::vec(any::<i64>().prop_map(Value::from), 0..4).prop_map(Value::Array),
            prop::collection::vec(string().prop_map(Value::String), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(string(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn read_back(section: &Value) -> Result<Value, String> {
    reread(section, "kind", |_cx, t, _e| {
        Some(Value::Object(
            t.entries
                .iter()
                .map(|e| (e.key.clone(), e.node.to_json()))
                .collect::<Map<_, _>>(),
        ))
    })
    .map_err(|e| e.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1024,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn stored_sections_read_back_unchanged(
        kind in prop::collection::btree_map(string(), value(), 0..5),
        other in prop::collection::btree_map("[a-z_]{1,8}", value(), 0..3),
    ) {
        let mut section: Map<String, Value> = other.into_iter().collect();
        section.insert("kind".into(), Value::Object(kind.into_iter().collect()));
        let section = Value::Object(section);
        prop_assert_eq!(read_back(&section), Ok(section));
    }
}

/// Found by the property above: JSON writes DEL raw, TOML refuses it in a string, so a
/// stored section holding one (in a key or a value) did not read again.
#[test]
fn a_stored_del_character_reads_back() {
    let section =
        serde_json::json!({ "kind": { "args": ["a\u{7f}b"], "k\u{7f}": "\u{1b}[2J\"\\" } });
    assert_eq!(read_back(&section), Ok(section));
}
