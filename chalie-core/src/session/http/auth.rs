//! The router's authentication seam: [`Authenticate`] turns a request's
//! headers into a [`Principal`]; [`BearerTokens`] is the default.

use std::future::Future;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::turn::Principal;

/// Decides who a request comes from. The [`router`](super::router) asks
/// it before every route; a rejection is answered `401` and nothing else
/// happens. [`BearerTokens`] is the default; put your own sign-in here
/// (session cookies, JWTs, an mTLS header set by your proxy).
///
/// ```
/// use axum::http::HeaderMap;
/// use chalie_core::turn::Principal;
/// use chalie_core::session::{Authenticate, Unauthorized};
///
/// /// Trusts the user id a signing proxy in front of the app has set.
/// struct FromProxy;
///
/// impl Authenticate for FromProxy {
///     async fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, Unauthorized> {
///         headers
///             .get("x-verified-user")
///             .and_then(|value| value.to_str().ok())
///             .map(Principal::new)
///             .ok_or_else(|| Unauthorized::new("sign in through the proxy first"))
///     }
/// }
/// ```
pub trait Authenticate: Send + Sync + 'static {
    /// The principal the request's headers prove, or why they prove none.
    fn authenticate(
        &self,
        headers: &HeaderMap,
    ) -> impl Future<Output = Result<Principal, Unauthorized>> + Send;

    /// Whether `principal` may change the permission policy every session
    /// runs under (`PUT /policy`); anyone else is answered `403`. The
    /// policy is the operator's, not one user's: by default nobody may.
    fn may_change_policy(&self, principal: &Principal) -> bool {
        let _ = principal;
        false
    }
}

/// A request that proved no principal: answered `401` with
/// `{"error": message}` and a `WWW-Authenticate` challenge (`Bearer` by
/// default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unauthorized {
    message: String,
    challenge: String,
}

impl Unauthorized {
    /// A rejection telling the client `message`, e.g. how to sign in.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            challenge: "Bearer".into(),
        }
    }

    /// The same rejection with another `WWW-Authenticate` value.
    pub fn with_challenge(mut self, challenge: impl Into<String>) -> Self {
        self.challenge = challenge.into();
        self
    }

    /// What the client is told.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl IntoResponse for Unauthorized {
    fn into_response(self) -> Response {
        let challenge = HeaderValue::from_str(&self.challenge)
            .unwrap_or_else(|_| HeaderValue::from_static("Bearer"));
        let mut response =
            super::errors::error(StatusCode::UNAUTHORIZED, "unauthorized", self.message);
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, challenge);
        response
    }
}

/// A bearer token [`BearerTokens::with`] refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Shorter than [`BearerTokens::MIN_LEN`] bytes: guessable.
    #[error(
        "a bearer token needs at least {min} bytes, this one has {len}; generate 32 random bytes, e.g. `openssl rand -hex 32`"
    )]
    TooShort {
        /// Its length.
        len: usize,
        /// The least allowed.
        min: usize,
    },
    /// A character a client cannot send after `Bearer ` in a header.
    #[error("a bearer token may hold only visible ASCII without spaces; use hex or base64url text")]
    NotSendable,
    /// The same token given twice.
    #[error("this bearer token is already given to a principal; give each principal its own")]
    Duplicate,
}

/// The default [`Authenticate`]: `Authorization: Bearer <token>`, each
/// token standing for one principal. A principal given a token through
/// [`with_admin`](Self::with_admin) may also change the policy. Tokens are kept as SHA-256 digests
/// and every presented token is compared with all of them in constant
/// time, so neither the tokens nor the timing of a check give one away.
///
/// ```
/// use chalie_core::turn::Principal;
/// use chalie_core::session::BearerTokens;
///
/// let tokens = BearerTokens::new()
///     .with("3f9c1d2e8a7b6c5d4e3f2a1b0c9d8e7f", Principal::new("alice"))
///     .unwrap()
///     .with("a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5", Principal::new("bob"))
///     .unwrap();
/// assert_eq!(tokens.principal("a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5").map(Principal::id), Some("bob"));
/// assert!(tokens.principal("a guess").is_none());
/// assert!(BearerTokens::new().with("short", Principal::new("eve")).is_err());
/// ```
#[derive(Clone, Default)]
pub struct BearerTokens {
    tokens: Vec<([u8; 32], Principal)>,
    /// Who may change the policy.
    admins: Vec<Principal>,
}

impl std::fmt::Debug for BearerTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The principals only: a token must not reach a log.
        f.debug_struct("BearerTokens")
            .field(
                "principals",
                &self.tokens.iter().map(|(_, p)| p).collect::<Vec<_>>(),
            )
            .field("admins", &self.admins)
            .finish()
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Whether two digests are equal, looking at every byte whatever differs.
fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let difference = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(difference) == 0
}

impl BearerTokens {
    /// The fewest bytes a token may have: 16 random bytes, hex-encoded.
    pub const MIN_LEN: usize = 32;

    /// No tokens: every request is refused.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same tokens, and `token` standing for `principal`.
    pub fn with(mut self, token: &str, principal: Principal) -> Result<Self, TokenError> {
        if token.len() < Self::MIN_LEN {
            return Err(TokenError::TooShort {
                len: token.len(),
                min: Self::MIN_LEN,
            });
        }
        if !token.bytes().all(|byte| byte.is_ascii_graphic()) {
            return Err(TokenError::NotSendable);
        }
        let digest = digest(token);
        if self.tokens.iter().any(|(known, _)| same(known, &digest)) {
            return Err(TokenError::Duplicate);
        }
        self.tokens.push((digest, principal));
        Ok(self)
    }

    /// [`with`](Self::with), and `principal` may change the policy
    /// ([`Authenticate::may_change_policy`]).
    ///
    /// ```
    /// use chalie_core::turn::Principal;
    /// use chalie_core::session::{Authenticate, BearerTokens};
    ///
    /// let tokens = BearerTokens::new()
    ///     .with_admin("3f9c1d2e8a7b6c5d4e3f2a1b0c9d8e7f", Principal::new("ops"))
    ///     .unwrap()
    ///     .with("a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5", Principal::new("bob"))
    ///     .unwrap();
    /// assert!(tokens.may_change_policy(&Principal::new("ops")));
    /// assert!(!tokens.may_change_policy(&Principal::new("bob")));
    /// ```
    pub fn with_admin(self, token: &str, principal: Principal) -> Result<Self, TokenError> {
        let mut tokens = self.with(token, principal.clone())?;
        if !tokens.admins.contains(&principal) {
            tokens.admins.push(principal);
        }
        Ok(tokens)
    }

    /// The principal `token` stands for, if any.
    pub fn principal(&self, token: &str) -> Option<&Principal> {
        let presented = digest(token);
        // Every digest is compared: how long this takes says nothing
        // about which token, if any, matched.
        self.tokens.iter().fold(None, |found, (known, principal)| {
            if same(known, &presented) {
                Some(principal)
            } else {
                found
            }
        })
    }
}

impl Authenticate for BearerTokens {
    async fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, Unauthorized> {
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            return Err(Unauthorized::new(
                "no credentials: send `Authorization: Bearer <token>`",
            ));
        };
        let token = value
            .to_str()
            .ok()
            .and_then(|value| value.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim());
        let Some(token) = token else {
            return Err(Unauthorized::new(
                "the `Authorization` header is not `Bearer <token>`",
            ));
        };
        self.principal(token).cloned().ok_or_else(|| {
            Unauthorized::new("the bearer token is not valid")
                .with_challenge(r#"Bearer error="invalid_token""#)
        })
    }

    fn may_change_policy(&self, principal: &Principal) -> bool {
        self.admins.contains(principal)
    }
}
