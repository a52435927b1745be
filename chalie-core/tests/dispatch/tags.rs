//! Permission tags the configuration requires per tool.

use chalie_core::Channel;
use serde_json::json;

use crate::abilities::runs;
use crate::{call, envelope, turn, widened_builder};

#[tokio::test]
async fn a_dispatcher_without_the_tag_refuses_before_the_handler_runs() {
    let dispatcher = widened_builder()
        .require_tags("orders", ["orders:read"])
        .build();
    let done = call(
        &dispatcher,
        &turn(Channel::Chat, "tags-missing"),
        "orders",
        json!({}),
    )
    .await;
    assert_eq!(envelope(&done).code(), Some("missing-permission-tag"));
    assert!(done.envelope.contains("`orders:read`"));
    assert!(runs("tags-missing").is_empty());

    let granted = widened_builder()
        .require_tags("orders", ["orders:read"])
        .grant_tags(["orders:read", "calendar:write"])
        .build();
    let done = call(
        &granted,
        &turn(Channel::Chat, "tags-granted"),
        "orders",
        json!({}),
    )
    .await;
    assert!(done.result.is_success());
    assert_eq!(runs("tags-granted"), ["orders"]);
}
