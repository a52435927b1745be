//! chalie's first example: two abilities, the descriptors the model sees
//! for each provider, and the envelopes the dispatcher renders for a
//! success, an ability's error, a malformed call and an unknown tool.
//!
//! Run it with `cargo xtask demo` (or `cargo run -p quickstart`).

// The abilities live in the library target; name it so they are linked.
chalie_core::link_abilities!(quickstart);

use chalie_core::{
    Channel, Dispatcher, ToolCall, Turn, descriptor::AssembleOptions, descriptor::Provider,
    descriptor::assemble, dispatch::Policy, dispatch::Setting,
};
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let registry = chalie_core::registry()?;

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
                serde_json::to_string_pretty(&rendered)?
            );
        }
    }

    // Reading the weather is allowed in a chat; memory is internal. This
    // program has no `find_tools`, so the chat is offered weather on every
    // turn (memory is in every channel's core).
    let mut policy = Policy::new();
    policy.set(Channel::Chat, "weather", Setting::Allow)?;
    let dispatcher = Dispatcher::builder(registry.clone())
        .policy(policy)
        .pin(Channel::Chat, ["weather"])
        .build();
    let turn = Turn::builder(Channel::Chat).session_id("demo").build();

    let calls = [
        ToolCall::new(
            "weather",
            json!({ "location": "Valletta, MT", "act_summary": "Checking the weather" }),
        ),
        ToolCall::new("memory", json!({ "action": "recall" })),
        ToolCall::new(
            "weather",
            json!({ "location": "Valletta, MT", "unit": "kelvin" }),
        ),
        ToolCall::new("wether", json!({ "location": "Rome, IT" })),
    ];
    println!("\n== envelopes ==");
    for call in calls {
        println!("\n> {} {}", call.name, call.arguments);
        let dispatched = dispatcher.dispatch(&turn, call).await;
        println!("{}", dispatched.envelope);
    }

    println!("\n== action trail ==");
    for record in turn.trail().snapshot() {
        println!(
            "{} {} action={} decision={:?} status={:?} code={}",
            record.call_id,
            record.tool,
            record.action.as_deref().unwrap_or("-"),
            record.decision,
            record.status,
            record.error_code.as_deref().unwrap_or("-"),
        );
    }
    Ok(())
}
