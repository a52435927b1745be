//! MCP serving under load, chalie's server beside a plain rmcp `#[tool]`
//! server, in one run: requests per second and p50 / p99 latency of
//! `tools/call` at 1, 10 and 50 concurrent clients, and of `tools/list`.
//!
//! Both servers list the same 150 tools (an echo, a small computation, an
//! I/O-bound tool that sleeps 5 ms, and 147 catalog look-ups with the same
//! two parameters) and serve streamable HTTP on 127.0.0.1, each in a child
//! process of its own with the same runtime (a multi-threaded tokio
//! runtime, one worker per core), so neither shares a scheduler with the
//! load. chalie's is built the way the README tells a user to: a
//! dispatcher with a policy that allows the three called tools on the
//! external channel (every call passes reach, the gate, the trail and the
//! envelope) served by `McpServer::serve_http` with every tool listed. The
//! rate limit is off: at its default of 30 calls a minute it would refuse
//! almost every call, and rmcp has none.
//!
//! The load comes from this process: one rmcp client per virtual user, each
//! its own MCP session (initialized before timing), issuing one request
//! after another for a fixed time. The two servers alternate round by
//! round (chalie, rmcp, chalie, rmcp, ...), so machine drift touches both,
//! and the figures are the medians of the rounds.
//!
//! `cargo xtask bench-mcp` builds and runs it; options: `--rounds N`,
//! `--seconds S` (per round and server), `--only NAME` (a scenario).

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chalie_core::mcp::{Exposure, McpServer};
use chalie_core::{
    AbilityEntry, Channel, Dispatcher, Params, Registry, ToolResult, ability, dispatch::Policy,
    dispatch::Setting,
};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

/// The variable that makes this binary a server (`chalie` or `rmcp`).
const SERVE_VARIABLE: &str = "CHALIE_MCP_SERVING_SERVE";
/// How long the I/O-bound tool waits, in milliseconds.
const IO_MILLIS: u64 = 5;
/// The tools every server lists.
const LISTED: usize = 150;
/// Concurrent clients of the `tools/call` scenarios.
const CONCURRENCY: [usize; 3] = [1, 10, 50];
/// Concurrent clients of the `tools/list` scenario.
const LIST_CONCURRENCY: [usize; 2] = [1, 10];

// ---------------------------------------------------------------- chalie

/// Parameters of [`echo()`].
#[derive(Params)]
struct EchoParams {
    /// The text to send back.
    text: String,
}

/// Sends the text back unchanged.
#[ability(
    effect = read,
    examples = ["echo this", "repeat after me", "say it back", "send the text back", "mirror my words", "parrot this"],
)]
async fn echo(params: EchoParams) -> ToolResult {
    ToolResult::success(params.text)
}

/// Parameters of [`sum_squares()`].
#[derive(Params)]
struct SumSquaresParams {
    /// The last number to square and add, from 1.
    n: u64,
}

/// Adds the squares of 1 to n.
#[ability(
    effect = read,
    examples = ["sum of squares", "add the squares up to n", "square and sum", "total of squares", "sum squares to 100", "squares added"],
)]
async fn sum_squares(params: SumSquaresParams) -> ToolResult {
    ToolResult::success(json!({ "sum": squares(params.n) }))
}

/// Parameters of [`wait_io()`].
#[derive(Params)]
struct WaitIoParams {
    /// Milliseconds to wait, as a slow backend would.
    millis: u64,
}

/// Waits, as a call to a slow backend would, then says how long.
#[ability(
    effect = read,
    examples = ["wait a moment", "call the slow backend", "pause briefly", "simulate io", "sleep a few ms", "wait for the service"],
)]
async fn wait_io(params: WaitIoParams) -> ToolResult {
    tokio::time::sleep(Duration::from_millis(params.millis)).await;
    ToolResult::success(format!("waited {} ms", params.millis))
}

/// Parameters of every catalog look-up.
#[derive(Params)]
struct LookupParams {
    /// The record's key.
    key: String,
    /// At most this many matches.
    limit: Option<u32>,
}

/// The same parameters for rmcp.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct LookupRequest {
    /// The record's key.
    key: String,
    /// At most this many matches.
    limit: Option<u32>,
}

/// The rmcp parameters of `echo`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoRequest {
    /// The text to send back.
    text: String,
}

/// The rmcp parameters of `sum_squares`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct SumSquaresRequest {
    /// The last number to square and add, from 1.
    n: u64,
}

/// The rmcp parameters of `wait_io`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct WaitIoRequest {
    /// Milliseconds to wait, as a slow backend would.
    millis: u64,
}

fn squares(n: u64) -> u64 {
    (1..=n).map(|i| std::hint::black_box(i * i)).sum()
}

/// The same body for both servers' catalog tools.
fn lookup(tool: &str, key: &str, limit: Option<u32>) -> Value {
    json!({ "tool": tool, "key": key, "limit": limit.unwrap_or(10), "matches": [] })
}

#[derive(Clone)]
struct RmcpServer {
    tool_router: ToolRouter<Self>,
}

/// Both servers' 147 catalog tools, from one list of names: a chalie
/// ability each, and a `#[tool]` method each in rmcp's router.
macro_rules! servers {
    ($($lookup:ident),* $(,)?) => {
        $(
            /// Looks up records of one catalog by key; read only.
            #[ability(
                effect = read,
                examples = ["look up a record", "find the entry for a key", "get the catalog row", "search the catalog", "fetch by key", "which record has this key"],
            )]
            async fn $lookup(params: LookupParams) -> ToolResult {
                ToolResult::success(lookup(stringify!($lookup), &params.key, params.limit))
            }
        )*

        /// chalie's abilities: the three called tools and the catalog.
        fn chalie_entries() -> Vec<AbilityEntry> {
            vec![
                AbilityEntry::of::<echo>(),
                AbilityEntry::of::<sum_squares>(),
                AbilityEntry::of::<wait_io>(),
                $(AbilityEntry::of::<$lookup>(),)*
            ]
        }

        #[tool_router(router = tool_router)]
        impl RmcpServer {
            /// Sends the text back unchanged.
            #[tool(annotations(read_only_hint = true, destructive_hint = false))]
            async fn echo(&self, Parameters(request): Parameters<EchoRequest>) -> String {
                request.text
            }

            /// Adds the squares of 1 to n.
            #[tool(annotations(read_only_hint = true, destructive_hint = false))]
            async fn sum_squares(&self, Parameters(request): Parameters<SumSquaresRequest>) -> String {
                json!({ "sum": squares(request.n) }).to_string()
            }

            /// Waits, as a call to a slow backend would, then says how long.
            #[tool(annotations(read_only_hint = true, destructive_hint = false))]
            async fn wait_io(&self, Parameters(request): Parameters<WaitIoRequest>) -> String {
                tokio::time::sleep(Duration::from_millis(request.millis)).await;
                format!("waited {} ms", request.millis)
            }

            $(
                /// Looks up records of one catalog by key; read only.
                #[tool(annotations(read_only_hint = true, destructive_hint = false))]
                async fn $lookup(&self, Parameters(request): Parameters<LookupRequest>) -> String {
                    lookup(stringify!($lookup), &request.key, request.limit).to_string()
                }
            )*
        }
    };
}

servers!(
    lookup_000, lookup_001, lookup_002, lookup_003, lookup_004, lookup_005, lookup_006, lookup_007,
    lookup_008, lookup_009, lookup_010, lookup_011, lookup_012, lookup_013, lookup_014, lookup_015,
    lookup_016, lookup_017, lookup_018, lookup_019, lookup_020, lookup_021, lookup_022, lookup_023,
    lookup_024, lookup_025, lookup_026, lookup_027, lookup_028, lookup_029, lookup_030, lookup_031,
    lookup_032, lookup_033, lookup_034, lookup_035, lookup_036, lookup_037, lookup_038, lookup_039,
    lookup_040, lookup_041, lookup_042, lookup_043, lookup_044, lookup_045, lookup_046, lookup_047,
    lookup_048, lookup_049, lookup_050, lookup_051, lookup_052, lookup_053, lookup_054, lookup_055,
    lookup_056, lookup_057, lookup_058, lookup_059, lookup_060, lookup_061, lookup_062, lookup_063,
    lookup_064, lookup_065, lookup_066, lookup_067, lookup_068, lookup_069, lookup_070, lookup_071,
    lookup_072, lookup_073, lookup_074, lookup_075, lookup_076, lookup_077, lookup_078, lookup_079,
    lookup_080, lookup_081, lookup_082, lookup_083, lookup_084, lookup_085, lookup_086, lookup_087,
    lookup_088, lookup_089, lookup_090, lookup_091, lookup_092, lookup_093, lookup_094, lookup_095,
    lookup_096, lookup_097, lookup_098, lookup_099, lookup_100, lookup_101, lookup_102, lookup_103,
    lookup_104, lookup_105, lookup_106, lookup_107, lookup_108, lookup_109, lookup_110, lookup_111,
    lookup_112, lookup_113, lookup_114, lookup_115, lookup_116, lookup_117, lookup_118, lookup_119,
    lookup_120, lookup_121, lookup_122, lookup_123, lookup_124, lookup_125, lookup_126, lookup_127,
    lookup_128, lookup_129, lookup_130, lookup_131, lookup_132, lookup_133, lookup_134, lookup_135,
    lookup_136, lookup_137, lookup_138, lookup_139, lookup_140, lookup_141, lookup_142, lookup_143,
    lookup_144, lookup_145, lookup_146,
);

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RmcpServer {}

// --------------------------------------------------------------- servers

/// Serves `which` on a free loopback port, prints its URL on a line of its
/// own and serves until stdin closes (the driver exits or drops it).
fn serve(which: &str) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| format!("no runtime: {error}"))?;
    runtime.block_on(async {
        let stop = async {
            let mut rest = Vec::new();
            let _ = tokio::io::stdin().read_to_end(&mut rest).await;
        };
        match which {
            "chalie" => {
                let mut policy = Policy::new();
                for tool in ["echo", "sum_squares", "wait_io"] {
                    policy
                        .set(Channel::External, tool, Setting::Allow)
                        .map_err(|error| error.to_string())?;
                }
                let registry =
                    Registry::from_entries(chalie_entries()).map_err(|error| error.to_string())?;
                let dispatcher = Dispatcher::builder(registry)
                    .policy(policy)
                    .without_rate_limit()
                    .build();
                let server = McpServer::builder(Arc::new(dispatcher))
                    .exposure(Exposure::Full)
                    .build()
                    .map_err(|error| error.to_string())?;
                let http = server
                    .serve_http(([127, 0, 0, 1], 0).into())
                    .await
                    .map_err(|error| error.to_string())?;
                println!("{}", http.url());
                stop.await;
                http.shutdown().await.map_err(|error| error.to_string())
            }
            "rmcp" => {
                let service = StreamableHttpService::new(
                    || {
                        Ok(RmcpServer {
                            tool_router: RmcpServer::tool_router(),
                        })
                    },
                    Arc::new(LocalSessionManager::default()),
                    StreamableHttpServerConfig::default().with_sse_keep_alive(None),
                );
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .map_err(|error| error.to_string())?;
                let addr = listener.local_addr().map_err(|error| error.to_string())?;
                let router = axum::Router::new().nest_service("/mcp", service);
                tokio::spawn(async move { axum::serve(listener, router).await });
                println!("http://{addr}/mcp");
                stop.await;
                Ok(())
            }
            other => Err(format!("unknown server `{other}`; expected chalie or rmcp")),
        }
    })
}

/// A server in a child process, stopped when dropped.
struct Child {
    url: String,
    // Held for the child's stdin: closing it stops the server.
    process: tokio::process::Child,
}

async fn spawn_server(which: &str) -> Result<Child, String> {
    spawn_server_counted(which, None).await
}

/// A server in a child process; with `callgrind_out`, under callgrind,
/// which writes the server's instruction count there when it exits.
async fn spawn_server_counted(
    which: &str,
    callgrind_out: Option<&std::path::Path>,
) -> Result<Child, String> {
    let exe = std::env::current_exe().map_err(|error| error.to_string())?;
    let mut command = match callgrind_out {
        None => tokio::process::Command::new(exe),
        Some(out) => {
            let mut command = tokio::process::Command::new("valgrind");
            command
                .args(["--tool=callgrind", "--quiet"])
                .arg(format!("--callgrind-out-file={}", out.display()))
                .arg(exe);
            command
        }
    };
    let mut process = command
        .env(SERVE_VARIABLE, which)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| format!("cannot start the {which} server: {error}"))?;
    let stdout = process.stdout.take().ok_or("no stdout")?;
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .await
        .map_err(|error| error.to_string())?;
    let url = line.trim().to_owned();
    if !url.starts_with("http://127.0.0.1:") {
        return Err(format!(
            "the {which} server did not start (it printed `{url}`)"
        ));
    }
    Ok(Child { url, process })
}

// ------------------------------------------------------------------ load

type Client = RunningService<RoleClient, ()>;

/// What one scenario asks.
#[derive(Clone, Copy)]
enum Request {
    Call(&'static str),
    List,
}

impl Request {
    fn label(self) -> String {
        match self {
            Request::Call(tool) => format!("call {tool}"),
            Request::List => format!("list ({LISTED} tools)"),
        }
    }

    /// Sends the request once; the error says what was wrong with the
    /// answer, so a round never times failures.
    async fn send(self, client: &Client) -> Result<(), String> {
        match self {
            Request::Call(tool) => {
                let arguments = match tool {
                    "echo" => json!({ "text": "the quick brown fox jumps over the lazy dog" }),
                    "sum_squares" => json!({ "n": 1000 }),
                    _ => json!({ "millis": IO_MILLIS }),
                };
                let arguments: JsonObject = match arguments {
                    Value::Object(object) => object,
                    _ => JsonObject::new(),
                };
                let result = client
                    .peer()
                    .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
                    .await
                    .map_err(|error| format!("{tool}: {error}"))?;
                let text = result
                    .content
                    .first()
                    .and_then(|content| content.as_text())
                    .map(|text| text.text.as_str())
                    .unwrap_or_default();
                let expected = match tool {
                    "echo" => "the quick brown fox jumps over the lazy dog",
                    "sum_squares" => "333833500",
                    _ => "waited 5 ms",
                };
                if result.is_error == Some(true) || !text.contains(expected) {
                    return Err(format!("{tool} answered `{text}`"));
                }
                Ok(())
            }
            Request::List => {
                let listed = client
                    .peer()
                    .list_tools(None)
                    .await
                    .map_err(|error| format!("tools/list: {error}"))?;
                if listed.tools.len() != LISTED {
                    return Err(format!("tools/list gave {} tools", listed.tools.len()));
                }
                Ok(())
            }
        }
    }
}

/// One round's figures.
struct Round {
    per_second: f64,
    p50: Duration,
    p99: Duration,
    /// The server process's CPU time (user and system, all threads) per
    /// request, in microseconds: what the server spends on a request,
    /// whatever else the machine runs at the time; `None` off Linux.
    cpu_us: Option<f64>,
}

/// The CPU time `pid` has used (user and system, every thread), from
/// `/proc/<pid>/stat`, whose clock ticks are `USER_HZ`: 100 a second on
/// every Linux platform since the kernel fixed it for user space.
fn cpu_time(pid: Option<u32>) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid?)).ok()?;
    // The command name may hold spaces; the fields after it do not.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// `concurrency` clients send `request` one after another for `seconds`.
async fn round(
    server: Option<u32>,
    clients: &[Arc<Client>],
    concurrency: usize,
    request: Request,
    seconds: f64,
) -> Result<Round, String> {
    let cpu_before = cpu_time(server);
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(seconds);
    let tasks: Vec<_> = clients[..concurrency]
        .iter()
        .map(|client| {
            let client = Arc::clone(client);
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                while Instant::now() < deadline {
                    let sent = Instant::now();
                    request.send(&client).await?;
                    latencies.push(sent.elapsed());
                }
                Ok::<_, String>(latencies)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.map_err(|error| error.to_string())??);
    }
    let elapsed = start.elapsed();
    let cpu = cpu_time(server)
        .zip(cpu_before)
        .map(|(after, before)| after.saturating_sub(before));
    if latencies.is_empty() {
        return Err("no request completed".into());
    }
    latencies.sort_unstable();
    let at = |quantile: f64| latencies[((latencies.len() - 1) as f64 * quantile).round() as usize];
    Ok(Round {
        per_second: latencies.len() as f64 / elapsed.as_secs_f64(),
        p50: at(0.50),
        p99: at(0.99),
        cpu_us: cpu.map(|cpu| cpu.as_secs_f64() * 1e6 / latencies.len() as f64),
    })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 {
        values[middle]
    } else {
        (values[middle - 1] + values[middle]) / 2.0
    }
}

/// The medians of one server's rounds.
struct Figures {
    per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
    cpu_us: Option<f64>,
}

impl Figures {
    fn of(rounds: &[Round]) -> Self {
        Figures {
            per_second: median(rounds.iter().map(|round| round.per_second).collect()),
            p50_ms: median(rounds.iter().map(|r| r.p50.as_secs_f64() * 1e3).collect()),
            p99_ms: median(rounds.iter().map(|r| r.p99.as_secs_f64() * 1e3).collect()),
            cpu_us: rounds
                .iter()
                .map(|round| round.cpu_us)
                .collect::<Option<Vec<f64>>>()
                .map(median),
        }
    }
}

struct Options {
    rounds: usize,
    seconds: f64,
    only: Option<String>,
    /// Count instructions per request under callgrind instead of timing.
    instructions: bool,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        rounds: 5,
        seconds: 2.0,
        only: None,
        instructions: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => {
                options.rounds = args
                    .next()
                    .and_then(|value| value.parse().ok())
                    .filter(|&rounds| rounds > 0)
                    .ok_or("--rounds takes a number above 0")?;
            }
            "--seconds" => {
                options.seconds = args
                    .next()
                    .and_then(|value| value.parse().ok())
                    .filter(|&seconds: &f64| seconds > 0.0)
                    .ok_or("--seconds takes a number above 0")?;
            }
            "--only" => options.only = Some(args.next().ok_or("--only takes a scenario name")?),
            "--instructions" => options.instructions = true,
            // cargo bench passes this to every bench binary.
            "--bench" => {}
            other => {
                return Err(format!(
                    "unknown option `{other}`; expected --rounds N, --seconds S, --only NAME (echo, sum_squares, wait_io, list) or --instructions"
                ));
            }
        }
    }
    Ok(options)
}

async fn drive(options: Options) -> Result<bool, String> {
    const SERVERS: [&str; 2] = ["chalie", "rmcp"];
    let mut children = Vec::new();
    let mut pools = Vec::new();
    let mut pids = Vec::new();
    let most = CONCURRENCY.into_iter().max().unwrap_or(1);
    for which in SERVERS {
        let child = spawn_server(which).await?;
        let mut pool = Vec::new();
        for _ in 0..most {
            let client = ()
                .serve(StreamableHttpClientTransport::from_uri(child.url.as_str()))
                .await
                .map_err(|error| format!("a client of the {which} server: {error}"))?;
            pool.push(Arc::new(client));
        }
        pids.push(child.process.id());
        children.push(child);
        pools.push(pool);
    }

    // What a listing weighs: chalie's tools carry more than rmcp's
    // (annotations, framework fields), and the list's time follows its size.
    let mut weights = Vec::new();
    for (which, pool) in SERVERS.iter().zip(&pools) {
        let tools = pool[0]
            .peer()
            .list_tools(None)
            .await
            .map_err(|error| format!("tools/list of the {which} server: {error}"))?
            .tools;
        let bytes = serde_json::to_string(&tools).map_err(|error| error.to_string())?;
        weights.push(format!(
            "{which} {} tools in {} bytes",
            tools.len(),
            bytes.len()
        ));
    }

    let mut scenarios: Vec<(Request, usize)> = Vec::new();
    for tool in ["echo", "sum_squares", "wait_io"] {
        for concurrency in CONCURRENCY {
            scenarios.push((Request::Call(tool), concurrency));
        }
    }
    for concurrency in LIST_CONCURRENCY {
        scenarios.push((Request::List, concurrency));
    }
    if let Some(only) = &options.only {
        scenarios.retain(|(request, _)| match request {
            Request::Call(tool) => tool == only,
            Request::List => only == "list",
        });
        if scenarios.is_empty() {
            return Err(format!(
                "no scenario `{only}`; expected echo, sum_squares, wait_io or list"
            ));
        }
    }

    println!(
        "MCP serving over streamable HTTP on 127.0.0.1: {} rounds of {} s per server and scenario, alternating chalie, rmcp; medians of the rounds",
        options.rounds, options.seconds
    );
    println!("listings: {}", weights.join(", "));
    println!(
        "{:<26} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6} {:>6} {:>9} {:>9}",
        "scenario",
        "clients",
        "chalie/s",
        "rmcp/s",
        "c p50 ms",
        "r p50 ms",
        "c p99 ms",
        "r p99 ms",
        "rps x",
        "p99 x",
        "c cpu µs",
        "r cpu µs"
    );
    let mut all_met = true;
    for (request, concurrency) in scenarios {
        // A short warm-up on each server: connections, allocator, caches.
        for (pool, pid) in pools.iter().zip(&pids) {
            round(*pid, pool, concurrency, request, options.seconds.min(0.5)).await?;
        }
        let mut rounds: [Vec<Round>; 2] = [Vec::new(), Vec::new()];
        for _ in 0..options.rounds {
            for (index, (pool, pid)) in pools.iter().zip(&pids).enumerate() {
                rounds[index].push(round(*pid, pool, concurrency, request, options.seconds).await?);
            }
        }
        let chalie = Figures::of(&rounds[0]);
        let rmcp = Figures::of(&rounds[1]);
        let throughput = chalie.per_second / rmcp.per_second;
        let tail = chalie.p99_ms / rmcp.p99_ms;
        let met = match request {
            Request::Call(_) => throughput >= 0.9 && tail <= 1.1,
            Request::List => throughput >= 1.0,
        };
        all_met &= met;
        println!(
            "{:<26} {:>7} {:>9.0} {:>9.0} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>5.2}x {:>5.2}x {:>9} {:>9}{}",
            request.label(),
            concurrency,
            chalie.per_second,
            rmcp.per_second,
            chalie.p50_ms,
            rmcp.p50_ms,
            chalie.p99_ms,
            rmcp.p99_ms,
            throughput,
            tail,
            chalie
                .cpu_us
                .map_or("-".to_owned(), |cpu| format!("{cpu:.0}")),
            rmcp.cpu_us
                .map_or("-".to_owned(), |cpu| format!("{cpu:.0}")),
            if met { "" } else { "  (goal missed)" }
        );
    }
    println!(
        "c/r: chalie/rmcp; cpu µs: the server process's CPU time per request (user and system, every thread), which the machine's other load barely moves"
    );
    println!(
        "goals: tools/call at least 0.9x rmcp's requests per second and at most 1.1x its p99; tools/list at least 1.0x its requests per second"
    );
    for pool in pools {
        for client in pool {
            if let Ok(client) = Arc::try_unwrap(client) {
                let _ = client.cancel().await;
            }
        }
    }
    for mut child in children {
        drop(child.process.stdin.take());
        let _ = child.process.wait().await;
    }
    Ok(all_met)
}

/// Requests a counted server answers: the short run and the long one,
/// whose difference leaves out start-up, `initialize` and shutdown.
const COUNTED: [usize; 2] = [40, 240];

/// The server's instructions per request of each scenario, under
/// callgrind: one process per server, scenario and request count, the
/// per-request figure from the difference of the two counts. Unlike
/// requests per second, it does not move with the machine's other load.
async fn count_instructions(options: &Options) -> Result<(), String> {
    let out_dir = std::path::Path::new("../target/callgrind");
    std::fs::create_dir_all(out_dir).map_err(|error| error.to_string())?;
    let mut scenarios = vec![
        Request::Call("echo"),
        Request::Call("sum_squares"),
        Request::List,
    ];
    if let Some(only) = &options.only {
        scenarios.retain(|request| match request {
            Request::Call(tool) => tool == only,
            Request::List => only == "list",
        });
    }
    println!(
        "MCP serving over streamable HTTP, one client: the server's instructions per request under callgrind ({} vs {} requests per process)",
        COUNTED[0], COUNTED[1]
    );
    println!(
        "{:<26} {:>14} {:>14} {:>8}",
        "scenario", "chalie", "rmcp", "ratio"
    );
    for request in scenarios {
        let mut per_request = Vec::new();
        for which in ["chalie", "rmcp"] {
            let mut totals = Vec::new();
            for count in COUNTED {
                let out = out_dir.join(format!(
                    "mcp.{which}.{}.{count}.out",
                    request.label().replace(' ', "_")
                ));
                let mut child = spawn_server_counted(which, Some(&out)).await?;
                let client = ()
                    .serve(StreamableHttpClientTransport::from_uri(child.url.as_str()))
                    .await
                    .map_err(|error| format!("a client of the {which} server: {error}"))?;
                for _ in 0..count {
                    request.send(&client).await?;
                }
                let _ = client.cancel().await;
                drop(child.process.stdin.take());
                child
                    .process
                    .wait()
                    .await
                    .map_err(|error| error.to_string())?;
                totals.push(collected_instructions(&out)?);
            }
            per_request
                .push((totals[1] as f64 - totals[0] as f64) / (COUNTED[1] - COUNTED[0]) as f64);
        }
        println!(
            "{:<26} {:>14.0} {:>14.0} {:>7.2}x",
            request.label(),
            per_request[0],
            per_request[1],
            per_request[0] / per_request[1]
        );
    }
    println!("callgrind files: target/callgrind/mcp.*.out");
    Ok(())
}

/// The instructions callgrind counted, from its `summary:` line.
fn collected_instructions(out: &std::path::Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(out)
        .map_err(|error| format!("callgrind wrote no {}: {error}", out.display()))?;
    text.lines()
        .find_map(|line| line.strip_prefix("summary:"))
        .or_else(|| text.lines().find_map(|line| line.strip_prefix("totals:")))
        .and_then(|count| count.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| format!("no instruction count in {}", out.display()))
}

fn main() -> std::process::ExitCode {
    let outcome = match std::env::var(SERVE_VARIABLE) {
        Ok(which) => serve(&which).map(|()| true),
        Err(_) => options().and_then(|options| {
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .map_err(|error| format!("no runtime: {error}"))?
                .block_on(async {
                    if options.instructions {
                        count_instructions(&options).await.map(|()| true)
                    } else {
                        drive(options).await
                    }
                })
        }),
    };
    match outcome {
        // A missed goal is reported in the table, not as a failed run:
        // the figures are the point, and a loaded machine can miss one.
        Ok(_) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
