//! Typed success outputs: the schema of what an ability returns, declared
//! beside it with [`declare_output!`](crate::declare_output).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde_json::Value;

use crate::ability::Ability;

/// The distributed slice every [`declare_output!`](crate::declare_output)
/// adds its entry to.
#[doc(hidden)]
#[linkme::distributed_slice]
pub static OUTPUT_SCHEMAS: [OutputEntry];

/// One declared output: the ability's name and its success body's schema.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct OutputEntry {
    ability: &'static str,
    schema: fn() -> Value,
}

impl OutputEntry {
    /// The entry declaring that ability `A` returns a `T` on success.
    pub const fn of<A: Ability, T: JsonSchema>() -> Self {
        Self {
            ability: A::SPEC.name(),
            schema: output_schema_of::<T>,
        }
    }
}

/// The inlined JSON Schema of `T` as an output: no `$ref`, `$defs`,
/// `$schema` or `title`, so it can be published as an MCP `outputSchema`.
pub fn output_schema_of<T: JsonSchema>() -> Value {
    crate::params::inlined_schema_for::<T>(crate::params::Closed::No)
}

/// Ability name → the JSON Schema of its success body.
///
/// [`OutputSchemas::linked`] gathers every
/// [`declare_output!`](crate::declare_output) in the program; tests and
/// tools can also build one by hand with [`OutputSchemas::with`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutputSchemas {
    schemas: BTreeMap<String, Value>,
}

/// Two `declare_output!` for one ability.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ability `{0}` declares its output twice; keep one `declare_output!`")]
pub struct DuplicateOutput(pub String);

impl OutputSchemas {
    /// No outputs declared.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every output declared with `declare_output!` in this program.
    pub fn linked() -> Result<Self, DuplicateOutput> {
        let mut schemas = Self::new();
        for entry in OUTPUT_SCHEMAS.iter() {
            if schemas.schemas.contains_key(entry.ability) {
                return Err(DuplicateOutput(entry.ability.to_owned()));
            }
            schemas
                .schemas
                .insert(entry.ability.to_owned(), (entry.schema)());
        }
        Ok(schemas)
    }

    /// Adds (or replaces) the output schema of the ability `name`.
    pub fn with(mut self, name: impl Into<String>, schema: Value) -> Self {
        self.schemas.insert(name.into(), schema);
        self
    }

    /// The output schema of the ability `name`, if declared.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.schemas.get(name)
    }

    /// The names with a declared output, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> + '_ {
        self.schemas.keys().map(String::as_str)
    }
}

/// Declares the type an ability's success body serialises from, so the
/// published manifest (and an MCP `outputSchema`) can describe it.
///
/// The first argument is the ability type `#[ability]` generated (the
/// function's name), the second a `schemars::JsonSchema` type. It
/// registers at link time, like `#[ability]` itself; read the declarations
/// with [`OutputSchemas::linked`].
///
/// ```rust,standalone_crate
/// use chalie_core::{ToolResult, ability, declare_output};
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Clock {
///     /// Seconds since the Unix epoch.
///     unix_seconds: u64,
/// }
///
/// /// The current time as Unix seconds. Use it when the user asks what time it is.
/// #[ability(effect = read, examples = ["what time is it", "current time", "clock", "time now", "tell me the time", "is it late"])]
/// fn now() -> ToolResult {
///     ToolResult::success(chalie_core::result::Body::json(&Clock { unix_seconds: 0 }))
/// }
/// declare_output!(now, Clock);
///
/// let outputs = chalie_core::contracts::OutputSchemas::linked().unwrap();
/// assert_eq!(outputs.get("now").unwrap()["properties"]["unix_seconds"]["type"], "integer");
/// ```
#[macro_export]
macro_rules! declare_output {
    ($ability:ty, $output:ty $(,)?) => {
        const _: () = {
            #[$crate::__private::linkme::distributed_slice($crate::__private::OUTPUT_SCHEMAS)]
            #[linkme(crate = $crate::__private::linkme)]
            static __CHALIE_OUTPUT: $crate::__private::OutputEntry =
                $crate::__private::OutputEntry::of::<$ability, $output>();
        };
    };
}
