//! Canonical JSON and its hash: the same schema gives the same bytes, in
//! any key order.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// `value` as compact JSON with every object's keys sorted, so two schemas
/// that differ only in key order hash the same. The dispatcher's reuse key
/// is built from it too, so both agree on what "the same arguments" means.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

/// Appends the canonical JSON of `value` to `out`.
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (index, (key, value)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                push_json(key, out);
                out.push(':');
                write_canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => push_json(scalar, out),
    }
}

/// Appends compact JSON for a string or a scalar, which always serialise.
fn push_json(value: &impl serde::Serialize, out: &mut String) {
    if let Ok(json) = serde_json::to_string(value) {
        out.push_str(&json);
    }
}

/// `sha256:` and the lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(7 + 64);
    hex.push_str("sha256:");
    for byte in digest {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

/// The hash of a value's canonical JSON: `sha256:` and 64 hex digits.
pub fn schema_hash(value: &Value) -> String {
    sha256_hex(canonical_json(value).as_bytes())
}
