//! [`Principal`]: who a session belongs to, and on whose behalf a turn runs.

use std::sync::Arc;

/// Who a session belongs to and on whose behalf a turn's calls run: an
/// opaque id chosen by the host's authentication (a user id, an account,
/// a service name). Two principals are the same exactly when their ids are
/// byte for byte equal. Cheap to clone.
///
/// A session records the principal that opened it; only that principal
/// may send to it, answer its approvals, change its mode or run its plan
/// (see [`Sessions::as_principal`](crate::session::Sessions::as_principal)).
/// Every turn of its runs carries it, so an ability can check that what it
/// touches belongs to the caller:
///
/// ```
/// use chalie_core::{Channel, turn::Principal, Turn};
///
/// let turn = Turn::builder(Channel::Chat).principal(Principal::new("user-42")).build();
/// assert_eq!(turn.principal().map(Principal::id), Some("user-42"));
/// assert!(Turn::builder(Channel::Chat).build().principal().is_none());
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Principal(Arc<str>);

impl Principal {
    /// The principal with id `id`.
    pub fn new(id: impl Into<String>) -> Self {
        Self(Arc::from(id.into()))
    }

    /// Its id, as given to [`new`](Self::new).
    pub fn id(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Principal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Principal").field(&&*self.0).finish()
    }
}

impl std::fmt::Display for Principal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
