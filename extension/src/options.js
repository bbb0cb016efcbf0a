/* Centrum options page: reader defaults, the algorithm and its parameters, and the keyboard shortcuts. Every
 * choice is stored in storage.local (names and checks in settings.js) as soon as it is made; the background reads
 * them on each press, the reader and the debugger start from them.
 *
 * An extension page: no web page can open, frame or script it (it is not web-accessible), so its controls need no
 * isTrusted filter. The algorithm list comes from the host through the background (which keeps the one port).
 */
"use strict";

(() => {
  const api = globalThis.browser ?? globalThis.chrome;
  const settings = globalThis[Symbol.for("centrum.settings")];
  const t = (key, ...subs) => api.i18n.getMessage(key, subs.map(String)) || key;
  const $ = (id) => document.getElementById(id);
  let algorithms = [];
  let current = null;

  function say(text, error = false) {
    $("status").textContent = text;
    $("status").className = error ? "error" : "";
  }

  async function store(patch) {
    await api.storage.local.set(patch);
    Object.assign(current, patch);
    say(t("optionsSaved"));
  }

  function localize() {
    for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
    document.title = t("optionsTitle");
  }

  function readerControls() {
    $("readerTheme").value = current.readerTheme;
    $("readerFontSize").value = String(current.readerFontSize);
    $("readerIn").value = current.readerIn;
    $("readerMetadata").checked = current.readerMetadata;
    $("readerTheme").addEventListener("change", () => store({ readerTheme: $("readerTheme").value }));
    $("readerIn").addEventListener("change", () => store({ readerIn: $("readerIn").value }));
    $("readerMetadata").addEventListener("change", () => store({ readerMetadata: $("readerMetadata").checked }));
    $("readerFontSize").addEventListener("change", () => {
      const size = parseInt($("readerFontSize").value, 10);
      if (settings.VALID.readerFontSize(size)) store({ readerFontSize: size });
      else say(t("optionsFontSizeRange"), true);
    });
  }

  /* A typed value from a parameter field: JSON when it reads as JSON (numbers, true/false, lists), else text. */
  function parseValue(text) {
    try {
      return JSON.parse(text);
    } catch (e) {
      return text;
    }
  }

  function paramFields(algo) {
    const box = $("params");
    box.replaceChildren();
    const chosen = (current.algorithm === algo.name && current.params) || {};
    for (const [name, fallback] of Object.entries(algo.params || {})) {
      const label = document.createElement("label");
      const code = document.createElement("code");
      code.textContent = name;
      const input = document.createElement("input");
      input.type = "text";
      input.dataset.param = name;
      input.placeholder = JSON.stringify(fallback);
      if (name in chosen) input.value = JSON.stringify(chosen[name]);
      input.addEventListener("change", () => saveParams());
      label.append(code, input);
      box.appendChild(label);
    }
  }

  function saveParams() {
    const params = {};
    for (const input of $("params").querySelectorAll("input[data-param]")) {
      if (input.value.trim()) params[input.dataset.param] = parseValue(input.value.trim());
    }
    return store({ params: Object.keys(params).length ? params : null });
  }

  function showAlgorithm() {
    const name = $("algorithm").value;
    const algo = algorithms.find((a) => a.name === name);
    $("summary").textContent = algo ? algo.summary : t("optionsAutomaticHint");
    if (algo) paramFields(algo);
    else $("params").replaceChildren();
    $("reset").hidden = !algo || !Object.keys(algo.params || {}).length;
  }

  async function algorithmControls() {
    const select = $("algorithm");
    const auto = new Option(t("optionsAutomatic"), "");
    select.replaceChildren(auto);
    const answer = await api.runtime.sendMessage({ type: "centrum.algorithms" });
    if (!answer || answer.error) {
      say(t("optionsNoHost", (answer && answer.error && answer.error.message) || ""), true);
    } else {
      algorithms = answer.filter((a) => a && a.available);
      for (const a of algorithms) select.appendChild(new Option(a.name, a.name));
    }
    select.value = algorithms.some((a) => a.name === current.algorithm) ? current.algorithm : "";
    showAlgorithm();
    select.addEventListener("change", async () => {
      // Parameters belong to one algorithm: a new choice starts from its defaults.
      await store({ algorithm: select.value, params: null });
      showAlgorithm();
    });
    $("reset").addEventListener("click", async () => {
      await store({ params: null });
      showAlgorithm();
    });
  }

  async function shortcuts() {
    const table = $("shortcuts");
    const commands = await api.commands.getAll();
    for (const c of commands) {
      const row = table.insertRow();
      row.dataset.command = c.name;
      row.insertCell().textContent = c.description || (c.name === "_execute_action" ? t("commandAction") : c.name);
      row.insertCell().textContent = c.shortcut || t("optionsShortcutUnset");
    }
    const firefox = typeof api.runtime.getBrowserInfo === "function";
    $("shortcutsHint").textContent = t(firefox ? "optionsShortcutsFirefox" : "optionsShortcutsChromium");
  }

  async function main() {
    localize();
    current = await settings.load(api.storage.local);
    readerControls();
    await shortcuts();
    await algorithmControls();
    document.documentElement.dataset.ready = "1";
  }

  document.addEventListener("DOMContentLoaded", () => {
    main().catch((e) => say(e.message, true));
  });
})();
