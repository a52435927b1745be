//! The published half of every capability: names, versions, schemas,
//! hashes. Nothing of the handler.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::ability::Effect;
use crate::contracts::OutputSchemas;
use crate::contracts::schema_hash;
use crate::registry::AbilityEntry;

/// The discovery manifest of a namespace: what `cargo xtask manifest`
/// prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The namespace every published name starts with.
    pub namespace: String,
    /// The deployment version of the whole set, which only the lock's
    /// history gives (`cargo xtask manifest` fills it in;
    /// [`build_manifest`] leaves it out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<super::lock::Deployment>,
    /// Every capability, sorted by name.
    pub capabilities: Vec<Capability>,
}

/// One published capability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capability {
    /// `namespace.capability-name`, see [`published_name`].
    pub name: String,
    /// The ability's own (snake_case) name, what the model calls.
    pub ability: String,
    /// The model-facing description.
    pub description: String,
    /// The semantic version of the contract.
    pub version: String,
    /// The toolset a profile enables it through.
    pub toolset: String,
    /// Read or write.
    pub effect: Effect,
    /// The parameters' JSON Schema.
    pub input_schema: Value,
    /// The success body's JSON Schema, when declared with
    /// [`declare_output!`](crate::declare_output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// [`schema_hash`] of `{"input": ..., "output": ...}`.
    pub schema_hash: String,
}

impl Capability {
    /// The published contract of one registry entry.
    pub fn of(namespace: &str, entry: &AbilityEntry, outputs: &OutputSchemas) -> Self {
        let spec = entry.spec();
        let input_schema = input_schema(entry);
        let output_schema = outputs.get(spec.name()).cloned();
        Self {
            name: published_name(namespace, spec.name()),
            ability: spec.name().to_owned(),
            description: spec.summary().to_owned(),
            version: spec.version().to_owned(),
            toolset: spec.toolset().to_owned(),
            effect: spec.effect(),
            schema_hash: contract_hash(&input_schema, output_schema.as_ref()),
            input_schema,
            output_schema,
        }
    }
}

/// The parameters as the model sees them (declared actions become the
/// `action` enum), without the framework's own fields, which no ability
/// versions.
fn input_schema(entry: &AbilityEntry) -> Value {
    let descriptor =
        crate::descriptor::assemble(entry, crate::descriptor::AssembleOptions::default());
    let mut schema = descriptor.parameters().clone();
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.remove(crate::descriptor::ACT_SUMMARY_FIELD);
        properties.remove(crate::descriptor::ASYNC_FIELD);
    }
    schema
}

/// The hash that changes whenever the input or output schema changes.
pub fn contract_hash(input_schema: &Value, output_schema: Option<&Value>) -> String {
    schema_hash(&json!({ "input": input_schema, "output": output_schema }))
}

/// Why a manifest could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    /// The namespace is not lowercase words joined by `-` or `.`.
    #[error(
        "namespace `{0}` must be lowercase letters and digits in words joined by `-` or `.`, e.g. `acme` or `com.acme-tools`"
    )]
    BadNamespace(String),
    /// An output schema names an ability that is not linked.
    #[error("an output is declared for `{0}`, which is not a linked ability")]
    UnknownOutput(String),
}

/// Whether `namespace` is a valid namespace: lowercase ASCII letters and
/// digits, in words joined by single `-` or `.`.
pub fn is_valid_namespace(namespace: &str) -> bool {
    !namespace.is_empty()
        && namespace.split(['.', '-']).all(|word| {
            !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// The published name of ability `name` in `namespace`:
/// `namespace.capability-name`, the snake_case name with `_` → `-`.
///
/// Ability names never contain `-` (the macro rejects it), so this is a
/// bijection: [`ability_name`] inverts it.
///
/// ```
/// assert_eq!(chalie_core::contracts::build::published_name("acme", "read_file"), "acme.read-file");
/// assert_eq!(chalie_core::contracts::build::ability_name("acme", "acme.read-file").as_deref(), Some("read_file"));
/// ```
pub fn published_name(namespace: &str, name: &str) -> String {
    format!("{namespace}.{}", name.replace('_', "-"))
}

/// The ability name behind a published name in `namespace`; `None` when it
/// is not in that namespace.
pub fn ability_name(namespace: &str, published: &str) -> Option<String> {
    let rest = published.strip_prefix(namespace)?.strip_prefix('.')?;
    (!rest.is_empty() && !rest.contains('_')).then(|| rest.replace('-', "_"))
}

/// The manifest of `entries` in `namespace`, with the declared `outputs`.
pub fn build_manifest<'a>(
    namespace: &str,
    entries: impl IntoIterator<Item = &'a AbilityEntry>,
    outputs: &OutputSchemas,
) -> Result<Manifest, ManifestError> {
    if !is_valid_namespace(namespace) {
        return Err(ManifestError::BadNamespace(namespace.to_owned()));
    }
    let mut capabilities: Vec<Capability> = entries
        .into_iter()
        .map(|entry| Capability::of(namespace, entry, outputs))
        .collect();
    capabilities.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(unknown) = outputs.names().find(|name| {
        !capabilities
            .iter()
            .any(|capability| capability.ability == *name)
    }) {
        return Err(ManifestError::UnknownOutput(unknown.to_owned()));
    }
    Ok(Manifest {
        namespace: namespace.to_owned(),
        deployment: None,
        capabilities,
    })
}
