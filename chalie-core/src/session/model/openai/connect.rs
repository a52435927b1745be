//! The HTTP client behind [`OpenAiModel`](super::OpenAiModel): HTTPS through
//! rustls, checked against the platform's trust store plus any roots the
//! application adds.

use std::time::Duration;

use crate::result::error_chain;

/// Only the connection is bounded: a long answer streams for as long as the
/// model writes.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A built client, or why none could be built (reported on the first
/// request rather than as a panic in a constructor).
#[derive(Debug, Clone)]
pub(crate) struct Connector {
    client: Result<reqwest::Client, String>,
    /// Set when the platform's trust store could not be read and only the
    /// added roots are trusted: an HTTPS failure then says why.
    trust_note: Option<String>,
}

impl Connector {
    /// A client trusting the platform's roots and `extra_roots`.
    pub(crate) fn new(extra_roots: &[reqwest::Certificate]) -> Connector {
        let builder = || reqwest::Client::builder().connect_timeout(CONNECT_TIMEOUT);
        let roots = || extra_roots.iter().cloned();
        match builder().tls_certs_merge(roots()).build() {
            Ok(client) => Connector {
                client: Ok(client),
                trust_note: None,
            },
            // A machine without a system trust store (a minimal container)
            // still reaches plain-HTTP servers and servers whose CA was added.
            Err(platform_error) => {
                let trust_note = format!(
                    "the platform's trust store could not be used ({}); only certificates \
                     added with `OpenAiModel::root_certificates_pem` are trusted",
                    error_chain(&platform_error)
                );
                let client = builder().tls_certs_only(roots()).build().map_err(|error| {
                    format!(
                        "the HTTP client could not be built: {}",
                        error_chain(&error)
                    )
                });
                Connector {
                    client,
                    trust_note: Some(trust_note),
                }
            }
        }
    }

    pub(crate) fn client(&self) -> Result<&reqwest::Client, &str> {
        self.client.as_ref().map_err(String::as_str)
    }

    /// A failed request's message, with every cause: reqwest's top-level
    /// message alone ("error sending request") does not say that a
    /// certificate was refused.
    pub(crate) fn describe(&self, error: &reqwest::Error) -> String {
        let chain = error_chain(error);
        match &self.trust_note {
            Some(note) => format!("{chain} ({note})"),
            None => chain,
        }
    }
}

/// Parses one or more PEM certificates, refusing input that holds none.
pub(crate) fn parse_pem(pem: &[u8]) -> Result<Vec<reqwest::Certificate>, String> {
    let certificates = reqwest::Certificate::from_pem_bundle(pem)
        .map_err(|error| format!("the PEM data could not be read: {}", error_chain(&error)))?;
    if certificates.is_empty() {
        return Err("the PEM data holds no `BEGIN CERTIFICATE` block".into());
    }
    Ok(certificates)
}
