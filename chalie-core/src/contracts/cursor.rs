//! Opaque, signed cursors: a model can pass one back, never forge one.
//!
//! A cursor is `base64url(payload) "." base64url(tag)`, where the payload
//! names the ability, a fingerprint of the query, the position (a keyset
//! key or a character offset), when it was issued and the format version,
//! and the tag is an HMAC-SHA256 of the payload under a [`CursorKey`].

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::Sha256;

use super::canonical::canonical_json;
use crate::params::{ParamErrors, ParamType, Problem};
use crate::{ToolResult, result::Retry};

/// The cursor format version; a cursor of another version is stale.
const CURSOR_VERSION: u8 = 1;

/// An opaque continuation token as the model sees it: a string it copies
/// from `next_cursor` into the `cursor` parameter.
///
/// As a Params field, write `cursor: Option<Cursor>`; verify it with
/// [`CursorKey::verify`] (or [`PageRequest::new`](crate::contracts::PageRequest::new)) before use.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cursor(String);

impl Cursor {
    /// A cursor from its text, unverified.
    pub fn from_text(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// The text to show the model.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Cursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl ParamType for Cursor {
    const DEFAULT_RULE: crate::params::DefaultRule = crate::params::DefaultRule::String;

    fn schema() -> Value {
        json!({ "type": "string" })
    }

    fn parse(value: &Value, path: &str) -> Result<Self, ParamErrors> {
        match value.as_str() {
            Some(text) if !text.trim().is_empty() => Ok(Self(text.trim().to_owned())),
            _ => Err(ParamErrors::single(
                path,
                Problem::Invalid(
                    "must be the `next_cursor` string of the previous result, copied exactly"
                        .into(),
                ),
            )),
        }
    }
}

/// Where a cursor continues from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Position {
    /// After the item with this key (keyset pagination).
    After(Value),
    /// At this character offset (reading a long text on).
    Offset(usize),
    /// At this character offset of a scratchpad entry.
    Slice {
        /// The scratchpad id.
        id: String,
        /// The character offset.
        offset: usize,
    },
}

#[derive(Serialize, Deserialize)]
struct Payload {
    /// Format version.
    v: u8,
    /// The ability that issued it.
    a: String,
    /// The query fingerprint.
    q: String,
    /// The position.
    p: Position,
    /// Issued at, Unix seconds.
    t: u64,
}

/// Why a cursor was refused. Each becomes the error `invalid-cursor`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CursorError {
    /// Not a cursor this program issued, or altered.
    #[error("the cursor is not one this tool issued, or it was altered")]
    Forged,
    /// Issued by another ability.
    #[error("the cursor was issued by `{issued_by}`, not by `{expected}`")]
    WrongAbility {
        /// The ability that issued it.
        issued_by: String,
        /// The ability it was passed to.
        expected: String,
    },
    /// Issued for another query.
    #[error(
        "the cursor belongs to a different query; a cursor only continues the query it came from"
    )]
    QueryChanged,
    /// Too old, or from an older format.
    #[error("the cursor has expired")]
    Expired,
    /// A keyset cursor passed where an offset was expected, or the reverse.
    #[error("the cursor is for another kind of continuation")]
    WrongKind,
}

impl CursorError {
    /// The error result the model reads: code `invalid-cursor`, with a
    /// hint to start over, never a wrong page.
    pub fn into_tool_result(self) -> ToolResult {
        let hint = match self {
            CursorError::QueryChanged => {
                "call again with the same query as before, or without `cursor` to start from the first page"
            }
            _ => "call again without `cursor` to start from the first page",
        };
        ToolResult::error("invalid-cursor", self.to_string(), hint).with_retry(Retry::Never)
    }
}

/// The secret cursors are signed with.
///
/// [`CursorKey::process`] is random per process, fine for one process; a
/// deployment whose cursors cross processes or restarts configures one
/// with [`CursorKey::new`]. Cursors expire after [`CursorKey::max_age`]
/// (24 hours unless set).
#[derive(Clone)]
pub struct CursorKey {
    secret: Vec<u8>,
    max_age: Duration,
}

impl std::fmt::Debug for CursorKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CursorKey")
            .field("max_age", &self.max_age)
            .finish_non_exhaustive()
    }
}

fn now_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// The fingerprint of a query: everything that shapes the result set
/// (not the cursor, not the page size), as canonical JSON, hashed.
pub fn query_fingerprint(query: &Value) -> String {
    let hex = super::canonical::sha256_hex(canonical_json(query).as_bytes());
    // 16 bytes are plenty to tell queries apart and keep cursors short.
    hex["sha256:".len().."sha256:".len() + 32].to_owned()
}

impl CursorKey {
    /// A key from a configured secret (at least 32 bytes recommended).
    pub fn new(secret: impl AsRef<[u8]>) -> Self {
        Self {
            secret: secret.as_ref().to_vec(),
            max_age: Duration::from_secs(24 * 60 * 60),
        }
    }

    /// This process's key: random, made once.
    ///
    /// The randomness comes from the standard library's per-process hash
    /// seeds (from the operating system), mixed through SHA-256.
    pub fn process() -> &'static CursorKey {
        static KEY: std::sync::OnceLock<CursorKey> = std::sync::OnceLock::new();
        KEY.get_or_init(|| {
            use sha2::Digest;
            use std::hash::{BuildHasher, Hasher};
            let mut seed = Sha256::new();
            for round in 0u64..4 {
                let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
                hasher.write_u64(round);
                seed.update(hasher.finish().to_le_bytes());
            }
            seed.update(std::process::id().to_le_bytes());
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.as_nanos());
            seed.update(nanos.to_le_bytes());
            CursorKey::new(seed.finalize())
        })
    }

    /// The same key with cursors valid for `max_age`.
    pub fn with_max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age;
        self
    }

    /// How long a cursor stays valid.
    pub fn max_age(&self) -> Duration {
        self.max_age
    }

    fn mac(&self) -> Hmac<Sha256> {
        // HMAC takes a key of any length; this cannot fail.
        <Hmac<Sha256> as Mac>::new_from_slice(&self.secret).expect("HMAC accepts any key length")
    }

    /// A cursor for `ability`, continuing `query` from `position`.
    pub fn issue(&self, ability: &str, query: &Value, position: Position) -> Cursor {
        self.issue_at(ability, query, position, now_seconds())
    }

    fn issue_at(&self, ability: &str, query: &Value, position: Position, issued_at: u64) -> Cursor {
        let payload = Payload {
            v: CURSOR_VERSION,
            a: ability.to_owned(),
            q: query_fingerprint(query),
            p: position,
            t: issued_at,
        };
        let bytes = serde_json::to_vec(&payload).unwrap_or_default();
        let mut mac = self.mac();
        mac.update(&bytes);
        let tag = mac.finalize().into_bytes();
        Cursor(format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&bytes),
            URL_SAFE_NO_PAD.encode(tag)
        ))
    }

    /// A cursor issued `age` ago: for tests of expiry.
    #[doc(hidden)]
    pub fn issue_aged(
        &self,
        ability: &str,
        query: &Value,
        position: Position,
        age: Duration,
    ) -> Cursor {
        self.issue_at(
            ability,
            query,
            position,
            now_seconds().saturating_sub(age.as_secs()),
        )
    }

    /// The position of `cursor`, if this key signed it, for `ability`, for
    /// this same `query`, and it has not expired.
    pub fn verify(
        &self,
        cursor: &Cursor,
        ability: &str,
        query: &Value,
    ) -> Result<Position, CursorError> {
        let (payload_text, tag_text) = cursor.0.split_once('.').ok_or(CursorError::Forged)?;
        let payload_bytes = URL_SAFE_NO_PAD
            .decode(payload_text)
            .map_err(|_| CursorError::Forged)?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag_text)
            .map_err(|_| CursorError::Forged)?;
        let mut mac = self.mac();
        mac.update(&payload_bytes);
        mac.verify_slice(&tag).map_err(|_| CursorError::Forged)?;
        let payload: Payload =
            serde_json::from_slice(&payload_bytes).map_err(|_| CursorError::Forged)?;
        if payload.v != CURSOR_VERSION {
            return Err(CursorError::Expired);
        }
        if payload.a != ability {
            return Err(CursorError::WrongAbility {
                issued_by: payload.a,
                expected: ability.to_owned(),
            });
        }
        if payload.q != query_fingerprint(query) {
            return Err(CursorError::QueryChanged);
        }
        if now_seconds().saturating_sub(payload.t) > self.max_age.as_secs() {
            return Err(CursorError::Expired);
        }
        Ok(payload.p)
    }
}
