//! chalie's skills served per the MCP skills extension (SEP-2640), read
//! back with rmcp's client the way a host loads them: list, get the
//! manifest, read the file and check it against the manifest's digest.

use chalie_core::mcp::{DEFAULT_LIST_TTL, Exposure, McpServer, McpSource, ServedSkill, ServerSpec};
use rmcp::model::{
    CacheScope, GetSkillRequestParams, ReadResourceRequestParams, ResourceContents, SkillResources,
};
use serde_json::json;

use crate::{connect_current, dispatcher};

fn served() -> McpServer {
    McpServer::builder(dispatcher(&[]))
        .exposure(Exposure::Full)
        .skills([
            ServedSkill::new(
                "weekly_review",
                "Reviews the week: what shipped, what slipped.",
                "1. List what shipped.\n2. List what slipped.\n",
            ),
            ServedSkill::new(
                "plan_trip",
                "Plans a trip: \"dates\", budget: and bookings.",
                "1. Ask for dates.\n2. Book.\n",
            ),
            // Maps to the same served name as the first: the first is kept.
            ServedSkill::new("Weekly Review", "A duplicate.", "ignored"),
        ])
        .build()
        .unwrap()
}

#[tokio::test]
async fn skills_are_listed_by_name_and_served_as_files_matching_their_manifest() {
    let client = connect_current(&served()).await;
    let peer = client.peer();
    let listed = peer.list_skills(None).await.unwrap();
    let names: Vec<&str> = listed
        .skills
        .iter()
        .map(|skill| skill.frontmatter.name.as_str())
        .collect();
    assert_eq!(names, ["plan-trip", "weekly-review"]);
    assert_eq!(listed.ttl_ms, Some(DEFAULT_LIST_TTL.as_millis() as u64));
    assert_eq!(listed.cache_scope, Some(CacheScope::Public));
    assert_eq!(
        listed.skills[1].frontmatter.description,
        "Reviews the week: what shipped, what slipped."
    );

    let uri = "skill://plan-trip/SKILL.md";
    let manifest = peer
        .get_skill(GetSkillRequestParams::new(uri))
        .await
        .unwrap()
        .skill;
    assert_eq!(manifest, listed.skills[0]);
    let SkillResources::Files(files) = &manifest.resources else {
        panic!("a served skill lists its file")
    };
    let read = peer
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("a skill file is text")
    };
    // The bytes are the ones the manifest promises, frontmatter first.
    files[0].verify(text.as_bytes()).unwrap();
    assert!(text.starts_with("---\nname: \"plan-trip\"\n"), "{text}");
    assert!(
        text.contains("description: \"Plans a trip: \\\"dates\\\", budget: and bookings.\""),
        "{text}"
    );
    assert!(
        text.ends_with("---\n1. Ask for dates.\n2. Book.\n"),
        "{text}"
    );

    let unknown = peer
        .read_resource(ReadResourceRequestParams::new("skill://nope/SKILL.md"))
        .await;
    assert!(unknown.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connected_servers_skills_become_playbooks_for_the_index() {
    let http = served()
        .serve_http(([127, 0, 0, 1], 0).into())
        .await
        .unwrap();
    let source = McpSource::connect(ServerSpec::http("inner", http.url()))
        .await
        .unwrap();
    let skills = source.skill_descriptors().await.unwrap();
    assert_eq!(
        skills,
        [
            json!({
                "server": "inner",
                "name": "inner__plan_trip",
                "description": "Plans a trip: \"dates\", budget: and bookings.",
                "playbook": "1. Ask for dates.\n2. Book.\n",
            }),
            json!({
                "server": "inner",
                "name": "inner__weekly_review",
                "description": "Reviews the week: what shipped, what slipped.",
                "playbook": "1. List what shipped.\n2. List what slipped.\n",
            }),
        ]
    );
    http.shutdown().await.unwrap();

    // A server without skills has none to give.
    let bare = crate::server(Exposure::Full)
        .serve_http(([127, 0, 0, 1], 0).into())
        .await
        .unwrap();
    let source = McpSource::connect(ServerSpec::http("bare", bare.url()))
        .await
        .unwrap();
    assert!(source.skill_descriptors().await.unwrap().is_empty());
    bare.shutdown().await.unwrap();
}

/// A server of two skills: `honest`, its file with CRLF line ends, and
/// `tampered`, whose file is not the one its manifest's digest promises.
#[derive(Clone)]
struct Tampered;

const HONEST: &str = "---\r\nname: honest\r\ndescription: Kept.\r\n---\r\n1. Keep it.\r\n";

fn skill_of(name: &str, promised: &[u8]) -> rmcp::model::Skill {
    let uri = format!("skill://{name}/SKILL.md");
    rmcp::model::Skill::new(
        uri.clone(),
        rmcp::model::SkillFrontmatter::new(name, format!("The {name} skill.")),
        SkillResources::Files(vec![rmcp::model::SkillResource::from_bytes(uri, promised)]),
    )
}

impl rmcp::ServerHandler for Tampered {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_skills()
                .build(),
        )
    }

    async fn list_skills(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::service::RoleServer>,
    ) -> Result<rmcp::model::ListSkillsResult, rmcp::ErrorData> {
        Ok(rmcp::model::ListSkillsResult::with_all_items(vec![
            skill_of("honest", HONEST.as_bytes()),
            skill_of("tampered", b"---\nname: tampered\n---\nwhat was promised\n"),
        ]))
    }

    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::service::RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, rmcp::ErrorData> {
        Ok(rmcp::model::ListToolsResult::with_all_items(Vec::new()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: rmcp::service::RequestContext<rmcp::service::RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, rmcp::ErrorData> {
        let text = match request.uri.as_str() {
            "skill://honest/SKILL.md" => HONEST,
            _ => "---\nname: tampered\n---\nsomething else\n",
        };
        Ok(
            rmcp::model::ReadResourceResult::new(vec![ResourceContents::text(
                text,
                request.uri.clone(),
            )])
            .into(),
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_whose_file_does_not_match_its_digest_is_left_out() {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let service = StreamableHttpService::new(
        || Ok(Tampered),
        std::sync::Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default().with_sse_keep_alive(None),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let router = axum::Router::new().nest_service("/mcp", service);
    let task = tokio::spawn(async move { axum::serve(listener, router).await });
    let source = McpSource::connect(ServerSpec::http("odd", url))
        .await
        .unwrap();
    let skills = source.skill_descriptors().await.unwrap();
    // The tampered file is not trusted; the honest one, CRLF and all,
    // loses its frontmatter.
    assert_eq!(
        skills,
        [json!({
            "server": "odd",
            "name": "odd__honest",
            "description": "The honest skill.",
            "playbook": "1. Keep it.\r\n",
        })]
    );
    source.disconnect().await;
    task.abort();
}
