//! The checks a careful reviewer runs on every new ability, in one call.

mod descriptor;
mod sample;

use std::collections::BTreeMap;
use std::fmt;

use chalie_core::{
    AbilityEntry, Channel, Dispatcher, Registry, ToolCall, Turn, contracts::MaxChars,
    contracts::Profile, contracts::keys as result_keys, dispatch::ChannelTools,
    dispatch::Dispatched, dispatch::Policy, dispatch::Setting, envelope::Envelope, turn::Principal,
    turn::TurnBuilder,
};
use serde_json::{Value, json};

use crate::Harness;
use crate::harness::Configure;

/// One problem found by [`smoke`].
#[derive(Debug, Clone, PartialEq)]
pub struct SmokeFinding {
    /// The ability.
    pub ability: String,
    /// Which check: `descriptor`, `contract`, `happy-path`,
    /// `invalid-input`, `large-output`, `verbosity` or `exposure`.
    pub check: &'static str,
    /// What is wrong, and what the model would have seen.
    pub message: String,
}

/// Everything [`smoke`] found.
#[derive(Debug, Clone, Default)]
pub struct SmokeReport {
    /// How many abilities were checked.
    pub checked: usize,
    /// How many calls were made through the dispatcher.
    pub calls: usize,
    /// The problems; empty when all is well.
    pub findings: Vec<SmokeFinding>,
}

impl SmokeReport {
    /// Panics listing every finding, unless there are none.
    #[track_caller]
    pub fn assert_clean(&self) {
        assert!(self.findings.is_empty(), "{self}");
    }
}

impl fmt::Display for SmokeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "smoke: {} abilities checked in {} calls, {} findings",
            self.checked,
            self.calls,
            self.findings.len()
        )?;
        for finding in &self.findings {
            writeln!(
                f,
                "- {} [{}]: {}",
                finding.ability, finding.check, finding.message
            )?;
        }
        Ok(())
    }
}

/// Configures a smoke run: the host state abilities need, the example
/// calls each declares, and the cap a body must keep to.
///
/// ```no_run
/// # async fn example(registry: &chalie_core::Registry) {
/// use serde_json::json;
///
/// chalie_testkit::Smoke::new(registry)
///     .example("weather", json!({ "location": "Rome" }))
///     .large_output("read_log", json!({ "max_chars": 200 }))
///     .run()
///     .await
///     .assert_clean();
/// # }
/// ```
pub struct Smoke {
    registry: Registry,
    configure: Vec<Configure>,
    examples: BTreeMap<String, Vec<Value>>,
    large: BTreeMap<String, Vec<Value>>,
    max_body_chars: usize,
    principal: Option<Principal>,
}

impl Smoke {
    /// A smoke run over every ability of `registry`.
    pub fn new(registry: &Registry) -> Self {
        Self {
            registry: registry.clone(),
            configure: Vec::new(),
            examples: BTreeMap::new(),
            large: BTreeMap::new(),
            max_body_chars: MaxChars::DEFAULT as usize,
            principal: None,
        }
    }

    /// Only the abilities of `toolset`.
    pub fn toolset(mut self, toolset: &str) -> Self {
        self.registry = self
            .registry
            .filter(|entry| entry.spec().toolset() == toolset);
        self
    }

    /// Makes `value` available to the abilities, as
    /// [`DispatcherBuilder::extension`](chalie_core::dispatch::DispatcherBuilder::extension) does.
    pub fn extension<T: Send + Sync + 'static>(self, value: T) -> Self {
        let shared = std::sync::Arc::new(value);
        self.configure(move |builder| builder.shared_extension(std::sync::Arc::clone(&shared)))
    }

    /// Changes the dispatcher the calls go through, e.g. to install the
    /// host's state; the smoke policy (allow on chat) is kept.
    pub fn configure(
        mut self,
        configure: impl Fn(
            chalie_core::dispatch::DispatcherBuilder,
        ) -> chalie_core::dispatch::DispatcherBuilder
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.configure.push(std::sync::Arc::new(configure));
        self
    }

    /// Calls every ability on behalf of `principal` (default: nobody), as
    /// a signed-in user's session does; abilities that keep each user's
    /// data apart refuse a call for nobody.
    pub fn principal(mut self, principal: Principal) -> Self {
        self.principal = Some(principal);
        self
    }

    pub(crate) fn with_configure(mut self, configure: &[Configure]) -> Self {
        self.configure.extend(configure.iter().cloned());
        self
    }

    /// An example call of `ability`: checked against its schema, and it
    /// must succeed. Without one, arguments are built from the schema and
    /// only a crash or a malformed envelope is a finding.
    pub fn example(mut self, ability: &str, arguments: Value) -> Self {
        self.examples
            .entry(ability.to_owned())
            .or_default()
            .push(arguments);
        self
    }

    /// A call of `ability` that produces a large output: its body must stay
    /// within the cap, or say `truncated=true` and give a `next_cursor`.
    pub fn large_output(mut self, ability: &str, arguments: Value) -> Self {
        self.large
            .entry(ability.to_owned())
            .or_default()
            .push(arguments);
        self
    }

    /// The most characters a body may have without being marked truncated
    /// (default 4000, the standard `max_chars` default).
    pub fn max_body_chars(mut self, max_chars: usize) -> Self {
        self.max_body_chars = max_chars;
        self
    }

    /// Runs every check on every ability.
    pub async fn run(self) -> SmokeReport {
        let dispatcher = self.dispatcher(ChannelTools::new());
        let mut report = SmokeReport::default();
        for entry in self.registry.iter() {
            report.checked += 1;
            let mut run = AbilityRun {
                smoke: &self,
                dispatcher: &dispatcher,
                entry,
                report: &mut report,
            };
            run.check().await;
        }
        report
    }

    /// The dispatcher the checks call through: the smoke policy (every
    /// permission allowed on chat, nothing elsewhere), no rate limit, the
    /// host's configuration, and `tools` on chat and subconscious.
    fn dispatcher(&self, tools: ChannelTools) -> Dispatcher {
        let mut policy = Policy::new();
        for entry in self.registry.iter() {
            for permission in permissions(entry) {
                // Names in a registry are valid permissions by construction.
                let _ = policy.set(Channel::Chat, &permission, Setting::Allow);
            }
        }
        let mut builder = Dispatcher::builder(self.registry.clone())
            .policy(policy)
            .without_rate_limit()
            .channel_tools(Channel::Chat, tools.clone())
            .channel_tools(Channel::Subconscious, tools);
        for configure in &self.configure {
            builder = configure(builder);
        }
        builder.build()
    }
}

impl Smoke {
    /// `turn` on behalf of the run's principal, if it has one.
    fn for_principal(&self, turn: TurnBuilder) -> TurnBuilder {
        match &self.principal {
            Some(principal) => turn.principal(principal.clone()),
            None => turn,
        }
    }
}

/// The permissions the smoke policy allows for an ability: its name (a
/// call without an action) and `name.*` (every action, every qualifier it
/// derives), since the gate has no fallback from `name.action` to `name`.
fn permissions(entry: &AbilityEntry) -> [String; 2] {
    [entry.name().to_owned(), format!("{}.*", entry.name())]
}

struct AbilityRun<'a> {
    smoke: &'a Smoke,
    dispatcher: &'a Dispatcher,
    entry: &'a AbilityEntry,
    report: &'a mut SmokeReport,
}

impl AbilityRun<'_> {
    fn finding(&mut self, check: &'static str, message: String) {
        self.report.findings.push(SmokeFinding {
            ability: self.entry.name().to_owned(),
            check,
            message,
        });
    }

    async fn call(
        &mut self,
        channel: Channel,
        arguments: &Value,
    ) -> (Dispatched, Option<Envelope>) {
        self.report.calls += 1;
        // The smoke test calls each ability directly, so its turn is
        // offered the ability under test, and nothing else.
        let turn = self
            .smoke
            .for_principal(
                Turn::builder(channel)
                    .session_id(format!("smoke-{}", self.entry.name()))
                    .pin([self.entry.name()]),
            )
            .build();
        let done = self
            .dispatcher
            .dispatch(&turn, ToolCall::new(self.entry.name(), arguments.clone()))
            .await;
        let envelope = Envelope::parse(&done.envelope).ok();
        (done, envelope)
    }

    async fn check(&mut self) {
        for message in descriptor::descriptor_problems(self.entry) {
            self.finding("descriptor", message);
        }
        for message in descriptor::contract_problems(self.entry) {
            self.finding("contract", message);
        }
        // The calls given to `Smoke::example`, then the ability's own
        // input examples: each is a call the model is shown, so each must
        // validate and succeed.
        let mut declared = self
            .smoke
            .examples
            .get(self.entry.name())
            .cloned()
            .unwrap_or_default();
        declared.extend(
            self.entry
                .spec()
                .input_examples()
                .iter()
                .map(|example| example.to_json()),
        );
        let declared = (!declared.is_empty()).then_some(declared);
        let happy = match &declared {
            Some(examples) => {
                for arguments in examples {
                    self.declared_example(arguments).await;
                    self.verbosity(arguments).await;
                }
                examples.first().cloned().unwrap_or_else(|| json!({}))
            }
            None => {
                let arguments = sample::sample_arguments(self.entry);
                self.schema_sample(&arguments).await;
                arguments
            }
        };
        self.invalid_input(&happy).await;
        for arguments in self
            .smoke
            .large
            .get(self.entry.name())
            .cloned()
            .unwrap_or_default()
        {
            let (done, envelope) = self.call(Channel::Chat, &arguments).await;
            match envelope {
                Some(envelope) if envelope.is_success() => self.within_cap(&arguments, &envelope),
                _ => self.finding(
                    "large-output",
                    format!(
                        "called with {arguments}, it did not succeed:\n{}",
                        done.envelope
                    ),
                ),
            }
        }
        self.exposure(&happy).await;
    }

    async fn declared_example(&mut self, arguments: &Value) {
        if let Err(error) = jsonschema::validate(self.entry.parameters(), arguments) {
            self.finding(
                "happy-path",
                format!("the example call {arguments} does not match the schema: {error}"),
            );
            return;
        }
        let (done, envelope) = self.call(Channel::Chat, arguments).await;
        match envelope {
            Some(envelope) if envelope.is_success() => self.within_cap(arguments, &envelope),
            _ => self.finding(
                "happy-path",
                format!(
                    "the example call {arguments} did not succeed; the model read:\n{}",
                    done.envelope
                ),
            ),
        }
    }

    async fn schema_sample(&mut self, arguments: &Value) {
        let (done, envelope) = self.call(Channel::Chat, arguments).await;
        match envelope {
            None => self.finding(
                "happy-path",
                format!("the envelope does not parse:\n{}", done.envelope),
            ),
            Some(envelope)
                if matches!(
                    envelope.code(),
                    Some("ability-panicked" | "non-canonical-result" | "invalid-arguments")
                ) =>
            {
                self.finding(
                    "happy-path",
                    format!(
                        "called with {arguments}, the model read:\n{}",
                        done.envelope
                    ),
                );
            }
            Some(envelope) if envelope.is_success() => self.within_cap(arguments, &envelope),
            Some(_) => {}
        }
    }

    /// A body over the cap must say it was cut and how to read on.
    fn within_cap(&mut self, arguments: &Value, envelope: &Envelope) {
        let chars = envelope.content.chars().count();
        if chars <= self.smoke.max_body_chars {
            return;
        }
        let truncated = envelope.attribute(result_keys::TRUNCATED) == Some("true");
        let cursor = envelope.attribute(result_keys::NEXT_CURSOR).is_some();
        if !(truncated && cursor) {
            self.finding(
                "large-output",
                format!(
                    "called with {arguments}, the body has {chars} characters, over the cap of {}, without `truncated=true` and a `next_cursor`",
                    self.smoke.max_body_chars
                ),
            );
        }
    }

    /// An ability that declares the standard `format` or `fields`
    /// parameter honours it on a declared example's list: `concise` and
    /// `detailed` differ and `concise` keeps a subset of `detailed`'s keys;
    /// `fields` keeps exactly the keys named; a key no item has is an
    /// `invalid-arguments` error rather than empty items.
    async fn verbosity(&mut self, example: &Value) {
        let properties = &self.entry.parameters()["properties"];
        let has_format = properties.get("format").is_some();
        let has_fields = properties.get("fields").is_some();
        if !has_format && !has_fields {
            return;
        }
        let with = |key: &str, value: Value| {
            let mut arguments = example.clone();
            if let Value::Object(map) = &mut arguments {
                map.insert(key.to_owned(), value);
            }
            arguments
        };
        let concise = self.items_of(&with("format", json!("concise"))).await;
        let Some(concise) = concise.filter(|items| !items.is_empty()) else {
            self.finding(
                "verbosity",
                format!(
                    "called with {example}, it returned no `items` to check `format` and `fields` on; declare an example call that lists something"
                ),
            );
            return;
        };
        if has_format {
            let detailed = self
                .items_of(&with("format", json!("detailed")))
                .await
                .unwrap_or_default();
            let keys = |items: &[Value]| -> Vec<std::collections::BTreeSet<String>> {
                items
                    .iter()
                    .map(|item| {
                        item.as_object()
                            .map(|map| map.keys().cloned().collect())
                            .unwrap_or_default()
                    })
                    .collect()
            };
            let (short, long) = (keys(&concise), keys(&detailed));
            let subset = short.len() == long.len()
                && short
                    .iter()
                    .zip(&long)
                    .all(|(short, long)| short.is_subset(long));
            if !subset || short == long {
                self.finding(
                    "verbosity",
                    format!(
                        "called with {example}, `format: concise` gave items with keys {:?} and `detailed` {:?} (first item); concise must keep fewer keys of the same items",
                        short.first(),
                        long.first()
                    ),
                );
            }
        }
        if has_fields {
            let Some(key) = concise[0]
                .as_object()
                .and_then(|map| map.keys().next().cloned())
            else {
                return;
            };
            let only = self
                .items_of(&with("fields", json!([key])))
                .await
                .unwrap_or_default();
            let exact = !only.is_empty()
                && only.iter().all(|item| {
                    item.as_object()
                        .is_some_and(|map| map.len() == 1 && map.contains_key(&key))
                });
            if !exact {
                self.finding(
                    "verbosity",
                    format!(
                        "called with {example} and `fields: [\"{key}\"]`, the items were not exactly that key: {only:?}"
                    ),
                );
            }
            let (done, envelope) = self
                .call(Channel::Chat, &with("fields", json!(["smoke_no_such_key"])))
                .await;
            if code(&envelope) != Some("invalid-arguments") {
                self.finding(
                    "verbosity",
                    format!(
                        "`fields` naming a key no item has did not give an `invalid-arguments` error:\n{}",
                        done.envelope
                    ),
                );
            }
        }
    }

    /// The `items` of a successful list result, or `None`.
    async fn items_of(&mut self, arguments: &Value) -> Option<Vec<Value>> {
        let (_, envelope) = self.call(Channel::Chat, arguments).await;
        let body = envelope.filter(Envelope::is_success)?.json()?;
        match body.get(result_keys::ITEMS)? {
            Value::Array(items) => Some(items.clone()),
            _ => None,
        }
    }

    async fn invalid_input(&mut self, happy: &Value) {
        let mut invalid = happy.clone();
        if let Value::Object(map) = &mut invalid {
            map.insert("smoke_unknown_field".into(), json!(1));
        }
        let (done, envelope) = self.call(Channel::Chat, &invalid).await;
        let self_correcting = envelope.as_ref().is_some_and(|envelope| {
            envelope.code() == Some("invalid-arguments")
                && envelope.content.contains("smoke_unknown_field")
                && envelope.hint().is_some()
        });
        if !self_correcting {
            self.finding(
                "invalid-input",
                format!(
                    "an unknown field did not give a self-correcting `invalid-arguments` error:\n{}",
                    done.envelope
                ),
            );
        }
    }

    /// Unavailable unless configured, checked through the dispatcher's own
    /// reachability and gate rather than by asking the profile: a turn on
    /// whose channel `find_tools` activated the ability is refused
    /// (`tool-not-available`) when the channel's profile does not enable
    /// its toolset, reaches it when it does, and a channel the policy does
    /// not enable refuses it at the gate (`permission-denied`).
    async fn exposure(&mut self, happy: &Value) {
        let spec = self.entry.spec();
        // No toolset, no core: only what the profile enables is reachable.
        let nothing = Profile::new().with_core(Vec::<String>::new());
        let bare = ChannelTools::new().core(Vec::<String>::new());
        let hidden = self.smoke.dispatcher(bare.clone().profile(nothing.clone()));
        let (done, envelope) = self.discovered_call(&hidden, Channel::Chat, happy).await;
        if code(&envelope) != Some("tool-not-available") {
            self.finding(
                "exposure",
                format!(
                    "discovery reached it on a channel whose profile enables no toolset (its toolset is `{}`):\n{}",
                    spec.toolset(),
                    done.envelope
                ),
            );
        }
        let shown = self
            .smoke
            .dispatcher(bare.profile(nothing.with_toolset(spec.toolset())));
        let (done, envelope) = self.discovered_call(&shown, Channel::Chat, happy).await;
        if code(&envelope) == Some("tool-not-available") {
            self.finding(
                "exposure",
                format!(
                    "discovery could not reach it even on a channel whose profile enables its toolset `{}`:\n{}",
                    spec.toolset(),
                    done.envelope
                ),
            );
        }
        if spec.internal() {
            return;
        }
        // Reachable on the background channel too, but the smoke policy
        // enables it on chat only: the gate must refuse it before it runs.
        let (done, envelope) = self
            .discovered_call(&shown, Channel::Subconscious, happy)
            .await;
        if !matches!(
            code(&envelope),
            Some("permission-denied" | "invalid-arguments")
        ) {
            self.finding(
                "exposure",
                format!(
                    "it ran on the subconscious channel, which the policy does not enable:\n{}",
                    done.envelope
                ),
            );
        }
    }

    /// A call on a turn where `find_tools` activated the ability, nothing
    /// pinned: what a model does after discovering it.
    async fn discovered_call(
        &mut self,
        dispatcher: &Dispatcher,
        channel: Channel,
        arguments: &Value,
    ) -> (Dispatched, Option<Envelope>) {
        self.report.calls += 1;
        let turn = self
            .smoke
            .for_principal(
                Turn::builder(channel).session_id(format!("smoke-exposure-{}", self.entry.name())),
            )
            .build();
        turn.activate_tools([self.entry.name()]);
        let done = dispatcher
            .dispatch(&turn, ToolCall::new(self.entry.name(), arguments.clone()))
            .await;
        let envelope = Envelope::parse(&done.envelope).ok();
        (done, envelope)
    }
}

/// The error code of an envelope, if it is an error.
fn code(envelope: &Option<Envelope>) -> Option<&str> {
    envelope.as_ref().and_then(Envelope::code)
}

/// Runs the smoke checks over every ability in `registry`:
/// - its descriptor renders valid for every provider (object root,
///   properties present, closed objects, OpenAI strict lists every
///   property as required);
/// - its name, summary and examples meet the contract;
/// - a happy-path call: the example calls given to [`Smoke::example`]
///   and the ability's own input examples (`#[ability(input_examples =
///   [...])]`), each checked against the schema and required to succeed,
///   or else
///   arguments built from the schema (no crash, a well-formed envelope);
/// - verbosity: with a declared example, an ability that takes the
///   standard `format` / `fields` honours them (concise keeps fewer keys
///   than detailed, `fields` exactly the keys named, an unknown key is
///   `invalid-arguments`);
/// - a call with an unknown field gives the self-correcting
///   `invalid-arguments` error, never a panic;
/// - a large output (every success, and the calls given to
///   [`Smoke::large_output`]) stays within the cap or is marked
///   `truncated=true` with a `next_cursor`;
/// - exposure, through the dispatcher's reachability and gate: once
///   discovered, refused on a channel whose profile does not enable its
///   toolset and reached where it does; refused at the gate on a channel
///   the policy does not enable.
///
/// Abilities that need host state need [`Smoke::configure`]; this is
/// `Smoke::new(registry).run()`.
pub async fn smoke(registry: &Registry) -> SmokeReport {
    Smoke::new(registry).run().await
}

/// [`smoke`] over the abilities of one toolset.
pub async fn smoke_toolset(registry: &Registry, toolset: &str) -> SmokeReport {
    Smoke::new(registry).toolset(toolset).run().await
}

// The harness offers a smoke run of its abilities; defined here, so the
// harness does not depend on the smoke suite.
impl Harness {
    /// A [`Smoke`] run over the harness's abilities with the same clock and
    /// host state; add example calls, then `.run().await`.
    pub fn smoke(&self) -> Smoke {
        let clock = self.clock();
        let smoke = Smoke::new(self.registry())
            .configure(move |builder| builder.extension(clock))
            .with_configure(&self.configure);
        // The same caller as the harness's own calls.
        match self.turn().principal() {
            Some(principal) => smoke.principal(principal.clone()),
            None => smoke,
        }
    }
}
