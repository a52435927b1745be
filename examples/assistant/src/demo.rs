//! The demo conversation (placeholder while it is written).
