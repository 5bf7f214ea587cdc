// The person's page: their memories per application, and their allowances, through the
// people routes (/api/v1/...) with their own bearer token. Text is only ever set through
// textContent: a memory is shown as the words it holds, whatever they look like.
"use strict";

(() => {
  const TOKEN = "engram.token";
  const APP = "engram.app";
  const LIMIT = 1000;
  const REFUSED = "The service refused the token: sign in again.";
  const state = { app: null, count: 0, shown: 0 };

  const $ = (id) => document.getElementById(id);

  // An element with attributes, text (through textContent only) and child elements.
  function el(tag, attributes = {}, children = []) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (name === "text") node.textContent = value;
      else node.setAttribute(name, value);
    }
    for (const child of children) node.appendChild(child);
    return node;
  }

  function button(text, onClick) {
    const node = el("button", { type: "button", text });
    node.addEventListener("click", onClick);
    return node;
  }

  // -- the token: from #token= (then gone from the address and history), or pasted ----
  function takeFromAddress() {
    if (!location.hash) return;
    const said = new URLSearchParams(location.hash.slice(1));
    history.replaceState(null, "", location.pathname + location.search);
    if (said.get("token")) sessionStorage.setItem(TOKEN, said.get("token"));
    if (said.get("app")) sessionStorage.setItem(APP, said.get("app"));
  }

  async function call(method, path, body) {
    const headers = { authorization: `Bearer ${sessionStorage.getItem(TOKEN) || ""}` };
    const init = { method, headers, credentials: "omit", cache: "no-store" };
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(`../api/v1${path}`, init);
    } catch {
      return { status: 0, data: null };
    }
    let data = null;
    if (response.status !== 204) data = await response.json().catch(() => null);
    if (response.status === 401) signOut(REFUSED);
    return { status: response.status, data };
  }

  function problem(answer) {
    if (answer.status === 0) return "The service did not answer.";
    if (answer.status === 401) return REFUSED;
    const error = answer.data && answer.data.error;
    return error && error.message ? error.message : `The service answered ${answer.status}.`;
  }

  function say(text) {
    $("message").textContent = text;
  }

  function signedIn(yes) {
    $("sign-in").hidden = yes;
    $("signed-in").hidden = !yes;
    $("whoami").hidden = !yes;
  }

  function signOut(why) {
    sessionStorage.removeItem(TOKEN);
    sessionStorage.removeItem(APP);
    signedIn(false);
    $("memories-section").hidden = true;
    say(why);
    $("token").focus();
  }

  // -- the applications that remember the person -----------------------------------------
  async function showApps() {
    const answer = await call("GET", "/apps");
    if (answer.status !== 200) return;
    const items = answer.data.apps.map((found) => {
      const count = found.count.toLocaleString("en-US");
      const open = button(`${found.app} (${count})`, async () => {
        $("app").value = found.app;
        if (await showApp(found.app)) $("memories-title").focus();
      });
      return el("li", {}, [open]);
    });
    $("apps").replaceChildren(...items);
    $("apps-none").hidden = items.length > 0;
  }

  // -- an application's memories --------------------------------------------------------
  async function showApp(app) {
    const answer = await call("GET", `/apps/memories/${encodeURIComponent(app)}?limit=${LIMIT}`);
    if (answer.status !== 200) {
      say(problem(answer));
      return false;
    }
    sessionStorage.setItem(APP, app);
    state.app = answer.data.app;
    state.count = answer.data.count;
    state.shown = answer.data.memories.length;
    $("memories-title").textContent = `What ${state.app} remembers of you`;
    $("memories").replaceChildren(...answer.data.memories.map(memoryItem));
    $("memories-section").hidden = false;
    closeForgetAll();
    showCount();
    return true;
  }

  function showCount() {
    const number = (n) => n.toLocaleString("en-US");
    $("count").textContent = `showing ${number(state.shown)} of ${number(state.count)}`;
    $("forget-all").disabled = state.count === 0;
  }

  function memoryPath(id) {
    return `/apps/memories/${encodeURIComponent(state.app)}/${encodeURIComponent(id)}`;
  }

  function memoryItem(memory) {
    const words = el("p", { class: "words", id: `words-${memory.id}`, text: memory.memory });
    const when = el("p", { class: "when", text: describe(memory) });
    const error = el("p", { class: "error", role: "alert" });
    const item = el("li", { "data-id": memory.id }, [words, when, error]);
    const actions = el("p", { class: "actions" }, [
      button("Correct", () => openEditor(item, memory, words, when, error)),
      button("Forget", () => askForget(item, memory, error)),
    ]);
    for (const action of actions.children) action.setAttribute("aria-describedby", words.id);
    item.insertBefore(actions, error);
    return item;
  }

  function describe(memory) {
    const learned = `learned ${new Date(memory.created_at).toLocaleString()}`;
    if (!memory.corrected_at) return learned;
    return `${learned}, corrected ${new Date(memory.corrected_at).toLocaleString()}`;
  }

  function openEditor(item, memory, words, when, error) {
    const id = `edit-${memory.id}`;
    const field = el("textarea", { id, rows: "3", maxlength: "4000" });
    field.value = memory.memory;
    const editor = el("form", { class: "editor" }, [
      el("label", { for: id, text: "Its words" }),
      field,
      el("button", { type: "submit", text: "Save" }),
    ]);
    const actions = item.querySelector(".actions");
    const cancel = () => {
      editor.remove();
      actions.hidden = false;
      error.textContent = "";
      actions.querySelector("button").focus();
    };
    editor.appendChild(button("Cancel", cancel));
    editor.addEventListener("submit", async (event) => {
      event.preventDefault();
      const answer = await call("PATCH", memoryPath(memory.id), { memory: field.value });
      if (answer.status !== 200) {
        error.textContent = problem(answer);
        field.focus();
        return;
      }
      Object.assign(memory, answer.data.memory);
      words.textContent = memory.memory;
      when.textContent = describe(memory);
      cancel();
    });
    actions.hidden = true;
    error.textContent = "";
    item.insertBefore(editor, error);
    field.focus();
  }

  function askForget(item, memory, error) {
    const actions = item.querySelector(".actions");
    const asked = "Forget this for good? It cannot be brought back.";
    const question = el("p", { class: "confirm" }, [el("span", { text: asked })]);
    const back = () => {
      question.remove();
      actions.hidden = false;
      actions.querySelectorAll("button")[1].focus();
    };
    const yes = button("Yes, forget it", async () => {
      const answer = await call("DELETE", memoryPath(memory.id));
      if (answer.status !== 200) {
        error.textContent = problem(answer);
        back();
        return;
      }
      const next = item.nextElementSibling || item.previousElementSibling;
      item.remove();
      state.count -= 1;
      state.shown -= 1;
      showCount();
      showApps();
      (next ? next.querySelector("button") : $("memories-title")).focus();
    });
    question.append(yes, button("Cancel", back));
    actions.hidden = true;
    item.insertBefore(question, error);
    yes.focus();
  }

  // -- forget all: the count confirmed is the count shown; more now is a 409 --------------
  function askForgetAll() {
    const confirmed = state.count;
    $("forget-all-question").textContent =
      `Forget all ${confirmed.toLocaleString("en-US")} memories ${state.app} keeps of you, ` +
      "for good? They cannot be brought back.";
    $("forget-all-yes").textContent = `Yes, forget all ${confirmed.toLocaleString("en-US")}`;
    $("forget-all-yes").dataset.count = String(confirmed);
    $("forget-all-yes").disabled = false;
    tell("");
    $("forget-all").hidden = true;
    $("forget-all-confirm").hidden = false;
    $("forget-all-yes").focus();
  }

  function closeForgetAll() {
    $("forget-all-confirm").hidden = true;
    $("forget-all").hidden = false;
  }

  async function forgetAll() {
    const count = $("forget-all-yes").dataset.count;
    $("forget-all-yes").disabled = true; // once: a second press would confirm nothing new
    const path = `/apps/memories/${encodeURIComponent(state.app)}?count=${count}`;
    const answer = await call("DELETE", path);
    const done = answer.status === 200;
    let told;
    if (done) {
      told = `Forgot ${answer.data.forgotten.toLocaleString("en-US")}, for good.`;
    } else if (answer.status === 409) {
      told = "There are more now: nothing was forgotten. Look at them again before you forget all.";
    } else {
      told = problem(answer);
    }
    await showApp(state.app);
    await showApps();
    tell(told, done);
    // The button is disabled once nothing is left: focus stays in the section, on its title.
    ($("forget-all").disabled ? $("memories-title") : $("forget-all")).focus();
  }

  // What forgetting all did: a success (a status) apart from a refusal (an alert).
  function tell(text, done = false) {
    $("forget-all-done").textContent = done ? text : "";
    $("forget-all-message").textContent = done ? "" : text;
  }

  // -- allowances ---------------------------------------------------------------------------
  async function showShares() {
    const answer = await call("GET", "/memory-shares");
    if (answer.status !== 200) {
      $("share-error").textContent = problem(answer);
      return;
    }
    $("shares").replaceChildren(...answer.data.shares.map(shareItem));
  }

  function shareItem(share) {
    const since = new Date(share.allowed_at).toLocaleString();
    const text = `${share.reader} reads what ${share.source} remembers of you (since ${since})`;
    const stop = button("Stop", async () => {
      const query = new URLSearchParams({ source: share.source, reader: share.reader });
      const answer = await call("DELETE", `/memory-shares?${query}`);
      $("share-error").textContent = answer.status === 204 ? "" : problem(answer);
      await showShares();
      $("shares-title").focus();
    });
    stop.setAttribute("aria-label", `Stop: ${text}`);
    return el("li", {}, [el("span", { text }), stop]);
  }

  async function allow(event) {
    event.preventDefault();
    const body = { source: $("share-source").value.trim(), reader: $("share-reader").value.trim() };
    const answer = await call("PUT", "/memory-shares", body);
    if (answer.status !== 200) {
      $("share-error").textContent = problem(answer);
      return;
    }
    $("share-error").textContent = "";
    $("share-source").value = "";
    $("share-reader").value = "";
    await showShares();
  }

  // -- start ----------------------------------------------------------------------------------
  async function start() {
    say("");
    signedIn(true);
    await showShares();
    if (!sessionStorage.getItem(TOKEN)) return; // refused: signed out
    await showApps();
    const app = sessionStorage.getItem(APP);
    if (app) {
      $("app").value = app;
      await showApp(app);
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    takeFromAddress();
    $("token-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const token = $("token").value.trim();
      $("token").value = "";
      if (!token) return;
      sessionStorage.setItem(TOKEN, token);
      start();
    });
    $("sign-out").addEventListener("click", () => signOut("Signed out."));
    $("app-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const app = $("app").value.trim();
      if (app) showApp(app);
    });
    $("forget-all").addEventListener("click", askForgetAll);
    $("forget-all-no").addEventListener("click", () => {
      closeForgetAll();
      $("forget-all").focus();
    });
    $("forget-all-yes").addEventListener("click", forgetAll);
    $("share-form").addEventListener("submit", allow);
    // A #token= link opened in a tab already on this page: taken, and gone from the address.
    window.addEventListener("hashchange", () => {
      if (!location.hash) return;
      takeFromAddress();
      if (sessionStorage.getItem(TOKEN)) start();
    });
    if (sessionStorage.getItem(TOKEN)) start();
    else signOut("");
  });
})();
