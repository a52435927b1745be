//! Abilities linked into this test binary, so `find_tools` has a real registry to serve.

use chalie_core::{Params, ToolResult, ability};

/// Parameters of [`weather()`].
#[derive(Params)]
pub struct WeatherParams {
    /// The city, e.g. `Oslo`.
    pub location: String,
}

/// Current weather and forecast for a city. Use it when the user asks about the weather.
#[ability(
    effect = read,
    toolset = "travel",
    examples = [
        "will it rain in Lyon tomorrow",
        "weather in Oslo",
        "is it sunny in Rome",
        "how cold is it in Riga",
        "do I need an umbrella",
        "temperature in Cairo",
    ],
)]
pub async fn weather(params: WeatherParams) -> ToolResult {
    ToolResult::success(params.location)
}

/// Parameters of [`web_search()`].
#[derive(Params)]
pub struct SearchParams {
    /// What to search for.
    pub terms: String,
}

/// Searches the web for pages about a topic. Use it for facts the user cannot give you.
#[ability(
    effect = read,
    toolset = "web",
    examples = [
        "search the web for rust tutorials",
        "look up the tallest building",
        "find pages about tides",
        "google the news",
        "who won the match",
        "search online for recipes",
    ],
)]
pub async fn web_search(params: SearchParams) -> ToolResult {
    ToolResult::success(params.terms)
}

/// Parameters of [`read_file()`].
#[derive(Params)]
pub struct ReadParams {
    /// Path of the file to read.
    pub path: String,
}

/// Reads a file from the local disk. Use it when the user names a file to open.
#[ability(
    effect = read,
    toolset = "files",
    examples = [
        "open notes.txt",
        "read my todo file",
        "show the config file",
        "what is in report.md",
        "print the log",
        "cat the readme",
    ],
)]
pub async fn read_file(params: ReadParams) -> ToolResult {
    ToolResult::success(params.path)
}

/// Deletes every user account. Use it only when an operator pins it explicitly.
#[ability(
    discoverable = false,
    examples = [
        "delete all accounts",
        "wipe every user",
        "remove all users",
        "purge accounts",
        "reset the user table",
        "drop every account",
    ],
)]
pub async fn secret_admin() -> ToolResult {
    ToolResult::success("gone")
}
