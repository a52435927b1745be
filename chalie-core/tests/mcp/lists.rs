//! Listings carry the 2026-07-28 cache hints (SEP-2549: `ttlMs`,
//! `cacheScope`) and a deterministic order, whatever order the registry
//! and the external tools come in.

use std::time::Duration;

use chalie_core::mcp::{DEFAULT_LIST_TTL, Exposure, McpServer};
use rmcp::model::CacheScope;

use crate::{connect, connect_current, dispatcher, server};

#[tokio::test]
async fn a_listing_on_2026_07_28_says_how_long_and_for_whom_it_may_be_cached() {
    let client = connect_current(&server(Exposure::Full)).await;
    let listed = client.peer().list_tools(None).await.unwrap();
    assert_eq!(listed.ttl_ms, Some(DEFAULT_LIST_TTL.as_millis() as u64));
    // Every client is listed the same tools: anyone may cache them.
    assert_eq!(listed.cache_scope, Some(CacheScope::Public));
    let names: Vec<&str> = listed.tools.iter().map(|tool| tool.name.as_ref()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);

    let configured = McpServer::builder(dispatcher(&[]))
        .exposure(Exposure::OnDemand {
            // Given out of order on purpose.
            pinned: vec!["lookup_order".into(), "find_tools".into()],
        })
        .list_ttl(Duration::from_secs(5))
        .build()
        .unwrap();
    let client = connect_current(&configured).await;
    let listed = client.peer().list_tools(None).await.unwrap();
    assert_eq!(listed.ttl_ms, Some(5_000));
    let names: Vec<&str> = listed.tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["call_tool", "find_tools", "lookup_order"]);
}

#[tokio::test]
async fn an_older_protocol_gets_no_cache_fields() {
    let client = connect(&server(Exposure::Full)).await;
    let listed = client.peer().list_tools(None).await.unwrap();
    assert_eq!((listed.ttl_ms, listed.cache_scope), (None, None));
}
