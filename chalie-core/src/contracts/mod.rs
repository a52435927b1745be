//! Capability contracts: what an ability uses at run time to keep its
//! outputs context-safe, and (in [`build`]) what the build checks.
//!
//! - **Context-safe outputs**: standard parameters ([`TopK`],
//!   [`MaxItems`], [`MaxChars`], [`Format`], [`Fields`], [`Cursor`]),
//!   standard result [`keys`], [`Page`]s with signed cursors, hard caps
//!   with continuation ([`cap_result`], [`read_more`]) and a per-session
//!   [`Scratchpad`]. [`declare_output!`](crate::declare_output) adds a
//!   typed success output ([`OutputSchemas`]).
//! - **Toolsets and profiles**: a [`Profile`] exposes the toolsets it
//!   enables plus the always-on [`CORE_ABILITIES`], nothing else;
//!   [`ChalieConfig`] reads them from `chalie.toml`.
//! - **Canonical JSON**: [`canonical_json`] and [`schema_hash`], shared by
//!   cursors, call reuse and the manifest.
//! - [`build`]: what CI checks, in `cargo xtask manifest` and `lint`:
//!   versions and manifests ([`build::build_manifest`]), the committed
//!   [`build::ContractLock`] and its semver bumps ([`build::check_lock`]),
//!   the schema diff, and the description [`build::lint`].
//!
//! Errors say whether retrying helps, and when, with
//! [`ToolResult::with_retry`](crate::ToolResult::with_retry); the envelope
//! renders it as the last line of the error:
//!
//! ```
//! use chalie_core::{result::Retry, ToolResult, envelope::render_envelope};
//!
//! let busy = ToolResult::error("rate-limited", "too many searches this minute", "wait, then search again")
//!     .with_retry(Retry::After(30.0));
//! assert_eq!(
//!     render_envelope("search", None, &busy),
//!     "[search(status=error, code=rate-limited)]\ntoo many searches this minute\nhint: wait, then search again\nretry: after 30s\n[end:search]"
//! );
//! // `Retry::Now` renders `retry: yes` (a transient failure);
//! // `Retry::Never` renders `retry: no; change the call`.
//! let gone = ToolResult::error("not-found", "no note 12", "list notes to find its id").with_retry(Retry::Never);
//! assert!(render_envelope("read_note", None, &gone).contains("retry: no; change the call"));
//! ```

mod canonical;
mod cap;
mod cursor;
mod fragments;
mod output;
mod page;
mod profile;
mod scratchpad;

pub mod build;

pub use canonical::{canonical_json, schema_hash};
pub use cap::{
    Capped, SCRATCHPAD_ABILITY, cap_result, cap_text, read_more, read_slice, slice_result,
};
pub use cursor::{Cursor, CursorError, CursorKey, Position, query_fingerprint};
pub use fragments::{Fields, Format, ItemShape, MaxChars, MaxItems, STANDARD_PARAMS, TopK};
pub use output::{DuplicateOutput, OutputSchemas, output_schema_of};
pub use page::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, Page, PageRequest, keys, list_body};
pub use profile::{CORE_ABILITIES, ChalieConfig, ConfigError, Profile, Selector, Unresolved};
pub use scratchpad::{
    Scratchpad, ScratchpadError, ScratchpadLimits, ScratchpadSlice, ScratchpadStub, slice_text,
};

#[doc(hidden)]
pub use output::{OUTPUT_SCHEMAS, OutputEntry};
