//! Tools for LLM agents as annotated Rust functions: one `#[ability]`
//! function gives a tool every major model API accepts, with its contract
//! checked by the compiler.
//!
//! ```rust,standalone_crate
//! use chalie_core::{Channel, Dispatcher, Params, ToolResult, ability};
//!
//! #[derive(Params)]
//! struct WeatherParams {
//!     /// The city and country, e.g. `Valletta, MT`.
//!     location: String,
//! }
//!
//! /// Current weather for a city: condition and temperature in Celsius.
//! /// Use it when the user asks about weather now; it has no forecasts.
//! #[ability(
//!     effect = read,
//!     examples = [
//!         "what's the weather in Rome",
//!         "is it raining in London right now",
//!         "how hot is it in Cairo today",
//!         "check the weather in another city",
//!         "temperature in Valletta",
//!         "do I need an umbrella in Paris",
//!     ],
//! )]
//! async fn weather(params: WeatherParams) -> ToolResult {
//!     ToolResult::success(serde_json::json!({ "location": params.location, "condition": "Clear" }))
//! }
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // Every call goes through the dispatcher: reachability, validation,
//!     // the permission gate, execution, the envelope, the action trail.
//!     let dispatcher = Dispatcher::builder(chalie_core::registry()?)
//!         // The gate: a name no ability has is an error here, not later.
//!         .allow(Channel::Chat, ["weather"])?
//!         // Without `find_tools` in this example, the chat is offered
//!         // weather on every turn; otherwise a turn reaches only what it
//!         // discovered.
//!         .pin(Channel::Chat, ["weather"])
//!         .build();
//!     let done = dispatcher
//!         .call(Channel::Chat, "weather", serde_json::json!({ "location": "Valletta, MT" }))
//!         .await;
//!     assert_eq!(
//!         done.envelope,
//!         "[weather(status=success)]\n{\"location\":\"Valletta, MT\",\"condition\":\"Clear\"}\n[end:weather]"
//!     );
//!     Ok(())
//! }
//! ```
//!
//! That program names six things from this crate: [`Params`](derive@Params),
//! [`ability`], [`ToolResult`], [`registry()`], [`Dispatcher`] and
//! [`Channel`]. The root holds those and the few types a first program
//! meets next ([`Turn`], [`ToolCall`], [`ToolError`], [`Registry`]);
//! the rest has one home each, and each folder of the source one role:
//! - [`dispatch`] (`dispatch/`): the [`Policy`](dispatch::Policy) behind
//!   [`allow`](dispatch::DispatcherBuilder::allow), approvers, rate limits,
//!   external tools, and [`Dispatcher::dispatch`] for a call on a
//!   conversation's [`Turn`]. `flow.rs` runs
//!   [the steps of a call](Dispatcher#the-steps-of-a-call), one file per
//!   step beside it (`resolve`, `reach`, `validate`, `admit`, `gate`,
//!   `execute`).
//! - [`turn`] (`turn/`): the per-call context and what it carries
//!   (principal, clock, extensions, call ids), and its action trail
//!   (`turn/trail.rs`: the records, the gate's decisions, the one builder
//!   of a permission string).
//! - [`result`] and [`envelope`]: the parts of a [`ToolResult`] and
//!   [`render_envelope`](envelope::render_envelope), the one renderer of
//!   what the model reads.
//! - [`descriptor`] (`descriptor/`): [`assemble`](descriptor::assemble)
//!   builds the tool definition,
//!   [`ToolDescriptor::render`](descriptor::ToolDescriptor::render)
//!   renders it per [`Provider`](descriptor::Provider)
//!   (`descriptor/providers.rs`).
//! - [`params`] (`params/`): parameter errors and types beyond
//!   `#[derive(Params)]`; the [`Ability`] trait and its spec are at the
//!   root, defined in `ability/` with the checks `#[ability]` runs on its
//!   input examples.
//! - [`contracts`] (`contracts/`): what an ability uses at run time
//!   (pages, cursors, caps, the scratchpad, standard parameters,
//!   profiles); [`contracts::build`] (`contracts/build/`): what the build
//!   checks (manifests, the lock and its semver bumps, the description
//!   lint, the `manifest` and `lint` commands).
//! - [`session`] (`session/`) runs conversations over the dispatcher:
//!   `run/` the loop and one call, `store/` the stores (memory, SQLite,
//!   PostgreSQL), `model/` the model clients (OpenAI-compatible,
//!   Anthropic, scripted), `http/` the HTTP API; typed events, approval /
//!   auto / plan modes.
//! - [`mcp`] (`mcp/`): the MCP server and client (feature `mcp`), and the
//!   configuration of external servers (always: `chalie.toml` names them).
//!
//! No file imports a file that imports it back: `cargo xtask lint` fails
//! on an import cycle between the files of a crate.

mod ability;
pub mod contracts;
pub mod descriptor;
pub mod dispatch;
pub mod envelope;
pub mod mcp;
pub mod params;
mod registry;
pub mod result;
mod sealed;
pub mod session;
#[cfg(any(feature = "mcp", feature = "http"))]
mod token;
pub mod turn;

// The root holds what a first program names; everything else has one home
// in the module it belongs to.
pub use ability::{Ability, AbilitySpec, ActionSpec, BoxFuture, Effect, Location};
pub use dispatch::{Dispatcher, ToolCall};
pub use params::{ParamEnum, Params};
pub use registry::{AbilityEntry, Registry, RegistryError, registry};
pub use result::{ToolError, ToolResult};
pub use turn::{Channel, Turn};

/// Dates and times ([`Clock`](turn::Clock), [`Turn::now`]), re-exported so abilities
/// use the same version.
pub use chrono;

#[doc = include_str!("docs/ability.md")]
pub use chalie_macros::ability;

/// Derives [`Params`](trait@Params) for a struct of documented fields.
///
/// Each field's `///` comment becomes its description (required: the model
/// reads it). `Option<T>` fields are not required. Field keys:
///
/// | key | meaning |
/// |---|---|
/// | `#[param(default = 20)]` | used when the field is absent or `null`; shown in the schema |
/// | `#[param(min = 1, max = 50)]` | bounds a number; in the schema and enforced when parsing |
/// | `#[param(min = 40, max = 220, clamp)]` | an out-of-range number becomes the nearest bound instead of an error; the description says "Clamped to 40–220." and the schema states no bound on a clamped side |
/// | `#[param(actions = [generate])]` | the field belongs to these actions only: sent with another, it is an `invalid-arguments` error naming the action it belongs to; the description says "Only for action `generate`." |
///
/// `clamp` needs `min`, `max` or both, each a value of the field's type (a
/// clamp to `300` on a `u8`, or to `2.5` on an integer, is a compile error
/// on the key). A field with `actions` sits beside an `action` field and is
/// an `Option` or has a default (the other actions leave it out; `null`
/// counts as left out); `#[ability]` checks that every action it lists is
/// declared, and that an action requiring the field is one of them. A
/// value the ability itself ignores ("ignored if 0 or less") is the
/// function's to read: say it in the doc comment.
///
/// A default is checked when the crate compiles: a literal the field's type
/// would not parse (`"many"` for a `u32`, `300` for a `u8`, a value that is
/// not one of an enum's), or one outside the field's own `min`/`max`, is a
/// compile error on the literal that says what would fit.
///
/// ```
/// use chalie_core::{ParamEnum, Params};
///
/// #[derive(Clone, Copy, ParamEnum)]
/// enum Unit { Celsius, Fahrenheit }
///
/// #[derive(Params)]
/// struct Forecast {
///     /// The city, e.g. `Rome`.
///     city: String,
///     /// Days ahead, 1 to 7.
///     #[param(default = 3, min = 1, max = 7)]
///     days: u8,
///     /// Temperature unit.
///     unit: Option<Unit>,
/// }
///
/// let schema = <Forecast as Params>::schema();
/// assert_eq!(schema["required"], serde_json::json!(["city"]));
/// assert_eq!(schema["properties"]["unit"]["enum"], serde_json::json!(["celsius", "fahrenheit"]));
/// let parsed = Forecast::from_arguments(&serde_json::json!({ "city": "Rome" })).unwrap();
/// assert_eq!(parsed.days, 3);
/// let error = Forecast::from_arguments(&serde_json::json!({ "city": "Rome", "unit": "kelvin" })).err().unwrap();
/// assert_eq!(error.to_string(), "`unit` must be one of `celsius`, `fahrenheit`, not `kelvin`");
/// ```
pub use chalie_macros::Params;

/// Derives [`ParamType`](params::ParamType) and [`ParamEnum`](trait@ParamEnum) for an enum
/// of unit variants, each a snake_case string (`#[param(rename = "...")]`
/// to choose another).
pub use chalie_macros::ParamEnum;

/// Not public API: what generated code refers to. It may change in any
/// release.
#[doc(hidden)]
pub mod __private {
    // Short names for the generated code, which imports this module as
    // `__chalie`: every token of an expansion is compiled per ability.
    pub use ::core::option::Option::{self, None, Some};
    pub use ::core::result::Result::{self, Err, Ok};
    pub use ::std::string::String;

    pub use crate::{Ability, ToolResult, Turn};
    pub use linkme;
    pub use serde_json;
    pub use serde_json::Value;

    pub use crate::ability::{
        AbilitySpec, AbilitySpecParts, ActionSpec, BoxFuture, Effect, Location, TurnBinding,
        derive_permission, example_key_problem, example_missing_problem, example_value_problem,
        fallback_result, pin_future,
    };
    pub use crate::contracts::{OUTPUT_SCHEMAS, OutputEntry};
    pub use crate::dispatch::RateLimit;
    pub use crate::params::{
        Bounded, Bounds, ClampBound, ClampSite, DefaultLiteral, DefaultRule, DefaultSite,
        ExampleValue, FieldKind, FieldSpec, InputExample, NoParams, ObjectReader, ObjectSchema,
        ParamErrors, ParamType, Params, ability_fields, clamp_problem, default_problem,
        enum_schema, fail_on, fallback_schema, field_actions_problem, has_field, params_schema,
        parse_enum_value, parse_object, required_field_problem,
    };
    pub use crate::registry::{ABILITIES, AbilityEntry};
    pub use crate::sealed::{MACRO_ONLY, MacroOnly};
}

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
