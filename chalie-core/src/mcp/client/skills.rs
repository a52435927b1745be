//! A connected server's skills (SEP-2640) as chalie's playbooks: each one
//! listed with `skills/list`, its `SKILL.md` read and checked against the
//! manifest's digest, its frontmatter stripped, under `server__skill`
//! names, as descriptor data `cargo xtask index --external` puts in the
//! discovery index, where `find_skills` finds it.

use rmcp::model::{
    ReadResourceRequestParams, ResourceContents, SKILLS_EXTENSION_ID, SkillResources,
};
use serde_json::{Value, json};

use super::{McpSource, McpSourceError};
use crate::mcp::names::{qualify, snake_segment};

impl McpSource {
    /// The server's skills as descriptor data, one JSON object each
    /// (`server`, `name`, `description`, `playbook`), sorted by name: the
    /// entries `cargo xtask index --external FILE.json` reads as skills
    /// beside [`descriptors`](Self::descriptors). A server that does not
    /// declare the skills extension has none; a skill whose file does not
    /// match its manifest is left out rather than trusted.
    pub async fn skill_descriptors(&self) -> Result<Vec<Value>, McpSourceError> {
        let server = self.inner.spec.name.clone();
        let failed = |detail: String| McpSourceError::Skills {
            server: server.clone(),
            detail,
        };
        let peer = self.inner.peer().await?;
        let declares = peer.peer_info().is_some_and(|info| {
            info.capabilities
                .extensions
                .as_ref()
                .is_some_and(|extensions| extensions.contains_key(SKILLS_EXTENSION_ID))
        });
        if !declares {
            return Ok(Vec::new());
        }
        let listed = peer
            .list_skills(None)
            .await
            .map_err(|error| failed(error.to_string()))?;
        let mut skills = Vec::with_capacity(listed.skills.len());
        for skill in listed.skills {
            let read = peer
                .read_resource(ReadResourceRequestParams::new(skill.uri.clone()))
                .await
                .map_err(|error| failed(error.to_string()))?;
            let Some(ResourceContents::TextResourceContents { text, .. }) = read.contents.first()
            else {
                continue;
            };
            let promised = match &skill.resources {
                SkillResources::Files(files) => files.iter().find(|file| file.uri == skill.uri),
                _ => None,
            };
            if promised.is_none_or(|file| file.verify(text.as_bytes()).is_err()) {
                continue;
            }
            let name = skill.frontmatter.name;
            skills.push(json!({
                "server": server,
                "name": qualify(&server, &snake_segment(&name), &name),
                "description": skill.frontmatter.description,
                "playbook": without_frontmatter(text),
            }));
        }
        skills.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        Ok(skills)
    }
}

/// The markdown after a leading `---` frontmatter block, or all of it.
/// Lines end in `\n` or `\r\n` and are compared trimmed, as
/// `chalie-index` reads a playbook's front matter.
fn without_frontmatter(text: &str) -> &str {
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next().filter(|line| line.trim() == "---") else {
        return text;
    };
    let mut end = first.len();
    for line in lines {
        end += line.len();
        if line.trim() == "---" {
            return &text[end..];
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::without_frontmatter;

    #[test]
    fn the_frontmatter_is_stripped_whatever_the_line_ends() {
        assert_eq!(without_frontmatter("---\nname: a\n---\nbody\n"), "body\n");
        assert_eq!(
            without_frontmatter("---\r\nname: a\r\n---\r\nbody\r\n"),
            "body\r\n"
        );
        assert_eq!(without_frontmatter("no frontmatter"), "no frontmatter");
        assert_eq!(
            without_frontmatter("---\nnever closed\n"),
            "---\nnever closed\n"
        );
    }
}
