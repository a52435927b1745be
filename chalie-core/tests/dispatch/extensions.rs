//! Host state reaches abilities through extensions, the turn's own first.

use chalie_core::{Channel, Turn, envelope::Envelope};

use super::abilities::Greeting;
use super::{call, widened_builder};

#[tokio::test]
async fn an_ability_reads_the_dispatchers_extension() {
    let dispatcher = widened_builder()
        .extension(Greeting("hello from the host"))
        .build();
    let turn = super::turn(Channel::Chat, "ext-dispatcher");
    let done = call(&dispatcher, &turn, "greet", serde_json::json!({})).await;
    let envelope = Envelope::parse(&done.envelope).unwrap();
    assert!(envelope.is_success(), "{}", done.envelope);
    assert_eq!(envelope.content, "hello from the host");
}

#[tokio::test]
async fn the_turns_extension_wins_over_the_dispatchers() {
    let dispatcher = widened_builder()
        .extension(Greeting("from the host"))
        .build();
    let turn = Turn::builder(Channel::Chat)
        .session_id("ext-turn")
        .extension(Greeting("from the turn"))
        .build();
    let done = call(&dispatcher, &turn, "greet", serde_json::json!({})).await;
    assert_eq!(
        Envelope::parse(&done.envelope).unwrap().content,
        "from the turn"
    );
}

#[tokio::test]
async fn a_missing_extension_is_a_not_configured_error_naming_the_type() {
    let dispatcher = widened_builder().build();
    let turn = super::turn(Channel::Chat, "ext-missing");
    let done = call(&dispatcher, &turn, "greet", serde_json::json!({})).await;
    let envelope = Envelope::parse(&done.envelope).unwrap();
    assert_eq!(envelope.code(), Some("not-configured"), "{}", done.envelope);
    assert!(done.envelope.contains("Greeting"), "{}", done.envelope);
    assert!(done.envelope.contains("do not retry"), "{}", done.envelope);
}
