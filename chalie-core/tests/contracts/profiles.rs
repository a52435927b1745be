//! Profiles expose what they enable and the core, never more.

use std::sync::Arc;

use chalie_core::{
    AbilityEntry, BoxFuture, Effect, Registry, Turn, contracts::ChalieConfig,
    contracts::ConfigError, contracts::Profile, contracts::Selector, dispatch::ExternalOutput,
    dispatch::ExternalTool, dispatch::ExternalTools, params::ParamErrors,
};
use serde_json::{Value, json};

use crate::catalog::{fetch, find_tools, list_events, search_notes};

fn registry() -> Registry {
    Registry::from_entries([
        AbilityEntry::of::<search_notes>(),
        AbilityEntry::of::<list_events>(),
        AbilityEntry::of::<find_tools>(),
        AbilityEntry::of::<fetch>(),
    ])
    .unwrap()
}

fn exposed(profile: &Profile) -> Vec<&'static str> {
    profile
        .exposed(&registry())
        .iter()
        .map(AbilityEntry::name)
        .collect()
}

#[test]
fn an_empty_profile_exposes_only_the_core() {
    assert_eq!(exposed(&Profile::new()), ["find_tools"]);
    let from_toml: Profile = toml::from_str("").unwrap();
    assert_eq!(from_toml, Profile::new());
    // `find_tools` sits in the `default` toolset, yet is exposed by name.
    assert!(!Profile::new().enables("default"));
}

#[test]
fn a_toolset_exposes_its_abilities_and_no_others() {
    let profile = Profile::new().with_toolset("notes");
    assert_eq!(exposed(&profile), ["find_tools", "search_notes"]);
    assert!(profile.allows(<search_notes as chalie_core::Ability>::SPEC));
    assert!(!profile.allows_name(&registry(), "list_events"));
    assert!(!profile.allows_name(&registry(), "fetch"));
    assert!(!profile.allows_name(&registry(), "no_such_tool"));
}

#[test]
fn the_core_is_configurable() {
    let profile = Profile::new().with_core(Vec::<String>::new());
    assert!(exposed(&profile).is_empty());
    let profile = Profile::new().with_core(["list_events"]);
    assert_eq!(exposed(&profile), ["list_events"]);
}

#[test]
fn profiles_load_from_toml_and_typos_do_not_expose_anything() {
    let config: ChalieConfig = toml::from_str(
        r#"
        namespace = "acme"
        [profiles.assistant]
        toolsets = ["notes", "calendar"]
        [profiles.typo]
        toolsets = ["calender"]
        "#,
    )
    .unwrap();
    let assistant = config.profile("assistant").unwrap();
    assert_eq!(
        exposed(assistant),
        ["find_tools", "list_events", "search_notes"]
    );
    let typo = config.profile("typo").unwrap();
    assert_eq!(exposed(typo), ["find_tools"]);
    assert_eq!(typo.unknown_toolsets(&registry()), ["calender"]);
    // An unknown key is an error, not a silently different profile.
    assert!(toml::from_str::<Profile>("toolset = [\"notes\"]").is_err());
}

/// A proxy serving `github__search` and `github__delete_repository`.
struct Github;

impl ExternalTools for Github {
    fn prefix(&self) -> &str {
        "github__"
    }

    fn tools(&self) -> Vec<ExternalTool> {
        ["search", "delete_repository"]
            .into_iter()
            .map(|name| ExternalTool {
                name: format!("github__{name}"),
                description: format!("The `{name}` tool."),
                input_schema: json!({ "type": "object", "properties": {} }),
                effect: Effect::Write,
            })
            .collect()
    }

    fn validate(&self, _: &ExternalTool, _: &Value) -> Result<(), ParamErrors> {
        Ok(())
    }

    fn call(&self, _: &ExternalTool, _: Value, _: Turn) -> BoxFuture<'static, ExternalOutput> {
        Box::pin(std::future::ready(ExternalOutput::Raw(Value::Null)))
    }
}

fn github() -> Vec<Arc<dyn ExternalTools>> {
    vec![Arc::new(Github)]
}

#[test]
fn a_profile_selects_external_tools_by_server_and_by_name_and_hides_some() {
    let profile: Profile = toml::from_str(
        r#"
        toolsets = ["notes"]
        [external]
        servers = ["github"]
        tools = ["files__read_file"]
        hide = ["github__delete_repository"]
        "#,
    )
    .unwrap();
    let registry = registry();
    assert!(profile.exposes(&registry, "search_notes"));
    assert!(!profile.exposes(&registry, "list_events"));
    assert!(profile.exposes(&registry, "github__search"));
    assert!(!profile.exposes(&registry, "github__delete_repository"));
    assert!(profile.exposes(&registry, "files__read_file"));
    assert!(!profile.exposes(&registry, "files__delete_file"));
    // Unavailable unless configured: no external tool by default.
    assert!(!Profile::new().exposes(&registry, "github__search"));
    // A typo in the table's keys is an error, not an empty selection.
    assert!(toml::from_str::<Profile>("[external]\nserver = [\"github\"]").is_err());
}

#[test]
fn the_loader_reads_chalie_toml_and_every_unknown_name_is_an_error_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chalie.toml");
    std::fs::write(
        &path,
        r#"
        namespace = "acme"
        [profiles.assistant]
        toolsets = ["notes", "calendar"]
        [profiles.assistant.external]
        servers = ["github"]
        hide = ["github__delete_repository"]
        [profiles.typo]
        toolsets = ["calender", "notes"]
        [profiles.typo.external]
        servers = ["gihtub"]
        tools = ["github__serch"]
        "#,
    )
    .unwrap();
    let config = ChalieConfig::load(&path).unwrap();
    let registry = registry();

    let assistant = config.select("assistant", &registry, &github()).unwrap();
    assert_eq!(
        exposed(&assistant),
        ["find_tools", "list_events", "search_notes"]
    );
    assert!(assistant.exposes(&registry, "github__search"));

    // The server is named, but the program connected no such server.
    let error = config.select("assistant", &registry, &[]).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("unknown external server `github`"),
        "{error}"
    );

    // Every unknown name at once, each with the closest known one.
    let error = config.select("typo", &registry, &github()).unwrap_err();
    let ConfigError::Unresolved { unresolved, .. } = &error else {
        panic!("{error:?}")
    };
    // Each with the closest known name first.
    let found: Vec<(Selector, &str, Option<&str>)> = unresolved
        .iter()
        .map(|name| {
            let closest = name.suggestions.first().map(String::as_str);
            (name.kind, name.name.as_str(), closest)
        })
        .collect();
    assert_eq!(
        found,
        [
            (Selector::Toolset, "calender", Some("calendar")),
            (Selector::Server, "gihtub", Some("github")),
            (
                Selector::ExternalTool,
                "github__serch",
                Some("github__search")
            ),
        ]
    );
    assert!(
        error
            .to_string()
            .contains("unknown toolset `calender` (did you mean `calendar`?)"),
        "{error}"
    );

    // An unknown profile names the ones there are.
    let error = config.select("asistant", &registry, &[]).unwrap_err();
    assert!(
        matches!(&error, ConfigError::UnknownProfile { known, .. } if known == &["assistant", "typo"]),
        "{error:?}"
    );
    assert!(error.to_string().contains("`assistant`, `typo`"), "{error}");

    // A missing file and a misspelt key are errors too.
    let missing = ChalieConfig::load(&dir.path().join("nope.toml")).unwrap_err();
    assert!(matches!(missing, ConfigError::Read { .. }), "{missing:?}");
    let misspelt =
        ChalieConfig::from_toml("namespace = \"a\"\n[profiles.p]\ntoolset = [\"notes\"]")
            .unwrap_err();
    assert!(
        matches!(misspelt, ConfigError::Parse { .. }),
        "{misspelt:?}"
    );
}

/// `[[mcp.servers]]` in `chalie.toml` is read by the rules (and with the
/// messages) of an MCP config file's `[servers.NAME]`: the same entry gives
/// the same server in either, and each mistake names its fix.
#[test]
fn mcp_servers_in_chalie_toml_follow_the_mcp_config_rules() {
    use chalie_core::mcp::{McpConfig, Transport};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chalie.toml");
    std::fs::write(
        &path,
        r#"
        namespace = "acme"

        [[mcp.servers]]
        name = "Weather-API"
        command = "python3"
        args = ["weather.py"]
        env = { UNITS = "metric" }
        cwd = "servers"
        timeout_secs = 2.5

        [[mcp.servers]]
        name = "search"
        url = "http://127.0.0.1:8000/mcp"
        "#,
    )
    .unwrap();
    let config = ChalieConfig::load(&path).unwrap();
    let servers = config.mcp_servers();
    let own_file = McpConfig::from_toml(
        r#"
        [servers.Weather-API]
        command = "python3"
        args = ["weather.py"]
        env = { UNITS = "metric" }
        cwd = "servers"
        timeout_secs = 2.5

        [servers.search]
        url = "http://127.0.0.1:8000/mcp"
        "#,
    )
    .unwrap();
    let names: Vec<&str> = servers.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["search", "weather_api"]);
    // Relative to the file's folder, as the MCP config file's loader does.
    assert!(
        matches!(&servers.servers[1].transport, Transport::Stdio { cwd: Some(cwd), .. } if cwd == &dir.path().join("servers")),
        "{servers:?}"
    );
    assert_eq!(servers.servers[0], own_file.servers[0]);
    assert_eq!(servers.servers[1].timeout, own_file.servers[1].timeout);
    // Written back, it reads the same.
    let again = ChalieConfig::from_toml(&toml::to_string(&config).unwrap()).unwrap();
    assert_eq!(again.mcp_servers(), servers);

    // No `[mcp]` table: no server.
    let none = ChalieConfig::from_toml("namespace = \"a\"").unwrap();
    assert!(none.mcp_servers().is_empty());

    let error = |text: &str| {
        ChalieConfig::from_toml(&format!("namespace = \"a\"\n{text}"))
            .unwrap_err()
            .to_string()
    };
    let own_error = |text: &str| McpConfig::from_toml(text).unwrap_err().to_string();
    // Both, or neither, of `command` and `url`: the same message in either file.
    let both = error("[[mcp.servers]]\nname = \"x\"\ncommand = \"a\"\nurl = \"http://b\"\n");
    let own_both = own_error("[servers.x]\ncommand = \"a\"\nurl = \"http://b\"\n");
    assert!(
        both.contains(
            "MCP server `x`: give exactly one of `command` (stdio) or `url` (HTTP), not both"
        ),
        "{both}"
    );
    assert!(both.contains(&own_both), "{both}\n{own_both}");
    let neither = error("[[mcp.servers]]\nname = \"x\"\nargs = [\"a\"]\n");
    assert!(neither.contains("it has neither"), "{neither}");
    assert!(
        own_error("[servers.x]\nargs = [\"a\"]\n").contains("it has neither"),
        "the MCP config file's own rule"
    );
    // An unknown key names the ones there are.
    let typo = error("[[mcp.servers]]\nname = \"x\"\ncomand = \"a\"\n");
    assert!(
        typo.contains("unknown field `comand`") && typo.contains("`command`"),
        "{typo}"
    );
    let table_typo = error("[mcp]\nserver = []\n");
    assert!(
        table_typo.contains("unknown field `server`"),
        "{table_typo}"
    );
    // A name is needed, and two names must not share a prefix.
    let unnamed = error("[[mcp.servers]]\ncommand = \"a\"\n");
    assert!(
        unnamed.contains("entry 1 has no `name`; add `name = \"...\"`"),
        "{unnamed}"
    );
    let clash = error(
        "[[mcp.servers]]\nname = \"my-srv\"\ncommand = \"a\"\n[[mcp.servers]]\nname = \"my_srv\"\ncommand = \"b\"\n",
    );
    assert!(clash.contains("share the prefix `my_srv__`"), "{clash}");
    let http_args = error("[[mcp.servers]]\nname = \"x\"\nurl = \"http://b\"\nargs = [\"a\"]\n");
    assert!(http_args.contains("takes none"), "{http_args}");
    let zero = error("[[mcp.servers]]\nname = \"x\"\ncommand = \"a\"\ntimeout_secs = 0\n");
    assert!(
        zero.contains("`timeout_secs` must be a positive number"),
        "{zero}"
    );
}
