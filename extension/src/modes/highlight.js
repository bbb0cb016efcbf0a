/* Centrum highlight mode: the main content (with its headline) in one outline and the rest dimmed, and the
 * "message" stage (an error or "nothing found" shown in a toast). Messages are for readers: no algorithm names
 * (those stay in the debugger), and an answer that is probably not an article says so and offers the debugger. */
"use strict";

(() => {
  const KEY = Symbol.for("centrum.mode.highlight");
  if (globalThis[KEY]) return;
  const { state, MARK, DIM, STAGE, nodeList, toast, unmark, layer, drawBox, placeInCorner, addStyle } =
    globalThis[Symbol.for("centrum.ui")];
  const { t } = globalThis[Symbol.for("centrum.readerview")];

  // Below this many words the answer is a tagline or a teaser rather than an article; above this share of its text
  // in links it is a list of links (a home page, a category page).
  const FEW_WORDS = 25;
  const LISTING_LINK_SHARE = 0.5;
  const UNSPACED = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/g;

  // Words of spaced scripts plus characters of unspaced ones at two per word, so a Chinese answer is not "one word".
  function words(text) {
    const unspaced = (text.match(UNSPACED) || []).length;
    const spaced = (text.replace(UNSPACED, " ").match(/[\p{L}\p{N}]+/gu) || []).length;
    return spaced + Math.round(unspaced / 2);
  }

  /* Fewer than FEW_WORDS words in `text`? Words only grow with the text, so a start that already holds enough
     settles it without counting a whole long answer (the count is most of the test's time on a large page). */
  function fewWords(text) {
    for (let end = 4096; end < text.length; end *= 8) if (words(text.slice(0, end)) >= FEW_WORDS) return false;
    return words(text) < FEW_WORDS;
  }

  /* "" when the answer looks like an article, else why not ("little" text, a "listing" of links). */
  function doubt(nodes, text) {
    const all = nodes.length ? nodes.map((el) => el.innerText || el.textContent || "").join("\n") : String(text || "");
    if (fewWords(all)) return "little";
    let linked = 0;
    for (const el of nodes) for (const a of el.querySelectorAll("a[href]")) linked += (a.innerText || "").length;
    return nodes.length && linked > LISTING_LINK_SHARE * all.length ? "listing" : "";
  }

  /* The elements to dim: the children of every ancestor of a highlighted element that are neither highlighted nor an
     ancestor of one (not their descendants again, so dimming does not compound), and never the view's own host
     element. Found once here rather than matched by a :has() rule, which makes the browser re-test every element of
     a large page on each style change. */
  function toDim(nodes) {
    const marked = new Set(nodes);
    const onPath = new Set();
    for (const el of nodes) {
      for (let a = el.parentElement; a && !onPath.has(a); a = a.parentElement) onPath.add(a);
    }
    const out = [];
    for (const a of onPath) {
      for (const c of a.children) {
        if (!marked.has(c) && !onPath.has(c) && c.localName !== "centrum-ui") out.push(c);
      }
    }
    return out;
  }

  const SEE_THROUGH = /^(transparent|rgba\([^)]*,\s*0\))$/;
  const MOVES_APART = new Set(["fixed", "sticky"]);

  /* How each element to dim is dimmed. Opacity below 1 makes an element a stacking context, and Blink then restyles
     its whole subtree: dimming the rest of a large page that way costs more than everything else the press does. So
     an element that moves with the document is covered instead, in the view's own layer, by the colour behind it at
     DIM_COVER opacity: the very pixels opacity 1 - DIM_COVER gives where that colour is behind it. An element that can
     move apart from the document (fixed or sticky, or inside a fixed, sticky, scrolling or clipping box, where a cover
     would not follow it or would spill over) keeps the attribute that ui.css dims. Reads styles only, no layout. */
  function dimPlan(elements) {
    const apart = new Map([[document.documentElement, false], [document.body, false]]);
    const backdrop = new Map();
    const movesApart = (a) => {
      if (!a) return false;
      if (!apart.has(a)) {
        const s = getComputedStyle(a);
        apart.set(a, MOVES_APART.has(s.position) || s.overflowX !== "visible" || s.overflowY !== "visible" ||
          movesApart(a.parentElement));
      }
      return apart.get(a);
    };
    const colourBehind = (a) => {
      if (!a) return "rgb(255, 255, 255)"; // the canvas of a page that paints none
      if (!backdrop.has(a)) {
        const bg = getComputedStyle(a).backgroundColor;
        backdrop.set(a, SEE_THROUGH.test(bg) ? colourBehind(a.parentElement) : bg);
      }
      return backdrop.get(a);
    };
    const attribute = [];
    const covers = new Map(); // colour -> elements
    for (const c of elements) {
      if (movesApart(c.parentElement) || MOVES_APART.has(getComputedStyle(c).position)) {
        attribute.push(c);
        continue;
      }
      const colour = colourBehind(c.parentElement);
      if (!covers.has(colour)) covers.set(colour, []);
      covers.get(colour).push(c);
    }
    return { attribute, covers };
  }

  // The answer's outline: one thin box, drawn in the view's layer (ui.js) over the page.
  addStyle(".box.main { border: 3px solid #e8590c; border-radius: 6px; }");

  const DIM_COVER = 0.75;
  const SVG = "http://www.w3.org/2000/svg";

  /* One path per colour over the elements' boxes (a box per line of an inline element), in document coordinates. */
  function drawCovers(covers) {
    const svg = document.createElementNS(SVG, "svg");
    const [sx, sy] = [window.scrollX, window.scrollY];
    let [right, bottom] = [1, 1];
    for (const [colour, elements] of covers) {
      const d = [];
      for (const el of elements) {
        for (const r of el.getClientRects()) {
          if (r.width <= 0 || r.height <= 0) continue;
          d.push(`M${r.left + sx} ${r.top + sy}h${r.width}v${r.height}h${-r.width}z`);
          right = Math.max(right, r.right + sx);
          bottom = Math.max(bottom, r.bottom + sy);
        }
      }
      const path = document.createElementNS(SVG, "path");
      path.setAttribute("d", d.join(""));
      path.setAttribute("fill", colour);
      path.setAttribute("fill-opacity", String(DIM_COVER));
      svg.appendChild(path);
    }
    // As large as what it covers (a smaller one with overflow shown was seen to leave rows of pixels uncovered).
    svg.setAttribute("width", String(Math.ceil(right)));
    svg.setAttribute("height", String(Math.ceil(bottom)));
    return svg;
  }

  const LAYERS = '.layer[data-layer="dim"], .layer[data-layer="main"]'; // what the highlight draws
  const HEADLINE_GAP = 600; // px between a headline and the answer below it, room for a lead picture
  const OUTLINE_PAD = 6; // px between the answer and its outline

  /* The page's main heading just above the answer, when the answer has none of its own: the last <h1> before the
     answer in document order (<h2> on a page without <h1>) that ends above the answer's top, at most HEADLINE_GAP
     above it, and overlaps it horizontally. News pages often keep the headline outside the article's body. */
  function headline(nodes, box) {
    if (!box || nodes.some((el) => el.localName === "h1" || el.getElementsByTagName("h1").length)) return null;
    const h1 = document.getElementsByTagName("h1");
    const first = nodes[0];
    let found = null;
    for (const el of h1.length ? h1 : document.getElementsByTagName("h2")) {
      if (!(first.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_PRECEDING) || el.closest("nav")) continue;
      const r = el.getBoundingClientRect();
      if (!r.width || !r.height || r.bottom > box.top + 1 || box.top - r.bottom > HEADLINE_GAP) continue;
      if (r.right > box.left && r.left < box.right) found = el;
    }
    return found;
  }

  /* The viewport box around `elements` (those with a size), or null. */
  function union(elements) {
    let box = null;
    for (const el of elements) {
      const r = el.getBoundingClientRect();
      if (r.width <= 0 && r.height <= 0) continue;
      box = box ? { left: Math.min(box.left, r.left), top: Math.min(box.top, r.top),
        right: Math.max(box.right, r.right), bottom: Math.max(box.bottom, r.bottom) }
        : { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
    }
    return box;
  }

  /* One outline around the whole answer (not a box per paragraph: a forum answer is a hundred of them), in the
     view's own layer, so no page style can hide, clip or restyle it. `box`: viewport coordinates. */
  function drawOutline(box) {
    const lay = layer("main");
    lay.replaceChildren();
    if (!box) return;
    const [sx, sy] = [window.scrollX, window.scrollY];
    const [x, y] = [Math.max(0, box.left + sx - OUTLINE_PAD), Math.max(0, box.top + sy - OUTLINE_PAD)];
    drawBox(lay, [x, y, box.right + sx + OUTLINE_PAD - x, box.bottom + sy + OUTLINE_PAD - y], "main", "");
  }

  /* The toast in the viewport corner where it hides least of the outlined answer, again whenever the page scrolls
     or its layout moves. */
  function placeToast() {
    const toastBox = state.shadow && state.shadow.querySelector(".toast");
    const outline = state.shadow && state.shadow.querySelector('.layer[data-layer="main"] .box');
    if (!toastBox || !outline) return;
    const [x, y] = [parseFloat(outline.style.left) - window.scrollX, parseFloat(outline.style.top) - window.scrollY];
    const [w, hgt] = [parseFloat(outline.style.width), parseFloat(outline.style.height)];
    placeInCorner(toastBox, [{ left: x, top: y, right: x + w, bottom: y + hgt }]);
  }

  /* Outline `shown` and dim everything else (dimPlan), and keep both on their elements when the page's layout changes
     (a resize, images and fonts arriving) until unmark() stops it. */
  function outline(shown) {
    const { attribute, covers } = dimPlan(toDim(shown));
    const draw = () => {
      // Every read before the layer is touched: the reads find the layout still valid, the page is laid out once.
      const svg = covers.size ? drawCovers(covers) : null;
      const box = union(shown);
      if (svg) layer("dim").replaceChildren(svg);
      drawOutline(box);
      placeToast();
    };
    draw();
    for (const c of attribute) c.setAttribute(DIM, "");
    state.dimmed.push(...attribute);
    let queued = 0;
    const redraw = () => {
      if (!queued) queued = requestAnimationFrame(() => { queued = 0; draw(); });
    };
    let observed = false; // an observer reports the size it starts with: nothing has moved then
    const resized = new ResizeObserver(() => (observed ? redraw() : (observed = true)));
    resized.observe(document.documentElement);
    let placing = 0;
    const onScroll = () => {
      if (!placing) placing = requestAnimationFrame(() => { placing = 0; placeToast(); });
    };
    window.addEventListener("resize", redraw);
    window.addEventListener("scroll", onScroll, { passive: true });
    state.undim = () => {
      resized.disconnect();
      window.removeEventListener("resize", redraw);
      window.removeEventListener("scroll", onScroll);
      cancelAnimationFrame(queued);
      cancelAnimationFrame(placing);
      for (const el of state.shadow ? state.shadow.querySelectorAll(LAYERS) : []) el.remove();
    };
  }

  function nothingFound(result) {
    state.stage = "message";
    toast(`${t("nothingFound")}${result.message ? `\n${result.message}` : ""}`, "error", ["debugger", "annotate"]);
    return { stage: state.stage, nodes: 0, message: result.message || "" };
  }

  function highlight(result) {
    const map = nodeList();
    const nodes = (result.nodes || []).map((i) => map[i]).filter((el) => el && el.nodeType === 1 && el.isConnected);
    // Nothing to outline, but the answer has a text that the background did not send along: ask for it.
    if (!nodes.length && result.text === undefined && result.hasText) return { stage: state.stage, needsText: true };
    state.algorithm = result.algorithm || "";
    state.result = result;
    if (!nodes.length && !result.text) return nothingFound(result);
    state.scroll = [window.scrollX, window.scrollY];
    state.nodes = nodes;
    state.text = result.text || null;
    state.stage = "highlight";
    const why = doubt(nodes, result.text);
    const note = why ? `\n${t(why === "little" ? "doubtLittle" : "doubtListing")}` : "";
    if (nodes.length) {
      // Geometry is read before anything is written: the layout that the text above needed is still valid, so the
      // page is laid out once, not again for these reads.
      const title = headline(nodes, union(nodes));
      const shown = title ? [title, ...nodes] : nodes;
      const r = shown[0].getBoundingClientRect();
      outline(shown);
      for (const el of nodes) el.setAttribute(MARK, "");
      document.documentElement.setAttribute(STAGE, "highlight");
      if (r.bottom < 0 || r.top > window.innerHeight) shown[0].scrollIntoView({ block: "start" });
      toast(`${t("outlined")}${note}`, why ? "doubt" : "info", why ? ["debugger", "reader", "annotate"] : true);
      placeToast();
    } else {
      toast(`${t("textOnly")}${note}`, why ? "doubt" : "info", why ? ["debugger", "reader", "annotate"] : true);
    }
    return { stage: state.stage, nodes: nodes.length, doubt: why };
  }

  // What each error means for the reader; the code and the exact message follow for a bug report.
  const PLAIN = { E_HOST_MISSING: "errorHostMissing", E_TIMEOUT: "errorTimeout", E_DISCONNECTED: "errorDisconnected",
    E_REQUEST_TOO_LARGE: "errorTooLarge", E_TOO_LARGE: "errorTooLarge", E_PAGE: "errorPage", E_PARAMS: "errorParams",
    E_UNKNOWN_ALGORITHM: "errorParams", E_UNAVAILABLE: "errorParams" };

  function error(err) {
    unmark();
    state.nodes = [];
    state.stage = "message";
    const field = err.field ? ` (${err.field})` : "";
    toast(`${t(PLAIN[err.code] || "errorOther")}\n${err.message}${field} [${err.code}]`, "error");
    return { stage: state.stage, error: err };
  }

  globalThis[KEY] = { highlight, error, words };
})();
