//! `plan` mode's planning agent: the instruction a planning run gets, and
//! the check that its reply is the plan the seed specifies, eight sections
//! in order.

/// The plan's sections, in the order the reply must give them.
pub(crate) const PLAN_SECTIONS: [&str; 8] = [
    "Implementation Plan",
    "Overview",
    "Requirements",
    "Architecture Changes",
    "Implementation Steps",
    "Testing Strategy",
    "Risks & Mitigations",
    "Success Criteria",
];

/// What a run in `plan` mode is told first.
pub(crate) fn planner_instruction() -> String {
    format!(
        "You are planning, not acting: this session is in plan mode. Read-only tools run; \
         every change is blocked until the user leaves plan mode. Investigate with the read-only \
         tools you need, then answer with a markdown plan whose headings are, in this order: {}. \
         Under Implementation Steps, number the steps and name the tool each would use.",
        headings()
    )
}

/// What a reply missing `missing` is asked once.
pub(crate) fn completion_request(missing: &[&str]) -> String {
    format!(
        "Your plan is missing these sections: {}. Reply with the whole plan again, with every \
         heading in this order: {}.",
        missing.join(", "),
        headings()
    )
}

fn headings() -> String {
    PLAN_SECTIONS
        .iter()
        .map(|section| format!("\"{section}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sections `reply` lacks, as markdown headings in order: each must be
/// a `#` heading line after the previous one (numbering and case aside).
pub(crate) fn missing_sections(reply: &str) -> Vec<&'static str> {
    let headings: Vec<String> = reply
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix('#'))
        .map(|heading| {
            heading
                .trim_start_matches('#')
                .trim()
                .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ')')
                .trim()
                .trim_end_matches(':')
                .to_lowercase()
        })
        .collect();
    let mut next = 0;
    let mut missing = Vec::new();
    for section in PLAN_SECTIONS {
        let wanted = section.to_lowercase();
        match headings[next..]
            .iter()
            .position(|heading| *heading == wanted)
        {
            Some(found) => next += found + 1,
            None => missing.push(section),
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(sections: &[&str]) -> String {
        sections
            .iter()
            .map(|section| format!("## {section}\ntext\n"))
            .collect()
    }

    #[test]
    fn a_complete_plan_misses_nothing_and_numbering_or_case_do_not_matter() {
        assert!(missing_sections(&plan(&PLAN_SECTIONS)).is_empty());
        let numbered = "# Implementation plan\n## 1. Overview\n## 2) requirements:\n## Architecture Changes\n## Implementation Steps\n## Testing Strategy\n## Risks & Mitigations\n## Success Criteria\n";
        assert!(missing_sections(numbered).is_empty());
    }

    #[test]
    fn absent_or_out_of_order_sections_are_missing() {
        assert_eq!(
            missing_sections(&plan(&PLAN_SECTIONS[..6])),
            ["Risks & Mitigations", "Success Criteria"]
        );
        let mut swapped = PLAN_SECTIONS;
        swapped.swap(1, 2);
        assert_eq!(missing_sections(&plan(&swapped)), ["Requirements"]);
        // A section named in prose, not as a heading, does not count.
        assert_eq!(missing_sections("Overview: none").len(), 8);
    }
}
