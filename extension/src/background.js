/* Centrum background (Chromium service worker / Firefox background script).
 *
 * The toolbar button (or its keyboard command) cycles: 1st press collects a snapshot of the page (collect.js), asks
 * the native host for the main content and highlights it; 2nd press shows the reader view; 3rd press restores the
 * page. Nothing is injected before the first press (activeTab grants access to the tab only then). The stage lives
 * in the page (view.js), not here: a Chromium service worker may be stopped between presses.
 */
"use strict";

if (typeof importScripts === "function" && typeof CentrumHostPort === "undefined") {
  importScripts("messaging.js"); // Chromium service worker; Firefox lists messaging.js before this script
}

const api = globalThis.browser ?? globalThis.chrome;
const HOST_NAME = "org.centrum.host";
const host = new CentrumHostPort(HOST_NAME);
const busyTabs = new Set();
let hostInfo = null; // {default, needsSource: {name: bool}} from the host, asked once per background lifetime

async function settings() {
  // Options the debugger panel (later issue) writes; defaults keep the host's own default algorithm.
  const stored = await api.storage.local.get({ algorithm: "", params: null, timeoutMs: 120000, maxRequestBytes: 0 });
  return stored;
}

async function getHostInfo(timeoutMs) {
  if (hostInfo) return hostInfo;
  const ping = await host.request("ping", {}, timeoutMs);
  hostInfo = { default: ping.default, algorithms: ping.algorithms, needsSource: ping.needs_source || {} };
  return hostInfo;
}

async function inPage(tabId, func, ...args) {
  const [first] = await api.scripting.executeScript({ target: { tabId }, func, args });
  return first ? first.result : undefined;
}

function view(tabId, action, arg = null) {
  return inPage(tabId, (a, x) => globalThis.centrumView[a](x), action, arg);
}

async function start(tabId) {
  await api.scripting.insertCSS({ target: { tabId }, files: ["src/ui.css"] });
  await api.scripting.executeScript({ target: { tabId }, files: ["src/collect.js", "src/view.js"] });
  await view(tabId, "busy");
  try {
    const opts = await settings();
    const info = await getHostInfo(opts.timeoutMs);
    const algorithm = opts.algorithm || info.default;
    const snapshot = await inPage(tabId, (o) => globalThis.centrumCollect(o), { source: Boolean(info.needsSource[algorithm]) });
    const request = { algorithm, snapshot, debug: false };
    if (opts.params) request.params = opts.params;
    const result = await host.request("extract", request, opts.timeoutMs, opts.maxRequestBytes);
    return await view(tabId, "highlight", {
      algorithm: result.algorithm, nodes: result.nodes, text: result.text, message: result.message,
      timing_ms: result.timing_ms,
    });
  } catch (e) {
    const error = { code: e.code || "E_INTERNAL", message: e.message || String(e) };
    if (e.field) error.field = e.field;
    console.warn("Centrum:", error.code, error.message);
    return await view(tabId, "error", error);
  }
}

async function currentStage(tabId) {
  // Right after the browser starts, the first press can run before the click's activeTab grant is in effect
  // (seen in Chromium 156 with a cold service worker): retry briefly before giving up.
  for (let attempt = 0; ; attempt++) {
    try {
      return await inPage(tabId, () => (globalThis.centrumView ? globalThis.centrumView.stage : "none"));
    } catch (e) {
      if (attempt >= 4) throw e;
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
    }
  }
}

/* One press of the button on `tab`. Returns what the page-side view reports (used by the end-to-end tests). */
async function press(tab) {
  const tabId = tab.id;
  if (busyTabs.has(tabId)) return { stage: "busy" };
  busyTabs.add(tabId);
  try {
    let stage;
    try {
      stage = await currentStage(tabId);
    } catch (e) {
      // about:, the web store, PDF viewers...: the browser does not let extensions script them.
      console.warn("Centrum cannot run on this page:", e.message);
      return { stage: "unavailable", error: { code: "E_PAGE", message: e.message } };
    }
    if (stage === "highlight") return await view(tabId, "reader");
    if (stage === "reader") {
      const out = await view(tabId, "restore");
      await api.scripting.removeCSS({ target: { tabId }, files: ["src/ui.css"] });
      return out;
    }
    if (stage === "message") {
      // An error or "nothing found" is on screen: this press clears it and tries again.
      await view(tabId, "restore");
      await api.scripting.removeCSS({ target: { tabId }, files: ["src/ui.css"] });
    }
    return await start(tabId);
  } finally {
    busyTabs.delete(tabId);
  }
}

api.action.onClicked.addListener((tab) => {
  press(tab).catch((e) => console.error("Centrum:", e));
});

// The extension's own content scripts may ask for a press of their tab (no page can: runtime messages only come
// from the extension itself). Used by the Firefox end-to-end harness, where no toolbar can be clicked.
api.runtime.onMessage.addListener((message, sender, sendResponse) => {
  if (!message || message.type !== "centrum.press" || !sender.tab || sender.id !== api.runtime.id) return false;
  press(sender.tab).then(sendResponse, (e) => sendResponse({ error: { code: "E_INTERNAL", message: String(e) } }));
  return true;
});

globalThis.centrumPress = press;
