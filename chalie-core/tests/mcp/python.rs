//! Finding the Python interpreter with the official MCP SDK installed.

use std::path::{Path, PathBuf};

use chalie_core::mcp::{McpSource, ServerSpec};

/// The folder `cargo xtask python-env` creates the virtual environment in.
fn venv() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(".chalie")
        .join("venv")
}

/// The venv's python, or `CHALIE_PYTHON` when set. A missing venv fails
/// the test with the command that creates it: skipping would let CI pass
/// without the interop it is meant to prove.
pub fn python() -> PathBuf {
    if let Some(python) = std::env::var_os("CHALIE_PYTHON") {
        return python.into();
    }
    let venv = venv();
    let python = if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    };
    assert!(
        python.exists(),
        "the Python MCP SDK is not installed: no interpreter at `{}`; run `cargo xtask python-env` (which `cargo xtask test` runs first) or set CHALIE_PYTHON to a python with `mcp` installed",
        python.display()
    );
    python
}

/// A script under `tests/mcp/python/`.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("mcp")
        .join("python")
        .join(name)
}

/// The Python tool server, as configured source `py`.
pub fn tool_server_spec() -> ServerSpec {
    ServerSpec::stdio(
        "py",
        python().display().to_string(),
        [script("tool_server.py").display().to_string()],
    )
}

/// Connects to the Python tool server.
pub async fn tool_server(spec: ServerSpec) -> McpSource {
    McpSource::connect(spec).await.unwrap()
}
