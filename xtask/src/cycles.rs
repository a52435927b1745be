//! `cargo xtask cycles`: import cycles between the files of each crate.
//!
//! A file depends on another when one of its `use` items names a path in
//! the other: `use crate::…`, `use super::…`, `use self::…`, or a child
//! module by its bare name. A path that lands on a module which only
//! re-exports the name (`pub use child::Name`) is followed to the file that
//! defines it, so a parent's `pub use` of its children is not mistaken for
//! a dependency of theirs on it, and a module's file using its own
//! submodules is composition, not an edge (a submodule using its parent's
//! items is one). Two files that reach each other through
//! such edges form a cycle: neither can be read, moved or tested without
//! the other. The check lists every strongly connected group of files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::{Outcome, project_root};

/// The crates whose files are checked, by their source folder.
const CRATES: &[&str] = &[
    "chalie-core/src",
    "chalie-macros/src",
    "chalie-index/src",
    "chalie-testkit/src",
    "examples/assistant/src",
    "examples/mcp-server/src",
    "examples/quickstart/src",
    "xtask/src",
    "xtask/index/src",
];

pub(crate) fn run(args: &[String]) -> Outcome {
    let report_only = match args.first().map(String::as_str) {
        None => false,
        Some("--report") => true,
        Some(other) => {
            return Err(format!("unknown option `{other}`; expected --report").into());
        }
    };
    let cycles = printed()?;
    if report_only && !cycles.is_empty() {
        println!("cycles: {} import cycle(s)", cycles.len());
        return Ok(());
    }
    gate(&cycles)
}

/// The check `cargo xtask lint` and `cargo xtask test` run: fails on any
/// import cycle between the files of a crate, naming each.
pub(crate) fn check() -> Outcome {
    gate(&printed()?)
}

/// The workspace's import cycles, each printed as it is found.
fn printed() -> Result<Vec<Vec<String>>, Box<dyn std::error::Error>> {
    let cycles = find(&project_root(), CRATES)?;
    for cycle in &cycles {
        eprintln!("import cycle: {}", cycle.join(" ⇄ "));
    }
    Ok(cycles)
}

/// Every import cycle of the crates whose source folders (relative to
/// `root`) are `crates`, each as its files.
fn find(root: &Path, crates: &[&str]) -> Result<Vec<Vec<String>>, Box<dyn std::error::Error>> {
    let mut found = Vec::new();
    for source in crates {
        let dir = root.join(source);
        if !dir.is_dir() {
            continue;
        }
        let graph = ModuleGraph::read(&dir)?;
        for cycle in graph.cycles() {
            found.push(
                cycle
                    .iter()
                    .map(|file| format!("{source}/{}", file.display()))
                    .collect(),
            );
        }
    }
    Ok(found)
}

/// Passes with no cycle; otherwise the error says what to do about them.
fn gate(cycles: &[Vec<String>]) -> Outcome {
    if cycles.is_empty() {
        println!("cycles: no import cycle between the files of any crate");
        return Ok(());
    }
    Err(format!(
        "cycles: {} import cycle(s) between files ({}); move what both sides need into a module of its own, or make the data run one way",
        cycles.len(),
        cycles
            .iter()
            .map(|cycle| cycle.join(" ⇄ "))
            .collect::<Vec<_>>()
            .join("; ")
    )
    .into())
}

/// One crate's files, their module paths and the `use` edges between them.
struct ModuleGraph {
    /// Module path (segments below the crate root) → file, relative to `src`.
    files: BTreeMap<Vec<String>, PathBuf>,
    /// File → the files its `use` items reach.
    edges: BTreeMap<PathBuf, BTreeSet<PathBuf>>,
}

/// A `use` path as written, with the module it was written in.
struct UsePath {
    module: Vec<String>,
    segments: Vec<String>,
}

/// What one file's `use` items say: the paths it imports, and the names it
/// re-exports ((module, name) → the path it re-exports; a file's inline
/// modules re-export names of their own).
#[derive(Default)]
struct FileUses {
    paths: Vec<UsePath>,
    reexports: BTreeMap<(Vec<String>, String), UsePath>,
}

impl ModuleGraph {
    fn read(src: &Path) -> Result<Self, Box<dyn std::error::Error>> {
        let mut files = BTreeMap::new();
        collect(src, src, &mut files)?;
        let mut uses: BTreeMap<PathBuf, FileUses> = BTreeMap::new();
        for (module, file) in &files {
            let text = std::fs::read_to_string(src.join(file))?;
            let parsed = syn::parse_file(&text)
                .map_err(|error| format!("{}: {error}", src.join(file).display()))?;
            let mut found = FileUses::default();
            collect_uses(&parsed.items, module, &mut found);
            uses.insert(file.clone(), found);
        }
        let mut graph = Self {
            files,
            edges: BTreeMap::new(),
        };
        let mut edges = BTreeMap::new();
        let module_of: BTreeMap<&PathBuf, &Vec<String>> = graph
            .files
            .iter()
            .map(|(module, file)| (file, module))
            .collect();
        for (file, found) in &uses {
            let own = module_of[file];
            let targets: BTreeSet<PathBuf> = found
                .paths
                .iter()
                .filter_map(|path| graph.resolve(path, &uses, 0))
                .filter(|target| target != file)
                // A module composing its own submodules is not a cycle with
                // them; what they take from it is an edge all the same.
                .filter(|target| !module_of[target].starts_with(own))
                .collect();
            edges.insert(file.clone(), targets);
        }
        graph.edges = edges;
        Ok(graph)
    }

    /// The file `path` lands in, following re-exports (at most a few hops).
    fn resolve(
        &self,
        path: &UsePath,
        uses: &BTreeMap<PathBuf, FileUses>,
        hops: usize,
    ) -> Option<PathBuf> {
        let absolute = self.absolute(path)?;
        // The longest prefix that is a module of this crate.
        let (length, file) = (0..=absolute.len())
            .rev()
            .find_map(|length| Some((length, self.files.get(&absolute[..length])?)))?;
        let rest = &absolute[length..];
        if hops < 4
            && let Some(name) = rest.first()
            && let Some(reexported) = uses.get(file).and_then(|found| {
                found
                    .reexports
                    .get(&(absolute[..length].to_vec(), name.clone()))
            })
        {
            let mut further = UsePath {
                module: reexported.module.clone(),
                segments: reexported.segments.clone(),
            };
            further.segments.extend(rest[1..].iter().cloned());
            // A name another crate defines (`pub use chrono;`, a macro) is
            // no edge between this crate's files.
            return self.resolve(&further, uses, hops + 1);
        }
        Some(file.clone())
    }

    /// `path` from the crate root, or `None` for another crate's path.
    fn absolute(&self, path: &UsePath) -> Option<Vec<String>> {
        let mut module = path.module.clone();
        let mut segments = path.segments.iter().peekable();
        match segments.peek().map(|first| first.as_str()) {
            Some("crate") => {
                module.clear();
                segments.next();
            }
            Some("self") => {
                segments.next();
            }
            Some("super") => {
                while segments.peek().map(|s| s.as_str()) == Some("super") {
                    segments.next();
                    module.pop()?;
                }
            }
            Some(first) => {
                // A bare name is a child module of the current one, or
                // another crate.
                let mut child = module.clone();
                child.push(first.to_owned());
                if !self.files.contains_key(&child) {
                    return None;
                }
            }
            None => return None,
        }
        module.extend(segments.cloned());
        Some(module)
    }

    /// The groups of two or more files that reach each other, each sorted.
    fn cycles(&self) -> Vec<Vec<PathBuf>> {
        let nodes: Vec<&PathBuf> = self.edges.keys().collect();
        let index: BTreeMap<&PathBuf, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, node)| (*node, i))
            .collect();
        let successors: Vec<Vec<usize>> = nodes
            .iter()
            .map(|node| {
                self.edges[*node]
                    .iter()
                    .filter_map(|target| index.get(target).copied())
                    .collect()
            })
            .collect();
        strongly_connected(&successors)
            .into_iter()
            .filter(|group| group.len() > 1)
            .map(|group| {
                let mut files: Vec<PathBuf> = group.into_iter().map(|i| nodes[i].clone()).collect();
                files.sort();
                files
            })
            .collect()
    }
}

/// Every `.rs` file below `dir`, by module path.
fn collect(
    src: &Path,
    dir: &Path,
    files: &mut BTreeMap<Vec<String>, PathBuf>,
) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(src, &path, files)?;
            continue;
        }
        if path.extension().is_none_or(|extension| extension != "rs") {
            continue;
        }
        let Ok(relative) = path.strip_prefix(src) else {
            continue;
        };
        let mut module: Vec<String> = relative
            .with_extension("")
            .iter()
            .map(|part| part.to_string_lossy().into_owned())
            .collect();
        if matches!(
            module.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            module.pop();
        }
        // A binary's other roots (`src/bin/*.rs`) are crates of their own.
        if module.first().map(String::as_str) == Some("bin") {
            continue;
        }
        files.insert(module, relative.to_path_buf());
    }
    Ok(())
}

/// The `use` items of `items` (written in `module`), and of inline modules
/// that are not tests.
fn collect_uses(items: &[syn::Item], module: &[String], found: &mut FileUses) {
    for item in items {
        match item {
            syn::Item::Use(item) => {
                let reexport = !matches!(item.vis, syn::Visibility::Inherited);
                let mut paths = Vec::new();
                flatten(&item.tree, &mut Vec::new(), &mut paths);
                for (segments, name) in paths {
                    if reexport && let Some(name) = name {
                        found.reexports.insert(
                            (module.to_vec(), name),
                            UsePath {
                                module: module.to_vec(),
                                segments: segments.clone(),
                            },
                        );
                    }
                    found.paths.push(UsePath {
                        module: module.to_vec(),
                        segments,
                    });
                }
            }
            syn::Item::Mod(inline) => {
                let test = inline.attrs.iter().any(|attr| {
                    attr.path().is_ident("cfg")
                        && attr
                            .parse_args::<syn::Ident>()
                            .is_ok_and(|ident| ident == "test")
                });
                if let (Some((_, items)), false) = (&inline.content, test) {
                    let mut inner = module.to_vec();
                    inner.push(inline.ident.to_string());
                    collect_uses(items, &inner, found);
                }
            }
            _ => {}
        }
    }
}

/// Each path of a use tree, with the name it brings into scope (`None`
/// for a glob).
fn flatten(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    match tree {
        syn::UseTree::Path(path) => {
            prefix.push(path.ident.to_string());
            flatten(&path.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(name) => {
            let ident = name.ident.to_string();
            if ident == "self" {
                out.push((prefix.clone(), prefix.last().cloned()));
            } else {
                let mut path = prefix.clone();
                path.push(ident.clone());
                out.push((path, Some(ident)));
            }
        }
        syn::UseTree::Rename(rename) => {
            let mut path = prefix.clone();
            if rename.ident != "self" {
                path.push(rename.ident.to_string());
            }
            out.push((path, Some(rename.rename.to_string())));
        }
        syn::UseTree::Glob(_) => out.push((prefix.clone(), None)),
        syn::UseTree::Group(group) => {
            for tree in &group.items {
                flatten(tree, prefix, out);
            }
        }
    }
}

/// Tarjan's strongly connected components over `successors`.
fn strongly_connected(successors: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        successors: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        groups: Vec<Vec<usize>>,
    }
    fn visit(state: &mut State<'_>, node: usize) {
        state.index[node] = Some(state.next);
        state.low[node] = state.next;
        state.next += 1;
        state.stack.push(node);
        state.on_stack[node] = true;
        for &next in &state.successors[node] {
            match state.index[next] {
                None => {
                    visit(state, next);
                    state.low[node] = state.low[node].min(state.low[next]);
                }
                Some(index) if state.on_stack[next] => {
                    state.low[node] = state.low[node].min(index);
                }
                Some(_) => {}
            }
        }
        if Some(state.low[node]) == state.index[node] {
            let mut group = Vec::new();
            while let Some(member) = state.stack.pop() {
                state.on_stack[member] = false;
                group.push(member);
                if member == node {
                    break;
                }
            }
            state.groups.push(group);
        }
    }
    let count = successors.len();
    let mut state = State {
        successors,
        index: vec![None; count],
        low: vec![0; count],
        on_stack: vec![false; count],
        stack: Vec::new(),
        next: 0,
        groups: Vec::new(),
    };
    for node in 0..count {
        if state.index[node].is_none() {
            visit(&mut state, node);
        }
    }
    state.groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(files: &[(&str, &str)]) -> ModuleGraph {
        let dir = tempfile_dir();
        for (path, text) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap_or(&dir)).unwrap_or(());
            std::fs::write(path, text).unwrap_or(());
        }
        ModuleGraph::read(&dir).unwrap_or_else(|error| panic!("{error}"))
    }

    fn tempfile_dir() -> PathBuf {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "chalie-cycles-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or(());
        dir
    }

    #[test]
    fn two_files_that_use_each_other_are_a_cycle() {
        let graph = graph(&[
            ("lib.rs", "mod a; mod b;"),
            ("a.rs", "use crate::b::B; pub struct A;"),
            ("b.rs", "use super::a::A; pub struct B;"),
        ]);
        assert_eq!(
            graph.cycles(),
            [vec![PathBuf::from("a.rs"), PathBuf::from("b.rs")]]
        );
    }

    #[test]
    fn a_parent_re_exporting_its_children_is_not_a_cycle() {
        let re_exported = graph(&[
            ("lib.rs", "pub mod d;"),
            ("d/mod.rs", "mod x; mod y; pub use x::X; pub use y::Y;"),
            ("d/x.rs", "use crate::d::Y; pub struct X;"),
            ("d/y.rs", "pub struct Y;"),
        ]);
        assert!(
            re_exported.cycles().is_empty(),
            "{:?}",
            re_exported.cycles()
        );
        // Nor a child using what its parent defines, while the parent
        // composes the child; but two siblings through their parent are.
        let defined_above = graph(&[
            ("lib.rs", "pub mod d;"),
            ("d/mod.rs", "mod x; mod y; pub use x::X; pub struct Own;"),
            ("d/x.rs", "use super::Own; use super::y::Y; pub struct X;"),
            ("d/y.rs", "use crate::d::X; pub struct Y;"),
        ]);
        assert_eq!(
            defined_above.cycles(),
            [vec![PathBuf::from("d/x.rs"), PathBuf::from("d/y.rs")]]
        );
    }

    #[test]
    fn other_crates_and_test_modules_are_not_edges() {
        let graph = graph(&[
            ("lib.rs", "mod a; mod b;"),
            ("a.rs", "use serde::Serialize; pub struct A;"),
            (
                "b.rs",
                "use crate::a::A; #[cfg(test)] mod tests { use crate::b; }",
            ),
        ]);
        assert!(graph.cycles().is_empty());
    }

    /// A crate of two files that import each other, beside one without a
    /// cycle: the gate `lint` and `test` run fails on the first and names
    /// its files, and passes the second.
    #[test]
    fn the_gate_fails_on_a_crate_with_a_cycle() {
        let root = tempfile_dir();
        let write = |path: &str, text: &str| {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap_or(&root)).unwrap_or(());
            std::fs::write(path, text).unwrap_or(());
        };
        write("cyclic/src/lib.rs", "mod a; mod b;");
        write("cyclic/src/a.rs", "use crate::b::B; pub struct A(B);");
        write("cyclic/src/b.rs", "use crate::a::A; pub struct B(Box<A>);");
        write("acyclic/src/lib.rs", "mod a; mod b;");
        write("acyclic/src/a.rs", "use crate::b::B; pub struct A(B);");
        write("acyclic/src/b.rs", "pub struct B;");

        let cycles = find(&root, &["cyclic/src", "acyclic/src"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cycles, [vec!["cyclic/src/a.rs", "cyclic/src/b.rs"]]);
        let error = gate(&cycles)
            .expect_err("a cycle fails the gate")
            .to_string();
        assert!(
            error.contains("1 import cycle(s)")
                && error.contains("cyclic/src/a.rs ⇄ cyclic/src/b.rs"),
            "{error}"
        );

        let clean = find(&root, &["acyclic/src"]).unwrap_or_else(|e| panic!("{e}"));
        assert!(clean.is_empty(), "{clean:?}");
        assert!(gate(&clean).is_ok());
    }

    /// This workspace holds the line the gate draws: no file of any crate
    /// is in an import cycle. Part of `cargo test`, so a new cycle fails
    /// the tests as well as `cargo xtask lint`.
    #[test]
    fn the_workspace_has_no_import_cycle() {
        let cycles = find(&project_root(), CRATES).unwrap_or_else(|e| panic!("{e}"));
        assert!(cycles.is_empty(), "{cycles:#?}");
    }
}
