//! `cargo xtask lint`: would a model understand every linked ability?
//! Reviews summaries, field descriptions and look-alike pairs; any
//! finding fails the command.

use chalie_core::{contracts::LintOptions, contracts::lint};

use crate::Outcome;

pub(crate) fn run(args: &[String]) -> Outcome {
    let mut options = LintOptions::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--similarity" => {
                options.similarity_threshold = args
                    .next()
                    .and_then(|value| value.parse().ok())
                    .ok_or("--similarity takes a number between 0 and 1")?;
            }
            other => {
                return Err(format!("unknown option `{other}`; expected --similarity X").into());
            }
        }
    }
    let registry = chalie_core::registry()?;
    let findings = lint(registry.iter(), &options);
    for finding in &findings {
        eprintln!("{finding}");
    }
    if findings.is_empty() {
        println!("lint: {} abilities, no findings", registry.len());
        Ok(())
    } else {
        Err(format!(
            "lint: {} finding(s) in {} abilities",
            findings.len(),
            registry.len()
        )
        .into())
    }
}
