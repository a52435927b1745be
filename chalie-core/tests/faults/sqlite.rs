//! The SQLite store damaged, full and shared.
