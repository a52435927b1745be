use chalie_core::turn::Clock;
use serde_json::{Value, json};

use crate::harness;

fn titles(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|event| event["title"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn today_week_range_and_overdue_follow_the_fixed_clock() {
    let harness = harness();
    let today: Value = harness
        .call("calendar", json!({ "action": "today" }))
        .await
        .assert_success()
        .body()
        .unwrap();
    assert_eq!(titles(&today), ["Team stand-up", "Lunch with Maria"]);
    let week: Value = harness
        .call("calendar", json!({ "action": "week" }))
        .await
        .body()
        .unwrap();
    assert_eq!(titles(&week).len(), 6, "{week}");
    assert!(!titles(&week).contains(&"Quarterly planning".to_owned()));
    let range: Value = harness
        .call(
            "calendar",
            json!({ "action": "range", "from": "2026-03-05", "to": "2026-03-05" }),
        )
        .await
        .body()
        .unwrap();
    assert_eq!(titles(&range), ["Flight to Rome", "Dinner in Trastevere"]);
    let overdue: Value = harness
        .call("calendar", json!({ "action": "overdue" }))
        .await
        .body()
        .unwrap();
    assert_eq!(
        titles(&overdue),
        ["Dentist check-up", "Submit expense report"]
    );
}

#[tokio::test]
async fn a_later_clock_moves_today() {
    let host = assistant::Host {
        clock: Clock::parse("2026-03-05T06:00:00Z").unwrap(),
        ..assistant::Host::sample()
    };
    let harness = crate::harness_with(host);
    let today: Value = harness
        .call("calendar", json!({ "action": "today" }))
        .await
        .body()
        .unwrap();
    assert_eq!(titles(&today), ["Flight to Rome", "Dinner in Trastevere"]);
}

#[tokio::test]
async fn a_bad_range_is_refused_with_a_fix() {
    let harness = harness();
    harness
        .call(
            "calendar",
            json!({ "action": "range", "from": "5 March", "to": "2026-03-06" }),
        )
        .await
        .assert_error("invalid-date");
    harness
        .call(
            "calendar",
            json!({ "action": "range", "from": "2026-03-06", "to": "2026-03-05" }),
        )
        .await
        .assert_error("empty-range");
    harness
        .call(
            "calendar",
            json!({ "action": "range", "from": "2026-03-06" }),
        )
        .await
        .assert_error("invalid-arguments");
}

#[tokio::test]
async fn events_are_added_and_deleted_through_actions() {
    let harness = harness();
    let added: Value = harness
        .call("calendar_edit", json!({ "action": "add_event", "title": "Gym", "start": "2026-03-02T18:00", "duration_minutes": 45 }))
        .await
        .assert_success()
        .body()
        .unwrap();
    assert_eq!(added["added"]["end"], "2026-03-02T18:45Z");
    let id = added["added"]["id"].as_u64().unwrap();
    let today: Value = harness
        .call("calendar", json!({ "action": "today" }))
        .await
        .body()
        .unwrap();
    assert_eq!(titles(&today).last().unwrap(), "Gym");
    harness
        .call(
            "calendar_edit",
            json!({ "action": "delete_event", "id": id }),
        )
        .await
        .assert_success();
    harness
        .call(
            "calendar_edit",
            json!({ "action": "delete_event", "id": id }),
        )
        .await
        .assert_error("unknown-event");
    harness
        .call(
            "calendar_edit",
            json!({ "action": "add_event", "title": "x", "start": "tomorrow" }),
        )
        .await
        .assert_error("invalid-time");
    let record = harness
        .call(
            "calendar_edit",
            json!({ "action": "delete_event", "id": 1 }),
        )
        .await
        .record;
    assert_eq!(record.permission, "calendar_edit.delete_event");
}
