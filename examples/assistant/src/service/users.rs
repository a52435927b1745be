//! `--users FILE`: who may use the service, each with a bearer token.
//!
//! ```toml
//! [[users]]
//! name = "alice"
//! token = "3f9c1d2e8a7b6c5d4e3f2a1b0c9d8e7f"   # e.g. `openssl rand -hex 32`
//! admin = true                               # may change the policy
//!
//! [[users]]
//! name = "bob"
//! token = "a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5"
//! ```

use std::path::Path;

use chalie_core::session::BearerTokens;
use chalie_core::turn::Principal;

/// The file's layout.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct UsersFile {
    #[serde(default)]
    users: Vec<User>,
}

/// One `[[users]]` entry.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct User {
    name: String,
    token: String,
    #[serde(default)]
    admin: bool,
}

/// The bearer tokens of the users in the file at `path`; every problem is
/// an error naming the file and the fix.
pub fn load(path: &Path) -> Result<BearerTokens, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read the users file `{shown}`: {error}"))?;
    let file: UsersFile = toml::from_str(&text).map_err(|error| {
        format!("the users file `{shown}` is not valid: {error}; each user is a `[[users]]` table with `name`, `token` and optionally `admin = true`")
    })?;
    if file.users.is_empty() {
        return Err(format!(
            "the users file `{shown}` lists nobody; add a `[[users]]` table with `name` and `token` (e.g. from `openssl rand -hex 32`)"
        ));
    }
    let mut tokens = BearerTokens::new();
    for user in file.users {
        if user.name.trim().is_empty() {
            return Err(format!("a user in `{shown}` has an empty `name`"));
        }
        let principal = Principal::new(user.name.clone());
        tokens = if user.admin {
            tokens.with_admin(&user.token, principal)
        } else {
            tokens.with(&user.token, principal)
        }
        .map_err(|refused| format!("user `{}` in `{shown}`: {refused}", user.name))?;
    }
    Ok(tokens)
}
