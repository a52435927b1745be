//! chalie's first example: two abilities, the descriptors the model sees
//! for each provider, and the envelopes of a success and an error.
//!
//! Run it with `cargo run -p quickstart`.

// The abilities live in the library target; name it so they are linked.
chalie_core::link_abilities!(quickstart);

use chalie_core::{AssembleOptions, Channel, Provider, Turn, assemble, render_envelope};
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    let registry = match chalie_core::registry() {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("error: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };

    println!("== {} linked abilities ==", registry.len());
    for entry in registry.iter() {
        let descriptor = assemble(entry, AssembleOptions::for_channel(Channel::Chat));
        println!(
            "\n-- {} (tooltip: {}) --",
            entry.name(),
            entry.spec().tooltip()
        );
        for provider in [Provider::OpenAiChat, Provider::Anthropic] {
            let rendered = descriptor.render(provider);
            println!(
                "{provider:?}:\n{}",
                serde_json::to_string_pretty(&rendered).unwrap_or_default()
            );
        }
    }

    let turn = Turn::builder(Channel::Chat).build();
    let calls = [
        ("weather", json!({ "location": "Valletta, MT" })),
        ("memory", json!({ "action": "recall" })),
        (
            "weather",
            json!({ "location": "Valletta, MT", "unit": "kelvin", "permission": "admin" }),
        ),
    ];
    println!("\n== envelopes ==");
    for (name, arguments) in calls {
        let Some(entry) = registry.get(name) else {
            continue;
        };
        let action = arguments
            .get("action")
            .and_then(|value| value.as_str())
            .map(str::to_owned);
        let result = entry
            .call(&arguments, turn.for_call(format!("call-{name}"), name))
            .await;
        println!(
            "\n> {name} {arguments}\n{}",
            render_envelope(name, action.as_deref(), &result)
        );
    }
    std::process::ExitCode::SUCCESS
}
