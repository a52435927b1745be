//! Public-API behaviour of chalie-index: the cascade, integrity checks, and the real model.

mod cascade;
mod integrity;
mod minilm;
mod support;
