//! Reading back what criterion measured, so a bench can print its figures
//! (ratios, rates) after the run. Shared by chalie-core's benches.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The median, in nanoseconds, criterion stored for `group/name` in this
/// run, looked up where criterion writes (`CRITERION_HOME`, the target
/// folder); `None` when the bench was filtered out.
pub fn median_ns(group: &str, name: &str) -> Option<f64> {
    let homes = [
        std::env::var_os("CRITERION_HOME").map(PathBuf::from),
        std::env::var_os("CARGO_TARGET_DIR").map(|dir| Path::new(&dir).join("criterion")),
        Some("../target/criterion".into()),
        Some("target/criterion".into()),
    ];
    homes.into_iter().flatten().find_map(|home| {
        let path = home.join(group).join(name).join("new/estimates.json");
        let estimates: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
        estimates["median"]["point_estimate"].as_f64()
    })
}
