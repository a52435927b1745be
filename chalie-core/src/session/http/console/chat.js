// The Chat view: the signed-in user's sessions, a conversation whose reply
// streams token by token, a card per tool call, approvals, the mode and the
// collected plan.

import { request, stream } from "./api.js";
import { applyEvent, fromHistory, markInPlan } from "./cards.js";
import { $, announce, el, problem } from "./ui.js";

let current = null; // the open session's id
let tooltips = null; // tool name -> tooltip, for cards rebuilt from history
const following = new Map(); // run id -> AbortController of its stream

const actions = {
  approve: (callId) => answer(callId, "approve"),
  reject: (callId) => answer(callId, "reject"),
};

async function answer(callId, verdict) {
  const card = document.querySelector(`#messages [data-call-id="${CSS.escape(callId)}"]`);
  const runId = card.closest("[data-run-id]").dataset.runId;
  try {
    await request("POST", `/runs/${enc(runId)}/tools/${enc(callId)}/${verdict}`);
    announce(`${verdict === "approve" ? "Approved" : "Rejected"} ${card.dataset.tool}`);
  } catch (error) {
    problem(error);
    throw error;
  }
}

const enc = encodeURIComponent;

export function init() {
  $("new-session").addEventListener("click", () => newSession().catch(problem));
  $("mode").addEventListener("change", () => setMode($("mode").value).catch(problem));
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    send().catch(problem);
  });
  $("message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      $("composer").requestSubmit();
    }
  });
  $("plan-execute").addEventListener("click", () => executePlan().catch(problem));
  $("plan-discard").addEventListener("click", () => discardPlan().catch(problem));
}

export async function open() {
  if (!tooltips) {
    const { tools } = await request("GET", "/tools").catch(() => ({ tools: [] }));
    tooltips = Object.fromEntries(tools.map((tool) => [tool.name, tool.tooltip]));
  }
  const sessions = await listSessions();
  const wanted = sessionStorage.getItem("chalie.session");
  const pick = sessions.find((s) => s.id === wanted) ?? sessions[0];
  if (pick) await select(pick.id, pick.mode);
}

async function listSessions() {
  const { sessions } = await request("GET", "/sessions");
  const list = $("sessions");
  list.replaceChildren(...sessions.map((session) => {
    const button = el("button", { type: "button", class: "session", "data-session-id": session.id,
      "aria-current": session.id === current ? "true" : false, text: `${session.id} (${session.mode})` });
    button.addEventListener("click", () => select(session.id, session.mode).catch(problem));
    return el("li", {}, button);
  }));
  return sessions;
}

async function newSession() {
  const session = await request("POST", "/sessions", {});
  await listSessions();
  await select(session.id, session.mode);
  announce("New session opened");
}

async function select(id, mode) {
  for (const controller of following.values()) controller.abort();
  following.clear();
  current = id;
  sessionStorage.setItem("chalie.session", id);
  $("session-id").textContent = id;
  $("mode").value = mode;
  $("mode").disabled = false;
  $("send").disabled = false;
  for (const button of document.querySelectorAll("#sessions .session")) {
    if (button.dataset.sessionId === id) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
  }
  await rebuild();
}

/** Redraws the conversation and every card from the session's history. */
async function rebuild() {
  const id = current;
  const [{ messages }, steps] = await Promise.all([
    request("GET", `/sessions/${enc(id)}/messages`),
    planSteps(id),
  ]);
  if (id !== current) return;
  const list = $("messages");
  list.replaceChildren();
  for (const message of messages) {
    if (message.role === "user") {
      list.append(el("li", { class: "message user", "data-run-id": message.runId }, el("p", { text: message.content })));
      continue;
    }
    const item = turn(message.runId);
    for (const call of message.toolCalls) fromHistory(item.querySelector(".cards"), call, tooltips);
    if (message.content) item.querySelector(".text").append(el("p", { text: message.content }));
  }
  showPlan(steps);
  // A run still going when the page loaded: follow it from its first event.
  const last = messages.at(-1);
  const unfinished = last && (last.role === "user" ||
    last.toolCalls.some((call) => call.status === "started" || call.status === "executing"));
  if (unfinished) follow(last.runId, true);
}

/** The assistant's item for `runId`: the last one, or a new one. */
function turn(runId, fresh = false) {
  const items = $("messages").querySelectorAll(`li.assistant[data-run-id="${CSS.escape(runId)}"]`);
  if (items.length && !fresh) return items[items.length - 1];
  const item = el("li", { class: "message assistant", "data-run-id": runId },
    el("div", { class: "cards" }), el("div", { class: "text" }));
  $("messages").append(item);
  return item;
}

async function send() {
  const content = $("message").value.trim();
  if (!content || !current) return;
  const { runId } = await request("POST", `/sessions/${enc(current)}/messages`, { content });
  $("message").value = "";
  $("messages").append(el("li", { class: "message user", "data-run-id": runId }, el("p", { text: content })));
  follow(runId, false);
}

/**
 * Streams a run's events into its turn. `replay`: the stream starts from the
 * run's first event, so what history drew for the run is drawn again.
 */
function follow(runId, replay) {
  if (following.has(runId)) return;
  const controller = new AbortController();
  following.set(runId, controller);
  if (replay) {
    for (const item of $("messages").querySelectorAll(`li.assistant[data-run-id="${CSS.escape(runId)}"]`)) item.remove();
  }
  const item = turn(runId, true);
  item.setAttribute("aria-busy", "true");
  // One paragraph per model message: deltas grow the open one, which a
  // tool call or `message.completed` closes and `message.discarded` empties.
  let open = null;
  const paragraph = () => {
    if (!open) {
      open = el("p", { class: "streaming" });
      item.querySelector(".text").append(open);
    }
    return open;
  };
  const onEvent = (name, data) => {
    if (applyEvent(item.querySelector(".cards"), name, data, actions)) {
      open = null; // the message that called the tool said all it will
      if (name === "tool.approval_required") announce(`${data.toolKey} waits for your approval`);
      return;
    }
    if (name === "message.delta") paragraph().textContent += data.delta;
    else if (name === "message.discarded") paragraph().textContent = "";
    else if (name === "message.completed") {
      if (open || data.content) paragraph().textContent = data.content;
      open?.classList.remove("streaming");
      open = null;
    }
    else if (name === "run.failed") problem(new Error(`The run failed: ${data.error?.message ?? "see the server log"}`));
    else if (name === "plan.step_added") announce(`Step ${data.stepIndex + 1} added to the plan`);
  };
  stream(`/runs/${enc(runId)}/events`, onEvent, controller.signal)
    .catch((error) => { if (error.name !== "AbortError") problem(error); })
    .finally(async () => {
      item.removeAttribute("aria-busy");
      item.dataset.done = "true";
      if (following.get(runId) === controller) following.delete(runId);
      if (!controller.signal.aborted) {
        announce("The reply is complete");
        showPlan(await planSteps(current));
      }
    });
}

async function setMode(mode) {
  const session = await request("PATCH", `/sessions/${enc(current)}`, { mode });
  $("mode").value = session.mode;
  await listSessions();
  announce(`Mode: ${session.mode}`);
}

async function planSteps(id) {
  try {
    const { steps } = await request("GET", `/sessions/${enc(id)}/plan`);
    return steps;
  } catch (error) {
    if (error.status === 404 || error.status === 409) return [];
    throw error;
  }
}

function showPlan(steps) {
  $("plan").hidden = steps.length === 0;
  $("plan-steps").replaceChildren(...steps.map((step) => el("li", { "data-step-call-id": step.callId },
    el("code", { text: step.tool }), " ", el("span", { class: "muted", text: JSON.stringify(step.input) }))));
  for (const step of steps) {
    const card = document.querySelector(`#messages [data-call-id="${CSS.escape(step.callId)}"]`);
    if (card) markInPlan(card);
  }
}

async function executePlan() {
  const { runId } = await request("POST", `/sessions/${enc(current)}/plan/execute`);
  showPlan([]);
  announce("Executing the plan");
  follow(runId, false);
}

async function discardPlan() {
  await request("DELETE", `/sessions/${enc(current)}/plan`);
  showPlan([]);
  for (const badge of document.querySelectorAll("#messages .in-plan")) badge.hidden = true;
  announce("Plan discarded");
}
