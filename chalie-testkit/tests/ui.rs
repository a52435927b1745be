//! The catalogue of chalie's compile errors: one mistake per file, the
//! expected message and span in the `.stderr` beside it. Refresh with
//! `TRYBUILD=overwrite cargo test -p chalie-testkit --test ui` and review
//! the diff; messages are pinned to the toolchain in `rust-toolchain.toml`.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/ability/*.rs");
    cases.compile_fail("tests/ui/params/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}
