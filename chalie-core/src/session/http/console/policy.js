// The Policy view: every permission on every channel as allow / ask / deny,
// changed one cell at a time with PUT /policy. `internal` (and any cell the
// server marks not editable) is shown, never offered for change.

import { request } from "./api.js";
import { $, announce, el, problem } from "./ui.js";

const SETTINGS = ["allow", "ask", "deny"];

export function init() {}

export async function open() {
  const { channels, permissions, mayChange } = await request("GET", "/policy");
  // Who may not change the policy still reads it: every cell fixed.
  const fixed = mayChange === false;
  const table = $("policy-table");
  table.tHead.replaceChildren(el("tr", {}, el("th", { scope: "col", text: "Permission" }),
    ...channels.map((channel) => el("th", { scope: "col", text: channel }))));
  table.tBodies[0].replaceChildren(...permissions.map((row) => el("tr", { "data-permission": row.permission },
    el("th", { scope: "row", text: row.permission }),
    ...channels.map((channel) => cell(row.permission, channel, row.settings[channel], fixed)))));
}

function cell(permission, channel, setting, fixed) {
  const td = el("td", { "data-channel": channel });
  if (!setting) return td;
  const source = setting.source ? ` (${setting.source})` : "";
  if (!setting.editable || fixed) {
    td.append(el("span", { class: "fixed", text: setting.setting }), el("span", { class: "muted", text: source }));
    return td;
  }
  const id = `policy-${permission}-${channel}`.replace(/[^A-Za-z0-9_-]/g, "_");
  const select = el("select", { id, "aria-label": `${permission} on ${channel}` },
    ...SETTINGS.map((value) => el("option", { value, text: value, selected: value === setting.setting })));
  select.addEventListener("change", () => change(select, permission, channel, setting.setting));
  td.append(select, el("span", { class: "muted source", text: source }));
  return td;
}

async function change(select, permission, channel, before) {
  select.disabled = true;
  try {
    const row = await request("PUT", "/policy", { permission, channel, setting: select.value });
    const now = row.settings?.[channel] ?? { setting: select.value, source: "explicit" };
    select.value = now.setting;
    select.nextSibling.textContent = now.source ? ` (${now.source})` : "";
    announce(`${permission} on ${channel}: ${now.setting}`);
    problem(null);
  } catch (error) {
    select.value = before;
    problem(error);
  } finally {
    select.disabled = false;
  }
}
