// One card per tool call, drawn from its events as they stream and from the
// session's history after a reload: the same element either way.

import { el } from "./ui.js";

/** How long a held write waits for an answer, as the server's default. */
const APPROVAL_SECONDS = 60;

const STATUS_TEXT = {
  started: "running",
  executing: "running",
  awaiting: "waiting for approval",
  completed: "done",
  failed: "failed",
  degraded: "degraded",
  rejected: "rejected",
  background: "in the background",
  finished: "done in the background",
};

/** The card of `callId` inside `container`, made on first sight. */
export function cardFor(container, callId, toolKey) {
  let card = container.querySelector(`[data-call-id="${CSS.escape(callId)}"]`);
  if (card) return card;
  card = el("article", { class: "card", "data-call-id": callId, "data-tool": toolKey, "aria-label": `Tool call ${toolKey}` },
    el("header", {},
      el("h4", { class: "label", text: toolKey }),
      el("span", { class: "badge", role: "status" }),
      el("span", { class: "in-plan", text: "In plan", hidden: true })),
    el("p", { class: "tool muted", text: toolKey }),
    el("ul", { class: "progress", "aria-label": "Progress" }),
    el("p", { class: "outcome" }),
    el("div", { class: "approval", hidden: true }),
    el("pre", { class: "payload", hidden: true }));
  container.append(card);
  return card;
}

/** Sets what the card says about where the call is. */
export function setStatus(card, status) {
  card.dataset.status = status;
  card.querySelector(".badge").textContent = STATUS_TEXT[status] ?? status;
}

function setPayload(card, payload) {
  const box = card.querySelector(".payload");
  if (payload === undefined || payload === null) return;
  box.hidden = false;
  box.textContent = JSON.stringify(payload, null, 2);
}

function setDuration(card, ms, text) {
  card.querySelector(".outcome").textContent = `${text} in ${ms} ms`;
}

/** Marks the card as a step of the collected plan (not run yet). */
export function markInPlan(card) {
  card.querySelector(".in-plan").hidden = false;
  card.dataset.inPlan = "true";
}

/**
 * Applies one streamed event to the cards in `container`. `actions` holds
 * `approve(callId)` and `reject(callId)` for a held write.
 */
export function applyEvent(container, name, data, actions) {
  const callId = data.callId ?? data.toolCallId;
  if (!callId) return false;
  const card = cardFor(container, callId, data.toolKey ?? "tool");
  switch (name) {
    case "tool.started":
      card.querySelector(".label").textContent = data.activity?.label ?? data.toolKey;
      setStatus(card, "started");
      clearApproval(card);
      break;
    case "tool.progress":
      card.querySelector(".progress").append(el("li", { text: data.message }));
      break;
    case "tool.completed":
      setStatus(card, "completed");
      setDuration(card, data.executionMs, data.reused ? "reused" : "succeeded");
      setPayload(card, data.card);
      if (data.addedToPlan) markInPlan(card);
      break;
    case "tool.failed":
      setStatus(card, "failed");
      setDuration(card, data.executionMs, `failed: ${data.error?.message ?? data.reason ?? "error"}`);
      break;
    case "tool.degraded":
      setStatus(card, "degraded");
      card.querySelector(".outcome").textContent = `no more tools this run (${data.reason})`;
      break;
    case "tool.approval_required":
      setStatus(card, "awaiting");
      askApproval(card, callId, actions, data.input);
      break;
    case "tool.approval_response":
      clearApproval(card);
      if (!data.approved) setStatus(card, "rejected");
      break;
    case "tool.approval_timeout":
      clearApproval(card);
      setStatus(card, "rejected");
      card.querySelector(".outcome").textContent = `nobody answered in ${Math.round(data.timeoutMs / 1000)} s`;
      break;
    default:
      return false;
  }
  return true;
}

function askApproval(card, callId, actions, input) {
  const box = card.querySelector(".approval");
  const countdown = el("span", { class: "countdown", "aria-live": "off" });
  const approve = el("button", { type: "button", class: "approve", text: "Approve" });
  const reject = el("button", { type: "button", class: "reject secondary", text: "Reject" });
  box.replaceChildren(
    el("p", { text: "This call changes something. Run it with these arguments?" }),
    el("pre", { text: JSON.stringify(input, null, 2) }),
    approve, reject, countdown);
  box.hidden = false;
  const deadline = Date.now() + APPROVAL_SECONDS * 1000;
  const tick = () => {
    const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
    countdown.textContent = `${left} s left`;
    if (left === 0) clearApproval(card);
  };
  tick();
  card.countdown = setInterval(tick, 1000);
  const answer = (act) => async () => {
    approve.disabled = reject.disabled = true;
    try {
      await act(callId);
    } catch (error) {
      approve.disabled = reject.disabled = false;
      throw error;
    }
  };
  approve.addEventListener("click", answer(actions.approve));
  reject.addEventListener("click", answer(actions.reject));
  approve.focus();
}

function clearApproval(card) {
  clearInterval(card.countdown);
  const box = card.querySelector(".approval");
  box.hidden = true;
  box.replaceChildren();
}

/** Draws a call from the session's history (`GET .../messages`). */
export function fromHistory(container, call, tooltips) {
  const card = cardFor(container, call.callId, call.toolKey);
  const summary = call.input?.act_summary;
  card.querySelector(".label").textContent = summary || tooltips[call.toolKey] || call.toolKey;
  setStatus(card, call.status);
  if (call.status === "completed") setDuration(card, call.executionMs, "succeeded");
  if (call.status === "failed") setDuration(card, call.executionMs, "failed");
  setPayload(card, call.card);
  return card;
}
