//! Descriptor sources read from files, for the offline index: a JSONL tool catalog, a JSON
//! file of external tools and a folder of skill playbooks (markdown with a small front
//! matter).
//!
//! ```
//! let text = "---\nname: plan_trip\nsummary: Plan a trip\nexamples:\n  - plan my weekend\n---\n\n1. Ask for dates.\n";
//! let skill = chalie_index::catalog::parse_skill(text, "plan_trip.md")?;
//! assert_eq!((skill.name.as_str(), skill.body.as_str()), ("plan_trip", "1. Ask for dates.\n"));
//! # Ok::<(), chalie_index::catalog::CatalogError>(())
//! ```

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::descriptor::{Descriptor, Source};

/// A catalog file that could not be read or does not have the expected shape.
#[derive(Debug, thiserror::Error)]
#[error("{}: {reason}", origin.display())]
pub struct CatalogError {
    /// The file (with `:line` for a JSONL line) or folder at fault.
    pub origin: PathBuf,
    /// What is wrong with it, and how to fix it where that is not obvious.
    pub reason: String,
}

impl CatalogError {
    fn new(origin: impl Into<PathBuf>, reason: impl std::fmt::Display) -> CatalogError {
        CatalogError {
            origin: origin.into(),
            reason: reason.to_string(),
        }
    }
}

fn read_text(path: &Path) -> Result<String, CatalogError> {
    std::fs::read_to_string(path).map_err(|error| CatalogError::new(path, error))
}

/// Reads a JSONL catalog: one `{"name", "description" or "summary", "examples"?}` a line.
pub fn read_tools(path: &Path) -> Result<Vec<Descriptor>, CatalogError> {
    let text = read_text(path)?;
    let mut descriptors = Vec::new();
    for (number, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let at = || PathBuf::from(format!("{}:{}", path.display(), number + 1));
        let value: Value = serde_json::from_str(line).map_err(|e| CatalogError::new(at(), e))?;
        let field = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        let name = field("name").ok_or_else(|| CatalogError::new(at(), "no `name`"))?;
        let summary = field("summary")
            .or_else(|| field("description"))
            .unwrap_or_default();
        let examples = strings(value.get("examples"));
        descriptors.push(Descriptor {
            name,
            summary,
            examples,
            tooltip: field("tooltip").unwrap_or_default(),
            source: Source::Local,
            toolset: field("toolset").unwrap_or_default(),
            discoverable: value
                .get("discoverable")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            parameters: value
                .get("parameters")
                .or_else(|| value.get("input_schema"))
                .cloned(),
            ..Descriptor::default()
        });
    }
    Ok(descriptors)
}

/// Reads external tools: a JSON array of `{"server", "name", "description" or "summary",
/// "examples"?, "input_schema"?}`, the shape an MCP `tools/list` gives plus the server
/// (what `mcp-server --export-tools FILE.json` writes). An entry with a `"playbook"` is a
/// server's skill (`McpSource::skill_descriptors`), indexed as a skill for `find_skills`. The schema is kept, so `find_tools`
/// can hand it to a client calling through a proxy.
pub fn read_external(path: &Path) -> Result<Vec<Descriptor>, CatalogError> {
    let text = read_text(path)?;
    let list: Vec<Value> = serde_json::from_str(&text).map_err(|e| CatalogError::new(path, e))?;
    parse_external(&list, path)
}

/// The descriptors of external tools given as values of the shape [`read_external`] reads
/// (what `McpSource::descriptors` returns), so a program that connects to the servers
/// itself checks its index against exactly what `cargo xtask index --external` read from
/// the exported file. `origin` names the list in errors.
pub fn parse_external(
    list: &[Value],
    origin: impl AsRef<Path>,
) -> Result<Vec<Descriptor>, CatalogError> {
    let path = origin.as_ref();
    let mut descriptors = Vec::with_capacity(list.len());
    for (position, value) in list.iter().enumerate() {
        let field = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        let missing =
            |key: &str| CatalogError::new(path, format!("tool {position} has no `{key}`"));
        let server = field("server").ok_or_else(|| missing("server"))?;
        // A server's skill (`McpSource::skill_descriptors`): a playbook
        // `find_skills` returns, not a tool to call.
        if let Some(playbook) = field("playbook") {
            descriptors.push(Descriptor {
                name: field("name").ok_or_else(|| missing("name"))?,
                summary: field("summary")
                    .or_else(|| field("description"))
                    .unwrap_or_default(),
                examples: strings(value.get("examples")),
                tooltip: String::new(),
                source: Source::Skill,
                toolset: String::new(),
                discoverable: true,
                parameters: None,
                body: playbook,
            });
            continue;
        }
        descriptors.push(Descriptor {
            name: field("name").ok_or_else(|| missing("name"))?,
            summary: field("summary")
                .or_else(|| field("description"))
                .unwrap_or_default(),
            examples: strings(value.get("examples")),
            tooltip: field("tooltip").unwrap_or_default(),
            source: Source::External { server },
            toolset: field("toolset").unwrap_or_default(),
            discoverable: value
                .get("discoverable")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            parameters: value
                .get("input_schema")
                .or_else(|| value.get("inputSchema"))
                .cloned(),
            body: String::new(),
        });
    }
    Ok(descriptors)
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Reads every `*.md` playbook in `dir`, in file name order, with [`parse_skill`].
pub fn read_skills(dir: &Path) -> Result<Vec<Descriptor>, CatalogError> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| CatalogError::new(dir, e))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| parse_skill(&read_text(path)?, path))
        .collect()
}

/// Parses one playbook. Front matter between `---` lines gives `name:`, `summary:` and an
/// `examples:` list of `- ` items; the rest of the text, trimmed and ending in one newline,
/// is the playbook `find_skills` returns. `origin` names the text in errors.
///
/// A program that ships its playbooks inside the binary (`include_str!`) parses them with
/// this too, so its descriptors are exactly those `cargo xtask index` read from the files.
pub fn parse_skill(text: &str, origin: impl AsRef<Path>) -> Result<Descriptor, CatalogError> {
    let origin = origin.as_ref();
    let mut lines = text.lines();
    if lines.next().map(str::trim) != Some("---") {
        return Err(CatalogError::new(
            origin,
            "no front matter (`---` on the first line)",
        ));
    }
    let (mut name, mut summary, mut examples) = (String::new(), String::new(), Vec::new());
    let mut in_examples = false;
    let mut closed = false;
    for line in lines.by_ref() {
        let trimmed = line.trim();
        if trimmed == "---" {
            closed = true;
            break;
        }
        if let Some(item) = trimmed.strip_prefix("- ").filter(|_| in_examples) {
            examples.push(unquote(item));
            continue;
        }
        in_examples = false;
        match trimmed.split_once(':') {
            Some(("name", value)) => name = unquote(value),
            Some(("summary", value)) => summary = unquote(value),
            Some(("examples", _)) => in_examples = true,
            _ => {}
        }
    }
    if !closed {
        return Err(CatalogError::new(
            origin,
            "the front matter has no closing `---`",
        ));
    }
    if name.is_empty() {
        return Err(CatalogError::new(origin, "the front matter has no `name:`"));
    }
    let body = lines.collect::<Vec<_>>().join("\n").trim().to_owned() + "\n";
    Ok(Descriptor {
        name,
        summary,
        examples,
        tooltip: String::new(),
        source: Source::Skill,
        toolset: "skills".into(),
        discoverable: true,
        parameters: None,
        body,
    })
}

fn unquote(value: &str) -> String {
    value.trim().trim_matches('"').trim_matches('\'').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_external_entry_with_a_playbook_is_a_skill() {
        let list = [
            serde_json::json!({
                "server": "inner", "name": "inner__plan_trip",
                "description": "Plans a trip.", "playbook": "1. Ask for dates.\n"
            }),
            serde_json::json!({ "server": "inner", "name": "inner__lookup", "description": "Looks up." }),
        ];
        let parsed = parse_external(&list, "skills.json").expect("parses");
        assert_eq!(parsed[0].source, Source::Skill);
        assert_eq!(parsed[0].body, "1. Ask for dates.\n");
        assert_eq!(parsed[0].summary, "Plans a trip.");
        assert_eq!(
            parsed[1].source,
            Source::External {
                server: "inner".to_owned()
            }
        );
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("chalie-catalog-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    #[test]
    fn a_playbook_gives_its_front_matter_and_its_body() {
        let dir = scratch("skills");
        let text = "---\nname: plan_trip\nsummary: \"Plan a trip\"\nexamples:\n  - plan my weekend\n  - organise a holiday\n---\n\n1. Ask for dates.\n2. Check the weather.\n";
        std::fs::write(dir.join("plan_trip.md"), text).expect("write");
        std::fs::write(dir.join("notes.txt"), "not a playbook").expect("write");
        let skills = read_skills(&dir).expect("read");
        assert_eq!(skills.len(), 1);
        let skill = &skills[0];
        assert_eq!(
            (skill.name.as_str(), skill.summary.as_str()),
            ("plan_trip", "Plan a trip")
        );
        assert_eq!(skill.examples, ["plan my weekend", "organise a holiday"]);
        assert_eq!(skill.source, Source::Skill);
        assert_eq!(skill.body, "1. Ask for dates.\n2. Check the weather.\n");

        std::fs::write(dir.join("broken.md"), "---\nname: broken\n").expect("write");
        let error = read_skills(&dir).expect_err("unclosed front matter");
        assert!(error.to_string().contains("closing `---`"), "{error}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn external_tools_keep_their_server_and_schema() {
        let dir = scratch("external");
        let path = dir.join("tools.json");
        let json = r#"[{"server": "github", "name": "read_file", "description": "Read a file from a repository",
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}]"#;
        std::fs::write(&path, json).expect("write");
        let tools = read_external(&path).expect("read");
        assert_eq!(tools[0].qualified_name(), "github__read_file");
        assert_eq!(
            tools[0]
                .parameters
                .as_ref()
                .map(|p| p["properties"]["path"]["type"].clone()),
            Some(serde_json::json!("string"))
        );
        std::fs::write(&path, r#"[{"name": "read_file"}]"#).expect("write");
        let error = read_external(&path).expect_err("no server");
        assert!(error.to_string().contains("`server`"), "{error}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
