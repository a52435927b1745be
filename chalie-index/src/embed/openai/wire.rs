//! The `/v1/embeddings` wire format: the request body, the success response read into
//! vectors in input order, and the error message of a failed one.
//!
//! OpenAI, vLLM, Ollama, llama.cpp and text-embeddings-inference all answer
//! `{"data": [{"index": i, "embedding": [...]}], "model": "..."}`; errors come as
//! `{"error": {"message": "..."}}` (OpenAI, vLLM) or `{"error": "..."}` (TEI, llama.cpp).

use serde::Deserialize;
use serde_json::{Value, json};

use crate::embed::l2_normalise;
use crate::error::EndpointFailure;

/// The body of one request: `texts` for `model`, truncated to `dimensions` when asked.
pub(super) fn request_body(model: &str, texts: &[String], dimensions: Option<usize>) -> Vec<u8> {
    let mut body = json!({ "model": model, "input": texts });
    if let Some(dimensions) = dimensions {
        body["dimensions"] = json!(dimensions);
    }
    body.to_string().into_bytes()
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
    #[serde(default)]
    model: Option<String>,
}

#[derive(Deserialize)]
struct Item {
    index: usize,
    // f64 first: a value outside f32's range must be refused, not read as infinity.
    embedding: Vec<f64>,
}

/// Vectors read from a success response, in input order, each scaled to unit length.
#[derive(Debug, PartialEq)]
pub(super) struct Embeddings {
    pub(super) vectors: Vec<Vec<f32>>,
    /// The model the endpoint says answered (the `model` field), if it says.
    pub(super) model: Option<String>,
}

/// Reads the response to a request of `count` texts. Every vector must be there once, of
/// one length (`expected` when known), finite and not zero.
pub(super) fn parse_response(
    body: &[u8],
    count: usize,
    expected: Option<usize>,
) -> Result<Embeddings, EndpointFailure> {
    let malformed = |reason: String| EndpointFailure::Malformed(reason);
    let response: Response = serde_json::from_slice(body).map_err(|error| {
        malformed(format!(
            "{error} (the body starts `{}`)",
            excerpt(&String::from_utf8_lossy(body))
        ))
    })?;
    if response.data.len() != count {
        return Err(malformed(format!(
            "{} vectors for {count} texts",
            response.data.len()
        )));
    }
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; count];
    let mut length = expected;
    for item in response.data {
        let Some(slot) = vectors.get_mut(item.index) else {
            return Err(malformed(format!("index {} for {count} texts", item.index)));
        };
        if slot.is_some() {
            return Err(malformed(format!("index {} appears twice", item.index)));
        }
        let expected = *length.get_or_insert(item.embedding.len());
        if item.embedding.len() != expected {
            return Err(EndpointFailure::Dimensions {
                expected,
                got: item.embedding.len(),
            });
        }
        let mut vector = Vec::with_capacity(expected);
        for value in item.embedding {
            let narrowed = value as f32;
            if !narrowed.is_finite() {
                return Err(malformed(format!(
                    "vector {} holds {value}, not a finite number",
                    item.index
                )));
            }
            vector.push(narrowed);
        }
        if expected == 0 || vector.iter().all(|x| *x == 0.0) {
            return Err(malformed(format!("vector {} is empty or zero", item.index)));
        }
        // The index compares by cosine on unit vectors; not every server normalises.
        l2_normalise(&mut vector);
        *slot = Some(vector);
    }
    Ok(Embeddings {
        // Every slot is filled: `count` items, each index in range and seen once.
        vectors: vectors.into_iter().map(Option::unwrap_or_default).collect(),
        model: response.model,
    })
}

/// The error message of a failed response, or the start of its body.
pub(super) fn error_message(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let message =
        serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|value| match &value["error"] {
                Value::String(message) => Some(message.clone()),
                Value::Object(error) => error
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                _ => None,
            });
    match message {
        Some(message) => excerpt(&message),
        None if text.trim().is_empty() => "no message".to_owned(),
        None => excerpt(&text),
    }
}

/// At most 300 characters of `text`, so an HTML error page does not fill the terminal.
fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(300) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn vectors_come_back_in_input_order_and_unit_length() {
        let body = br#"{"object":"list","model":"m-1","data":[
            {"object":"embedding","index":1,"embedding":[0.0,2.0]},
            {"object":"embedding","index":0,"embedding":[3.0,4.0]}]}"#;
        let embeddings = parse_response(body, 2, None).unwrap();
        assert_eq!(embeddings.vectors, vec![vec![0.6, 0.8], vec![0.0, 1.0]]);
        assert_eq!(embeddings.model.as_deref(), Some("m-1"));
    }

    #[test]
    fn a_missing_duplicate_or_odd_vector_is_refused() {
        let cases: [(&[u8], &str); 6] = [
            (
                br#"{"data":[{"index":0,"embedding":[1.0]}]}"#,
                "1 vectors for 2",
            ),
            (
                br#"{"data":[{"index":0,"embedding":[1.0]},{"index":0,"embedding":[1.0]}]}"#,
                "appears twice",
            ),
            (
                br#"{"data":[{"index":0,"embedding":[1.0]},{"index":5,"embedding":[1.0]}]}"#,
                "index 5",
            ),
            (
                br#"{"data":[{"index":0,"embedding":[0.0]},{"index":1,"embedding":[1.0]}]}"#,
                "zero",
            ),
            (
                br#"{"data":[{"index":0,"embedding":[1e300]},{"index":1,"embedding":[1.0]}]}"#,
                "not a finite number",
            ),
            (b"<html>busy</html>", "the body starts `<html>busy</html>`"),
        ];
        for (body, expected) in cases {
            let error = parse_response(body, 2, None).unwrap_err().to_string();
            assert!(error.contains(expected), "{error}");
        }
    }

    #[test]
    fn vectors_of_another_length_are_a_dimension_error() {
        let body = br#"{"data":[{"index":0,"embedding":[1.0,0.0]},{"index":1,"embedding":[1.0]}]}"#;
        assert_eq!(
            parse_response(body, 2, None),
            Err(EndpointFailure::Dimensions {
                expected: 2,
                got: 1
            })
        );
        let body = br#"{"data":[{"index":0,"embedding":[1.0,0.0]}]}"#;
        assert_eq!(
            parse_response(body, 1, Some(3)),
            Err(EndpointFailure::Dimensions {
                expected: 3,
                got: 2
            })
        );
    }

    #[test]
    fn both_error_shapes_give_their_message() {
        assert_eq!(
            error_message(br#"{"error":{"message":"Incorrect API key","type":"auth"}}"#),
            "Incorrect API key"
        );
        assert_eq!(
            error_message(br#"{"error":"Input validation error","error_type":"Validation"}"#),
            "Input validation error"
        );
        assert_eq!(error_message(b"Bad Gateway"), "Bad Gateway");
        assert_eq!(error_message(b""), "no message");
        assert_eq!(
            error_message("x".repeat(400).as_bytes()).chars().count(),
            301
        );
    }

    #[test]
    fn dimensions_are_sent_only_when_asked() {
        let texts = ["a".to_owned()];
        let plain: Value = serde_json::from_slice(&request_body("m", &texts, None)).unwrap();
        assert_eq!(plain, json!({ "model": "m", "input": ["a"] }));
        let cut: Value = serde_json::from_slice(&request_body("m", &texts, Some(256))).unwrap();
        assert_eq!(cut["dimensions"], 256);
    }
}
