//! The embedder of every xtask command: the built-in MiniLM from its folder, or an
//! OpenAI-compatible endpoint given by `--embedder-url URL --embedder-model ID` (and
//! `--embedder-key-env VAR` to send the key held in that environment variable).

use std::sync::Arc;

use super::{Xtask, XtaskError};
use crate::{Embedder, MiniLm};

/// An embeddings endpoint to use instead of the built-in model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct EndpointChoice {
    pub(super) url: Option<String>,
    pub(super) model: Option<String>,
    pub(super) key_env: Option<String>,
}

/// The usage line of the three flags.
pub(super) const FLAGS: &str = "[--embedder-url URL --embedder-model ID [--embedder-key-env VAR]]";

impl EndpointChoice {
    /// Takes `flag` with its `value` when it is one of the three; `false` otherwise.
    pub(super) fn take(&mut self, flag: &str, value: impl FnOnce() -> Option<String>) -> bool {
        let slot = match flag {
            "--embedder-url" => &mut self.url,
            "--embedder-model" => &mut self.model,
            "--embedder-key-env" => &mut self.key_env,
            _ => return false,
        };
        *slot = value();
        true
    }

    /// Whether any flag was given.
    pub(super) fn is_set(&self) -> bool {
        *self != EndpointChoice::default()
    }
}

impl Xtask {
    /// Embeds with the OpenAI-compatible endpoint at `base_url` (`http://host:port/v1`)
    /// and `model` instead of the built-in MiniLM: for building, checking and querying.
    /// Needs chalie-index's `openai` feature.
    pub fn embedder_endpoint(
        mut self,
        base_url: impl Into<String>,
        model: impl Into<String>,
    ) -> Xtask {
        self.endpoint.url = Some(base_url.into());
        self.endpoint.model = Some(model.into());
        self
    }

    /// Sends the value of the environment variable `var` as the endpoint's API key.
    pub fn embedder_api_key_env(mut self, var: impl Into<String>) -> Xtask {
        self.endpoint.key_env = Some(var.into());
        self
    }

    /// The embedder the task builds and reads with: the endpoint when one is set, else
    /// MiniLM from [`Xtask::model_dir`].
    pub fn embedder(&self) -> Result<Arc<dyn Embedder>, XtaskError> {
        load(&self.endpoint, &self.model)
    }
}

/// The endpoint of `choice` when set, else MiniLM from `model_dir`.
pub(super) fn load(
    choice: &EndpointChoice,
    model_dir: &std::path::Path,
) -> Result<Arc<dyn Embedder>, XtaskError> {
    if !choice.is_set() {
        return Ok(Arc::new(MiniLm::load(model_dir)?));
    }
    let (Some(url), Some(model)) = (&choice.url, &choice.model) else {
        return Err(XtaskError::Usage(format!(
            "`--embedder-url` and `--embedder-model` go together: {FLAGS}"
        )));
    };
    connect(url, model, choice.key_env.as_deref())
}

#[cfg(feature = "openai")]
fn connect(url: &str, model: &str, key_env: Option<&str>) -> Result<Arc<dyn Embedder>, XtaskError> {
    let mut builder = crate::OpenAiEmbedder::builder(url, model);
    if let Some(var) = key_env {
        let key = std::env::var(var).map_err(|_| {
            XtaskError::Usage(format!("`--embedder-key-env {var}`: `{var}` is not set"))
        })?;
        builder = builder.api_key(key);
    }
    Ok(Arc::new(builder.build()?))
}

#[cfg(not(feature = "openai"))]
fn connect(_: &str, _: &str, _: Option<&str>) -> Result<Arc<dyn Embedder>, XtaskError> {
    Err(XtaskError::Usage(
        "`--embedder-url` needs chalie-index's `openai` feature in this xtask".to_owned(),
    ))
}
