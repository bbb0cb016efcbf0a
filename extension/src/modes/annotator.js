/* Centrum annotator mode: the user picks the main content node by node (click a word, grow / shrink to the parent
 * or child, add disjoint nodes) and saves it as a label through the background. In a campaign (campaign.js in the
 * background) the panel shows "page 3 of 50", starts from the default extractor's answer as a suggestion (outlined;
 * A accepts it), and offers Submit & next, Skip, Flag with a reason, and a review of other annotators' labels where
 * a reviewer picks one or merges them. */
"use strict";

(() => {
  const KEY = Symbol.for("centrum.mode.annotator");
  if (globalThis[KEY]) return;
  const { api, state, view, send, h, listen, layer, docRect, drawBox, placeInCorner, nodeList, ensurePanel,
    enterMode, addStyle } = globalThis[Symbol.for("centrum.ui")];
  const { t } = globalThis[Symbol.for("centrum.readerview")]; // the extension's strings in the browser's language

  addStyle(`
    .box.current { outline: 3px dashed #1971c2; background: rgba(25,113,194,.10); }
    .box.picked { outline: 3px solid #2f9e44; background: rgba(47,158,68,.12); }
    .box.suggested { outline: 3px dotted #e8590c; }
    .box.review-0 { outline: 3px solid #7048e8; } .box.review-1 { outline: 3px dashed #d6336c; }
    .box.review-2 { outline: 3px dotted #0c8599; }
    .panel.annot { top: auto; left: 12px; right: auto; bottom: 12px; width: 380px; max-height: 60vh;
      border: 1px solid #bbb; border-radius: 4px; }
    .panel.annot ol { padding-left: 22px; margin: 6px 0; }
    .panel.annot .campaign { border: 1px solid #ddd; border-radius: 3px; padding: 4px 6px; margin: 4px 0; }
    .panel.annot .progress { font-weight: bold; }
  `);

  const textOf = (el) => (el && el.textContent ? el.textContent.replace(/\s+/g, " ").trim() : "");
  const button = (cls, text, fn) => h("button", { class: cls, text, onclick: fn });

  function nodeIds() {
    if (state.annot.ids) return state.annot.ids;
    const ids = new Map();
    nodeList().forEach((el, i) => ids.set(el, i));
    state.annot.ids = ids;
    return ids;
  }

  function mapped(el) {
    // The nearest element the collector listed (it lists every element, but not e.g. ones added since).
    const ids = nodeIds();
    while (el && !ids.has(el)) el = el.parentElement || (el.getRootNode && el.getRootNode().host) || null;
    return el;
  }

  const elementsOf = (ids) => (ids || []).map((id) => nodeList()[id]).filter((el) => el && el.isConnected);

  function describe(el) {
    const id = nodeIds().get(el);
    const words = (el.innerText || el.textContent || "").trim().split(/\s+/).filter(Boolean).length;
    return t("annotNode", `<${el.localName}${el.id ? `#${el.id}` : ""}>`, id, words);
  }

  function buildPanel(a, panel) {
    a.name = h("input", { class: "annotator", placeholder: t("annotName"), value: a.annotator || "" });
    a.status = h("div", { class: "status", role: "status" });
    a.list = h("ol", { class: "picked" });
    a.campaignBox = h("div", { class: "campaign" });
    a.reviewBox = h("div", { class: "review" });
    panel.append(
      h("button", { class: "x", title: t("panelClose"), text: "\u00d7", onclick: () => view().restore() }),
      h("h2", { text: t("annotTitle") }), a.campaignBox,
      h("div", { class: "hint", text: t("annotHint") + (a.campaign && a.campaign.here ? ` ${t("annotHintAccept")}` : "") }),
      a.name,
      h("div", {}, button("grow", t("annotGrow"), () => annot.grow()), button("shrink", t("annotShrink"), () => annot.shrink()),
        button("add", t("annotAdd"), () => annot.add()), button("undo", t("annotUndo"), () => annot.undo()),
        button("save", a.campaign && a.campaign.here ? t("annotSubmitNext") : t("annotSave"), () => annot.save())),
      a.list, a.status, a.reviewBox);
    renderCampaign(a);
  }

  function joinForm(a) {
    const name = h("input", { class: "campaign-name", placeholder: t("campaignNameHint") });
    a.campaignInput = name;
    return [name, button("join", t("campaignJoin"), () => campaign.join())];
  }

  function renderCampaign(a) {
    const c = a.campaign;
    const box = a.campaignBox;
    if (!c) return box.replaceChildren(...joinForm(a));
    if (c.error) {
      return box.replaceChildren(h("div", { class: "status error", text: t("campaignError", c.error.code, c.error.message) }),
        button("leave", t("campaignLeaveLong"), () => campaign.leave()));
    }
    const head = c.done ? t("campaignAllDone", c.name, c.total) : t("campaignProgress", c.name, c.position, c.total);
    const parts = [h("div", { class: "progress", text: head })];
    if (c.here) {
      parts.push(h("div", { class: "hint", text: t("campaignSuggestion", c.page_id, c.suggestion.length) }),
        button("accept", t("campaignAccept"), () => campaign.accept()), button("skip", t("campaignSkip"), () => campaign.skip()),
        button("flag", t("campaignFlag"), () => campaign.flag()));
      a.reason = h("input", { class: "reason", placeholder: t("campaignFlagWhy"), hidden: "" });
      parts.push(a.reason);
    } else if (!c.done) {
      parts.push(button("mine", t("campaignOpenMine"), () => campaign.rejoin()));
    }
    if (c.review) parts.push(button("review", t("campaignReview"), () => campaign.review()));
    parts.push(button("leave", t("campaignLeave"), () => campaign.leave()));
    return box.replaceChildren(...parts);
  }

  const PANEL_CORNERS = [["left", "bottom"], ["right", "bottom"], ["right", "top"], ["left", "top"]];

  function selectionRects(a) {
    const els = [...a.picked, ...(a.current ? [a.current] : []), ...(a.picked.length ? [] : a.suggestion)];
    return els.map((el) => el.getBoundingClientRect());
  }

  function renderAnnot(statusText, kind = "") {
    const a = state.annot;
    const { panel, created } = ensurePanel("annot", "dialog");
    if (created) buildPanel(a, panel);
    a.list.replaceChildren(...a.picked.map((el) => h("li", { text: describe(el) })));
    if (statusText !== undefined) {
      a.status.textContent = statusText;
      a.status.className = `status ${kind}`;
    }
    const lay = layer("annot");
    lay.replaceChildren();
    if (!a.picked.length) for (const el of a.suggestion) drawBox(lay, docRect(el), "suggested", t("annotSuggestionBox"));
    (a.reviewLabels || []).forEach((lab, k) => {
      for (const el of elementsOf(lab.nodes)) drawBox(lay, docRect(el), `review-${k % 3}`, lab.annotator);
    });
    for (const el of a.picked) drawBox(lay, docRect(el), "picked", describe(el));
    if (a.current) drawBox(lay, docRect(a.current), "current", t("annotCurrentBox", describe(a.current)));
    // The panel goes to the viewport corner where it covers least of the selection it is labelling.
    placeInCorner(panel, selectionRects(a), PANEL_CORNERS);
  }

  /* Up to the nearest ancestor whose text differs (a wrapper with the same text shows no visible change). */
  function grown(el) {
    const same = textOf(el);
    let up = mapped(el.parentElement);
    while (up && up !== document.documentElement && textOf(up) === same) {
      const next = mapped(up.parentElement);
      if (!next || next === document.documentElement) break;
      up = next;
    }
    return up && up !== document.documentElement ? up : null;
  }

  /* Down into the child holding most of the text, past children whose text is the same as their parent's. */
  function shrunk(el) {
    const same = textOf(el);
    let cur = el;
    for (;;) {
      const kids = [...cur.children].filter((c) => nodeIds().has(c));
      if (!kids.length) break;
      cur = kids.reduce((x, y) => ((y.textContent || "").length > (x.textContent || "").length ? y : x));
      if (textOf(cur) !== same) return cur;
    }
    return null;
  }

  const annot = {
    pick(el) {
      const a = state.annot;
      el = mapped(el);
      if (!el) return;
      a.current = el;
      a.below = [];
      renderAnnot(t("annotSelected", describe(el)));
    },
    grow() {
      const a = state.annot;
      if (!a.current) return renderAnnot(t("annotClickFirst"), "error");
      const up = grown(a.current);
      if (!up) return renderAnnot(t("annotAtTop"), "error");
      a.below.push(a.current);
      a.current = up;
      return renderAnnot(t("annotSelected", describe(up)));
    },
    shrink() {
      const a = state.annot;
      if (!a.current) return renderAnnot(t("annotClickFirst"), "error");
      const down = a.below.length ? a.below.pop() : shrunk(a.current);
      if (!down) return renderAnnot(t("annotNoSmaller"), "error");
      a.current = down;
      return renderAnnot(t("annotSelected", describe(a.current)));
    },
    add() {
      const a = state.annot;
      if (!a.current) return renderAnnot(t("annotClickFirst"), "error");
      const el = a.current;
      if (a.picked.some((p) => p === el || p.contains(el))) return renderAnnot(t("annotInside"), "error");
      // Disjoint: a node that contains earlier picks replaces them.
      a.picked = a.picked.filter((p) => !el.contains(p));
      a.picked.push(el);
      a.current = null;
      a.below = [];
      return renderAnnot(t("annotCount", a.picked.length));
    },
    undo() {
      state.annot.picked.pop();
      renderAnnot(t("annotCount", state.annot.picked.length));
    },
    async save() {
      const a = state.annot;
      if (a.current && !a.picked.length) annot.add();
      if (!a.picked.length) return renderAnnot(t("annotSelectFirst"), "error");
      if (a.campaign && a.campaign.here) return await campaign.submit(a.picked);
      const annotator = a.name.value.trim();
      if (!annotator) {
        a.name.focus();
        return renderAnnot(t("annotEnterName"), "error");
      }
      if (api) await api.storage.local.set({ annotatorName: annotator });
      const nodes = selectedIds(a.picked);
      renderAnnot(t("annotSaving"));
      const answer = await send({ type: "centrum.label", annotator, nodes });
      if (failed(answer, t("annotNotSaved"))) return undefined;
      a.saved = answer.label_id;
      return renderAnnot(t("annotSaved", answer.label_id, nodes.length), "ok");
    },
  };

  const selectedIds = (els) => els.map((el) => nodeIds().get(el)).sort((x, y) => x - y);

  function failed(answer, what) {
    if (answer && !answer.error) return false;
    const err = (answer && answer.error) || { code: "E_INTERNAL", message: "no answer" };
    renderAnnot(`${what}: ${err.code}: ${err.message}`, "error");
    return true;
  }

  function nextText(answer) {
    const n = answer && answer.next;
    if (!n) return "";
    if (n.done) return ` ${t("campaignDone")}`;
    return n.opening ? ` ${t("campaignOpening", n.position, n.total)}` : "";
  }

  const campaign = {
    async join() {
      const a = state.annot;
      const name = a.campaignInput.value.trim();
      const annotator = a.name.value.trim();
      if (!name) return a.campaignInput.focus();
      if (!annotator) {
        a.name.focus();
        return renderAnnot(t("annotEnterName"), "error");
      }
      renderAnnot(t("campaignJoining"));
      const answer = await send({ type: "centrum.campaign.join", campaign: name, annotator });
      if (failed(answer, t("campaignCannotJoin"))) return undefined;
      // Already on the first page of the queue: the panel opens again in the campaign (progress, suggestion).
      if (answer.here) return await send({ type: "centrum.open", mode: "annotate" });
      return renderAnnot(answer.done ? t("campaignNothingLeft", name, annotator) :
        answer.opening ? t("campaignOpening", answer.position, answer.total) : t("campaignHere"), "ok");
    },
    async rejoin() {
      const c = state.annot.campaign;
      const answer = await send({ type: "centrum.campaign.join", campaign: c.name, annotator: c.annotator });
      if (failed(answer, t("campaignCannotOpen"))) return undefined;
      if (answer.here) return await send({ type: "centrum.open", mode: "annotate" });
      return renderAnnot(nextText({ next: answer }).trim(), "ok");
    },
    accept() {
      const a = state.annot;
      if (!a.suggestion.length) return renderAnnot(t("campaignNoSuggestion"), "error");
      return campaign.submit(a.suggestion);
    },
    async submit(els) {
      renderAnnot(t("annotSaving"));
      const answer = await send({ type: "centrum.campaign.submit", nodes: selectedIds(els) });
      if (failed(answer, t("annotNotSaved"))) return;
      state.annot.campaign.here = false;
      const saved = answer.changed ? t("campaignSavedChanged", answer.label_id) : t("campaignSaved", answer.label_id);
      renderAnnot(saved + nextText(answer), "ok");
    },
    async skip() {
      const answer = await send({ type: "centrum.campaign.skip" });
      if (!failed(answer, t("campaignNotSkipped"))) renderAnnot(t("campaignSkipped") + nextText(answer), "ok");
    },
    async flag() {
      const a = state.annot;
      if (a.reason.hidden || !a.reason.value.trim()) {
        a.reason.hidden = false;
        a.reason.focus();
        return renderAnnot(t("campaignFlagSayWhy"), "error");
      }
      const answer = await send({ type: "centrum.campaign.flag", reason: a.reason.value.trim() });
      if (!failed(answer, t("campaignNotFlagged"))) renderAnnot(t("campaignFlagged") + nextText(answer), "ok");
      return undefined;
    },
    async leave() {
      const answer = await send({ type: "centrum.campaign.leave" });
      if (failed(answer, t("campaignCannotLeave"))) return;
      state.annot.campaign = null;
      renderCampaign(state.annot);
      renderAnnot(t("campaignLeft"), "ok");
    },
    review: () => reviewPage(),
  };

  async function reviewPage() {
    const a = state.annot;
    const answer = await send({ type: "centrum.campaign.review" });
    if (failed(answer, t("reviewNone"))) return;
    a.reviewLabels = answer.page ? answer.page.labels : [];
    const rows = a.reviewLabels.map((lab, k) => h("li", { class: `label review-${k % 3}` },
      `${t("reviewLabel", lab.annotator, (lab.nodes || []).length, lab.words)} `,
      button("pick", t("reviewPick"), () => adjudicate({ pick: lab.label_id }))));
    const todo = answer.adjudicate.map((pid) => button("goto", pid, async () => {
      const out = await send({ type: "centrum.campaign.goto", page_id: pid });
      if (!failed(out, t("campaignCannotOpen"))) renderAnnot(t("reviewOpening"), "ok");
    }));
    const adj = answer.page && answer.page.adjudicated;
    a.reviewBox.replaceChildren(h("h2", { text: t("reviewTitle") }),
      h("div", { class: "hint", text: adj ? t("reviewAdjudicated", adj.how, adj.reviewer) : t("reviewHint") }),
      h("ol", { class: "labels" }, ...rows),
      button("union", t("reviewUnion"), () => union()), button("merge", t("reviewSaveMerged"), () => adjudicate({ merge: true })),
      h("div", { class: "hint", text: answer.adjudicate.length ? t("reviewToAdjudicate") : t("reviewToAdjudicateNone") }),
      ...todo);
    renderAnnot(t("reviewCount", a.reviewLabels.length));
  }

  function union() {
    const a = state.annot;
    const all = [...new Set((a.reviewLabels || []).flatMap((lab) => elementsOf(lab.nodes)))];
    a.picked = all.filter((el) => !all.some((o) => o !== el && o.contains(el)));
    renderAnnot(t("reviewUnionCount", a.picked.length));
  }

  async function adjudicate(choice) {
    const a = state.annot;
    if (choice.merge && !a.picked.length) return renderAnnot(t("reviewSelectMerged"), "error");
    const message = choice.merge ? { type: "centrum.campaign.adjudicate", nodes: selectedIds(a.picked) } :
      { type: "centrum.campaign.adjudicate", pick: choice.pick };
    const answer = await send(message);
    if (failed(answer, t("reviewNotAdjudicated"))) return undefined;
    return renderAnnot(t("reviewDone", answer.label_id, answer.how), "ok");
  }

  function inUi(event) {
    return state.ui && event.composedPath().includes(state.ui);
  }

  function onKey(e) {
    // Typing in the panel's own fields. From window the closed tree is hidden in composedPath(): ask the root.
    const focused = inUi(e) && state.shadow ? state.shadow.activeElement : null;
    if (focused && ["input", "textarea", "select"].includes(focused.localName)) return;
    const inCampaign = state.annot.campaign && state.annot.campaign.here;
    const act = { ArrowUp: "grow", "+": "grow", "=": "grow", ArrowDown: "shrink", "-": "shrink", Enter: "add",
      Backspace: "undo", s: "save", S: "save", ...(inCampaign ? { a: "accept", A: "accept" } : {}) }[e.key];
    if (!act || e.ctrlKey || e.metaKey || e.altKey) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    if (act === "accept") campaign.accept();
    else annot[act]();
  }

  function open(options) {
    enterMode("annotate");
    const c = (options && options.campaign) || null;
    state.annot = { current: null, below: [], picked: [], ids: null, annotator: (options && options.annotator) || "",
      campaign: c, suggestion: [], reviewLabels: null };
    state.annot.suggestion = c && c.here ? elementsOf(c.suggestion) : [];
    // Capture phase on window: the page's own handlers (links, menus) never see the annotator's clicks.
    listen(window, "click", (e) => {
      if (inUi(e)) return;
      e.preventDefault();
      e.stopImmediatePropagation();
      const target = e.composedPath().find((n) => n.nodeType === 1);
      if (target) annot.pick(target);
    }, true);
    listen(window, "keydown", onKey, true);
    listen(window, "resize", () => renderAnnot());
    renderAnnot(c && c.here ? t("annotStartSuggestion") : t("annotStart"));
    return { stage: state.stage, campaign: c ? { page_id: c.page_id, position: c.position, total: c.total } : null };
  }

  globalThis[KEY] = { open };
})();
