//! The chalie side as an MCP server, driven by rmcp's client.

use chalie_core::envelope::Envelope;
use chalie_core::mcp::{CALL_PROXY, Exposure, McpServer, McpServerError};
use rmcp::model::{CallToolRequestParams, NumberOrString, ProgressToken, RequestMetaObject};
use serde_json::json;

use crate::{call, connect, eventually, server, text};

#[tokio::test]
async fn full_lists_every_discoverable_ability_sorted_with_hints() {
    let server = server(Exposure::Full);
    let client = connect(&server).await;
    let tools = client.peer().list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    // `rotate_keys` is kept out of discovery, so it is not listed.
    assert_eq!(names, ["cancel_order", "find_tools", "lookup_order"]);
    let lookup = &tools[2];
    let hints = lookup.annotations.as_ref().unwrap();
    assert_eq!(hints.read_only_hint, Some(true));
    assert_eq!(hints.destructive_hint, Some(false));
    let cancel = tools[0].annotations.as_ref().unwrap();
    assert_eq!(cancel.read_only_hint, Some(false));
    assert_eq!(cancel.destructive_hint, Some(true));
    // The declared output is published; the input schema is the external
    // channel's (no `async`).
    let output = lookup.output_schema.as_ref().unwrap();
    assert_eq!(output["properties"]["status"]["type"], "string");
    assert!(lookup.input_schema["properties"].get("order_id").is_some());
    assert!(lookup.input_schema["properties"].get("async").is_none());
    assert!(tools[0].output_schema.is_none());
    // `act_summary` is named in each schema and explained once, in the
    // server's instructions, rather than in each of many listed tools.
    assert_eq!(
        lookup.input_schema["properties"]["act_summary"],
        json!({ "type": "string" })
    );
    let instructions = client.peer_info().unwrap().instructions.clone().unwrap();
    assert!(
        instructions.contains("`act_summary` (string): A short line shown to the user"),
        "{instructions}"
    );

    // Another connection sees the same bytes.
    let again = connect(&server)
        .await
        .peer()
        .list_all_tools()
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_string(&tools).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
}

#[tokio::test]
async fn a_call_returns_the_envelope_and_structured_content() {
    let client = connect(&server(Exposure::Full)).await;
    let done = call(&client, "lookup_order", json!({ "order_id": "A-1" }))
        .await
        .unwrap();
    assert_eq!(done.is_error, Some(false));
    assert_eq!(
        text(&done),
        "[lookup_order(status=success)]\n{\"order_id\":\"A-1\",\"status\":\"shipped\"}\n[end:lookup_order]"
    );
    assert_eq!(
        done.structured_content,
        Some(json!({ "order_id": "A-1", "status": "shipped" }))
    );
}

#[tokio::test]
async fn model_fixable_failures_are_error_results_with_the_envelope() {
    let client = connect(&server(Exposure::Full)).await;
    // The ability's own error.
    let unknown = call(&client, "lookup_order", json!({ "order_id": "Z-9" }))
        .await
        .unwrap();
    assert_eq!(unknown.is_error, Some(true));
    assert_eq!(
        Envelope::parse(&text(&unknown)).unwrap().code(),
        Some("unknown-order")
    );
    assert!(unknown.structured_content.is_none());
    // Bad arguments bounce in pre-validation.
    let malformed = call(&client, "lookup_order", json!({ "order": 1 }))
        .await
        .unwrap();
    assert_eq!(malformed.is_error, Some(true));
    assert_eq!(
        Envelope::parse(&text(&malformed)).unwrap().code(),
        Some("invalid-arguments")
    );
    // A write left at `ask` is denied: nobody can approve on the external channel.
    let denied = call(&client, "cancel_order", json!({ "order_id": "A-1" }))
        .await
        .unwrap();
    assert_eq!(denied.is_error, Some(true));
    let envelope = Envelope::parse(&text(&denied)).unwrap();
    assert_eq!(
        envelope.code(),
        Some("permission-denied"),
        "{}",
        text(&denied)
    );
}

#[tokio::test]
async fn protocol_misuse_is_a_json_rpc_error() {
    let client = connect(&server(Exposure::Full)).await;
    let error = call(&client, "no_such_tool", json!({})).await.unwrap_err();
    let rmcp::ServiceError::McpError(error) = error else {
        panic!("expected a JSON-RPC error, got {error:?}")
    };
    assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
    assert!(error.message.contains("no_such_tool"), "{}", error.message);
    // An ability kept out of discovery cannot be called by guessing its name.
    assert!(call(&client, "rotate_keys", json!({})).await.is_err());
}

#[tokio::test]
async fn on_demand_lists_the_core_and_calls_through_the_proxy() {
    let server = server(Exposure::OnDemand {
        pinned: vec!["find_tools".into(), "memory".into()],
    });
    let client = connect(&server).await;
    let listed = |tools: Vec<rmcp::model::Tool>| -> Vec<String> {
        tools
            .into_iter()
            .map(|tool| tool.name.to_string())
            .collect()
    };
    let before = listed(client.peer().list_all_tools().await.unwrap());
    // `memory` is not linked here, so only the pinned abilities present.
    assert_eq!(before, [CALL_PROXY, "find_tools"]);

    let found = call(&client, "find_tools", json!({ "query": "order status" }))
        .await
        .unwrap();
    let body = Envelope::parse(&text(&found)).unwrap().json().unwrap();
    let lookup = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "lookup_order")
        .unwrap();
    assert_eq!(lookup["parameters"]["required"], json!(["order_id"]));

    let proxied = call(
        &client,
        CALL_PROXY,
        json!({ "name": "lookup_order", "arguments": { "order_id": "A-1" } }),
    )
    .await
    .unwrap();
    assert_eq!(proxied.is_error, Some(false));
    assert!(text(&proxied).starts_with("[lookup_order(status=success)]"));

    // A denied write through the proxy, a hidden ability, a bad proxy call.
    let denied = call(
        &client,
        CALL_PROXY,
        json!({ "name": "cancel_order", "arguments": { "order_id": "A-1" } }),
    )
    .await
    .unwrap();
    assert_eq!(
        Envelope::parse(&text(&denied)).unwrap().code(),
        Some("permission-denied")
    );
    let hidden = call(&client, CALL_PROXY, json!({ "name": "rotate_keys" }))
        .await
        .unwrap();
    assert_eq!(
        Envelope::parse(&text(&hidden)).unwrap().code(),
        Some("unknown-tool")
    );
    let bad = call(&client, CALL_PROXY, json!({ "arguments": {} }))
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    assert_eq!(
        Envelope::parse(&text(&bad)).unwrap().code(),
        Some("invalid-arguments")
    );

    // Activation did not change the listing.
    assert_eq!(
        listed(client.peer().list_all_tools().await.unwrap()),
        before
    );
    // Calling an unlisted ability directly is misuse in this mode.
    assert!(
        call(&client, "lookup_order", json!({ "order_id": "A-1" }))
            .await
            .is_err()
    );
}

#[tokio::test]
async fn progress_reaches_the_client_as_notifications() {
    let client = connect(&server(Exposure::Full)).await;
    let mut meta = RequestMetaObject::default();
    meta.set_progress_token(ProgressToken(NumberOrString::Number(7)));
    let mut request = CallToolRequestParams::new("lookup_order").with_arguments(
        json!({ "order_id": "A-1", "act_summary": "Checking your order" })
            .as_object()
            .unwrap()
            .clone(),
    );
    request.meta = Some(meta);
    let done = client.peer().call_tool(request).await.unwrap();
    assert_eq!(done.is_error, Some(false));
    let progress = client.service().progress.clone();
    let expected = [
        "Checking your order",
        "opening the order book",
        "reading the order",
    ];
    assert!(
        eventually(|| progress.lock().unwrap().len() == expected.len()).await,
        "{:?}",
        progress.lock().unwrap()
    );
    assert_eq!(*progress.lock().unwrap(), expected);
}

#[tokio::test]
async fn streamable_http_serves_the_same_tools() {
    let server = server(Exposure::Full);
    let http = server.serve_http(([127, 0, 0, 1], 0).into()).await.unwrap();
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(http.url());
    let client = rmcp::ServiceExt::serve((), transport).await.unwrap();
    let tools = client.peer().list_all_tools().await.unwrap();
    assert_eq!(tools, server.tools());
    let Some(arguments) = json!({ "order_id": "A-1" }).as_object().cloned() else {
        unreachable!()
    };
    let done = client
        .peer()
        .call_tool(CallToolRequestParams::new("lookup_order").with_arguments(arguments))
        .await
        .unwrap();
    assert_eq!(done.is_error, Some(false));
    client.cancel().await.unwrap();
    http.shutdown().await.unwrap();
}

#[test]
fn an_ability_named_like_the_proxy_is_refused_on_demand() {
    let registry = chalie_core::registry().unwrap().clone();
    assert!(registry.get(CALL_PROXY).is_some());
    let dispatcher = std::sync::Arc::new(chalie_core::Dispatcher::new(registry));
    let refused = McpServer::builder(std::sync::Arc::clone(&dispatcher))
        .exposure(Exposure::on_demand())
        .build()
        .unwrap_err();
    assert_eq!(refused, McpServerError::ProxyNameTaken(CALL_PROXY.into()));
    // `full` has no proxy, so nothing clashes.
    assert!(
        McpServer::builder(dispatcher)
            .exposure(Exposure::Full)
            .build()
            .is_ok()
    );
}

/// The README's promise: a server built without choosing a listing is
/// `on_demand`, the pinned core and the call proxy, not the whole catalog.
#[tokio::test]
async fn a_server_built_without_an_exposure_lists_on_demand() {
    let server = McpServer::builder(crate::dispatcher(&[])).build().unwrap();
    assert_eq!(server.exposure(), &Exposure::on_demand());
    let client = connect(&server).await;
    let listed: Vec<String> = client
        .peer()
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect();
    // Of the default core, this binary links `find_tools` only.
    assert_eq!(listed, [CALL_PROXY, "find_tools"]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_proxy_reaches_only_what_the_external_channel_s_profile_exposes() {
    use chalie_core::{Channel, contracts::Profile, dispatch::ChannelTools};

    // This deployment's external channel exposes no toolset: a client that
    // learnt a name elsewhere cannot reach it through the proxy.
    let dispatcher = crate::dispatcher_with(&[], |builder| {
        builder.channel_tools(
            Channel::External,
            ChannelTools::new().profile(Profile::new()),
        )
    });
    let server = McpServer::builder(dispatcher)
        .exposure(Exposure::OnDemand {
            pinned: vec!["find_tools".into()],
        })
        .build()
        .unwrap();
    let client = connect(&server).await;
    let refused = call(
        &client,
        CALL_PROXY,
        json!({ "name": "lookup_order", "arguments": { "order_id": "A-1" } }),
    )
    .await
    .unwrap();
    assert_eq!(refused.is_error, Some(true));
    let envelope = Envelope::parse(&text(&refused)).unwrap();
    assert_eq!(
        envelope.code(),
        Some("tool-not-available"),
        "{}",
        text(&refused)
    );
    // What the server listed stays reachable.
    let listed = call(&client, "find_tools", json!({ "query": "order" }))
        .await
        .unwrap();
    assert_eq!(listed.is_error, Some(false), "{}", text(&listed));
}
