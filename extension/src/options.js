/* Centrum options page: reader defaults, the algorithm and its parameters, and the keyboard shortcuts. Every
 * choice is stored in storage.local (names and checks in settings.js) as soon as it is made; the background reads
 * them on each press, the reader and the debugger start from them.
 *
 * An extension page: no web page can open, frame or script it (it is not web-accessible), so its controls need no
 * isTrusted filter. The algorithm list comes from the host through the background (which keeps the one port); the
 * parameters' kinds, defaults and ranges from params.json, generated from the host's typed configs
 * (host/centrum/native/params_schema.py), and are under "Advanced": they are for research, not for reading.
 */
"use strict";

(() => {
  const api = globalThis.browser ?? globalThis.chrome;
  const settings = globalThis[Symbol.for("centrum.settings")];
  const t = (key, ...subs) => api.i18n.getMessage(key, subs.map(String)) || key;
  const $ = (id) => document.getElementById(id);
  let algorithms = [];
  let current = null;
  let schema = {}; // every algorithm's parameters: kind, default, range (params.json, from the host's typed configs)

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

  const onOff = (value) => (value ? t("optionsOn") : t("optionsOff")); // a boolean parameter's value, in words

  /* The value shown for a parameter's default: a preset-filled one follows the preset chosen in the form. */
  function defaultOf(spec, preset) {
    const value = spec.presets && preset in spec.presets ? spec.presets[preset] : spec.default;
    if (typeof value === "boolean") return onOff(value);
    return Array.isArray(value) ? value.join(", ") : String(value);
  }

  /* The control of one parameter, by its kind (params.json): a number field within its range, a choice (booleans
     as on / off) whose first entry keeps the default, a comma-separated list, a text. Empty means the default. */
  function paramControl(name, spec, chosen) {
    let control;
    if (spec.kind === "bool" || spec.kind === "choice") {
      control = document.createElement("select");
      control.appendChild(new Option("", ""));
      const values = spec.kind === "bool" ? [true, false] : spec.choices;
      for (const v of values) {
        control.appendChild(new Option(typeof v === "boolean" ? onOff(v) : v, JSON.stringify(v)));
      }
      if (name in chosen) control.value = JSON.stringify(chosen[name]);
    } else {
      control = document.createElement("input");
      control.type = spec.kind === "int" || spec.kind === "float" ? "number" : "text";
      if (control.type === "number") {
        Object.assign(control, { min: String(spec.min), max: String(spec.max), step: spec.kind === "int" ? "1" : "any" });
      }
      if (name in chosen) control.value = Array.isArray(chosen[name]) ? chosen[name].join(", ") : String(chosen[name]);
    }
    control.dataset.param = name;
    return control;
  }

  /* What the row beside a parameter says: its range, or that a list is comma-separated. */
  function paramHint(spec) {
    if (spec.kind === "int" || spec.kind === "float") return t("optionsRange", spec.min, spec.max);
    return spec.kind === "list" ? t("optionsListHint") : "";
  }

  /* Every default shown again (placeholders, the first entry of each choice) for the preset now chosen. */
  function showDefaults(specs) {
    const preset = $("params").querySelector("[data-param='preset']");
    const chosen = preset && preset.value ? JSON.parse(preset.value) : undefined;
    for (const control of $("params").querySelectorAll("[data-param]")) {
      const text = defaultOf(specs[control.dataset.param], chosen);
      if (control.localName === "select") control.options[0].textContent = t("optionsDefaultValue", text);
      else control.placeholder = text;
    }
  }

  function paramFields(name) {
    const box = $("params");
    box.replaceChildren();
    const specs = (schema[name] && schema[name].params) || {};
    const chosen = (current.algorithm === name && current.params) || {};
    for (const [param, spec] of Object.entries(specs)) {
      const label = document.createElement("label");
      const code = document.createElement("code");
      code.textContent = param;
      const hint = document.createElement("span");
      hint.className = "hint";
      hint.textContent = paramHint(spec);
      const control = paramControl(param, spec, chosen);
      control.addEventListener("change", () => {
        showDefaults(specs);
        saveParams(specs);
      });
      label.append(code, control, hint);
      box.appendChild(label);
    }
    showDefaults(specs);
  }

  /* A field's typed value, or undefined (empty: the default); an error names a number outside its range. */
  function paramValue(control, spec) {
    const text = control.value.trim();
    if (!text) return undefined;
    if (control.localName === "select") return JSON.parse(text);
    if (spec.kind === "list") return text.split(",").map((x) => x.trim()).filter(Boolean);
    if (spec.kind === "text") return text;
    const n = Number(text);
    if (!Number.isFinite(n) || n < spec.min || n > spec.max || (spec.kind === "int" && !Number.isInteger(n))) {
      throw new RangeError(t("optionsBadParam", control.dataset.param, spec.min, spec.max));
    }
    return n;
  }

  function saveParams(specs) {
    const params = {};
    for (const control of $("params").querySelectorAll("[data-param]")) {
      control.removeAttribute("aria-invalid");
      try {
        const value = paramValue(control, specs[control.dataset.param]);
        if (value !== undefined) params[control.dataset.param] = value;
      } catch (e) {
        control.setAttribute("aria-invalid", "true");
        return say(e.message, true);
      }
    }
    return store({ params: Object.keys(params).length ? params : null });
  }

  function showAlgorithm() {
    const name = $("algorithm").value;
    const algo = algorithms.find((a) => a.name === name);
    $("summary").textContent = algo ? algo.summary : t("optionsAutomaticHint");
    paramFields(name);
    $("advanced").hidden = !algo || !Object.keys((schema[name] && schema[name].params) || {}).length;
  }

  async function algorithmControls() {
    const select = $("algorithm");
    const auto = new Option(t("optionsAutomatic"), "");
    select.replaceChildren(auto);
    const answer = await api.runtime.sendMessage({ type: "centrum.algorithms" });
    if (!answer || answer.error) {
      say(t("optionsNoHost", (answer && answer.error && answer.error.message) || ""), true);
      // Without the host the choices still stand: the parameters' file lists every algorithm.
      algorithms = Object.entries(schema).map(([name, a]) => ({ name, summary: a.summary }));
    } else {
      algorithms = answer.filter((a) => a && a.available);
    }
    for (const a of algorithms) select.appendChild(new Option(a.name, a.name));
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
    schema = (await (await fetch(api.runtime.getURL("src/params.json"))).json()).algorithms;
    readerControls();
    await shortcuts();
    await algorithmControls();
    document.documentElement.dataset.ready = "1";
  }

  document.addEventListener("DOMContentLoaded", () => {
    main().catch((e) => say(e.message, true));
  });
})();
