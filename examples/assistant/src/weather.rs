//! Weather from a small data file shipped in the crate: current
//! conditions and a three-day forecast for a handful of cities.

use std::sync::OnceLock;

use chalie_core::{ParamEnum, Params, ToolResult, ability};
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize)]
struct WeatherData {
    observed_at: String,
    cities: Vec<City>,
}

#[derive(Deserialize)]
struct City {
    name: String,
    country: String,
    condition: String,
    temperature_c: f64,
    humidity: u32,
    wind_kph: u32,
    forecast: Vec<Day>,
}

#[derive(Deserialize, serde::Serialize)]
struct Day {
    day: u32,
    condition: String,
    high_c: f64,
    low_c: f64,
    rain_chance: u32,
}

fn data() -> &'static WeatherData {
    static DATA: OnceLock<WeatherData> = OnceLock::new();
    DATA.get_or_init(|| {
        // The file ships with the crate and a test parses it.
        serde_json::from_str(include_str!("../data/weather.json"))
            .unwrap_or_else(|error| panic!("data/weather.json is valid: {error}"))
    })
}

/// The city `location` names: `Rome`, `rome`, `Rome, IT` all match.
fn find_city(location: &str) -> Result<&'static City, ToolResult> {
    let wanted = location.trim();
    let (name, country) = match wanted.split_once(',') {
        Some((name, country)) => (name.trim(), Some(country.trim())),
        None => (wanted, None),
    };
    data()
        .cities
        .iter()
        .find(|city| {
            city.name.eq_ignore_ascii_case(name)
                && country.is_none_or(|code| city.country.eq_ignore_ascii_case(code))
        })
        .ok_or_else(|| {
            ToolResult::error(
                "unknown-location",
                format!("no weather data for `{wanted}`"),
                "pass one of the valid values as location",
            )
            .with_valid_values(
                data()
                    .cities
                    .iter()
                    .map(|city| format!("{}, {}", city.name, city.country)),
            )
        })
}

/// A temperature unit.
#[derive(Clone, Copy, ParamEnum)]
pub enum Unit {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
}

fn in_unit(celsius: f64, unit: Unit) -> f64 {
    match unit {
        Unit::Celsius => celsius,
        Unit::Fahrenheit => (celsius * 9.0 / 5.0 + 32.0).round(),
    }
}

/// Parameters of [`weather()`].
#[derive(Params)]
pub struct WeatherParams {
    /// The city, optionally with its country code, e.g. `Rome` or `Rome, IT`.
    pub location: String,
    /// `celsius` or `fahrenheit`; default `celsius`.
    #[param(default = "celsius")]
    pub unit: Unit,
}

/// Current weather for one city: condition, temperature, humidity and wind,
/// from the latest observation. Use it when the user asks what the weather
/// is like now somewhere; use `forecast` for the coming days. An unknown
/// city is the error `unknown-location`, listing the known cities.
// 1.1.0: the lock's first `weather` (1.0.0) had no default `unit`.
#[ability(
    effect = read,
    version = "1.1.0",
    toolset = "weather",
    tooltip = "Current weather for a city",
    examples = [
        "what's the weather in Rome",
        "is it raining in London right now",
        "how hot is it in Cairo today",
        "is there a way to check the weather in another city",
        "temperature in Valletta",
        "is it windy in New York",
    ],
)]
pub async fn weather(params: WeatherParams) -> ToolResult {
    let city = match find_city(&params.location) {
        Ok(city) => city,
        Err(unknown) => return unknown,
    };
    let unit = match params.unit {
        Unit::Celsius => "celsius",
        Unit::Fahrenheit => "fahrenheit",
    };
    ToolResult::success(json!({
        "location": format!("{}, {}", city.name, city.country),
        "condition": city.condition,
        "temperature": in_unit(city.temperature_c, params.unit),
        "unit": unit,
        "humidity_percent": city.humidity,
        "wind_kph": city.wind_kph,
        "observed_at": data().observed_at,
    }))
}

/// Parameters of [`forecast()`].
#[derive(Params)]
pub struct ForecastParams {
    /// The city, optionally with its country code, e.g. `Oslo, NO`.
    pub location: String,
    /// How many days ahead, 1 to 3; default 3.
    #[param(default = 3, min = 1, max = 3)]
    pub days: u32,
}

/// Daily outlook for one city over the next one to three days: condition,
/// high and low in Celsius, and the chance of rain. Use it when the user
/// plans ahead (a trip, what to pack); use `weather` for conditions now.
/// An unknown city is the error `unknown-location`.
#[ability(
    effect = read,
    toolset = "weather",
    tooltip = "Three-day outlook for a city",
    input_examples = [
        { "location": "Oslo, NO", "days": 2 },
        { "location": "Rome" },
    ],
    examples = [
        "will it rain in Rome this week",
        "what's the forecast for Oslo",
        "should I pack an umbrella for London",
        "weather for the next three days in Paris",
        "is it going to be sunny in Cairo tomorrow",
        "how cold will Tokyo be at the weekend",
    ],
)]
pub async fn forecast(params: ForecastParams) -> ToolResult {
    let city = match find_city(&params.location) {
        Ok(city) => city,
        Err(unknown) => return unknown,
    };
    let days: Vec<&Day> = city.forecast.iter().take(params.days as usize).collect();
    ToolResult::success(json!({
        "location": format!("{}, {}", city.name, city.country),
        "days": days,
    }))
    .with_metadata("count", days.len())
}
