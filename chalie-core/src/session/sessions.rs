//! [`Sessions`]: the host's handle on conversations, runs and approvals.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::dispatch::{Setting, split_permission};
use crate::session::error::SessionError;
use crate::session::event::Event;
use crate::session::event_log::{EventLog, EventStream};
use crate::session::mode::{Mode, ModeCell};
use crate::session::model::Model;
use crate::session::run::shared::{Config, Core, LiveRun, lock};
use crate::session::run::{RunKind, spawn_run};
use crate::session::store::memory::MemoryStore;
use crate::session::store::{
    ApprovalState, Decision, PlanStep, PolicyRecord, RunStatus, SessionRecord, SessionStore,
};
use crate::{Channel, Dispatcher, turn::Principal};

/// One run: its id and its events. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Run {
    id: String,
    session_id: String,
    events: EventLog,
}

impl Run {
    /// The run's id.
    pub fn id(&self) -> &str {
        &self.id
    }
    /// Its session.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }
    /// A subscriber reading every event from the first.
    pub fn events(&self) -> EventStream {
        self.events.subscribe()
    }
    /// The event log itself.
    pub fn log(&self) -> &EventLog {
        &self.events
    }
    /// Waits for the run to settle and returns all its events.
    pub async fn finish(&self) -> Vec<Event> {
        self.events.collect().await
    }
}

/// Configures [`Sessions`].
pub struct SessionsBuilder {
    dispatcher: Arc<Dispatcher>,
    model: Arc<dyn Model>,
    store: Option<Arc<dyn SessionStore>>,
    config: Config,
}

impl std::fmt::Debug for SessionsBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionsBuilder")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl SessionsBuilder {
    /// Where sessions live (default: a [`MemoryStore`]).
    pub fn store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.store = Some(store);
        self
    }
    /// How long a write waits for the human before it is rejected with
    /// `tool.approval_timeout` (default 60 s).
    pub fn approval_timeout(mut self, timeout: Duration) -> Self {
        self.config.approval_timeout = timeout;
        self
    }
    /// The most model requests one run makes (default 8, at least 1).
    pub fn max_iterations(mut self, iterations: usize) -> Self {
        self.config.max_iterations = iterations.max(1);
        self
    }
    /// Abilities every request offers, beside the always-on core
    /// (`find_tools`, `find_skills`, `memory`, ...) and whatever discovery
    /// activates during the run.
    pub fn pinned<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.config.pinned.extend(names.into_iter().map(Into::into));
        self
    }
    /// The system prompt every request starts with.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.config.system_prompt = Some(prompt.into());
        self
    }
    /// How long a run's lease outlives its replica's last renewal (default
    /// 30 s; renewed every third of it). With a store several replicas
    /// share, a replica that dies loses its runs to the one that
    /// [resumes](Sessions::resume) them after this long.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.config.lease = lease.max(Duration::from_millis(30));
        self
    }
    /// The channel runs' calls are made on (default [`Channel::Chat`]).
    pub fn channel(mut self, channel: Channel) -> Self {
        self.config.channel = channel;
        self
    }
    /// How many runs this process drives at once (default 4096): past
    /// it, [`Sessions::send`] and [`Sessions::execute_plan`] refuse with
    /// [`SessionError::Overloaded`] (the router answers `503` with
    /// `Retry-After`) rather than queue work without bound. Runs
    /// [`resume`](Sessions::resume)d after a restart are taken even past it.
    /// The newest `runs` finished runs (at least 512) stay readable through
    /// [`Sessions::run`] for clients that subscribe after their run ended.
    pub fn max_running(mut self, runs: usize) -> Self {
        self.config.max_running = runs;
        self
    }

    /// How many event streams (SSE) the router holds open at once
    /// (default 8192); past it a new stream is answered `503` with
    /// `Retry-After`. Each open stream costs a cursor into its run's log,
    /// not a copy: a slow client is sent events as its connection takes
    /// them, and a vanished one is dropped at the next write or keep-alive.
    pub fn max_streams(mut self, streams: usize) -> Self {
        self.config.max_streams = streams;
        self
    }

    /// The sessions.
    pub fn build(self) -> Sessions {
        let running = Arc::new(tokio::sync::Semaphore::new(
            self.config
                .max_running
                .min(tokio::sync::Semaphore::MAX_PERMITS),
        ));
        let sessions = Sessions {
            core: Arc::new(Core {
                dispatcher: self.dispatcher,
                model: self.model,
                store: self.store.unwrap_or_else(|| Arc::new(MemoryStore::new())),
                config: self.config,
                modes: Default::default(),
                runs: Default::default(),
                approvals: Default::default(),
                next_run: AtomicU64::new(1),
                run_prefix: unique_prefix(),
                heartbeat: Default::default(),
                running,
                policy_changes: Mutex::new(()),
            }),
        };
        // The policy changes a policy manager made, kept with the sessions,
        // apply over the host's policy again. A store that cannot be read
        // here fails its first run too; the host hears of it through the
        // log rather than a panic in a builder.
        if let Err(failure) = sessions.restore_policy() {
            tracing::error!(error = %failure, "the stored policy changes could not be applied");
        }
        // An approval decided through another replica wakes the run
        // waiting on it here. Weak: the store must not keep this alive.
        let core = Arc::downgrade(&sessions.core);
        sessions
            .core
            .store
            .watch_decisions(Arc::new(move |decision: Decision| {
                if let Some(core) = core.upgrade() {
                    core.approvals.notify(
                        &(decision.run_id, decision.call_id),
                        decision.state == ApprovalState::Approved,
                    );
                }
            }));
        // A policy change kept through another replica gates the next call
        // here too: the kept changes are applied again as it is announced.
        let core = Arc::downgrade(&sessions.core);
        sessions.core.store.watch_policy(Arc::new(move || {
            if let Some(core) = core.upgrade()
                && let Err(failure) = (Sessions { core }).restore_policy()
            {
                tracing::error!(error = %failure, "a policy change kept by another replica could not be applied");
            }
        }));
        sessions
    }
}

/// Conversations with a model that calls tools through a [`Dispatcher`]:
/// each [`send`](Sessions::send) starts a run that streams [`Event`]s,
/// gated by the session's [`Mode`]. Cheap to clone; clones share.
///
/// These methods are the host's own and act on any session; a session
/// they open belongs to nobody. To act for a user, whose sessions only
/// they may touch, go through [`as_principal`](Sessions::as_principal).
///
/// ```
/// use std::sync::Arc;
/// use chalie_core::session::{Event, Reply, ScriptedModel, Sessions};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let dispatcher = Arc::new(chalie_core::Dispatcher::new(chalie_core::registry().unwrap().clone()));
/// let model = Arc::new(ScriptedModel::new([Reply::text("Hello!")]));
/// let sessions = Sessions::builder(dispatcher, model).build();
/// let run = sessions.send("s1", "hi").unwrap();
/// let events = run.finish().await;
/// let names: Vec<_> = events.iter().map(Event::name).collect();
/// assert_eq!(names, [
///     "run.started", "agent.phase.changed", "message.delta",
///     "agent.phase.changed", "message.completed", "run.settlement.completed",
/// ]);
/// # }
/// ```
#[derive(Clone)]
pub struct Sessions {
    pub(crate) core: Arc<Core>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("config", &self.core.config)
            .finish_non_exhaustive()
    }
}

impl Sessions {
    /// Starts configuring sessions over a dispatcher and a model.
    pub fn builder(dispatcher: Arc<Dispatcher>, model: Arc<dyn Model>) -> SessionsBuilder {
        SessionsBuilder {
            dispatcher,
            model,
            store: None,
            config: Config::default(),
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn SessionStore> {
        &self.core.store
    }

    /// The session's live mode, loading or creating the session (a new
    /// one owned by nobody: see [`as_principal`](Self::as_principal)).
    pub(crate) fn mode_cell(&self, session_id: &str) -> Result<ModeCell, SessionError> {
        if let Some(cell) = lock(&self.core.modes).get(session_id) {
            return Ok(cell.clone());
        }
        let mode = self.session(session_id, None)?.mode;
        let mut modes = lock(&self.core.modes);
        Ok(modes
            .entry(session_id.to_owned())
            .or_insert_with(|| ModeCell::new(mode))
            .clone())
    }

    /// The stored session, created with `owner` if new.
    pub(crate) fn session(
        &self,
        session_id: &str,
        owner: Option<&Principal>,
    ) -> Result<SessionRecord, SessionError> {
        if let Some(session) = self.core.store.session(session_id)? {
            return Ok(session);
        }
        Ok(self.core.store.create_session(&SessionRecord {
            id: session_id.to_owned(),
            mode: Mode::default(),
            owner: owner.cloned(),
        })?)
    }

    /// The dispatcher the runs call tools through, e.g. for its
    /// [`policy_surface`](Dispatcher::policy_surface).
    pub fn dispatcher(&self) -> &Arc<Dispatcher> {
        &self.core.dispatcher
    }

    /// Changes `permission`'s setting on `channel` for every session: kept
    /// in the store first (so it survives a restart: [`build`](SessionsBuilder::build)
    /// applies the kept changes again), then swapped into the dispatcher's
    /// live policy, so the next call of any run, even one already going,
    /// is gated by it. A permission that is not `tool`, `tool.action` or
    /// `tool.*` is [`SessionError::BadPermission`] and nothing changes.
    pub fn set_policy(
        &self,
        channel: Channel,
        permission: &str,
        setting: Setting,
    ) -> Result<(), SessionError> {
        // Checked first: nothing is stored for a permission the live
        // policy would refuse.
        split_permission(permission)
            .map_err(|refused| SessionError::BadPermission(refused.to_string()))?;
        // One change at a time, stored and applied together: two racing
        // changes of one cell cannot leave the store with one and the live
        // policy with the other.
        let _changing = lock(&self.core.policy_changes);
        self.core.store.put_policy(&PolicyRecord {
            channel,
            permission: permission.to_owned(),
            setting,
        })?;
        self.core
            .dispatcher
            .policy()
            .set(channel, permission, setting)
            .map_err(|refused| SessionError::BadPermission(refused.to_string()))
    }

    /// Applies every policy change the store keeps to the dispatcher's
    /// live policy, in the order they were made, in one swap; returns how
    /// many applied. Done by [`build`](SessionsBuilder::build), and again
    /// whenever another replica sharing the store keeps a change; call it
    /// again after changing the dispatcher's policy wholesale (e.g.
    /// reloading a policy file).
    ///
    /// A kept change is skipped, and logged, when its permission is
    /// malformed (the others still apply) or when its cell is `internal`
    /// in the live policy: the host has since made it plumbing, which no
    /// policy manager may change.
    pub fn restore_policy(&self) -> Result<usize, SessionError> {
        let _changing = lock(&self.core.policy_changes);
        let kept = self.core.store.policy()?;
        let mut applied = 0;
        self.core.dispatcher.policy().change(|policy| {
            // Which to apply is decided on the live policy as it was, before
            // any of them changed it.
            let apply: Vec<&PolicyRecord> = kept
                .iter()
                .filter(|record| {
                    let (tool, qualifier) = match split_permission(&record.permission) {
                        Ok(parts) => parts,
                        Err(refused) => {
                            tracing::warn!(error = %refused, "a kept policy change names no permission; skipped");
                            return false;
                        }
                    };
                    let internal =
                        policy.resolve(record.channel, tool, qualifier).0 == Setting::Internal;
                    if internal {
                        tracing::warn!(
                            permission = %record.permission,
                            channel = record.channel.as_str(),
                            "a kept policy change is for a permission the host's policy makes internal; skipped"
                        );
                    }
                    !internal
                })
                .collect();
            for record in apply {
                if policy
                    .set(record.channel, &record.permission, record.setting)
                    .is_ok()
                {
                    applied += 1;
                }
            }
        });
        Ok(applied)
    }

    /// The session's mode (a new session is in [`Mode::Approval`]).
    pub fn mode(&self, session_id: &str) -> Result<Mode, SessionError> {
        Ok(self.mode_cell(session_id)?.get())
    }

    /// Changes the session's mode, at any moment: the next call the gate
    /// checks, even in a run already going, sees the new mode.
    pub fn set_mode(&self, session_id: &str, mode: Mode) -> Result<(), SessionError> {
        let cell = self.mode_cell(session_id)?;
        let session = self.session(session_id, None)?;
        self.core
            .store
            .put_session(&SessionRecord { mode, ..session })?;
        cell.set(mode);
        Ok(())
    }

    /// Gives the session to `owner` (or to nobody, `None`): e.g. a session
    /// stored before sessions had owners, which only the host may act on
    /// until it has one. The session is created if new.
    pub fn assign_owner(
        &self,
        session_id: &str,
        owner: Option<Principal>,
    ) -> Result<(), SessionError> {
        let session = self.session(session_id, None)?;
        Ok(self
            .core
            .store
            .put_session(&SessionRecord { owner, ..session })?)
    }

    /// Starts a run for a user message; the session is created if new.
    pub fn send(&self, session_id: &str, text: &str) -> Result<Run, SessionError> {
        self.start(session_id, RunKind::Message(text.to_owned()), None)
    }

    pub(crate) fn start(
        &self,
        session_id: &str,
        kind: RunKind,
        run_id: Option<String>,
    ) -> Result<Run, SessionError> {
        let handle = tokio::runtime::Handle::try_current().map_err(|_| SessionError::NoRuntime)?;
        // A permit for the run's life; a resumed run was accepted before
        // the restart, so it goes even without one.
        let permit = match Arc::clone(&self.core.running).try_acquire_owned() {
            Ok(permit) => Some(permit),
            Err(_) if matches!(kind, RunKind::Resume) => None,
            Err(_) => {
                return Err(SessionError::Overloaded {
                    limit: self.core.config.max_running,
                });
            }
        };
        let mode = self.mode_cell(session_id)?;
        let run_id = run_id.unwrap_or_else(|| {
            let n = self.core.next_run.fetch_add(1, Ordering::Relaxed);
            format!("run-{}-{n}", self.core.run_prefix)
        });
        self.keep_leases(&handle);
        let events = crate::session::run::follow::mirrored_log(&self.core.store, &run_id);
        // The log holds the place before the run can close it: held after
        // the spawn, a run that settled in between would leave its place
        // taken for good. If the spawn fails, the log and the place go
        // with it.
        if let Some(permit) = permit {
            events.hold(permit);
        }
        let task = spawn_run(
            &handle,
            Arc::clone(&self.core),
            session_id.to_owned(),
            run_id.clone(),
            mode,
            events.clone(),
            kind,
        )?;
        let mut runs = lock(&self.core.runs);
        // Finished runs stay for late subscribers, but not without bound:
        // the newest are kept, as many as may run at once, so a client that
        // subscribes just after its run ended still reads it even when the
        // process runs at its limit.
        let keep = (MAX_KEPT_RUNS / 2).max(self.core.config.max_running);
        // Trimmed at three times `keep`, down to `keep` finished ones: with
        // up to `keep` runs still running, what stays is at most twice
        // `keep`, so the next trim is at least `keep` starts away (at twice
        // `keep`, a process at its limit would trim on every start).
        if runs.len() >= keep.saturating_mul(3) {
            let mut finished: Vec<(std::time::Instant, String)> = runs
                .iter()
                .filter(|(_, run)| run.events.is_closed())
                .map(|(id, run)| (run.started, id.clone()))
                .collect();
            let forget = finished.len().saturating_sub(keep);
            if forget > 0 {
                // The oldest `forget` to the front, unsorted: no full sort.
                finished.select_nth_unstable(forget - 1);
                for (_, id) in &finished[..forget] {
                    runs.remove(id);
                }
            }
        }
        runs.insert(
            run_id.clone(),
            LiveRun {
                session_id: session_id.to_owned(),
                events: events.clone(),
                task: Some(task),
                started: std::time::Instant::now(),
            },
        );
        Ok(Run {
            id: run_id,
            session_id: session_id.to_owned(),
            events,
        })
    }

    /// A run, e.g. to stream its events: one this process started or
    /// resumed or, with a store that keeps runs' events for many replicas
    /// (`PgStore`), one another replica drives, its events read from the
    /// store from the first.
    pub fn run(&self, run_id: &str) -> Option<Run> {
        if let Some(live) = lock(&self.core.runs).get(run_id) {
            return Some(Run {
                id: run_id.to_owned(),
                session_id: live.session_id.clone(),
                events: live.events.clone(),
            });
        }
        let record = self.core.store.run(run_id).ok()??;
        let events = crate::session::run::follow::follow(&self.core.store, run_id)?;
        Some(Run {
            id: run_id.to_owned(),
            session_id: record.session_id,
            events,
        })
    }

    /// Approves a pending write: the run waiting on it goes on. The answer
    /// is stored first, so it holds even if the run resumes only later.
    pub fn approve(&self, run_id: &str, call_id: &str) -> Result<(), SessionError> {
        self.answer(run_id, call_id, true)
    }

    /// Rejects a pending write: the model is told it was declined.
    pub fn reject(&self, run_id: &str, call_id: &str) -> Result<(), SessionError> {
        self.answer(run_id, call_id, false)
    }

    pub(crate) fn answer(
        &self,
        run_id: &str,
        call_id: &str,
        approved: bool,
    ) -> Result<(), SessionError> {
        let state = if approved {
            ApprovalState::Approved
        } else {
            ApprovalState::Rejected
        };
        if !self.core.store.decide_approval(run_id, call_id, state)? {
            return Err(SessionError::NotPending {
                run_id: run_id.to_owned(),
                call_id: call_id.to_owned(),
            });
        }
        self.core
            .approvals
            .notify(&(run_id.to_owned(), call_id.to_owned()), approved);
        Ok(())
    }

    /// The session's plan: writes captured in `plan_collect` mode, in order.
    pub fn plan(&self, session_id: &str) -> Result<Vec<PlanStep>, SessionError> {
        Ok(self.core.store.plan(session_id)?)
    }

    /// Runs the plan's steps in order through the dispatcher, as a run of
    /// its own (tool events, then the settlement). Accepting the plan
    /// approves its writes, so steps run as in `auto` mode: a policy `ask`
    /// still asks and a `deny` still wins. Once the steps have run, the
    /// model, offered no tools, summarises them for the user (`message.*`
    /// events). The plan is then empty.
    pub fn execute_plan(&self, session_id: &str) -> Result<Run, SessionError> {
        let steps = self.core.store.plan(session_id)?;
        if steps.is_empty() {
            return Err(SessionError::EmptyPlan(session_id.to_owned()));
        }
        self.core.store.clear_plan(session_id)?;
        self.start(session_id, RunKind::Plan(steps), None)
    }

    /// Drops the session's plan.
    pub fn discard_plan(&self, session_id: &str) -> Result<(), SessionError> {
        Ok(self.core.store.clear_plan(session_id)?)
    }

    /// Resumes every run the store holds as unfinished, e.g. after a
    /// restart while an approval was pending: a pending approval is asked
    /// again (or, if answered meanwhile, applied), and the run completes.
    pub fn resume(&self) -> Result<Vec<Run>, SessionError> {
        let live: HashMap<String, bool> = lock(&self.core.runs)
            .iter()
            .map(|(id, run)| (id.clone(), !run.events.is_closed()))
            .collect();
        let mut resumed = Vec::new();
        for run in self.core.store.unfinished_runs()? {
            if run.status != RunStatus::Running || live.get(&run.id) == Some(&true) {
                continue;
            }
            // Another replica holds it (or took it first): not ours to run.
            if !self
                .core
                .store
                .claim_run(&run.id, &self.core.run_prefix, self.core.config.lease)?
            {
                continue;
            }
            resumed.push(self.start(&run.session_id, RunKind::Resume, Some(run.id))?);
        }
        Ok(resumed)
    }

    /// Stops every run of this process where it is, as a process that
    /// exits does; what the store holds lets [`resume`](Self::resume)
    /// finish them later.
    pub fn shutdown(&self) {
        if let Some(heartbeat) = lock(&self.core.heartbeat).take() {
            heartbeat.abort();
        }
        let mut runs = lock(&self.core.runs);
        for run in runs.values_mut() {
            if let Some(task) = run.task.take() {
                task.abort();
            }
            run.events.close();
        }
    }
}

impl Sessions {
    /// Renews this replica's leases every third of a lease while it lives,
    /// from the first run on; stopped by [`shutdown`](Self::shutdown).
    fn keep_leases(&self, handle: &tokio::runtime::Handle) {
        let mut heartbeat = lock(&self.core.heartbeat);
        if heartbeat.as_ref().is_some_and(|task| !task.is_finished()) {
            return;
        }
        let core = Arc::downgrade(&self.core);
        let every = self.core.config.lease / 3;
        *heartbeat = Some(handle.spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let Some(core) = core.upgrade() else { return };
                // A failed renewal is tried again at the next tick; leases
                // outlive two missed ones.
                let _ = core.store.renew_leases(&core.run_prefix, core.config.lease);
            }
        }));
    }
}

/// Twice the fewest finished runs this process keeps for [`Sessions::run`]
/// (it keeps as many as may run at once, when that is more); it holds up
/// to three times that many before forgetting the oldest.
const MAX_KEPT_RUNS: usize = 1024;

/// A prefix per `Sessions`, so the run ids of two processes, or of two
/// `Sessions` in one process, sharing a store differ.
fn unique_prefix() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_nanos())
        .unwrap_or_default();
    static PROCESS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    static INSTANCE: AtomicU64 = AtomicU64::new(0);
    let process =
        PROCESS.get_or_init(|| format!("{:x}", (nanos as u64) ^ u64::from(std::process::id())));
    match INSTANCE.fetch_add(1, Ordering::Relaxed) {
        0 => process.clone(),
        instance => format!("{process}.{instance}"),
    }
}
