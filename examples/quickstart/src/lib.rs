//! chalie's first example as a library: its abilities, so tools such as
//! `cargo xtask manifest` and `cargo xtask lint` can link them.

pub mod abilities;

#[cfg(test)]
mod tests {
    /// The quickstart's abilities pass the description lint: `cargo xtask
    /// lint` reviews the shipped programs' catalog, whose `weather` and
    /// `memory` share these names, so one binary cannot link both.
    #[test]
    fn the_abilities_pass_the_lint() {
        let registry = chalie_core::registry().expect("unique names");
        assert_eq!(registry.len(), 2);
        let findings = chalie_core::contracts::build::lint(
            registry.iter(),
            &chalie_core::contracts::build::LintOptions::default(),
        );
        let findings: Vec<String> = findings.iter().map(ToString::to_string).collect();
        assert!(findings.is_empty(), "{}", findings.join("\n"));
    }
}
