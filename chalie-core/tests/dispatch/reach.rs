//! Reachability composed as the README composes it: a channel's profile
//! bounds what `find_tools` may activate, whatever the turn activated.

use chalie_core::{
    Channel, Dispatcher, Turn, contracts::Profile, dispatch::ChannelTools, dispatch::Refusal,
};
use serde_json::json;

use crate::abilities::runs;
use crate::{call, envelope, registry};

/// A chat whose profile enables `toolset` and whose core is empty, with
/// `lookup` allowed on the gate: only discovery can reach it.
fn bounded_by(profile: Profile) -> Dispatcher {
    Dispatcher::builder(registry())
        .allow(Channel::Chat, ["lookup"])
        .unwrap()
        .channel_tools(
            Channel::Chat,
            ChannelTools::new()
                .core(Vec::<String>::new())
                .profile(profile),
        )
        .build()
}

#[tokio::test]
async fn a_profile_bounds_what_discovery_may_activate() {
    let toolset = registry().get("lookup").unwrap().spec().toolset();
    let outside = bounded_by(Profile::new().with_core(Vec::<String>::new()));
    let turn = Turn::builder(Channel::Chat)
        .session_id("reach-outside-profile")
        .build();
    // What `find_tools` does when it finds the tool: activated, and yet
    // the profile does not expose it, so it is neither offered nor run.
    turn.activate_tools(["lookup"]);
    assert!(!outside.offered(&turn).contains(&"lookup".to_owned()));
    let refused = call(&outside, &turn, "lookup", json!({ "query": "rust" })).await;
    assert_eq!(refused.refusal(), Some(Refusal::NotAvailable));
    assert_eq!(envelope(&refused).code(), Some("tool-not-available"));
    assert!(runs("reach-outside-profile").is_empty());

    let inside = bounded_by(Profile::new().with_toolset(toolset));
    let turn = Turn::builder(Channel::Chat)
        .session_id("reach-inside-profile")
        .build();
    // Not offered before discovery, even inside the profile.
    let before = call(&inside, &turn, "lookup", json!({ "query": "rust" })).await;
    assert_eq!(before.refusal(), Some(Refusal::NotAvailable));
    turn.activate_tools(["lookup"]);
    assert!(inside.offered(&turn).contains(&"lookup".to_owned()));
    let reached = call(&inside, &turn, "lookup", json!({ "query": "rust" })).await;
    assert_eq!(reached.refusal(), None, "{}", reached.envelope);
    assert_eq!(runs("reach-inside-profile"), ["lookup:rust"]);
}
