//! Public-API behaviour of chalie-index: the cascade, integrity checks, and the real model.

mod cascade;
mod dispatch;
#[cfg(feature = "openai")]
#[allow(clippy::unwrap_used)]
mod endpoint;
mod incremental;
mod integrity;
mod linked;
mod minilm;
mod playground;
mod support;
mod user_crate;
