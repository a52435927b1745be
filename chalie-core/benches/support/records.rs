//! The tool-call record the store benches write: what a run stores for one
//! finished read.

use chalie_core::session::{ToolCallRecord, ToolCallStatus};
use serde_json::json;

/// The `number`th record, twenty to a run.
pub fn tool_call_record(number: u64) -> ToolCallRecord {
    ToolCallRecord {
        run_id: format!("run-{}", number / 20),
        message_seq: number / 20,
        call_id: format!("call-{number}"),
        tool: "lookup".into(),
        input: json!({ "query": "rust", "act_summary": "Reading about Rust" }),
        status: ToolCallStatus::Completed,
        envelope: Some(
            "[lookup(status=success)]\n{\"query\":\"rust\",\"found\":1}\n[end:lookup]".into(),
        ),
        execution_ms: 1,
        card: None,
    }
}
