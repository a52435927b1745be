//! The MCP servers a program connects (feature `mcp`), seen by the index: their tools' and
//! skills' descriptors read by the rule [`catalog::parse_external`] applies to an exported
//! file. One
//! step for `cargo xtask index`, which indexes the servers `chalie.toml` configures, and for
//! the program that connects the same servers and checks its index holds exactly their tools.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use chalie_core::contracts::ChalieConfig;
//!
//! let config = ChalieConfig::load(std::path::Path::new("chalie.toml"))?;
//! let connected = chalie_index::servers::connect(config.mcp_servers(), None, "chalie.toml").await?;
//! // `connected.sources` go to the dispatcher (`DispatcherBuilder::external_tools`),
//! // `connected.descriptors` to the index check (`Index::open_checked`).
//! connected.disconnect().await;
//! # Ok(())
//! # }
//! ```

use chalie_core::mcp::{EventSink, McpConfig, McpSource, McpSourceError};

use crate::Descriptor;
use crate::catalog::{self, CatalogError};

/// The servers of one configuration, connected and listed.
#[derive(Debug, Clone)]
pub struct Connected {
    /// One source per server, in the configuration's order.
    pub sources: Vec<McpSource>,
    /// Every tool of every server, as the index holds it (`server__tool`), and every skill
    /// a server offers (SEP-2640, `server__skill`), which `find_skills` returns.
    pub descriptors: Vec<Descriptor>,
}

/// Why the configured servers could not be indexed or served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServersError {
    /// A server could not be started, reached or listed.
    #[error("{error}; start it or fix its `[[mcp.servers]]` entry in {origin}")]
    Source {
        /// The configuration the server came from.
        origin: String,
        /// Which server, and why.
        #[source]
        error: McpSourceError,
    },
    /// A server listed a tool the index cannot hold.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
}

/// Connects every server of `servers` (reporting to `events`), lists its tools and skills
/// and reads their descriptors; `origin` names the configuration in errors. The first server
/// that cannot be reached, or whose skills cannot be read, stops it, with its name and the
/// error: an index built without them would answer `find_skills` differently from the
/// servers it is checked against.
pub async fn connect(
    servers: &McpConfig,
    events: Option<EventSink>,
    origin: &str,
) -> Result<Connected, ServersError> {
    let sources = McpSource::connect_all(servers, events)
        .await
        .map_err(|error| ServersError::Source {
            origin: origin.to_owned(),
            error,
        })?;
    let mut values: Vec<_> = sources.iter().flat_map(McpSource::descriptors).collect();
    for source in &sources {
        let skills = source
            .skill_descriptors()
            .await
            .map_err(|error| ServersError::Source {
                origin: origin.to_owned(),
                error,
            })?;
        values.extend(skills);
    }
    let descriptors = catalog::parse_external(&values, origin)?;
    Ok(Connected {
        sources,
        descriptors,
    })
}

impl Connected {
    /// Closes every connection (a stdio server's process ends with it).
    pub async fn disconnect(&self) {
        for source in &self.sources {
            source.disconnect().await;
        }
    }
}
