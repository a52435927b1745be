//! A project's own `cargo xtask` for discovery: build, check and evaluate the index of the
//! abilities linked into the xtask binary, its skill playbooks and any external tools.
//!
//! A user's whole `xtask/src/main.rs` (with `chalie-core` and `chalie-index` as its
//! dependencies, and the `xtask = "run --package xtask --"` alias in `.cargo/config.toml`):
//!
//! ```no_run
//! // The crates whose abilities the program serves; without this line linkme drops them.
//! chalie_core::link_abilities!(chalie_index);
//!
//! fn main() -> std::process::ExitCode {
//!     chalie_index::xtask::Xtask::from_manifest_dir(env!("CARGO_MANIFEST_DIR"))
//!         .skills("skills")
//!         .main()
//! }
//! ```
//!
//! Then `cargo xtask fetch-model`, `cargo xtask index`, `cargo xtask index --check` and
//! `cargo xtask eval --tools F --queries F`, and the contract checks chalie's own xtask
//! runs: `cargo xtask manifest [--check | --update]` (with `chalie.toml` at the root
//! naming the namespace, and `contracts.lock.json` beside it) and `cargo xtask lint`. The program opens the index with
//! [`Discovery::open_linked`](crate::Discovery::open_linked) at
//! [`default_index_dir`](crate::default_index_dir) (or the folder given to [`Xtask::out`]).
//! Each builder setting is a default the command line can override (`--skills`, `--out`,
//! `--model`, ...); [`Xtask::build`] and [`Xtask::check`] are the same steps as a library.
//!
//! The MCP servers the workspace's `chalie.toml` configures (`[[mcp.servers]]`, see
//! [`ChalieConfig::mcp_servers`](chalie_core::contracts::ChalieConfig::mcp_servers)) are
//! connected, listed and indexed as `server__tool` on every `index` and `index --check`
//! (feature `mcp`), so one command builds the index a program that connects the same servers
//! opens; with none configured nothing is connected.

mod endpoint;
mod eval;
mod fetch_model;
mod golden;
mod index;
mod progress;
mod servers;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::catalog::{self, CatalogError};
use crate::{
    BuildProgress, BuildReport, Descriptor, EmbedError, EmbeddingCache, IndexError, Manifest,
    MiniLm,
};

/// A failure that is already a sentence for the terminal.
type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Outcome = Result<(), BoxError>;

/// What [`Xtask`] indexes and where: the sources, the output folder and the model.
///
/// Relative paths are taken from the project root given to [`Xtask::new`].
#[derive(Clone, Debug)]
pub struct Xtask {
    root: PathBuf,
    linked: bool,
    skills: Option<PathBuf>,
    external: Vec<PathBuf>,
    tools: Vec<PathBuf>,
    out: PathBuf,
    model: PathBuf,
    endpoint: endpoint::EndpointChoice,
    cache: Option<PathBuf>,
    config: PathBuf,
}

/// Why an [`Xtask`] step failed; the message says what to run or change.
#[derive(Debug, thiserror::Error)]
pub enum XtaskError {
    /// The command line is not one the task understands; the message gives the usage.
    #[error("{0}")]
    Usage(String),
    /// A skill folder, external tools file or catalog could not be read.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// Two linked abilities share a name.
    #[error(transparent)]
    Registry(#[from] chalie_core::RegistryError),
    /// The embedding model could not be loaded (`cargo xtask fetch-model` installs it).
    #[error(transparent)]
    Model(#[from] EmbedError),
    /// Building failed, or the index is missing, stale or damaged.
    #[error("{error} ({code}); `cargo xtask index` with the same options rebuilds it", code = error.code())]
    Index {
        /// The typed reason, with its stable code.
        #[source]
        error: IndexError,
    },
    /// `eval` or `fetch-model` failed.
    #[error("{0}")]
    Failed(BoxError),
    /// `chalie.toml` could not be read, or a server it configures could not be connected or
    /// listed; the message names the server and the fix.
    #[error("{0}")]
    Servers(String),
    /// `manifest` or `lint` found a problem (a contract changed without its bump, a
    /// stale lock, a lint finding) or could not read the project's files.
    #[error(transparent)]
    Contracts(#[from] chalie_core::contracts::build::CommandError),
}

impl From<IndexError> for XtaskError {
    fn from(error: IndexError) -> XtaskError {
        XtaskError::Index { error }
    }
}

const USAGE: &str = "usage: cargo xtask <command> [options]

commands:
  fetch-model [--dir DIR]      download and verify the default embedding model
  index [--skills DIR] [--external FILE.json] [--tools FILE.jsonl] [--no-linked]
        [--config chalie.toml] [--out DIR] [--model DIR] [--cache DIR | --no-cache] [--check]
        [--embedder-url URL --embedder-model ID [--embedder-key-env VAR]]
                               build (or check) the discovery index of the linked
                               abilities, skill playbooks and external tools, with
                               the tools of the MCP servers chalie.toml configures
  eval --tools F --queries F [--examples-from F --examples N [--examples-for all|half]]
       [--ceiling X] [--credit X]
       [--foreign F]... [--unservable F]... [--no-parameters] [--model DIR] [--cache DIR]
       [--embedder-url URL --embedder-model ID [--embedder-key-env VAR]]
                               retrieval quality of the cascade on a labelled catalog;
                               --foreign / --unservable add out-of-catalog requests
                               (all of F, or F's unservable lines) for abstention;
                               --examples-for half gives examples to every other tool
  golden FILE.jsonl [--min-recall X] [--min-abstention X]
       [--embedder-url URL --embedder-model ID [--embedder-key-env VAR]]
                               find_tools on the built index over a committed set of
                               requests; fails below recall@5 or abstention

  manifest [--out FILE]        print the discovery manifest of every linked ability
  manifest --check             fail when a contract changed without its version bump
  manifest --update            rewrite contracts.lock.json, refused while a bump is missing
  lint [--similarity X]        review summaries, field descriptions and look-alike abilities

--embedder-url and --embedder-model embed with an OpenAI-compatible /v1/embeddings
endpoint instead of the built-in MiniLM (chalie-index's `openai` feature).";

impl Xtask {
    /// The task for the project at `root`: the abilities linked into this binary, the
    /// playbooks in `root/skills` when that folder exists, the index written to
    /// [`default_index_dir`](crate::default_index_dir) and the model read from
    /// [`MiniLm::default_dir`].
    pub fn new(root: impl Into<PathBuf>) -> Xtask {
        let root = root.into();
        let default_skills = root.join("skills");
        Xtask {
            linked: true,
            skills: default_skills.is_dir().then_some(default_skills),
            external: Vec::new(),
            tools: Vec::new(),
            out: crate::default_index_dir(&root),
            model: MiniLm::default_dir(&root),
            endpoint: endpoint::EndpointChoice::default(),
            cache: Some(crate::default_cache_dir(&root)),
            config: root.join("chalie.toml"),
            root,
        }
    }

    /// The task for the workspace whose `xtask` crate is at `manifest_dir`: pass
    /// `env!("CARGO_MANIFEST_DIR")`; the project root is its parent folder.
    pub fn from_manifest_dir(manifest_dir: impl AsRef<Path>) -> Xtask {
        let manifest_dir = manifest_dir.as_ref();
        Xtask::new(manifest_dir.parent().unwrap_or(manifest_dir))
    }

    fn resolve(&self, path: impl AsRef<Path>) -> PathBuf {
        self.root.join(path)
    }

    /// Reads skill playbooks from `dir` (every `*.md`, see [`catalog::parse_skill`]).
    pub fn skills(mut self, dir: impl AsRef<Path>) -> Xtask {
        self.skills = Some(self.resolve(dir));
        self
    }

    /// Adds the external tools listed in `file` (see [`catalog::read_external`]).
    pub fn external(mut self, file: impl AsRef<Path>) -> Xtask {
        let file = self.resolve(file);
        self.external.push(file);
        self
    }

    /// Adds a JSONL catalog of tools as data (see [`catalog::read_tools`]).
    pub fn tools(mut self, file: impl AsRef<Path>) -> Xtask {
        let file = self.resolve(file);
        self.tools.push(file);
        self
    }

    /// Leaves the linked abilities out: an index of files alone.
    pub fn without_linked(mut self) -> Xtask {
        self.linked = false;
        self
    }

    /// Writes the index to `dir` instead of the default folder.
    pub fn out(mut self, dir: impl AsRef<Path>) -> Xtask {
        self.out = self.resolve(dir);
        self
    }

    /// Reads the embedding model from `dir` instead of the default folder.
    pub fn model(mut self, dir: impl AsRef<Path>) -> Xtask {
        self.model = self.resolve(dir);
        self
    }

    /// Keeps the embedding cache in `dir` instead of `.chalie/cache`.
    pub fn cache(mut self, dir: impl AsRef<Path>) -> Xtask {
        self.cache = Some(self.resolve(dir));
        self
    }

    /// Reads the MCP servers to index from `file` instead of the root's `chalie.toml`.
    pub fn config(mut self, file: impl AsRef<Path>) -> Xtask {
        self.config = self.resolve(file);
        self
    }

    /// Builds from scratch every time: no embedding cache, no graph edited in place.
    pub fn without_cache(mut self) -> Xtask {
        self.cache = None;
        self
    }

    /// The folder the index is written to.
    pub fn out_dir(&self) -> &Path {
        &self.out
    }

    /// The folder the model is read from.
    pub fn model_dir(&self) -> &Path {
        &self.model
    }

    /// Every descriptor the index is built from, in source order: linked abilities,
    /// skills, external tools (the files given, then the tools of the servers `chalie.toml`
    /// configures, connected now), catalogs.
    pub fn descriptors(&self) -> Result<Vec<Descriptor>, XtaskError> {
        let mut descriptors = Vec::new();
        if self.linked {
            descriptors.extend(Descriptor::from_registry(chalie_core::registry()?));
        }
        if let Some(dir) = &self.skills {
            descriptors.extend(catalog::read_skills(dir)?);
        }
        for file in &self.external {
            descriptors.extend(catalog::read_external(file)?);
        }
        descriptors.extend(self.configured_servers()?);
        for file in &self.tools {
            descriptors.extend(catalog::read_tools(file)?);
        }
        Ok(descriptors)
    }

    /// The tools of the MCP servers of `chalie.toml`'s `[[mcp.servers]]`, connected and
    /// listed now; none without the file or without servers in it.
    fn configured_servers(&self) -> Result<Vec<Descriptor>, XtaskError> {
        if !self.config.is_file() {
            return Ok(Vec::new());
        }
        let config = chalie_core::contracts::ChalieConfig::load(&self.config)
            .map_err(|error| XtaskError::Servers(error.to_string()))?;
        let servers = config.mcp_servers();
        if servers.is_empty() {
            return Ok(Vec::new());
        }
        let origin = format!("{} [[mcp.servers]]", self.config.display());
        servers::descriptors(servers, &origin)
    }

    /// Builds the index into [`Xtask::out_dir`], replacing any index there; `progress` is
    /// called as [`Index::build`](crate::Index::build) goes.
    ///
    /// With the cache on (the default), texts embedded by an earlier build are not
    /// embedded again and the previous vector graph is edited in place
    /// ([`Index::build_cached`](crate::Index::build_cached)); `warn` hears why a damaged
    /// cache was discarded, before the build embeds everything again.
    pub fn build(
        &self,
        progress: &mut dyn FnMut(BuildProgress),
        warn: &mut dyn FnMut(&str),
    ) -> Result<BuildReport, XtaskError> {
        let descriptors = self.descriptors()?;
        let embedder = self.embedder()?;
        let embedder = embedder.as_ref();
        let Some(dir) = &self.cache else {
            return Ok(crate::build::build_uncached(
                &descriptors,
                embedder,
                &self.out,
                progress,
            )?);
        };
        let path = EmbeddingCache::path_in(dir, embedder);
        let mut cache = EmbeddingCache::open(&path, embedder);
        if let Some(reason) = cache.discarded() {
            warn(&format!(
                "the embedding cache `{}` was not used: {reason}; it is discarded and every \
                 text embedded again",
                path.display()
            ));
        }
        let report =
            crate::Index::build_cached(&descriptors, embedder, &self.out, &mut cache, progress)?;
        cache.save()?;
        Ok(report)
    }

    /// Checks the index in [`Xtask::out_dir`] is current: its manifest matches what a build
    /// would record now, every artifact its sha256, and it opens.
    pub fn check(&self) -> Result<Manifest, XtaskError> {
        let descriptors = self.descriptors()?;
        let embedder = self.embedder()?;
        let manifest = crate::Index::check(&self.out, &descriptors, embedder.as_ref())?;
        crate::Index::open(&self.out, embedder)?;
        Ok(manifest)
    }

    /// Runs the command in `args` (the arguments after the program name): `index`,
    /// `eval`, `golden`, `fetch-model`, `manifest`, `lint` or `help`. `manifest` and
    /// `lint` are chalie-core's [`manifest_command`](chalie_core::contracts::build::manifest_command)
    /// and [`lint_command`](chalie_core::contracts::build::lint_command), as in chalie's own
    /// xtask.
    pub fn run(&self, args: impl IntoIterator<Item = String>) -> Result<(), XtaskError> {
        let mut args = args.into_iter();
        let command = args.next().unwrap_or_default();
        let rest: Vec<String> = args.collect();
        match command.as_str() {
            "index" => index::run(self.clone(), &rest),
            "eval" => eval::run(self, &rest).map_err(XtaskError::Failed),
            "golden" => golden::run(self, &rest),
            "fetch-model" => fetch_model::run(&rest, &self.model).map_err(XtaskError::Failed),
            "manifest" => Ok(chalie_core::contracts::build::manifest_command(
                &self.root, &rest,
            )?),
            "lint" => Ok(chalie_core::contracts::build::lint_command(&rest)?),
            "" | "help" | "--help" | "-h" => {
                println!("{USAGE}");
                Ok(())
            }
            other => Err(XtaskError::Usage(format!(
                "unknown command `{other}`\n\n{USAGE}"
            ))),
        }
    }

    /// [`Xtask::run`] on this process's arguments, printing the error: the body of a
    /// user's `fn main`.
    pub fn main(&self) -> ExitCode {
        match self.run(std::env::args().skip(1)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("error: {error}");
                ExitCode::FAILURE
            }
        }
    }
}
