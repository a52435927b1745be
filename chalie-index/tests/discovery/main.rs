//! Public-API behaviour of chalie-index: the cascade, integrity checks, and the real model.

mod cascade;
mod dispatch;
mod incremental;
mod integrity;
mod linked;
mod minilm;
mod support;
