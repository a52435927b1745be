//! chalie's skills (playbooks) served per the MCP skills extension
//! (SEP-2640): `skills/list` and `skills/get` return each skill's
//! manifest, `resources/read` its one file, `skill://<name>/SKILL.md`, a
//! markdown file whose frontmatter names and describes it.

use rmcp::model::{
    ErrorData, GetSkillResult, ListSkillsResult, ReadResourceResult, ResourceContents, Skill,
    SkillFrontmatter, SkillResource, SkillResources,
};

/// One skill the server serves: a playbook as the host has it (e.g. from
/// the discovery index built from `skills/*.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedSkill {
    /// The skill's name; served in the extension's form (lowercase
    /// letters, digits and single hyphens: `plan_trip` is `plan-trip`).
    pub name: String,
    /// What it is for, the one line a client lists.
    pub description: String,
    /// The playbook, markdown.
    pub playbook: String,
}

impl ServedSkill {
    /// A skill named `name`, described by `description`, with `playbook`.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        playbook: impl Into<String>,
    ) -> Self {
        ServedSkill {
            name: name.into(),
            description: description.into(),
            playbook: playbook.into(),
        }
    }
}

/// The skills as served: file bytes fixed when the server is built, so a
/// manifest's digest always matches what `resources/read` returns.
#[derive(Debug, Default)]
pub(crate) struct Skills {
    /// By served name, in name order.
    served: Vec<(Skill, String)>,
}

/// A name in the extension's form: lowercase, `_` and spaces as `-`, any
/// other character dropped, hyphens single and inside.
pub(crate) fn skill_name(name: &str) -> String {
    let mut served = String::with_capacity(name.len());
    for ch in name.chars().flat_map(char::to_lowercase) {
        match ch {
            'a'..='z' | '0'..='9' => served.push(ch),
            '-' | '_' | ' ' if !served.is_empty() && !served.ends_with('-') => served.push('-'),
            _ => {}
        }
    }
    // Cut to the extension's 64 characters first: a cut can end on a
    // hyphen, which the trim then removes.
    let cut: String = served.chars().take(64).collect();
    cut.trim_end_matches('-').to_owned()
}

impl Skills {
    pub(crate) fn new(skills: Vec<ServedSkill>) -> Skills {
        let mut served: Vec<(Skill, String)> = skills
            .into_iter()
            .filter_map(|skill| {
                let name = skill_name(&skill.name);
                if name.is_empty() {
                    return None;
                }
                let uri = format!("skill://{name}/SKILL.md");
                // Frontmatter values as JSON strings: valid YAML, whatever
                // the description holds.
                let quoted = |text: &str| serde_json::Value::from(text).to_string();
                let file = format!(
                    "---\nname: {}\ndescription: {}\n---\n{}",
                    quoted(&name),
                    quoted(skill.description.trim()),
                    skill.playbook
                );
                let manifest = Skill::new(
                    uri.clone(),
                    SkillFrontmatter::new(name, skill.description.trim()),
                    SkillResources::Files(vec![SkillResource::from_bytes(uri, file.as_bytes())]),
                );
                Some((manifest, file))
            })
            .collect();
        served.sort_by(|a, b| a.0.frontmatter.name.cmp(&b.0.frontmatter.name));
        served.dedup_by(|a, b| a.0.frontmatter.name == b.0.frontmatter.name);
        Skills { served }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.served.is_empty()
    }

    pub(crate) fn list(&self) -> ListSkillsResult {
        ListSkillsResult::with_all_items(
            self.served.iter().map(|(skill, _)| skill.clone()).collect(),
        )
    }

    pub(crate) fn get(&self, uri: &str) -> Result<GetSkillResult, ErrorData> {
        self.find(uri)
            .map(|(skill, _)| GetSkillResult::new(skill.clone()))
            .ok_or_else(|| unknown(uri))
    }

    pub(crate) fn read(&self, uri: &str) -> Result<ReadResourceResult, ErrorData> {
        let (_, file) = self.find(uri).ok_or_else(|| unknown(uri))?;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(file.clone(), uri).with_mime_type("text/markdown"),
        ]))
    }

    fn find(&self, uri: &str) -> Option<&(Skill, String)> {
        self.served.iter().find(|(skill, _)| skill.uri == uri)
    }
}

fn unknown(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!("no skill is served at `{uri}`; list them with `skills/list`"),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::skill_name;

    #[test]
    fn a_name_cut_to_64_characters_does_not_end_on_a_hyphen() {
        let long = format!("{}_b", "a".repeat(63));
        assert_eq!(skill_name(&long), "a".repeat(63));
        assert_eq!(skill_name("Plan_trip_"), "plan-trip");
    }
}
