// Sign-in and the three views, chosen by the address's hash (#chat,
// #policy, #tools) so the browser's back button and reload keep the view.

import { request, setToken, token } from "./api.js";
import * as chat from "./chat.js";
import * as policy from "./policy.js";
import * as tools from "./tools.js";

import { $, problem } from "./ui.js";

const views = { chat, policy, tools };

async function signIn(value) {
  setToken(value);
  try {
    const me = await request("GET", "/me");
    $("principal").textContent = `Signed in as ${me.principal}`;
    $("who").hidden = false;
    $("views").hidden = false;
    $("sign-in").hidden = true;
    problem(null);
    await show();
  } catch (error) {
    setToken(null);
    problem(error.status === 401 ? new Error("That token was refused; check it and try again.") : error);
  }
}

function signOut() {
  setToken(null);
  location.hash = "";
  location.reload();
}

async function show() {
  if (!token()) return;
  const name = location.hash.slice(1) in views ? location.hash.slice(1) : "chat";
  for (const view of Object.keys(views)) {
    $(view).hidden = view !== name;
    const link = $(`nav-${view}`);
    if (view === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  try {
    await views[name].open();
  } catch (error) {
    problem(error);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("sign-in-form").addEventListener("submit", (event) => {
    event.preventDefault();
    signIn($("token").value.trim());
  });
  $("sign-out").addEventListener("click", signOut);
  window.addEventListener("hashchange", show);
  for (const view of Object.values(views)) view.init();
  if (token()) signIn(token());
  else $("token").focus();
});
