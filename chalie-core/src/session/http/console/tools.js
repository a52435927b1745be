// The Tools view: each ability's five descriptors (name, summary, tooltip,
// examples, effect), its definition as each provider receives it with its
// token count, and the discovery playground.

import { request } from "./api.js";
import { $, announce, el, problem } from "./ui.js";

let loaded = false;

export function init() {
  $("discover-form").addEventListener("submit", (event) => {
    event.preventDefault();
    discover($("discover-q").value.trim()).catch(problem);
  });
}

export async function open() {
  if (loaded) return;
  const { tools, encoding } = await request("GET", "/tools");
  $("tools-encoding").textContent = encoding
    ? `Token counts in ${encoding}, of the definition as sent (compact JSON).`
    : "This app counts no tokens (no counter was given to the API).";
  $("tool-list").replaceChildren(...tools.map(tool));
  loaded = true;
}

function tool(ability) {
  const providers = Object.entries(ability.providers);
  return el("article", { class: "tool-entry", "data-tool": ability.name, "aria-labelledby": `tool-${ability.name}` },
    el("h3", { id: `tool-${ability.name}` }, el("code", { text: ability.name }), " ",
      el("span", { class: `badge effect-${ability.effect}`, text: ability.effect })),
    el("dl", {},
      el("dt", { text: "Summary" }), el("dd", { text: ability.summary }),
      el("dt", { text: "Tooltip" }), el("dd", { text: ability.tooltip || "—" }),
      el("dt", { text: "Examples" }), el("dd", {}, el("ul", {}, ...ability.examples.map((e) => el("li", { text: e }))))),
    el("table", { class: "tokens" },
      el("caption", { text: "Definition per provider" }),
      el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Provider" }), el("th", { scope: "col", text: "Tokens" }))),
      el("tbody", {}, ...providers.map(([name, p]) => el("tr", { "data-provider": name },
        el("th", { scope: "row", text: name }), el("td", { class: "count", text: p.tokens ?? "—" }))))),
    ...providers.map(([name, p]) => el("details", {},
      el("summary", { text: `${name} definition` }),
      el("pre", { text: JSON.stringify(p.definition, null, 2) }))));
}

async function discover(query) {
  if (!query) return;
  const report = await request("GET", `/tools/discover?q=${encodeURIComponent(query)}`);
  const box = $("discover-result");
  box.replaceChildren(
    el("p", {}, "Ceiling: ", el("strong", { text: report.ceiling })),
    el("p", { class: "activated" }, "find_tools would activate: ",
      el("strong", { text: report.activated.length ? report.activated.join(", ") : "nothing" }),
      report.suggested.length ? ` — and suggest ${report.suggested.join(", ")}` : ""),
    ...report.rungs.map(rung));
  announce(`Discovery: ${report.activated.length} tool(s) would be activated`);
}

function rung(report) {
  const rows = report.candidates.map((c) => el("tr", { "data-candidate": c.name, class: c.activated ? "activated" : "" },
    el("th", { scope: "row", text: c.name }),
    el("td", { text: c.score === null ? "—" : c.score.toFixed(3) }),
    el("td", { text: c.ceiling === null ? "—" : c.ceiling.toFixed(3) }),
    el("td", { text: c.passes ? "yes" : "no" }),
    el("td", { text: c.activated ? "yes" : "no" })));
  return el("section", { class: "rung", "data-rung": report.rung },
    el("h4", { text: `Rung: ${report.rung}` }),
    rows.length === 0 ? el("p", { class: "muted", text: "no candidates" }) :
      el("div", { class: "scroll" }, el("table", {},
        el("thead", {}, el("tr", {}, ...["Candidate", "Score", "Ceiling", "Passes", "Activated"].map((h) => el("th", { scope: "col", text: h })))),
        el("tbody", {}, ...rows))));
}
