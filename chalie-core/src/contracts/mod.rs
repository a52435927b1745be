//! Capability contracts: what an ability publishes and promises.
//!
//! - **Versions and manifests**: [`build_manifest`] lists every
//!   capability under its published name (`namespace.capability-name`)
//!   with its version, schemas and [`contract_hash`]; [`check_lock`]
//!   compares it with the committed [`ContractLock`] and names every
//!   schema change that lacks its semver bump, and the [`Deployment`]
//!   version of the whole set. [`declare_output!`](crate::declare_output)
//!   adds a typed success output. [`manifest_command`] and
//!   [`lint_command`] are the `cargo xtask manifest` and `lint` of every
//!   project.
//! - **Toolsets and profiles**: a [`Profile`] exposes the toolsets it
//!   enables plus the always-on [`CORE_ABILITIES`], nothing else.
//! - **Context-safe outputs**: standard parameters ([`TopK`],
//!   [`MaxItems`], [`MaxChars`], [`Format`], [`Fields`], [`Cursor`]),
//!   standard result [`keys`], [`Page`]s with signed cursors, hard caps
//!   with continuation ([`cap_result`], [`read_more`]) and a per-session
//!   [`Scratchpad`].
//! - **Description lint**: [`lint`] reviews summaries, field descriptions
//!   and look-alike abilities.
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
mod commands;
mod cursor;
mod diff;
mod fragments;
mod lint;
mod lock;
mod manifest;
mod output;
mod page;
mod profile;
mod scratchpad;

pub use canonical::{canonical_json, schema_hash};
pub use cap::{
    Capped, SCRATCHPAD_ABILITY, cap_result, cap_text, read_more, read_slice, slice_result,
    slice_text,
};
pub use commands::{
    CONFIG_FILE, CommandError, LOCK_FILE, linked_manifest, lint_command, load_config,
    manifest_command,
};
pub use cursor::{Cursor, CursorError, CursorKey, Position, query_fingerprint};
pub use diff::{Bump, SchemaChange, Side, diff_schemas, required_bump};
pub use fragments::{Fields, Format, ItemShape, MaxChars, MaxItems, STANDARD_PARAMS, TopK};
pub(crate) use lint::states_default;
pub use lint::{LintFinding, LintOptions, LintRule, lint, summary_similarity};
pub use lock::{
    BumpProblem, ContractLock, Deployment, FIRST_DEPLOYMENT_VERSION, LockDrift, LockReport,
    LockedContract, check_lock, deployment_hash,
};
pub use manifest::{
    Capability, Manifest, ManifestError, ability_name, build_manifest, contract_hash,
    is_valid_namespace, published_name,
};
pub use output::{DuplicateOutput, OutputSchemas, output_schema_of};
pub use page::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, Page, PageRequest, keys, list_body};
pub use profile::{CORE_ABILITIES, ChalieConfig, ConfigError, Profile, Selector, Unresolved};
pub use scratchpad::{
    Scratchpad, ScratchpadError, ScratchpadLimits, ScratchpadSlice, ScratchpadStub,
};

#[doc(hidden)]
pub use output::{OUTPUT_SCHEMAS, OutputEntry};
