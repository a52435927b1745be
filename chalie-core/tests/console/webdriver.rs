//! A small W3C WebDriver client over reqwest: chromedriver started by the
//! test, one headless Chromium session, the handful of commands the console
//! tests need. Waits poll a condition in the page up to [`PATIENCE`].

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

/// Where the distribution's packages put them (`cargo xtask browser`).
const BROWSER: &str = "/usr/bin/chromium";
const DRIVER: &str = "/usr/bin/chromedriver";

/// How long a wait lets the page take: generous, since a shared CI machine
/// may be slow; a wait that passes returns at once.
const PATIENCE: Duration = Duration::from_secs(30);

/// The key W3C WebDriver gives an element reference under.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A headless Chromium and the chromedriver driving it; both stop on drop.
pub struct Browser {
    driver: Child,
    http: reqwest::Client,
    session: String,
    _profile: tempfile::TempDir,
}

/// The browser, or `None` when it is not installed outside CI (the tests
/// then pass with a loud message). In CI (`CI` set) a missing browser fails.
pub async fn launch() -> Option<Browser> {
    let missing: Vec<&str> = [BROWSER, DRIVER]
        .into_iter()
        .filter(|path| !Path::new(path).is_file())
        .collect();
    if !missing.is_empty() {
        let message = format!(
            "the console's browser tests need {} (run `cargo xtask browser`, \
             or `apt-get install chromium chromium-driver`)",
            missing.join(" and ")
        );
        if std::env::var_os("CI").is_some() {
            panic!("{message}; CI must run them");
        }
        eprintln!("\n!!!!!!!! SKIPPED: {message} !!!!!!!!\n");
        return None;
    }
    Some(Browser::start().await)
}

impl Browser {
    async fn start() -> Browser {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new(DRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let http = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{port}");
        let ready = Instant::now();
        while http.get(format!("{base}/status")).send().await.is_err() {
            assert!(ready.elapsed() < PATIENCE, "chromedriver never answered");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1280,900",
            &format!("--user-data-dir={}", profile.path().display()),
        ];
        let capabilities = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": { "binary": BROWSER, "args": args },
        } } });
        let mut browser = Browser {
            driver,
            http,
            session: String::new(),
            _profile: profile,
        };
        let created = browser
            .call("POST", &format!("{base}/session"), capabilities)
            .await;
        browser.session = format!(
            "{base}/session/{}",
            created["sessionId"].as_str().expect("a session id")
        );
        browser
    }

    async fn call(&self, method: &str, url: &str, body: Value) -> Value {
        let request = match method {
            "GET" => self.http.get(url),
            "DELETE" => self.http.delete(url),
            _ => self
                .http
                .post(url)
                .header("content-type", "application/json")
                .body(body.to_string()),
        };
        let response = request.send().await.expect("chromedriver answers");
        let status = response.status();
        let answer: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        assert!(status.is_success(), "WebDriver {method} {url}: {answer}");
        answer["value"].clone()
    }

    async fn command(&self, method: &str, path: &str, body: Value) -> Value {
        self.call(method, &format!("{}{path}", self.session), body)
            .await
    }

    /// Opens `url`.
    pub async fn goto(&self, url: &str) {
        self.command("POST", "/url", json!({ "url": url })).await;
    }

    /// Reloads the page.
    pub async fn refresh(&self) {
        self.command("POST", "/refresh", json!({})).await;
    }

    /// Resizes the window (a phone's width, a laptop's).
    pub async fn resize(&self, width: u32, height: u32) {
        self.command(
            "POST",
            "/window/rect",
            json!({ "width": width, "height": height }),
        )
        .await;
    }

    /// Runs `script` (a function body; `arguments` holds `args`) and returns
    /// what it returns.
    pub async fn eval(&self, script: &str, args: Value) -> Value {
        self.command(
            "POST",
            "/execute/sync",
            json!({ "script": script, "args": args }),
        )
        .await
    }

    /// Waits until `script` returns something truthy, and returns it.
    pub async fn wait(&self, what: &str, script: &str) -> Value {
        let start = Instant::now();
        loop {
            let value = self.eval(script, json!([])).await;
            let truthy = !matches!(&value, Value::Null | Value::Bool(false))
                && value != json!("")
                && value != json!(0);
            if truthy {
                return value;
            }
            if start.elapsed() > PATIENCE {
                let page = self.eval("return document.body.innerText", json!([])).await;
                panic!("waited {PATIENCE:?} for {what}; the page shows:\n{page}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits for the element `css`, and returns its reference.
    pub async fn find(&self, css: &str) -> String {
        let script = format!("return document.querySelector({}) !== null", json!(css));
        self.wait(&format!("`{css}`"), &script).await;
        let found = self
            .command(
                "POST",
                "/element",
                json!({ "using": "css selector", "value": css }),
            )
            .await;
        found[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element reference for `{css}`: {found}"))
            .to_owned()
    }

    /// Clicks the element `css` as a user would (it must be visible).
    pub async fn click(&self, css: &str) {
        let element = self.find(css).await;
        self.command("POST", &format!("/element/{element}/click"), json!({}))
            .await;
    }

    /// Types `text` into the element `css` (`\u{E007}` is Enter).
    pub async fn type_into(&self, css: &str, text: &str) {
        let element = self.find(css).await;
        self.command(
            "POST",
            &format!("/element/{element}/value"),
            json!({ "text": text }),
        )
        .await;
    }

    /// The visible text of the element `css`.
    pub async fn text(&self, css: &str) -> String {
        let element = self.find(css).await;
        self.command("GET", &format!("/element/{element}/text"), json!({}))
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Saves a PNG of the viewport to `path`.
    pub async fn screenshot(&self, path: &PathBuf) {
        let encoded = self.command("GET", "/screenshot", json!({})).await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(encoded.as_str().unwrap())
            .unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Ending the WebDriver session stops Chromium; Drop cannot await, so
        // the DELETE goes over a plain blocking socket. Then the driver.
        if let Some(rest) = self.session.strip_prefix("http://")
            && let Some((host, path)) = rest.split_once('/')
            && let Ok(mut socket) = std::net::TcpStream::connect(host)
        {
            use std::io::{Read, Write};
            let _ = socket.set_read_timeout(Some(PATIENCE));
            let request = format!(
                "DELETE /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
            );
            if socket.write_all(request.as_bytes()).is_ok() {
                let _ = socket.read_to_end(&mut Vec::new());
            }
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
