//! Event names and camelCase payloads, as the wire carries them.

use chalie_core::session::{Event, Mode, Phase};
use serde_json::json;

#[test]
fn events_serialise_with_their_names_and_camel_case_fields() {
    let cases = [
        (
            Event::ToolCompleted {
                tool_key: "lookup".into(),
                call_id: "c1".into(),
                execution_ms: 12,
                success: true,
                reused: true,
                added_to_plan: false,
                card: None,
            },
            json!({ "type": "tool.completed", "toolKey": "lookup", "callId": "c1", "executionMs": 12, "success": true, "reused": true }),
        ),
        (
            Event::ToolCompleted {
                tool_key: "lookup".into(),
                call_id: "c1".into(),
                execution_ms: 3,
                success: true,
                reused: false,
                added_to_plan: false,
                card: Some(json!({ "title": "Notes" })),
            },
            json!({ "type": "tool.completed", "toolKey": "lookup", "callId": "c1", "executionMs": 3, "success": true, "card": { "title": "Notes" } }),
        ),
        (
            Event::RunStarted {
                run_id: "r".into(),
                session_id: "s".into(),
            },
            json!({ "type": "run.started", "runId": "r", "sessionId": "s" }),
        ),
        (
            Event::PlanStepAdded {
                plan_id: "s".into(),
                step_index: 0,
                tool_key: "delete_task".into(),
                call_id: "c3".into(),
                input: json!({ "id": 7 }),
            },
            json!({ "type": "plan.step_added", "planId": "s", "stepIndex": 0, "toolKey": "delete_task", "callId": "c3", "input": { "id": 7 } }),
        ),
        (
            Event::MessageDiscarded {
                content: "## Overview".into(),
                reason: "plan_incomplete".into(),
            },
            json!({ "type": "message.discarded", "content": "## Overview", "reason": "plan_incomplete" }),
        ),
        (
            Event::ToolApprovalRequired {
                tool_key: "delete_task".into(),
                tool_call_id: "c2".into(),
                input: json!({ "id": 7 }),
            },
            json!({ "type": "tool.approval_required", "toolKey": "delete_task", "toolCallId": "c2", "input": { "id": 7 } }),
        ),
        (
            Event::ToolApprovalResponse {
                tool_call_id: "c2".into(),
                approved: false,
            },
            json!({ "type": "tool.approval_response", "toolCallId": "c2", "approved": false }),
        ),
        (
            Event::AgentPhaseChanged {
                phase: Phase::ExecutingTool,
            },
            json!({ "type": "agent.phase.changed", "phase": "executing_tool" }),
        ),
        (
            Event::MessageDelta { delta: "Hi".into() },
            json!({ "type": "message.delta", "delta": "Hi" }),
        ),
        (
            Event::RunSettlementCompleted {
                run_id: "r".into(),
                status: "completed".into(),
                tool_calls: 1,
                iterations: 2,
            },
            json!({ "type": "run.settlement.completed", "runId": "r", "status": "completed", "toolCalls": 1, "iterations": 2 }),
        ),
    ];
    for (event, wire) in cases {
        assert_eq!(serde_json::to_value(&event).unwrap(), wire);
        assert_eq!(wire["type"], event.name());
        let back: Event = serde_json::from_value(wire).unwrap();
        assert_eq!(back, event);
    }
}

#[test]
fn modes_parse_by_name_and_say_what_is_valid() {
    for mode in Mode::ALL {
        assert_eq!(mode.as_str().parse::<Mode>().unwrap(), mode);
        assert_eq!(serde_json::to_value(mode).unwrap(), mode.as_str());
    }
    let error = "planning".parse::<Mode>().unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown mode `planning`; use one of `approval`, `auto`, `plan`, `plan_collect`"
    );
}
