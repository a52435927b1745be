//! Many clients streaming at once.
