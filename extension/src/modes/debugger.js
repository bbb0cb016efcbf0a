/* Centrum debugger mode: every algorithm's answer and candidates in a panel, the chosen algorithm's answer and its
 * overlays (the host's typed list: answer, candidates, removed parts, regions, points) drawn in the closed shadow
 * root, and a re-run with other parameters on the same snapshot. */
"use strict";

(() => {
  const KEY = Symbol.for("centrum.mode.debugger");
  if (globalThis[KEY]) return;
  const { api, state, view, send, trusted, h, listen, layer, drawBox, element, outlineNodes, ensurePanel, enterMode,
    addStyle } = globalThis[Symbol.for("centrum.ui")];
  const { t } = globalThis[Symbol.for("centrum.readerview")]; // the extension's strings in the browser's language

  addStyle(`
    .box.answer { outline: 3px solid #e8590c; }
    .box.hover { outline: 3px dashed #1971c2; background: rgba(25,113,194,.12); }
    .box.ov.candidate { outline: 1px solid rgba(47,158,68,.9); }
    .box.ov.answer { outline: 3px solid #e8590c; }
    .box.ov.removed { outline: 1px dashed #c92a2a; background: rgba(201,42,42,.10); }
    .box.ov.region { border: 1px dashed rgba(156,54,181,.8); }
    .box.ov.mark { outline: 2px solid #f08c00; }
    .box.point { width: 10px; height: 10px; margin: -5px 0 0 -5px; border-radius: 50%; background: #c92a2a; }
    .box.point > span { left: 12px; top: -4px; }
    .panel .defaults { font: 11px ui-monospace, monospace; color: #555; white-space: pre-wrap; max-height: 8em;
      overflow: auto; background: #f6f6f6; padding: 4px; }
    .panel ol { padding-left: 22px; margin: 6px 0; }
    .panel li { cursor: default; padding: 1px 2px; border-radius: 2px; }
    .panel li:hover { background: #e7f1ff; }
    .panel li .score { font-variant-numeric: tabular-nums; font-weight: bold; margin-right: 6px; }
    .panel textarea { width: 100%; box-sizing: border-box; height: 10em; font: 11px ui-monospace, monospace; }
    .panel ul.legend { color: #555; font-size: 12px; padding-left: 18px; margin: 4px 0 8px; }
  `);

  function fmt(x) {
    return typeof x === "number" && Number.isFinite(x) ? (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(3)) : String(x);
  }

  // ---- overlays: drawn the same way for every algorithm, from result.overlays (host/PROTOCOL.md "Overlays") ----

  const OVERLAY_KINDS = new Set(["answer", "candidate", "removed", "region", "point"]);
  const MAX_OVERLAY_NODES = 500;

  function overlayLabel(o) {
    return `${String(o.label || "")}${typeof o.score === "number" ? ` (${fmt(o.score)})` : ""}`;
  }

  function drawOverlay(lay, o) {
    if (!o || !OVERLAY_KINDS.has(o.kind)) return;
    const label = overlayLabel(o);
    if (Array.isArray(o.box) && o.box.length === 4) {
      const [x, y, w, hgt] = o.box.map((v) => Number(v) || 0);
      const rect = o.kind === "point" ? [x + w / 2, y + hgt / 2, 0, 0] : [x, y, w, hgt];
      drawBox(lay, rect, `ov ${o.kind}`, label, { "data-kind": o.kind });
    } else if (Array.isArray(o.nodes)) {
      // A point given as elements (a seed) is outlined, not drawn as a dot at their corner.
      outlineNodes(lay, o.nodes.slice(0, MAX_OVERLAY_NODES), `ov ${o.kind === "point" ? "mark" : o.kind}`, label);
    }
  }

  function drawAlgorithmOverlay(result) {
    const lay = layer("overlay");
    lay.replaceChildren();
    for (const o of Array.isArray(result && result.overlays) ? result.overlays : []) drawOverlay(lay, o);
  }

  function overlaySummary(result) {
    const counts = new Map();
    for (const o of Array.isArray(result && result.overlays) ? result.overlays : []) {
      if (o && OVERLAY_KINDS.has(o.kind)) counts.set(o.kind, (counts.get(o.kind) || 0) + 1);
    }
    return counts.size ? [...counts].map(([k, n]) => `${n} ${k}`).join(", ") : t("debugOverlayNone");
  }

  // ---- panel ----

  // One line per kind of candidate label, in plain words (the labels themselves are each algorithm's own terms).
  const LABEL_HELP = [
    [/in BFS order$/, t("debugHelpSemantic")],
    [/^M\d tag/, t("debugHelpGceTag")],
    [/^M\d attr/, t("debugHelpGceAttr")],
    [/^M\d diff/, t("debugHelpGceDiff")],
    [/^column /, t("debugHelpZoning")],
    [/^R4 selection$/, t("debugHelpR4Selection")],
    [/^(c-SET #|rank )/, t("debugHelpR4Rank")],
    [/^merged regions/, t("debugHelpDanaMerged")],
    [/^region #/, t("debugHelpDanaRegion")],
    [/answer of /, t("debugHelpEnsemble")],
  ];
  const labelHelp = (label) => (LABEL_HELP.find(([re]) => re.test(label || "")) || [null, ""])[1];

  function featureText(c) {
    // The candidate's label explained, then its features as a tooltip: why it scored what it did.
    const f = Object.entries(c.features || {}).map(([k, v]) => `${k} = ${fmt(v)}`);
    const help = labelHelp(c.label);
    const nodes = t("debugNodes", (c.nodes || []).slice(0, 20).join(", "));
    return `${help ? `${help}\n` : ""}${nodes}${f.length ? `\n${f.join("\n")}` : ""}`;
  }

  /* What the candidate labels of this answer mean, one line per kind present. */
  function labelLegend(result) {
    const lines = [...new Set((result.candidates || []).map((c) => labelHelp(c.label)).filter(Boolean))];
    return h("ul", { class: "legend" }, ...lines.map((line) => h("li", { text: line })));
  }

  function algorithmSelect(dbg, names, name) {
    const select = h("select", { class: "algo", title: t("debugAlgorithm") });
    for (const n of names) {
      const r = dbg.results[n];
      const o = h("option", { value: n, text: `${n}: ${r.nodes.length ? t("debugNodeCount", r.nodes.length) : t("debugNoAnswer")}` });
      if (n === name) o.selected = true;
      select.appendChild(o);
    }
    select.addEventListener("change", trusted(() => {
      dbg.selected = select.value;
      renderDebugger();
    }));
    return select;
  }

  function candidateList(result) {
    const list = h("ol", { class: "cands" });
    const hover = layer("hover");
    (result.candidates || []).forEach((c, i) => {
      const li = h("li", { "data-index": String(i), title: featureText(c) },
        h("span", { class: "score", text: fmt(c.score) }), `${c.label || ""} [${t("debugNodeCount", (c.nodes || []).length)}]`);
      li.addEventListener("mouseenter", trusted(() => {
        hover.replaceChildren();
        outlineNodes(hover, c.nodes, "hover", `${c.label || ""} ${fmt(c.score)}`);
        const first = element((c.nodes || [])[0]);
        if (first) {
          const r = first.getBoundingClientRect();
          if (r.bottom < 0 || r.top > window.innerHeight) first.scrollIntoView({ block: "center" });
        }
      }));
      li.addEventListener("mouseleave", trusted(() => hover.replaceChildren()));
      list.appendChild(li);
    });
    return list;
  }

  async function rerun(dbg, name, text) {
    let parsed;
    try {
      parsed = JSON.parse(text || "{}");
    } catch (e) {
      dbg.status = { kind: "error", text: t("debugBadJson", e.message) };
      renderDebugger();
      return;
    }
    dbg.params[name] = parsed;
    dbg.status = { kind: "", text: t("debugRunning", name) };
    renderDebugger();
    const answer = await send({ type: "centrum.rerun", algorithm: name, params: parsed });
    if (!answer || answer.error) {
      const err = (answer && answer.error) || { code: "E_INTERNAL", message: "no answer" };
      dbg.status = { kind: "error", text: `${err.code}: ${err.message}` };
    } else {
      dbg.results[name] = answer.result;
      dbg.timing = answer.timing;
      dbg.status = { kind: "ok", text: t("debugReran", name) };
    }
    renderDebugger();
  }

  /* The algorithm (and the parameters it last ran with) become the options' choice: the next press uses them. */
  async function useForReader(dbg, name) {
    const params = dbg.params[name] && Object.keys(dbg.params[name]).length ? dbg.params[name] : null;
    if (!api) dbg.status = { kind: "error", text: t("debugNoStorage") };
    else {
      await api.storage.local.set({ algorithm: name, params });
      dbg.status = { kind: "ok", text: params ? t("debugUsesParams", name) : t("debugUses", name) };
    }
    renderDebugger();
  }

  /* The parameters box, its re-run button and status line. */
  function paramsBlock(dbg, name) {
    const params = h("textarea", { class: "params", spellcheck: "false" });
    params.value = JSON.stringify(dbg.params[name] || {}, null, 1);
    const status = h("div", { class: "status", role: "status" });
    if (dbg.status) {
      status.textContent = dbg.status.text;
      status.className = `status ${dbg.status.kind}`;
    }
    const button = h("button", { class: "rerun", text: t("debugRerun"),
      onclick: () => rerun(dbg, name, params.value) });
    const keep = h("button", { class: "use", text: t("debugUse"), title: t("debugUseTitle"),
      onclick: () => useForReader(dbg, name) });
    return [
      h("div", { class: "hint", text: t("debugParamsHint") }),
      params, button, keep, status,
      h("div", { class: "defaults", text: JSON.stringify((dbg.defaults || {})[name] || {}, null, 1) }),
    ];
  }

  function overlayToggle(dbg, result) {
    const toggle = h("input", { type: "checkbox", class: "overlay-toggle" });
    toggle.checked = dbg.overlay;
    toggle.addEventListener("change", trusted(() => {
      dbg.overlay = toggle.checked;
      renderDebugger();
    }));
    return h("label", {}, toggle, ` ${t("debugOverlay", overlaySummary(result))}`);
  }

  function summary(dbg, name, result) {
    const tm = dbg.timing || {};
    const timing = t("debugTiming", fmt(tm.collect_ms), fmt(tm.transfer_ms), fmt(tm.host_ms)) +
      (tm.recollected ? ` \u00b7 ${t("debugRecollected")}` : "");
    const algoMs = result.timing_ms ? Object.entries(result.timing_ms).map(([k, v]) => `${k} ${fmt(v)}`).join(", ") : "";
    const answer = result.nodes && result.nodes.length
      ? t("debugAnswer", result.nodes.length, result.nodes.slice(0, 8).map((i) => element(i)?.localName || i).join(", "))
      : (result.message ? t("debugNoAnswerWhy", result.message) : t("debugNoAnswer"));
    return { timing, algoMs, answer };
  }

  function renderDebugger() {
    const dbg = state.debug;
    const { panel } = ensurePanel("debugger", "complementary");
    const names = Object.keys(dbg.results);
    if (!names.includes(dbg.selected)) dbg.selected = names[0];
    const name = dbg.selected;
    const result = dbg.results[name] || {};
    const s = summary(dbg, name, result);
    panel.replaceChildren(
      h("button", { class: "x", title: t("panelClose"), text: "\u00d7", onclick: () => view().restore() }),
      h("h2", { text: t("debugTitle") }),
      h("div", { class: "timing", text: s.timing }),
      algorithmSelect(dbg, names, name),
      h("div", { class: "answer", text: s.answer }),
      h("div", { class: "hint", text: t("debugAlgoMs", name, s.algoMs) }),
      overlayToggle(dbg, result),
      h("div", { class: "hint", text: t("debugCandidates", (result.candidates || []).length) }),
      candidateList(result),
      labelLegend(result),
      ...paramsBlock(dbg, name),
    );
    // The chosen algorithm's answer is outlined; switching algorithm re-highlights.
    const answer = layer("answer");
    answer.replaceChildren();
    outlineNodes(answer, result.nodes, "answer", t("debugAnswerBox", name));
    if (dbg.overlay) drawAlgorithmOverlay(result);
    else layer("overlay").replaceChildren();
  }

  function open(data) {
    enterMode("debugger");
    const params = {};
    const defaults = {};
    for (const a of data.algorithms || []) {
      params[a.name] = a.name === data.selected && data.params ? { ...data.params } : {};
      defaults[a.name] = a.params || {};
    }
    state.debug = { ...data, params, defaults, overlay: true, status: null };
    listen(window, "resize", () => state.stage === "debugger" && renderDebugger());
    renderDebugger();
    return { stage: state.stage, algorithms: Object.keys(data.results) };
  }

  globalThis[KEY] = { open };
})();
