//! The rules chalie enforces on names, error codes and examples, in one
//! place. `chalie-macros` checks them when a crate compiles and cannot
//! depend on `chalie-core`; `chalie-core`, `chalie-index` and
//! `chalie-testkit` check the same rules on data that did not come through
//! the macros (a catalog file, an MCP server's tools, a hand-built
//! registry). Both sides call these functions, so they cannot drift.

mod names;

pub use names::{
    NameProblem, is_kebab_case, is_snake_case, is_valid_name, name_problem, suggest_kebab_case,
    suggest_name, to_snake_case,
};

/// The first sentence of a summary (of its first paragraph, on one line, without the
/// closing period): what a tool is, in a line. An ability without a `tooltip` shows it,
/// and `find_tools` says it of a tool whose whole definition the model reads in its next
/// request, so the summary is not paid for twice.
///
/// ```
/// assert_eq!(
///     chalie_rules::first_sentence("Current weather for one city.\nUse it for now. Not later."),
///     "Current weather for one city",
/// );
/// ```
pub fn first_sentence(summary: &str) -> String {
    let paragraph = summary.split("\n\n").next().unwrap_or_default();
    let flat = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.find(". ") {
        Some(end) => flat[..end].to_owned(),
        None => flat.trim_end_matches('.').to_owned(),
    }
}

/// Longest tool name OpenAI, Anthropic and Gemini all accept.
pub const MAX_NAME_LEN: usize = 64;

/// Fewest example phrases an ability gives: enough to anchor semantic
/// discovery.
pub const EXAMPLES_MIN: usize = 6;

/// Most example phrases an ability gives: few enough to stay distinct.
pub const EXAMPLES_MAX: usize = 8;

/// Whether `count` example phrases meet the contract
/// ([`EXAMPLES_MIN`] to [`EXAMPLES_MAX`]).
pub const fn examples_ok(count: usize) -> bool {
    count >= EXAMPLES_MIN && count <= EXAMPLES_MAX
}

/// Fewest input examples (`#[ability(input_examples = [...])]`) an
/// ability that declares them gives.
pub const INPUT_EXAMPLES_MIN: usize = 1;

/// Most input examples an ability gives: Anthropic's tool definitions
/// take one to five, and each costs tokens on every request.
pub const INPUT_EXAMPLES_MAX: usize = 5;

/// Whether `count` input examples meet the contract
/// ([`INPUT_EXAMPLES_MIN`] to [`INPUT_EXAMPLES_MAX`]).
pub const fn input_examples_ok(count: usize) -> bool {
    count >= INPUT_EXAMPLES_MIN && count <= INPUT_EXAMPLES_MAX
}

/// Names every check must agree on, valid or not, with why: tests on both
/// sides of the macro boundary run through this one table.
#[doc(hidden)]
pub const NAME_CASES: &[(&str, bool)] = &[
    ("weather", true),
    ("web_search", true),
    ("get_v2", true),
    ("a1_b2", true),
    ("a", true),
    ("Weather", false),
    ("getWeather", false),
    ("_x", false),
    ("x_", false),
    ("a__b", false),
    ("1abc", false),
    ("3d_print", false),
    ("", false),
    ("files.read", false),
    ("files-read", false),
    ("météo", false),
    ("a b", false),
];
