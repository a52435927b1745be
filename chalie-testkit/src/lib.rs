//! Test tools for chalie abilities: a [`Harness`] that calls abilities
//! through the real dispatcher and parses what the model would read, or
//! drives whole runs with a scripted model ([`Harness::run`]),
//! [`smoke`] checks a careful reviewer would run on every ability, and
//! [`compile_fail_suite`] for a crate's own catalogue of compile errors.
//!
//! ```no_run
//! # async fn example() {
//! use chalie_testkit::Harness;
//! use serde_json::json;
//!
//! // Pin what the test calls; the gate is widened on purpose here.
//! let harness = Harness::builder().pin(["weather"]).allow_all().build().expect("unique names");
//! harness.call("weather", json!({ "location": "Rome, IT" })).await.assert_success();
//! harness.call("weather", json!({})).await.assert_error("invalid-arguments");
//! chalie_testkit::smoke(harness.registry()).await.assert_clean();
//! # }
//! ```

mod harness;
mod run;
mod smoke;

pub use harness::{CallOutcome, DEFAULT_NOW, Harness, HarnessBuilder, ScriptedApprover};
pub use run::RunOutcome;
pub use smoke::{Smoke, SmokeFinding, SmokeReport, smoke, smoke_toolset};

/// Runs every file matching `fail_glob` expecting the compile error in its
/// `.stderr` beside it, and every file matching `pass_glob` expecting it to
/// compile and run. Refresh the `.stderr` files with `TRYBUILD=overwrite`
/// and review the diff.
///
/// Compiler messages change between Rust versions; pin the toolchain
/// (`rust-toolchain.toml`) so the catalogue stays stable.
///
/// ```no_run
/// // tests/ui.rs
/// #[test]
/// fn ui() {
///     chalie_testkit::compile_fail_suite("tests/ui/fail/*.rs", "tests/ui/pass/*.rs");
/// }
/// ```
pub fn compile_fail_suite(fail_glob: &str, pass_glob: &str) {
    let cases = trybuild::TestCases::new();
    cases.compile_fail(fail_glob);
    cases.pass(pass_glob);
}
