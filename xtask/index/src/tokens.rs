//! `cargo xtask tokens`: what the example assistant's model requests cost in tokens.
//!
//! It plays the demo's conversations (the sessions, dispatcher and discovery index the
//! assistant program builds), keeps every request the scripted model is sent, and counts
//! with o200k_base, per request: the tool definitions as each provider receives them, and
//! the tool results the request adds (one envelope text, the same for every provider).
//! An ability's input examples (`#[ability(input_examples = [...])]`) are part of its
//! Anthropic definition alone, so they count in the Anthropic column and no other.
//! Then it checks the goals: a core-only turn, a discovery turn, and the whole catalog of
//! synthetic abilities offered at once against that discovery turn. A missed goal fails the
//! command, so it serves as a check.
//!
//! The discovery turn is measured as sent: the request that follows a `find_tools` result,
//! with the core's definitions, every tool `find_tools` activated (in each provider's form)
//! and the result itself, which names the runners-up it did not activate.

use std::collections::BTreeSet;
use std::error::Error;
use std::path::Path;

use assistant::IndexMode;
use assistant::demo::{DemoPaths, DemoRequest, prepare, record};
use chalie_core::descriptor::{AssembleOptions, Provider, ToolDescriptor, assemble};
use chalie_core::session::{ModelRequest, Role};
use chalie_core::{Channel, dispatch::ChannelTools, envelope::Envelope};
use serde_json::Value;
use tiktoken_rs::CoreBPE;

/// Most tokens of tool definitions a request offering only the core may carry.
const CORE_GOAL: usize = 600;
/// Most tokens of a discovery turn as sent: the core's and every activated tool's
/// definitions, and the `find_tools` result that activated them.
const DISCOVERY_GOAL: usize = 1_500;
/// Least ratio of the whole catalog's definitions to the discovery turn.
const RATIO_GOAL: f64 = 150.0;
/// The whole catalog's size when no `--abilities N` is given.
const DEFAULT_ABILITIES: usize = 1_000;
/// One count per provider, in [`Provider::ALL`]'s order.
const PROVIDERS: usize = Provider::ALL.len();

const USAGE: &str = "usage: cargo xtask tokens [--abilities N]";

/// Runs the demo on the index and model under `root` and prints the table and the goals.
pub(crate) fn run(root: &Path, args: &[String]) -> Result<(), Box<dyn Error>> {
    let abilities = match args {
        [] => DEFAULT_ABILITIES,
        [flag, count] if flag == "--abilities" => count
            .parse()
            .map_err(|_| format!("--abilities takes a count; {USAGE}"))?,
        _ => return Err(USAGE.into()),
    };
    let bpe = tiktoken_rs::o200k_base()?;
    let model_dir = chalie_index::MiniLm::default_dir(root);
    let index_dir = chalie_index::default_index_dir(root);
    let profiles = assistant::Profiles::workspace(chalie_core::registry()?)?;
    let host = prepare(&DemoPaths {
        model_dir: &model_dir,
        index_dir: &index_dir,
        mode: IndexMode::Prebuilt,
        external: &[],
        profile: &profiles.everyday,
    })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let demo = runtime.block_on(record(&host, &profiles))?;
    let rows: Vec<Row<'_>> = demo.requests.iter().map(|r| Row::count(&bpe, r)).collect();
    print_rows(&rows);
    print_per_tool(&bpe, &demo.requests);
    let verdicts = [
        core_goal(&rows),
        discovery_goal(&rows),
        ratio_goal(&bpe, &rows, abilities)?,
    ];
    let missed = verdicts.iter().filter(|met| !**met).count();
    println!();
    if missed == 0 {
        println!("every goal met");
        Ok(())
    } else {
        Err(format!("{missed} token goal(s) missed").into())
    }
}

/// The name each provider goes by in the table.
fn label(provider: Provider) -> &'static str {
    match provider {
        Provider::OpenAiChat => "openai-chat",
        Provider::OpenAiResponses => "openai-resp",
        Provider::Anthropic => "anthropic",
        Provider::Gemini => "gemini",
        Provider::Mcp => "mcp",
    }
}

/// Tokens of `text` in o200k_base.
fn tokens(bpe: &CoreBPE, text: &str) -> usize {
    bpe.encode_ordinary(text).len()
}

/// Tokens of a tool list, each tool rendered for one provider (compact JSON, as sent).
fn definitions(bpe: &CoreBPE, tools: impl IntoIterator<Item = Value>) -> usize {
    let list = Value::Array(tools.into_iter().collect());
    tokens(bpe, &list.to_string())
}

/// One request, counted.
struct Row<'a> {
    session_id: &'a str,
    /// The tools offered, by name.
    offered: Vec<&'a str>,
    /// Tokens of the tool definitions, per provider in [`Provider::ALL`]'s order.
    definitions: [usize; PROVIDERS],
    /// Tokens of the tool results this request adds (those after the model's last reply).
    results: usize,
    /// The tools a `find_tools` result among those results activated, if there is one.
    injected: Option<Vec<String>>,
}

impl<'a> Row<'a> {
    fn count(bpe: &CoreBPE, demo: &'a DemoRequest) -> Row<'a> {
        let request: &ModelRequest = &demo.request;
        let offered = Provider::ALL.map(|provider| {
            definitions(bpe, request.tools.iter().map(|tool| tool.render(provider)))
        });
        let added: Vec<&str> = request
            .messages
            .iter()
            .rev()
            .take_while(|message| message.role == Role::Tool)
            .map(|message| message.content.as_str())
            .collect();
        let injected = added.iter().find_map(|text| injected_by_find_tools(text));
        let results = added.iter().map(|text| tokens(bpe, text)).sum();
        Row {
            session_id: demo.session_id,
            offered: request.tool_names(),
            definitions: offered,
            results,
            injected,
        }
    }

    /// Whether the request offers exactly the channels' default core.
    fn is_core_only(&self) -> bool {
        let channel_tools = ChannelTools::new();
        let core: BTreeSet<&str> = channel_tools
            .core_names()
            .iter()
            .map(String::as_str)
            .collect();
        self.offered.iter().copied().collect::<BTreeSet<_>>() == core
    }
}

fn print_rows(rows: &[Row<'_>]) {
    println!("tokens per request of the demo's conversations (o200k_base)");
    println!("tool definitions per provider; results: the tool results the request adds\n");
    print!(
        "{:<11} {:>2}  {:<40}",
        "session", "#", "offered beyond the core"
    );
    for provider in Provider::ALL {
        print!(" {:>11}", label(provider));
    }
    println!(" {:>8}", "results");
    let core = ChannelTools::new();
    for (number, row) in rows.iter().enumerate() {
        let beyond: Vec<&str> = row
            .offered
            .iter()
            .copied()
            .filter(|name| !core.core_names().iter().any(|c| c == name))
            .collect();
        let beyond = if beyond.is_empty() {
            "(core only)".to_owned()
        } else {
            beyond.join(", ")
        };
        print!("{:<11} {:>2}  {:<40}", row.session_id, number + 1, beyond);
        for count in row.definitions {
            print!(" {count:>11}");
        }
        println!(" {:>8}", row.results);
    }
}

/// Each tool the demo offers, its definition's tokens per provider: where a turn's tokens go.
fn print_per_tool(bpe: &CoreBPE, requests: &[DemoRequest]) {
    let mut seen = BTreeSet::new();
    println!("\ntokens per tool definition");
    print!("{:<54}", "tool");
    for provider in Provider::ALL {
        print!(" {:>11}", label(provider));
    }
    println!();
    for tool in requests.iter().flat_map(|demo| &demo.request.tools) {
        if !seen.insert(tool.name().to_owned()) {
            continue;
        }
        print!("{:<54}", tool.name());
        for provider in Provider::ALL {
            print!(" {:>11}", definitions(bpe, [tool.render(provider)]));
        }
        println!();
    }
}

/// The largest count per provider over `rows`, by `measure`.
fn worst(rows: &[&Row<'_>], measure: impl Fn(&Row<'_>, usize) -> usize) -> [usize; PROVIDERS] {
    std::array::from_fn(|provider| {
        rows.iter()
            .map(|row| measure(row, provider))
            .max()
            .unwrap_or(0)
    })
}

fn per_provider(counts: &[usize; PROVIDERS]) -> String {
    Provider::ALL
        .iter()
        .zip(counts)
        .map(|(provider, count)| format!("{} {count}", label(*provider)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

fn core_goal(rows: &[Row<'_>]) -> bool {
    let core_rows: Vec<&Row<'_>> = rows.iter().filter(|row| row.is_core_only()).collect();
    let counts = worst(&core_rows, |row, provider| row.definitions[provider]);
    let met = !core_rows.is_empty() && counts.iter().all(|count| *count <= CORE_GOAL);
    println!(
        "\ncore-only turn, tool definitions ({} requests, the largest): {}; goal <= {CORE_GOAL}: {}",
        core_rows.len(),
        per_provider(&counts),
        verdict(met)
    );
    met
}

/// The tools a `find_tools` envelope says it injected; `None` for any other text.
fn injected_by_find_tools(text: &str) -> Option<Vec<String>> {
    let envelope = Envelope::parse(text).ok()?;
    if envelope.tool != "find_tools" || !envelope.is_success() {
        return None;
    }
    let body: Value = serde_json::from_str(&envelope.content).ok()?;
    let names = body["injected"]
        .as_array()?
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect();
    Some(names)
}

/// The discovery turns as sent (every tool definition offered, and the results), the
/// largest per provider, and how many there are.
fn discovery_totals(rows: &[Row<'_>]) -> (usize, [usize; PROVIDERS]) {
    let turns: Vec<&Row<'_>> = rows.iter().filter(|row| row.injected.is_some()).collect();
    let totals = worst(&turns, |row, provider| {
        row.definitions[provider] + row.results
    });
    (turns.len(), totals)
}

fn discovery_goal(rows: &[Row<'_>]) -> bool {
    let (turns, totals) = discovery_totals(rows);
    let met = turns > 0 && totals.iter().all(|total| *total <= DISCOVERY_GOAL);
    let most_activated = rows
        .iter()
        .filter_map(|row| row.injected.as_ref().map(Vec::len))
        .max()
        .unwrap_or(0);
    println!(
        "discovery turn as sent, core + find_tools result + every activated tool (up to {most_activated}; {turns} requests, the largest): {}; goal <= {DISCOVERY_GOAL}: {}",
        per_provider(&totals),
        verdict(met)
    );
    met
}

/// The whole catalog offered at once: the core and `abilities` synthetic abilities, each a
/// copy of one of the assistant's discoverable abilities (what `find_tools` injects) under a
/// numbered name, assembled for a chat as a session would.
fn ratio_goal(bpe: &CoreBPE, rows: &[Row<'_>], abilities: usize) -> Result<bool, Box<dyn Error>> {
    let registry = chalie_core::registry()?;
    let options = AssembleOptions::for_channel(Channel::Chat);
    let core: Vec<ToolDescriptor> = ChannelTools::new()
        .core_names()
        .iter()
        .filter_map(|name| registry.get(name))
        .map(|entry| assemble(entry, options))
        .collect();
    let templates: Vec<ToolDescriptor> = registry
        .iter()
        .filter(|entry| {
            entry.spec().discoverable() && !core.iter().any(|c| c.name() == entry.name())
        })
        .map(|entry| assemble(entry, options))
        .collect();
    if templates.is_empty() {
        return Err("no discoverable ability to model the synthetic catalog on".into());
    }
    let (_, discovery) = discovery_totals(rows);
    let mut catalog = [0; PROVIDERS];
    let mut ratios = [0.0; PROVIDERS];
    for (slot, provider) in Provider::ALL.into_iter().enumerate() {
        let synthetic = (0..abilities).map(|i| {
            let template = &templates[i % templates.len()];
            renamed(
                template.render(provider),
                provider,
                &format!("{}_{i}", template.name()),
            )
        });
        let tools = core
            .iter()
            .map(|tool| tool.render(provider))
            .chain(synthetic);
        catalog[slot] = definitions(bpe, tools);
        ratios[slot] = catalog[slot] as f64 / discovery[slot].max(1) as f64;
    }
    let met = ratios.iter().all(|ratio| *ratio >= RATIO_GOAL);
    println!(
        "whole catalog, core + {abilities} synthetic abilities, tool definitions: {}",
        per_provider(&catalog)
    );
    println!(
        "  ratio to the discovery turn: {}; goal >= {RATIO_GOAL}x: {}",
        Provider::ALL
            .iter()
            .zip(ratios)
            .map(|(provider, ratio)| format!("{} {ratio:.0}x", label(*provider)))
            .collect::<Vec<_>>()
            .join(", "),
        verdict(met)
    );
    Ok(met)
}

/// A rendered tool definition under another name.
fn renamed(mut rendered: Value, provider: Provider, name: &str) -> Value {
    let slot = match provider {
        Provider::OpenAiChat => &mut rendered["function"]["name"],
        _ => &mut rendered["name"],
    };
    *slot = Value::String(name.to_owned());
    rendered
}
