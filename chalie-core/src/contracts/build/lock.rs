//! The committed lock of published contracts, and the check that a schema
//! never changes without the version bump it needs.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::diff::{Bump, SchemaChange, Side, diff_schemas, required_bump};
use super::manifest::Manifest;
use crate::contracts::schema_hash;

/// The lock file: every published contract as it was last accepted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContractLock {
    /// The namespace the contracts were published in.
    pub namespace: String,
    /// The version of the whole capability set, as last accepted; absent in
    /// a lock written before deployments were versioned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<Deployment>,
    /// Published name → contract, sorted.
    pub capabilities: BTreeMap<String, LockedContract>,
}

/// One accepted contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockedContract {
    /// The version it was accepted at.
    pub version: String,
    /// Its [`contract_hash`](crate::contracts::build::contract_hash).
    pub schema_hash: String,
    /// The parameters' schema, kept so a change can be explained.
    pub input_schema: Value,
    /// The success body's schema, when declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
}

/// The version of a deployment: the whole set of capabilities one program
/// serves, for a client that caches or pins what it was offered.
///
/// Its `hash` covers every capability's contract (published name, version,
/// schema hash), so it changes exactly when one of them does; its `version`
/// then moves by the strongest bump among the capabilities that changed
/// (see [`check_lock`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deployment {
    /// A semantic version, [`FIRST_DEPLOYMENT_VERSION`] in a first lock.
    pub version: String,
    /// [`deployment_hash`] of the manifest it was accepted for.
    pub hash: String,
}

/// The deployment version of a first lock.
pub const FIRST_DEPLOYMENT_VERSION: &str = "1.0.0";

/// The hash of every capability's contract in `manifest`: the namespace,
/// and each capability's published name, version and schema hash, in
/// name order. Wording outside the schemas (an ability's summary) is not
/// a contract, as in [`check_lock`].
pub fn deployment_hash(manifest: &Manifest) -> String {
    let mut contracts: Vec<Value> = manifest
        .capabilities
        .iter()
        .map(|capability| {
            json!({
                "name": capability.name,
                "version": capability.version,
                "schema_hash": capability.schema_hash,
            })
        })
        .collect();
    contracts.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    schema_hash(&json!({ "namespace": manifest.namespace, "capabilities": contracts }))
}

impl ContractLock {
    /// The first lock of `manifest`: it accepts the manifest as it is, at
    /// deployment version [`FIRST_DEPLOYMENT_VERSION`].
    pub fn from_manifest(manifest: &Manifest) -> Self {
        Self::accepting(
            manifest,
            Deployment {
                version: FIRST_DEPLOYMENT_VERSION.to_owned(),
                hash: deployment_hash(manifest),
            },
        )
    }

    /// The lock that accepts `manifest` as it is, at `deployment` (the
    /// [`LockReport::deployment`] that [`check_lock`] computed for it).
    pub fn accepting(manifest: &Manifest, deployment: Deployment) -> Self {
        Self {
            namespace: manifest.namespace.clone(),
            deployment: Some(deployment),
            capabilities: manifest
                .capabilities
                .iter()
                .map(|capability| {
                    (
                        capability.name.clone(),
                        LockedContract {
                            version: capability.version.clone(),
                            schema_hash: capability.schema_hash.clone(),
                            input_schema: capability.input_schema.clone(),
                            output_schema: capability.output_schema.clone(),
                        },
                    )
                })
                .collect(),
        }
    }

    /// The lock as committed: pretty JSON with a final newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// A contract whose schema changed without the version bump it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BumpProblem {
    /// The published name.
    pub capability: String,
    /// The version in the lock.
    pub locked_version: String,
    /// The version in the code.
    pub version: String,
    /// The bump the changes need.
    pub required: Bump,
    /// The smallest version that would do, e.g. `2.0.0`.
    pub suggested_version: String,
    /// Every change, the ones needing the bump first.
    pub changes: Vec<SchemaChange>,
}

impl fmt::Display for BumpProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let backwards = matches!(
            (semver::Version::parse(&self.locked_version), semver::Version::parse(&self.version)),
            (Ok(locked), Ok(version)) if version < locked
        );
        if backwards {
            return write!(
                f,
                "`{}` went back from version {} to {}; versions only move forward, set `version = \"{}\"`",
                self.capability, self.locked_version, self.version, self.suggested_version
            );
        }
        write!(
            f,
            "`{}` changed its schema and needs {} version bump, but its version is {} (locked at {}); set `version = \"{}\"`",
            self.capability,
            self.required,
            self.version,
            self.locked_version,
            self.suggested_version
        )?;
        for change in self
            .changes
            .iter()
            .filter(|change| change.bump == self.required)
        {
            write!(f, "\n  - {change}")?;
        }
        Ok(())
    }
}

/// A difference between the lock and the code that only needs the lock
/// rewritten (`--update`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockDrift {
    /// A capability not in the lock yet.
    Added(String),
    /// A capability in the lock that is no longer linked; removing one
    /// breaks its callers, so say so in the changelog.
    Removed(String),
    /// A correctly bumped or reworded contract.
    Changed {
        /// The published name.
        capability: String,
        /// The locked version.
        from: String,
        /// The version in the code.
        to: String,
    },
    /// The namespace changed: every published name changes with it.
    Namespace {
        /// The locked namespace.
        from: String,
        /// The configured namespace.
        to: String,
    },
    /// The deployment version moves, because a contract changed (or the
    /// lock has no deployment version yet: `from` is `None`).
    Deployment {
        /// The locked deployment version.
        from: Option<String>,
        /// The version the code's contracts amount to.
        to: String,
    },
}

impl fmt::Display for LockDrift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockDrift::Added(name) => write!(f, "`{name}` is new"),
            LockDrift::Removed(name) => {
                write!(f, "`{name}` was removed, which breaks its callers")
            }
            LockDrift::Changed {
                capability,
                from,
                to,
            } if from == to => write!(f, "`{capability}` changed wording at {to}"),
            LockDrift::Changed {
                capability,
                from,
                to,
            } => write!(f, "`{capability}` changed from {from} to {to}"),
            LockDrift::Namespace { from, to } => {
                write!(f, "the namespace changed from `{from}` to `{to}`")
            }
            LockDrift::Deployment { from: None, to } => {
                write!(f, "the deployment is versioned from here on, at {to}")
            }
            LockDrift::Deployment {
                from: Some(from),
                to,
            } => {
                write!(f, "the deployment version moves from {from} to {to}")
            }
        }
    }
}

/// The outcome of comparing the code's manifest with the lock.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LockReport {
    /// Contracts that need a version bump before the lock may be updated.
    pub problems: Vec<BumpProblem>,
    /// Differences that `--update` may write.
    pub drift: Vec<LockDrift>,
    /// The deployment the code's contracts amount to: the lock's own when
    /// no contract changed, otherwise its version bumped by the strongest
    /// change (see [`check_lock`]).
    pub deployment: Deployment,
}

impl LockReport {
    /// Whether the lock matches the code exactly.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty() && self.drift.is_empty()
    }

    /// Whether the lock may be rewritten: every change is versioned right.
    pub fn can_update(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Compares `manifest` (the code) with `lock` (the last accepted state).
///
/// A contract whose hash changed needs the bump its largest change needs:
/// major for a removed or renamed field, a new required field or a
/// narrowed input; minor for additions; patch for wording. On `0.x`
/// versions, as in Cargo, a minor bump counts as major and a patch as
/// minor.
///
/// The deployment version moves whenever the [`deployment_hash`] does, by
/// the strongest bump among the changes: a new capability is a minor bump,
/// a removed one or a new namespace a major one, and a changed capability
/// counts as the bump its own version made (at least the one its schema
/// changes need), and never less than a patch.
pub fn check_lock(lock: &ContractLock, manifest: &Manifest) -> LockReport {
    let mut report = LockReport::default();
    // The strongest change among the capabilities, for the deployment.
    let mut strongest = Bump::None;
    if lock.namespace != manifest.namespace {
        report.drift.push(LockDrift::Namespace {
            from: lock.namespace.clone(),
            to: manifest.namespace.clone(),
        });
        strongest = Bump::Major;
    }
    for capability in &manifest.capabilities {
        let Some(locked) = lock.capabilities.get(&capability.name) else {
            report.drift.push(LockDrift::Added(capability.name.clone()));
            strongest = strongest.max(Bump::Minor);
            continue;
        };
        if locked.schema_hash == capability.schema_hash && locked.version == capability.version {
            continue;
        }
        let mut changes = diff_schemas(&locked.input_schema, &capability.input_schema, Side::Input);
        let null = Value::Null;
        match (&locked.output_schema, &capability.output_schema) {
            (None, None) => {}
            (Some(_), None) => changes.push(SchemaChange {
                side: Side::Output,
                field: String::new(),
                change: "output schema no longer declared".into(),
                bump: Bump::Major,
            }),
            (old, Some(new)) => changes.extend(diff_schemas(
                old.as_ref().unwrap_or(&null),
                new,
                Side::Output,
            )),
        }
        changes.sort_by_key(|change| std::cmp::Reverse(change.bump));
        let required = required_bump(&changes);
        strongest = strongest
            .max(required)
            .max(version_bump(&locked.version, &capability.version));
        match version_check(&locked.version, &capability.version, required) {
            Ok(()) => report.drift.push(LockDrift::Changed {
                capability: capability.name.clone(),
                from: locked.version.clone(),
                to: capability.version.clone(),
            }),
            Err(suggested_version) => report.problems.push(BumpProblem {
                capability: capability.name.clone(),
                locked_version: locked.version.clone(),
                version: capability.version.clone(),
                required: required.max(Bump::Patch),
                suggested_version,
                changes,
            }),
        }
    }
    for name in lock.capabilities.keys() {
        if !manifest
            .capabilities
            .iter()
            .any(|capability| &capability.name == name)
        {
            report.drift.push(LockDrift::Removed(name.clone()));
            strongest = Bump::Major;
        }
    }
    report.deployment = next_deployment(lock.deployment.as_ref(), manifest, strongest);
    if lock.deployment.as_ref() != Some(&report.deployment) {
        report.drift.push(LockDrift::Deployment {
            from: lock
                .deployment
                .as_ref()
                .map(|locked| locked.version.clone()),
            to: report.deployment.version.clone(),
        });
    }
    report
}

/// The deployment `manifest` amounts to after `locked`, given the
/// strongest change found between them.
fn next_deployment(
    locked: Option<&Deployment>,
    manifest: &Manifest,
    strongest: Bump,
) -> Deployment {
    let hash = deployment_hash(manifest);
    let version = match locked {
        None => FIRST_DEPLOYMENT_VERSION.to_owned(),
        Some(locked) if locked.hash == hash => locked.version.clone(),
        Some(locked) => match semver::Version::parse(&locked.version) {
            // The hash moved, so the version does, by a patch at least
            // (e.g. a contract whose schema only changed key order).
            Ok(old) => next_version(&old, strongest.max(Bump::Patch)).to_string(),
            // A hand-edited lock; the versioning starts again.
            Err(_) => FIRST_DEPLOYMENT_VERSION.to_owned(),
        },
    };
    Deployment { version, hash }
}

/// The bump a capability's own version made from `locked` to `current`;
/// none when either is not semver or it went backwards (a problem
/// reported on its own).
fn version_bump(locked: &str, current: &str) -> Bump {
    match (
        semver::Version::parse(locked),
        semver::Version::parse(current),
    ) {
        (Ok(old), Ok(new)) if new >= old => bump_made(&old, &new),
        _ => Bump::None,
    }
}

/// `Ok` when going from `locked` to `current` is a big enough bump for
/// `required`; otherwise the smallest version that would be.
fn version_check(locked: &str, current: &str, required: Bump) -> Result<(), String> {
    let (Ok(old), Ok(new)) = (
        semver::Version::parse(locked),
        semver::Version::parse(current),
    ) else {
        // The macro rejects non-semver versions; a hand-edited lock may not.
        return Err(current.to_owned());
    };
    let suggested = next_version(&old, required);
    if new < old {
        return Err(suggested.to_string());
    }
    if required == Bump::None {
        return Ok(());
    }
    let made = bump_made(&old, &new);
    if made >= required {
        Ok(())
    } else {
        Err(suggested.to_string())
    }
}

/// The bump going from `old` to `new` amounts to (`new >= old`).
fn bump_made(old: &semver::Version, new: &semver::Version) -> Bump {
    if new == old {
        return Bump::None;
    }
    if old.major == 0 {
        if new.major > 0 || new.minor > old.minor {
            Bump::Major
        } else if new.patch > old.patch {
            Bump::Minor
        } else {
            Bump::Patch
        }
    } else if new.major > old.major {
        Bump::Major
    } else if new.minor > old.minor {
        Bump::Minor
    } else {
        Bump::Patch
    }
}

/// The smallest release after `old` that makes `bump`.
fn next_version(old: &semver::Version, bump: Bump) -> semver::Version {
    let (major, minor, patch) = (old.major, old.minor, old.patch);
    let (major, minor, patch) = match (bump, major) {
        (Bump::None, _) => (major, minor, patch),
        (Bump::Major, 0) => (0, minor + 1, 0),
        (Bump::Major, _) => (major + 1, 0, 0),
        (Bump::Minor, 0) => (0, minor, patch + 1),
        (Bump::Minor, _) => (major, minor + 1, 0),
        (Bump::Patch, _) => (major, minor, patch + 1),
    };
    semver::Version::new(major, minor, patch)
}
