//! Descriptor sources for the offline index: a JSONL tool catalog and a folder of skill
//! playbooks (markdown with a small front matter).

use std::path::Path;

use chalie_index::{Descriptor, Source};
use serde_json::Value;

/// Reads a JSONL catalog: one `{"name", "description" or "summary", "examples"?}` a line.
pub fn read_tools(path: &Path) -> Result<Vec<Descriptor>, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut descriptors = Vec::new();
    for (number, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let at = || format!("{}:{}", path.display(), number + 1);
        let value: Value = serde_json::from_str(line).map_err(|e| format!("{}: {e}", at()))?;
        let field = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        let name = field("name").ok_or_else(|| format!("{}: no `name`", at()))?;
        let summary = field("summary")
            .or_else(|| field("description"))
            .unwrap_or_default();
        let examples = value
            .get("examples")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
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
        });
    }
    Ok(descriptors)
}

/// Reads every `*.md` playbook in `dir`. Front matter between `---` lines gives `name:`,
/// `summary:` and an `examples:` list of `- ` items.
pub fn read_skills(dir: &Path) -> Result<Vec<Descriptor>, Box<dyn std::error::Error>> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    paths.sort();
    let mut skills = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path)?;
        let mut lines = text.lines();
        if lines.next().map(str::trim) != Some("---") {
            return Err(format!(
                "{}: no front matter (`---` on the first line)",
                path.display()
            )
            .into());
        }
        let (mut name, mut summary, mut examples) = (String::new(), String::new(), Vec::new());
        let mut in_examples = false;
        for line in lines.by_ref() {
            let trimmed = line.trim();
            if trimmed == "---" {
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
        skills.push(Descriptor {
            name,
            summary,
            examples,
            tooltip: String::new(),
            source: Source::Skill,
            toolset: "skills".into(),
            discoverable: true,
        });
    }
    Ok(skills)
}

fn unquote(value: &str) -> String {
    value.trim().trim_matches('"').trim_matches('\'').to_owned()
}
