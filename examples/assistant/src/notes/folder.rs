//! The notes folder: a note's sections, and the one way in, which refuses
//! every name that would leave the folder.

use std::path::PathBuf;

use chalie_core::ToolResult;

use crate::state::NotesFolder;

/// One section of a note: a heading and the text up to the next one.
pub(super) struct Section {
    pub(super) heading: String,
    pub(super) text: String,
}

/// Splits a note at its headings; text before the first one is section 1
/// under the note's name.
pub(super) fn sections(name: &str, text: &str) -> Vec<Section> {
    let mut found: Vec<Section> = Vec::new();
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix('#') {
            found.push(Section {
                heading: heading.trim_start_matches('#').trim().to_owned(),
                text: String::new(),
            });
        } else if found.is_empty() {
            found.push(Section {
                heading: name.to_owned(),
                text: String::new(),
            });
        }
        if let Some(section) = found.last_mut() {
            section.text.push_str(line);
            section.text.push('\n');
        }
    }
    found
}

fn outside(name: &str) -> ToolResult {
    ToolResult::error(
        "path-outside-notes",
        format!(
            "`{name}` is not a note in the notes folder; paths, `..` and hidden files are refused"
        ),
        "pass a note name as note_search or note_outline show it, e.g. `journal`",
    )
}

/// The names of the notes, without `.md`, sorted.
pub(super) fn note_names(folder: &NotesFolder) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(&folder.root)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            entry
                .file_name()
                .to_str()?
                .strip_suffix(".md")
                .map(str::to_owned)
        })
        .filter(|name| !name.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// The note `name` inside the folder, refusing anything that would leave
/// it: separators, `..`, hidden files, and symlinks pointing out.
pub(super) fn resolve(folder: &NotesFolder, name: &str) -> Result<(String, PathBuf), ToolResult> {
    let name = name.trim();
    let stem = name.strip_suffix(".md").unwrap_or(name);
    let plain = !stem.is_empty()
        && !stem.starts_with('.')
        && !stem.contains(['/', '\\', ':', '\0'])
        && !stem.contains("..");
    if !plain {
        return Err(outside(name));
    }
    let unknown = || {
        ToolResult::error(
            "unknown-note",
            format!("there is no note `{stem}`"),
            "pass one of the valid values as note, or search with note_search",
        )
        .with_valid_values(note_names(folder))
    };
    let root = folder.root.canonicalize().map_err(|_| {
        ToolResult::error(
            "notes-unavailable",
            "the notes folder cannot be read",
            "tell the user their notes are unavailable; do not retry",
        )
    })?;
    let path = root
        .join(format!("{stem}.md"))
        .canonicalize()
        .map_err(|_| unknown())?;
    if !path.starts_with(&root) {
        return Err(outside(name));
    }
    Ok((stem.to_owned(), path))
}

pub(super) fn read(path: &PathBuf) -> Result<String, ToolResult> {
    std::fs::read_to_string(path).map_err(|error| {
        ToolResult::error(
            "note-unreadable",
            format!("the note cannot be read: {error}"),
            "try another note; tell the user if this one matters",
        )
    })
}
