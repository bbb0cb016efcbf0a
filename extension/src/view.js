/* Centrum page-side view, injected (with collect.js, clean.js and modes/*.js) on the first press only.
 *
 * The background drives it through one object registered under a symbol. Stages: "highlight" (modes/highlight.js),
 * "reader" (modes/reader.js), "debugger" (modes/debugger.js), "annotate" (modes/annotator.js), "message" (an error
 * or "nothing found" is shown), and restore (every attribute and element the view added is removed, listeners
 * detached and the scroll position put back, so the page's DOM is exactly what it was). The shared UI, its closed
 * shadow root and the isTrusted rule live in modes/ui.js.
 */
"use strict";

(() => {
  const KEY = Symbol.for("centrum.view");
  if (globalThis[KEY]) return;
  const mode = (name) => globalThis[Symbol.for(`centrum.mode.${name}`)];
  const { state, toast, unmark, detach } = globalThis[Symbol.for("centrum.ui")];

  /* `show` for an answer the busy message announced, unless the user closed the view while it was on its way. */
  const answered = (show) => (arg) => {
    if (state.cancelled) {
      state.cancelled = false;
      return { stage: state.stage, cancelled: true };
    }
    const out = show(arg);
    if (!(out && out.needsText)) state.busy = false; // a highlight that asks for its text is still on its way
    return out;
  };

  const view = {
    get stage() {
      return state.stage;
    },

    busy() {
      state.busy = true;
      state.cancelled = false;
      toast(globalThis[Symbol.for("centrum.readerview")].t("busy"));
      return { stage: state.stage };
    },

    highlight: answered((result) => mode("highlight").highlight(result)),
    error: answered((err) => mode("highlight").error(err)),
    /* The host's handle of the highlighted page and its algorithm (for the reader's outputs request). */
    page: () => ({ handle: (state.result && state.result.page) || null, algorithm: state.algorithm || "" }),
    /* The reader's metadata, Markdown and HTML, from the host when the reader opens. */
    outputs: (o) => mode("reader").setOutputs(o),
    /* The clean reader content as data (for the reader tab). */
    readerData: () => mode("reader").readerData(),
    reader: (settings) => mode("reader").reader(settings),
    debugger: answered((data) => mode("debugger").open(data)),
    annotate: (options) => mode("annotator").open(options),

    /* The closed shadow root, for code running in this isolated world only (the end-to-end tests reach the panels
       through it over the DevTools protocol); the page has no way to call this. */
    uiRoot() {
      return state.shadow;
    },

    restore() {
      // Closed (Esc, ×) while the busy message was up: the answer on its way is not shown when it comes.
      state.cancelled = state.busy;
      state.busy = false;
      detach();
      unmark();
      if (state.ui) state.ui.remove();
      state.ui = null;
      state.shadow = null;
      if (state.scroll) window.scrollTo(state.scroll[0], state.scroll[1]);
      state.nodes = [];
      state.text = null;
      state.scroll = null;
      state.debug = null;
      state.annot = null;
      state.result = null;
      state.stage = "idle";
      return { stage: state.stage };
    },
  };

  // A symbol key: no element id, form control name or frame name on the page can stand in for it.
  globalThis[KEY] = view;
})();
