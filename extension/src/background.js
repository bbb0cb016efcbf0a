/* Centrum background (Chromium service worker / Firefox background script).
 *
 * The toolbar button (or its keyboard command) cycles: 1st press collects a snapshot of the page (collect.js), asks
 * the native host for the main content and highlights it; 2nd press shows the reader view; 3rd press restores the
 * page. Nothing is injected before the first press (activeTab grants access to the tab only then). The stage lives
 * in the page (view.js), not here: a Chromium service worker may be stopped between presses.
 */
"use strict";

if (typeof importScripts === "function" && typeof CentrumHostPort === "undefined") {
  // Chromium service worker; Firefox lists these before this script in the manifest
  importScripts("messaging.js", "settings.js", "campaign.js");
}
const SETTINGS = globalThis[Symbol.for("centrum.settings")];

const api = globalThis.browser ?? globalThis.chrome;
const HOST_NAME = "org.centrum.host";
const host = new CentrumHostPort(HOST_NAME);
const busyTabs = new Set();
let hostInfo = null; // {default, needsSource: {name: bool}} from the host, asked once per background lifetime

/* The stored options (options page, reader toolbar), checked, with defaults (settings.js). */
function settings() {
  return SETTINGS.load(api.storage.local);
}

async function ping(timeoutMs) {
  const answer = await host.request("ping", {}, timeoutMs);
  hostInfo = { default: answer.default, algorithms: answer.algorithms, needsSource: answer.needs_source || {} };
  return hostInfo;
}

async function getHostInfo(timeoutMs) {
  return hostInfo || ping(timeoutMs);
}

/* The host starts with the background, not with the first press: its first ping makes it import and warm the
   default algorithm (PROTOCOL.md "Warm-up") while nobody waits, so the first press costs what a later one does
   (docs/speed.md). Nothing is injected into any page for it; the open port keeps the host (and the Chromium
   service worker) alive. A host that is not installed is reported by the first press, as before. */
async function warmHost() {
  try {
    return await ping((await settings()).timeoutMs);
  } catch (e) {
    return { error: errorOf(e) };
  }
}

async function inPage(tabId, func, ...args) {
  const [first] = await api.scripting.executeScript({ target: { tabId }, func, args });
  return first ? first.result : undefined;
}

// The page-side view is registered under a symbol in the content scripts' world (view.js): never under a window
// name that an element id on the page could shadow.
function view(tabId, action, arg = null) {
  return inPage(tabId, (a, x) => globalThis[Symbol.for("centrum.view")][a](x), action, arg);
}

// The page-side scripts, in order: the collector, the cleaner, the shared UI, one module per mode, the view.
const PAGE_SCRIPTS = ["src/collect.js", "src/pack.js", "src/settings.js", "src/clean.js", "src/readerview.js", "src/modes/ui.js", "src/modes/highlight.js",
  "src/modes/reader.js", "src/modes/debugger.js", "src/modes/annotator.js", "src/view.js"];

async function inject(tabId, css = true) {
  if (css) await api.scripting.insertCSS({ target: { tabId }, files: ["src/ui.css"] });
  await api.scripting.executeScript({ target: { tabId }, files: PAGE_SCRIPTS });
}

// The last snapshot of each tab, kept so that the debugger re-runs an algorithm with new parameters on exactly what
// it analysed before (no new collection). Lost if the browser stops the background; then the page is re-collected.
const snapshots = new Map();
api.tabs.onRemoved.addListener((tabId) => snapshots.delete(tabId));

// Tabs whose kept snapshot is the press profile (pack.js: without the `unseen` judgement the reader's outputs read).
const pressProfile = new Set();
api.tabs.onRemoved.addListener((tabId) => pressProfile.delete(tabId));

/* `packed`: the snapshot comes as one string (pack.js), for a request to the host; the debugger and the annotator
   read the snapshot itself. `press`: the press profile (pack.js), what the algorithms read and no more. */
async function collect(tabId, source, packed = false, press = false) {
  const how = { press, form: globalThis.centrumBenchTransfer || undefined }; // the form: `centrum bench` compares
  const snapshot = packed
    ? await inPage(tabId, (o, h) => globalThis[Symbol.for("centrum.pack")].collect(o, h), { source }, how)
    : await inPage(tabId, (o) => globalThis.centrumCollect(o), { source });
  snapshots.set(tabId, snapshot);
  if (packed && press) pressProfile.add(tabId);
  else pressProfile.delete(tabId);
  return snapshot;
}

function errorOf(e) {
  const error = { code: e.code || "E_INTERNAL", message: e.message || String(e) };
  if (e.field) error.field = e.field;
  return error;
}

async function start(tabId) {
  // The host is asked first, while the scripts are injected and the page collected: a host that was not running
  // starts meanwhile, and warms its default algorithm once it has answered the ping (PROTOCOL.md "Warm-up").
  const optsAsked = settings();
  const infoAsked = optsAsked.then((o) => getHostInfo(o.timeoutMs));
  infoAsked.catch(() => {}); // answered below, after the busy toast is shown
  await inject(tabId);
  await view(tabId, "busy");
  try {
    const opts = await optsAsked;
    const info = await infoAsked;
    const algorithm = opts.algorithm || info.default;
    // The press profile (pack.js): the page's HTML only when the algorithm reads it; the reader's byline, site, date,
    // Markdown and HTML come from the full collection made when the reader opens (readerOutputs).
    // Models named in the parameters may read the source where the default models do not: collected then too.
    const custom = Boolean(opts.params && (opts.params.weights || opts.params.block_weights));
    const snapshot = await collect(tabId, Boolean(info.needsSource[algorithm]) || custom, true, true);
    // The answer's text (as long as the article) is asked for only when none of the answer's elements can be shown
    // in the page: the highlight reads it in that case only (modes/highlight.js), and on a large page it is most of
    // the answer, which the browser reads from the host's pipe and hands on to the page.
    const request = { algorithm, snapshot, debug: false, text: false };
    if (opts.params) request.params = opts.params;
    const result = await host.request("extract", request, opts.timeoutMs, opts.maxRequestBytes);
    const shown = {
      algorithm: result.algorithm, nodes: result.nodes, message: result.message, timing_ms: result.timing_ms,
      page: typeof result.page === "string" ? result.page : null,
      disclosed: Array.isArray(result.disclosed) ? result.disclosed : [],
      // The comment sections the answer set aside (absent from hosts before it: PROTOCOL.md "Comments").
      comments: result.comments && typeof result.comments === "object" ? result.comments : null,
      hasText: result.text_chars > 0 || (typeof result.text === "string" && result.text !== ""),
    };
    const out = await view(tabId, "highlight", shown);
    return out && out.needsText ? await view(tabId, "highlight", { ...shown, text: await answerText(result, opts) })
      : out;
  } catch (e) {
    const error = errorOf(e);
    console.warn("Centrum:", error.code, error.message);
    return await view(tabId, "error", error);
  }
}

/* The text of an answer asked for without it (the host keeps the page: the outputs request gives it), or null. */
async function answerText(result, opts) {
  if (typeof result.text === "string") return result.text;
  try {
    return (await host.request("outputs", { page: result.page, outputs: ["text"] }, opts.timeoutMs)).text ?? null;
  } catch (e) {
    console.warn("Centrum: answer text:", errorOf(e).code, errorOf(e).message);
    return null;
  }
}

function hostMs(result) {
  // Parse once plus every algorithm's own time ("all" runs them one after the other on one parsed snapshot).
  const results = result && typeof result.algorithm === "string" ? [result] : Object.values(result || {});
  let total = 0;
  let parse = 0;
  for (const r of results) {
    const t = (r && r.timing_ms) || {};
    parse = Math.max(parse, Number(t.parse) || 0);
    total += Number(t.algorithm) || 0;
  }
  return total + parse;
}

/* Send an extract request and time it: the host's own time, and the rest of the round trip (serializing, native
   messaging both ways, chunk reassembly) as the transfer time. */
async function timedExtract(request, opts) {
  const t0 = performance.now();
  const result = await host.request("extract", request, opts.timeoutMs, opts.maxRequestBytes);
  const roundTrip = performance.now() - t0;
  const hostTime = hostMs(result);
  return { result, timing: { host_ms: hostTime, transfer_ms: Math.max(0, roundTrip - hostTime), round_trip_ms: roundTrip } };
}

let algorithmList = null;

async function openDebugger(tabId) {
  const opts = await settings();
  const info = await getHostInfo(opts.timeoutMs);
  // Every algorithm runs, some read the page source: collect it once, with the source.
  const snapshot = await collect(tabId, true);
  const request = { algorithm: "all", snapshot, debug: true };
  if (opts.algorithm && opts.params) request.params = { [opts.algorithm]: opts.params };
  const { result, timing } = await timedExtract(request, opts);
  await algorithms();
  timing.collect_ms = snapshot.page && snapshot.page.timing ? snapshot.page.timing.collect_ms : null;
  // The debugger starts from the options' algorithm and parameters.
  return await view(tabId, "debugger", {
    results: result, algorithms: algorithmList, timing, selected: opts.algorithm || info.default, params: opts.params,
  });
}

async function rerun(tabId, algorithm, params) {
  const opts = await settings();
  let snapshot = snapshots.get(tabId);
  let recollected = false;
  if (!snapshot) {
    snapshot = await collect(tabId, true);
    recollected = true;
  }
  const { result, timing } = await timedExtract({ algorithm, params, snapshot, debug: true }, opts);
  timing.collect_ms = recollected ? snapshot.page.timing.collect_ms : 0;
  timing.recollected = recollected;
  return { result, timing };
}

async function openAnnotator(tabId) {
  // The label stores the serialized page too: collect with the source.
  await collect(tabId, true);
  const { annotatorName } = await api.storage.local.get({ annotatorName: "" });
  const campaign = await campaignContext(await api.tabs.get(tabId), snapshots.get(tabId)).catch((e) => ({ error: errorOf(e) }));
  return await view(tabId, "annotate", { annotator: annotatorName, campaign });
}

async function saveLabel(tab, annotator, nodes) {
  const opts = await settings();
  const snapshot = snapshots.get(tab.id);
  if (!snapshot) throw new CentrumError("E_STORAGE", "the page snapshot was lost: press the button and annotate again");
  const parent = snapshot.elements && snapshot.elements.parent; // a number list, or a packed column with its count
  const n = Array.isArray(parent) ? parent.length : (parent && Number.isSafeInteger(parent.count) ? parent.count : 0);
  if (nodes.some((id) => id >= n)) throw new CentrumError("E_REQUEST", `node ids must be below ${n}`);
  // A label is saved from the annotator only: the tab's view must be annotating.
  if (await currentStage(tab.id) !== "annotate") throw new CentrumError("E_REQUEST", "the annotator is not open");
  const label = { url: snapshot.page && snapshot.page.url ? snapshot.page.url : tab.url, annotator, nodes, snapshot };
  return await host.request("label.save", { label }, opts.timeoutMs, opts.maxRequestBytes);
}

/* The reader's metadata, Markdown and HTML, asked for when the reader opens, never on the press (on a large page they
   cost more than the algorithm). The host builds them from the snapshot it kept of this highlight's extract; when
   it no longer holds it (another tab was extracted since, or the host restarted) the tab's kept snapshot goes again
   with the same algorithm. Whatever fails, the reader opens with what the page itself says. */
async function readerOutputs(tabId, prefs) {
  const outputs = prefs.readerMetadata ? ["metadata", "markdown", "html"] : ["metadata"];
  try {
    const opts = await settings();
    const page = await view(tabId, "page");
    // A highlight from the press profile: the full collection's judgement of what a reader does not see, which the
    // outputs and the disclosed panels read, and the page's HTML for the metadata, Markdown and HTML (the same walk
    // as the press's: the page's elements keep their ids).
    const partial = pressProfile.has(tabId);
    const rest = partial
      ? await inPage(tabId, (o) => globalThis[Symbol.for("centrum.pack")].rest(o), { source: prefs.readerMetadata })
      : {};
    if (page.handle) {
      try {
        return await host.request("outputs", { page: page.handle, outputs, ...rest }, opts.timeoutMs);
      } catch (e) {
        if (e.code !== "E_REQUEST" || e.field !== "page") throw e;
      }
    }
    // The host no longer holds the page: the tab's snapshot goes again, a full one if the press's was not.
    const snapshot = partial ? await collect(tabId, true, true) : snapshots.get(tabId);
    if (!snapshot || !page.algorithm) return {};
    const request = { algorithm: page.algorithm, snapshot, debug: false, outputs };
    if (opts.params && opts.algorithm === page.algorithm) request.params = opts.params;
    return await host.request("extract", request, opts.timeoutMs, opts.maxRequestBytes);
  } catch (e) {
    console.warn("Centrum: reader outputs:", errorOf(e).code, errorOf(e).message);
    return {};
  }
}

async function openReader(tabId) {
  const prefs = await SETTINGS.load(api.storage.local, SETTINGS.READER_KEYS);
  await view(tabId, "outputs", await readerOutputs(tabId, prefs));
  if (prefs.readerIn !== "tab") return await view(tabId, "reader", prefs);
  // Its own tab: the clean content goes as data (never HTML) through storage to the extension's reader page, and
  // the page itself is restored at once.
  const data = await view(tabId, "readerData");
  const key = `reader:${Date.now()}:${Math.random().toString(36).slice(2)}`;
  await api.storage.local.set({ [key]: data });
  await api.tabs.create({ url: api.runtime.getURL(`src/reader.html#${encodeURIComponent(key)}`) });
  const out = await view(tabId, "restore");
  await api.scripting.removeCSS({ target: { tabId }, files: ["src/ui.css"] });
  return { ...out, openedTab: true };
}

/* A mode button on the page (debugger, annotator, reader) asks for its tab. */
async function openMode(tabId, mode) {
  if (busyTabs.has(tabId)) return { stage: "busy" };
  busyTabs.add(tabId);
  try {
    if (mode === "reader") return await openReader(tabId);
    await inject(tabId, false); // already there after a press; the panels need no page styles
    try {
      if (mode === "debugger") {
        await view(tabId, "busy");
        return await openDebugger(tabId);
      }
      if (mode === "annotate") return await openAnnotator(tabId);
    } catch (e) {
      return await view(tabId, "error", errorOf(e));
    }
    return { error: { code: "E_REQUEST", message: `unknown mode ${mode}` } };
  } finally {
    busyTabs.delete(tabId);
  }
}

async function currentStage(tabId) {
  // Right after the browser starts, the first press can run before the click's activeTab grant is in effect
  // (seen in Chromium 156 with a cold service worker): retry briefly before giving up.
  for (let attempt = 0; ; attempt++) {
    try {
      return await inPage(tabId, () => {
        const v = globalThis[Symbol.for("centrum.view")];
        return v ? v.stage : "none";
      });
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
    if (stage === "highlight") return await openReader(tabId);
    if (stage === "reader" || stage === "debugger" || stage === "annotate") {
      const out = await view(tabId, "restore");
      await api.scripting.removeCSS({ target: { tabId }, files: ["src/ui.css"] });
      return out;
    }
    if (stage === "message") {
      // An error or "nothing found" is on screen: this press clears it and tries again.
      await view(tabId, "restore");
      await api.scripting.removeCSS({ target: { tabId }, files: ["src/ui.css"] });
    }
    if (await onCampaignPage(tab)) return await inject(tabId).then(() => openAnnotator(tabId)); // annotate at once
    return await start(tabId);
  } finally {
    busyTabs.delete(tabId);
  }
}

// The browser starts the background when it starts (the listener is what wakes a Chromium service worker then);
// the top-level call covers every other start (install, update, a worker stopped and started again).
api.runtime.onStartup.addListener(() => {});
warmHost();

api.action.onClicked.addListener((tab) => {
  press(tab).catch((e) => console.error("Centrum:", e));
});

// The extension's own content scripts may ask for a press of their tab (no page can: runtime messages only come
// from the extension itself). Used by the Firefox end-to-end harness, where no toolbar can be clicked.
api.commands.onCommand.addListener((command, tab) => {
  // Keyboard shortcuts grant activeTab like the button does.
  const mode = { "open-debugger": "debugger", "open-annotator": "annotate" }[command];
  if (mode && tab) openMode(tab.id, mode).catch((e) => console.error("Centrum:", e));
});

// What a panel may ask for, checked here whatever the content script relays (issue #20): a message of any other
// shape is refused with E_REQUEST and nothing is done.
const MODES = new Set(["reader", "debugger", "annotate"]);
const MAX_ANNOTATOR = 200; // characters
const MAX_PARAMS_JSON = 64 * 1024; // bytes of JSON text of a re-run's parameters

function isPlainObject(x) {
  return x !== null && typeof x === "object" && !Array.isArray(x) && Object.getPrototypeOf(x) === Object.prototype;
}

function refuse(message) {
  throw new CentrumError("E_REQUEST", message);
}

/* The fields of a valid message (only those), or an E_REQUEST error. */
function checked(message) {
  if (!isPlainObject(message) || typeof message.type !== "string") refuse("a message must be an object with a type");
  if (Object.hasOwn(CAMPAIGN_FIELDS, message.type)) return campaignChecked(message);
  const allowed = { "centrum.press": [], "centrum.open": ["mode"], "centrum.rerun": ["algorithm", "params"],
    "centrum.label": ["annotator", "nodes"] }[message.type];
  if (!allowed) refuse(`unknown message type ${JSON.stringify(message.type.slice(0, 40))}`);
  const extra = Object.keys(message).filter((k) => k !== "type" && !allowed.includes(k));
  if (extra.length) refuse(`unknown field(s) ${extra.slice(0, 5).join(", ")} in ${message.type}`);
  if (message.type === "centrum.open" && !MODES.has(message.mode)) refuse("mode must be reader, debugger or annotate");
  if (message.type === "centrum.rerun") {
    if (typeof message.algorithm !== "string" || !/^[a-z][a-z0-9_-]{0,39}$/.test(message.algorithm)) {
      refuse("algorithm must be an algorithm name");
    }
    if (algorithmList && !algorithmList.some((a) => a && a.name === message.algorithm)) {
      refuse(`unknown algorithm ${message.algorithm}`);
    }
    if (message.params !== undefined && message.params !== null) {
      if (!isPlainObject(message.params)) refuse("params must be an object");
      if (JSON.stringify(message.params).length > MAX_PARAMS_JSON) refuse(`params over ${MAX_PARAMS_JSON} bytes`);
    }
  }
  if (message.type === "centrum.label") {
    const name = message.annotator;
    const control = (c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127;
    if (typeof name !== "string" || !name.trim() || name.length > MAX_ANNOTATOR || [...name].some(control)) {
      refuse(`annotator must be a name of 1 to ${MAX_ANNOTATOR} characters without control characters`);
    }
    const nodes = message.nodes;
    if (!Array.isArray(nodes) || !nodes.length || !nodes.every((n) => Number.isSafeInteger(n) && n >= 0) ||
        new Set(nodes).size !== nodes.length) {
      refuse("nodes must be a non-empty list of distinct node ids");
    }
  }
  return message;
}

/* The options page (an extension page, never a web page) asks for the algorithm list only. */
function fromOptionsPage(sender) {
  return typeof sender.url === "string" && sender.url.split("#")[0] === api.runtime.getURL("src/options.html");
}

async function algorithms() {
  const opts = await settings();
  if (!algorithmList) algorithmList = await host.request("algorithms", {}, opts.timeoutMs);
  return algorithmList;
}

// Only the extension's own scripts can send runtime messages (no page can: there is no externally_connectable).
// Of those, only the content scripts this file injects into the top frame of a tab speak for a tab; the panels
// ask for a mode, a re-run or a label save of their own tab.
api.runtime.onMessage.addListener((message, sender, sendResponse) => {
  if (!message || sender.id !== api.runtime.id) return false;
  if (fromOptionsPage(sender)) {
    if (!isPlainObject(message) || message.type !== "centrum.algorithms" || Object.keys(message).length !== 1) {
      return false;
    }
    algorithms().then(sendResponse, (e) => sendResponse({ error: errorOf(e) }));
    return true;
  }
  if (!sender.tab || typeof sender.tab.id !== "number" || sender.frameId !== 0) return false;
  const reply = (work) => {
    Promise.resolve().then(() => work(checked(message))).then(sendResponse, (e) => sendResponse({ error: errorOf(e) }));
    return true;
  };
  const tab = sender.tab;
  switch (message.type) {
    case "centrum.press": // used by the Firefox end-to-end harness, where no toolbar can be clicked
      return reply(() => press(tab));
    case "centrum.open":
      return reply((m) => openMode(tab.id, m.mode));
    case "centrum.rerun":
      return reply((m) => rerun(tab.id, m.algorithm, m.params || null));
    case "centrum.label":
      return reply((m) => saveLabel(tab, m.annotator.trim(), m.nodes));
    default: // a campaign message (campaign.js), from the annotator panel only; any other type is refused by checked()
      return reply(async (m) => (await currentStage(tab.id)) === "annotate" ? campaignHandle(tab, m)
        : refuse("the annotator is not open"));
  }
});

globalThis.centrumPress = press;
globalThis.centrumWarmHost = warmHost; // `centrum bench`: a host started with the background, as at browser start
globalThis.centrumOpen = openMode;
