//! Test tools for chalie abilities.
//!
//! [`compile_fail_suite`] runs a crate's own catalogue of compile errors,
//! the way chalie tests its macros:
//!
//! ```no_run
//! // tests/ui.rs
//! #[test]
//! fn ui() {
//!     chalie_testkit::compile_fail_suite("tests/ui/fail/*.rs", "tests/ui/pass/*.rs");
//! }
//! ```

/// Runs every file matching `fail_glob` expecting the compile error in its
/// `.stderr` beside it, and every file matching `pass_glob` expecting it to
/// compile and run. Refresh the `.stderr` files with `TRYBUILD=overwrite`
/// and review the diff.
///
/// Compiler messages change between Rust versions; pin the toolchain
/// (`rust-toolchain.toml`) so the catalogue stays stable.
pub fn compile_fail_suite(fail_glob: &str, pass_glob: &str) {
    let cases = trybuild::TestCases::new();
    cases.compile_fail(fail_glob);
    cases.pass(pass_glob);
}
