//! `cargo xtask bench-dispatch`: the cost of one tool call through chalie,
//! through rmcp and with no framework (the floor), from one build.
//!
//! Builds the `dispatch` bench of chalie-core once (release, with line
//! tables so that callgrind can name lines), then runs that one binary:
//! under callgrind for each row, counting the instructions of N calls made
//! inside the row's `counted_<row>` function (the inputs are built before
//! it and the outputs dropped after it, as criterion's `iter_batched`
//! does), and then under criterion for the medians. Instruction counts do
//! not depend on what else the machine runs; the medians do.
//! The `chalie_traced` row is chalie's with a `tracing` subscriber
//! installed, so the difference is what the `execute_tool` span costs a
//! call once anyone listens.
//! `--annotate` prints where chalie's instructions go (callgrind_annotate,
//! inclusive, the top functions).

use std::path::Path;
use std::process::Command;

use crate::{Outcome, project_root};

const ROWS: [&str; 4] = ["floor", "rmcp", "chalie", "chalie_traced"];

pub(crate) fn run(args: &[String]) -> Outcome {
    let mut calls = 20_000usize;
    let mut criterion = true;
    let mut annotate = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--calls" => {
                calls = args
                    .next()
                    .and_then(|calls| calls.parse().ok())
                    .filter(|&calls| calls > 0)
                    .ok_or("--calls takes a number above 0")?;
            }
            "--no-criterion" => criterion = false,
            "--annotate" => annotate = true,
            other => {
                return Err(format!(
                    "unknown option `{other}`; expected --calls N, --no-criterion or --annotate"
                )
                .into());
            }
        }
    }
    let root = project_root();
    if Command::new("valgrind").arg("--version").output().is_err() {
        return Err("valgrind is not installed; install it (e.g. `apt-get install valgrind`) to count instructions".into());
    }
    // Line tables let callgrind name lines; they leave the code as it is.
    let binary = crate::ci::built_executable(
        &[
            "bench",
            "-p",
            "chalie-core",
            "--bench",
            "dispatch",
            "--no-run",
        ],
        &[("CARGO_PROFILE_BENCH_DEBUG", "line-tables-only")],
        "dispatch",
    )?;
    let out_dir = root.join("target").join("callgrind");
    std::fs::create_dir_all(&out_dir)?;

    let mut instructions = Vec::new();
    for row in ROWS {
        let out = out_dir.join(format!("dispatch.{row}.out"));
        let status = Command::new("valgrind")
            .args(["--tool=callgrind", "--quiet", "--collect-atstart=no"])
            .arg(format!("--toggle-collect=*counted_{row}*"))
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(&binary)
            .env("CHALIE_DISPATCH_COUNT", row)
            .env("CHALIE_DISPATCH_CALLS", calls.to_string())
            .current_dir(root.join("chalie-core"))
            .status()?;
        if !status.success() {
            return Err(format!("callgrind on the `{row}` row failed with {status}").into());
        }
        let total = collected_instructions(&out)?;
        if total == 0 {
            return Err(format!(
                "callgrind counted nothing in `counted_{row}`: the bench binary has no such function"
            )
            .into());
        }
        instructions.push(total as f64 / calls as f64);
    }

    let medians = if criterion {
        let criterion_home = root.join("target").join("criterion");
        let status = Command::new(&binary)
            .args(["--bench", "dispatch/"])
            .env("CRITERION_HOME", &criterion_home)
            .current_dir(root.join("chalie-core"))
            .status()?;
        if !status.success() {
            return Err(format!("the criterion run failed with {status}").into());
        }
        ROWS.map(|row| median(&criterion_home, row))
    } else {
        [None; 4]
    };

    let rmcp = instructions[1];
    println!();
    println!(
        "one tool call (chalie-core/benches/dispatch.rs), one release build; instructions under callgrind, mean of {calls} calls"
    );
    println!(
        "{:<14} {:>14} {:>9} {:>16}",
        "row", "instructions", "vs rmcp", "criterion median"
    );
    for ((row, count), median) in ROWS.iter().zip(&instructions).zip(medians) {
        let median = median.map_or("-".to_owned(), |ns| format!("{ns:.0} ns"));
        println!(
            "{row:<14} {count:>14.0} {:>8.2}x {median:>16}",
            count / rmcp
        );
    }
    let floor = instructions[0];
    println!(
        "above the floor: chalie {:.0}, rmcp {:.0} ({:.2}x); goal chalie <= 0.9x rmcp in total",
        instructions[2] - floor,
        rmcp - floor,
        (instructions[2] - floor) / (rmcp - floor)
    );
    println!(
        "the execute_tool span with a subscriber installed: {:.0} instructions per call",
        instructions[3] - instructions[2]
    );
    println!("callgrind files: {}", out_dir.display());

    if annotate {
        let out = out_dir.join("dispatch.chalie.out");
        let output = Command::new("callgrind_annotate")
            .args(["--inclusive=yes", "--threshold=99"])
            .arg(&out)
            .output()?;
        let text = String::from_utf8_lossy(&output.stdout);
        println!("\nwhere chalie's instructions go (inclusive, per {calls} calls):");
        for line in text
            .lines()
            .skip_while(|line| !line.contains("file:function"))
            .take(60)
        {
            println!("{line}");
        }
    }
    Ok(())
}

/// The instructions callgrind collected, from its `summary:` line.
fn collected_instructions(out: &Path) -> Result<u64, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(out)?;
    text.lines()
        .find_map(|line| line.strip_prefix("summary:"))
        .or_else(|| text.lines().find_map(|line| line.strip_prefix("totals:")))
        .and_then(|count| count.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| format!("no instruction count in {}", out.display()).into())
}

/// The median criterion wrote for `dispatch/<row>`, in nanoseconds.
fn median(criterion_home: &Path, row: &str) -> Option<f64> {
    let path = criterion_home
        .join("dispatch")
        .join(row)
        .join("new/estimates.json");
    let estimates: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    estimates["median"]["point_estimate"].as_f64()
}
