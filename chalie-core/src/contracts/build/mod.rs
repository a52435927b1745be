//! What the build checks about the linked abilities: their published
//! contracts, and whether a model would understand them.
//!
//! - **Versions and manifests**: [`build_manifest`] lists every
//!   capability under its published name (`namespace.capability-name`)
//!   with its version, schemas and [`contract_hash`]; [`check_lock`]
//!   compares it with the committed [`ContractLock`] and names every
//!   schema change that lacks its semver bump ([`diff_schemas`],
//!   [`required_bump`]), and the [`Deployment`] version of the whole set.
//! - **Description lint**: [`lint`] reviews summaries, field descriptions
//!   and look-alike abilities.
//! - [`manifest_command`] and [`lint_command`] are the `cargo xtask
//!   manifest` and `lint` of every project, reading [`CONFIG_FILE`] and
//!   [`LOCK_FILE`].
//!
//! Nothing here runs while an ability serves a call: the run-time side of
//! a contract (pages, cursors, caps, profiles) is in the
//! [parent module](crate::contracts).

mod commands;
mod diff;
mod lint;
mod lock;
mod manifest;

pub use commands::{
    CONFIG_FILE, CommandError, LOCK_FILE, linked_manifest, lint_command, load_config,
    manifest_command,
};
pub use diff::{Bump, SchemaChange, Side, diff_schemas, required_bump};
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
