//! Discovery: the index over the linked abilities and the skill
//! playbooks, searched by chalie-index's `find_tools` and `find_skills`
//! abilities through the [`Discovery`] extension.

use std::path::Path;
use std::sync::Arc;

use chalie_core::{Profile, Registry};
use chalie_index::{Descriptor, Discovery, Embedder, Index, IndexError, Source};

/// A skill playbook: markdown with a front matter of `name`, `summary` and
/// `examples`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name, snake_case.
    pub name: String,
    /// What it is for and when to use it.
    pub summary: String,
    /// Requests it answers.
    pub examples: Vec<String>,
    /// The steps, after the front matter.
    pub body: String,
}

/// The playbooks shipped in `skills/`, as `(file, text)`.
const SKILL_FILES: [(&str, &str); 3] = [
    ("plan_a_trip.md", include_str!("../skills/plan_a_trip.md")),
    (
        "research_a_topic.md",
        include_str!("../skills/research_a_topic.md"),
    ),
    (
        "weekly_review.md",
        include_str!("../skills/weekly_review.md"),
    ),
];

/// Parses one playbook; `None` when its front matter is missing or has no
/// name or summary.
pub fn parse_skill(text: &str) -> Option<Skill> {
    let rest = text.strip_prefix("---\n")?;
    let (front, body) = rest.split_once("\n---\n")?;
    let (mut name, mut summary, mut examples) = (String::new(), String::new(), Vec::new());
    let mut in_examples = false;
    for line in front.lines() {
        let trimmed = line.trim();
        if let Some(item) = trimmed.strip_prefix("- ").filter(|_| in_examples) {
            examples.push(item.trim().to_owned());
            continue;
        }
        in_examples = false;
        match trimmed.split_once(':') {
            Some(("name", value)) => name = value.trim().to_owned(),
            Some(("summary", value)) => summary = value.trim().to_owned(),
            Some(("examples", _)) => in_examples = true,
            _ => {}
        }
    }
    (!name.is_empty() && !summary.is_empty()).then(|| Skill {
        name,
        summary,
        examples,
        body: body.trim().to_owned(),
    })
}

/// Every shipped playbook, in name order.
pub fn skills() -> Vec<Skill> {
    SKILL_FILES
        .iter()
        .map(|(file, text)| {
            parse_skill(text).unwrap_or_else(|| panic!("skills/{file} has a valid front matter"))
        })
        .collect()
}

/// The descriptors the index is built from: every ability in `registry`
/// (the index leaves out the non-discoverable ones) and every playbook,
/// its steps kept for `find_skills` to return.
pub fn descriptors(registry: &Registry) -> Vec<Descriptor> {
    let mut all = Descriptor::from_registry(registry);
    all.extend(skills().into_iter().map(|skill| Descriptor {
        name: skill.name,
        summary: skill.summary,
        examples: skill.examples,
        tooltip: String::new(),
        source: Source::Skill,
        toolset: "skills".into(),
        discoverable: true,
        parameters: None,
        body: skill.body,
    }));
    all
}

/// Opens the index in `dir` if it was built from exactly these
/// descriptors with `embedder`, building it there first otherwise, and
/// answers only with what `profile` exposes.
pub fn open_or_build(
    registry: &Registry,
    embedder: Arc<dyn Embedder>,
    dir: &Path,
    profile: &Profile,
) -> Result<Discovery, IndexError> {
    let descriptors = descriptors(registry);
    let index = match Index::open_checked(dir, Arc::clone(&embedder), &descriptors) {
        Ok(index) => index,
        Err(_) => {
            Index::build(&descriptors, embedder.as_ref(), dir, &mut |_| {})?;
            Index::open(dir, embedder)?
        }
    };
    Ok(Discovery::new(Arc::new(index)).with_profile(profile))
}
