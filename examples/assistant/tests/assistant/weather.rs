use serde_json::{Value, json};

use crate::harness;

#[tokio::test]
async fn weather_reads_the_shipped_data_in_either_unit() {
    let harness = harness();
    let rome = harness
        .call("weather", json!({ "location": "rome, it" }))
        .await;
    let body: Value = rome.assert_success().body().unwrap();
    assert_eq!(body["location"], "Rome, IT");
    assert_eq!(body["condition"], "Cloudy");
    assert_eq!(body["temperature"], 11.0);
    let fahrenheit: Value = harness
        .call(
            "weather",
            json!({ "location": "Oslo", "unit": "fahrenheit" }),
        )
        .await
        .body()
        .unwrap();
    // -3 °C is 26.6 °F, rounded.
    assert_eq!(fahrenheit["temperature"], 27.0);
}

#[tokio::test]
async fn an_unknown_city_lists_the_known_ones() {
    let outcome = harness()
        .call("weather", json!({ "location": "Atlantis" }))
        .await;
    outcome.assert_error("unknown-location");
    assert!(outcome.text.contains("Valletta, MT"), "{}", outcome.text);
    // A country that does not match the city is no match either.
    harness()
        .call("weather", json!({ "location": "Rome, FR" }))
        .await
        .assert_error("unknown-location");
}

#[tokio::test]
async fn forecast_returns_the_days_asked_for_within_bounds() {
    let harness = harness();
    let two: Value = harness
        .call("forecast", json!({ "location": "London", "days": 2 }))
        .await
        .assert_success()
        .body()
        .unwrap();
    assert_eq!(two["days"].as_array().unwrap().len(), 2);
    assert_eq!(two["days"][0]["rain_chance"], 90);
    harness
        .call("forecast", json!({ "location": "London", "days": 9 }))
        .await
        .assert_error("invalid-arguments");
}
