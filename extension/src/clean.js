/* Centrum: the sanitized reader content, shared by the in-page reader (view.js) and the reader tab (reader.js).
 *
 * tree(nodes) walks the LIVE elements the algorithm chose and describes them as plain data: a node is a string
 * (text) or {t: tag, a: {attr: value}, c: [children]}, keeping only allow-listed tags and attributes. build(tree,
 * doc) turns that data back into elements with createElement/setAttribute, checking the allow-lists again (the
 * reader tab must not trust what it is handed). No page string is ever parsed as HTML, so no script, inline handler,
 * javascript: URL, frame, object or page style can reach the reader.
 */
"use strict";

(() => {
  // Registered under a symbol: a page element id="centrumClean" (a named window property, visible in the content
  // script's world too) must not make this script believe it already ran.
  const KEY = Symbol.for("centrum.clean");
  if (globalThis[KEY]) return;

  /* The extension API namespace, or null. Named page elements (id="browser", a frame named "browser") can stand in
     for a global name, but none of them can yield a function, so the real namespace is the one whose
     runtime.sendMessage is a function (`browser`, with promises, first). Chromium has a hole here: when the page
     already has a window property "chrome" or "browser" (an element with that id) it installs that namespace on
     the element, and a <form id="chrome"> with a control named "runtime" then hides chrome.runtime behind the
     control (a form's named controls override every other property). With both names taken that way nothing in
     this world reaches the API: api is null and the panels say so (view.js); highlight and reader view, driven
     from the background, still work. */
  const api = [globalThis.browser, globalThis.chrome].find((ns) => {
    try {
      return Boolean(ns) && typeof ns.runtime.sendMessage === "function" && typeof ns.storage.local.set === "function";
    } catch (e) {
      return false;
    }
  }) || null;

  // Handlers run for the user's own input only (a page script's el.click() is isTrusted false).
  const trusted = (fn) => (event) => (event && event.isTrusted === true ? fn(event) : undefined);

  // Structure and text. Everything else is unwrapped (its children kept) or dropped.
  const KEEP = new Set([
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "dl", "dt", "dd", "a", "img", "figure", "figcaption",
    "blockquote", "pre", "code", "em", "strong", "b", "i", "u", "s", "sub", "sup", "small", "mark", "q", "cite",
    "abbr", "time", "br", "hr", "table", "caption", "thead", "tbody", "tfoot", "tr", "td", "th", "colgroup", "col",
    "div", "span", "section", "article", "main", "header", "footer", "aside", "del", "ins", "kbd", "var", "samp",
    "ruby", "rt", "rp", "bdi", "bdo", "wbr", "details", "summary",
  ]);
  // Active or foreign content: never copied, not even its text.
  const DROP = new Set([
    "script", "style", "link", "meta", "base", "iframe", "frame", "frameset", "object", "embed", "noscript",
    "template", "form", "input", "button", "select", "textarea", "option", "canvas", "svg", "math", "audio",
    "video", "dialog", "head", "title", "slot", "portal", "applet", "param", "centrum-ui",
  ]);
  const ATTRS = new Set(["href", "src", "alt", "lang", "dir", "title", "colspan", "rowspan", "datetime", "start",
    "width", "height", "open"]);
  const SAFE_LINK = /^(https?:|mailto:)/i;
  const SAFE_IMAGE = /^(https?:|data:image\/(png|jpe?g|gif|webp|avif);)/i;
  const MAX_NODES = 200000; // a runaway page cannot make the reader build forever

  // clip: rect(...) of the "visually hidden" pattern: an area of at most one pixel shows nothing.
  function clippedAway(cs) {
    if (cs.position === "absolute" || cs.position === "fixed") {
      const m = /^rect\(([^)]*)\)$/.exec(cs.clip || "");
      if (m) {
        const [top, right, bottom, left] = m[1].split(/[\s,]+/).map((v) => parseFloat(v));
        if ([top, right, bottom, left].every(Number.isFinite) && (right - left) * (bottom - top) <= 1) return true;
      }
    }
    const inset = /^inset\((\d+(?:\.\d+)?)%/.exec(cs.clipPath || "");
    return Boolean(inset) && parseFloat(inset[1]) >= 50;
  }

  /* Text a reader of the page does not see stays out of the reader view (issue #20): display none, hidden,
     visibility hidden/collapse, opacity 0 (the subtree is skipped, so an ancestor's 0 hides its descendants),
     clipped to nothing, or a box entirely off the document's top/left edge (left: -10000px) or a one-pixel box
     with its overflow cut (the screen-reader-only pattern). The same rules as the collector's VISIBLE flag, asked of
     the live elements here because the snapshot's flags stay in the background and a display: contents element
     (no box, visible children) must not take its subtree with it. Font size 0 is a per-text-node rule (see walk):
     a child may set a size again. */
  function isHidden(el) {
    if (el.hidden) return true;
    const cs = getComputedStyle(el);
    if (cs.display === "none" || cs.visibility === "hidden" || cs.visibility === "collapse") return true;
    if (cs.display === "contents") return false;
    if (parseFloat(cs.opacity) === 0 || clippedAway(cs)) return true;
    const r = el.getBoundingClientRect();
    if (r.width > 0 || r.height > 0) {
      if (r.right + window.scrollX <= 0 || r.bottom + window.scrollY <= 0) return true;
      if (r.width <= 1 && r.height <= 1 && cs.overflow !== "visible") return true;
    }
    return false;
  }

  // An ancestor of a chosen element hides it (opacity 0 up the tree, display none, off-screen container).
  function hiddenAbove(el) {
    for (let p = el.parentElement; p; p = p.parentElement) if (isHidden(p)) return true;
    return false;
  }

  const zeroFont = (el) => parseFloat(getComputedStyle(el).fontSize) === 0;

  function attributes(src, tag) {
    const a = {};
    if (tag === "a") {
      if (SAFE_LINK.test(src.href || "")) a.href = src.href; // resolved absolute URL
    } else if (tag === "img") {
      const url = src.currentSrc || src.src || "";
      if (!SAFE_IMAGE.test(url)) return null;
      a.src = url;
      if (src.alt) a.alt = src.alt;
      // Keep the intrinsic size as a hint so the layout does not jump while images load.
      if (src.naturalWidth) a.width = String(src.naturalWidth);
      if (src.naturalHeight) a.height = String(src.naturalHeight);
    } else if (tag === "td" || tag === "th") {
      for (const name of ["colspan", "rowspan"]) {
        const span = parseInt(src.getAttribute(name) || "", 10);
        if (span > 1 && span < 1000) a[name] = String(span);
      }
    } else if (tag === "time" && src.getAttribute("datetime")) {
      a.datetime = src.getAttribute("datetime");
    } else if (tag === "details" && src.open) {
      a.open = ""; // shown as the page showed it
    } else if (tag === "ol" && src.getAttribute("start")) {
      const start = parseInt(src.getAttribute("start"), 10);
      if (Number.isFinite(start)) a.start = String(start);
    }
    for (const name of ["lang", "dir", "title"]) {
      const v = src.getAttribute(name);
      if (v) a[name] = v;
    }
    return a;
  }

  function walk(node, out, budget) {
    const children = node.shadowRoot ? node.shadowRoot.childNodes : node.childNodes;
    let noText = null; // font-size 0 on `node`: its own text draws nothing (asked once, on the first text child)
    for (const child of children) {
      if (budget.left-- <= 0) return;
      if (child.nodeType === Node.TEXT_NODE) {
        if (noText === null) noText = zeroFont(node);
        if (!noText) out.push(child.data);
      } else if (child.nodeType === Node.ELEMENT_NODE) {
        const tag = child.localName;
        if (DROP.has(tag) || isHidden(child)) continue;
        if (KEEP.has(tag)) {
          const a = attributes(child, tag);
          if (!a) continue;
          const item = { t: tag, a, c: [] };
          out.push(item);
          walk(child, item.c, budget);
        } else {
          walk(child, out, budget); // unknown or presentational wrapper: keep what is inside
        }
      }
    }
  }

  /* The clean description of the chosen elements plus the page facts the reader shows. */
  function tree(nodes, text) {
    const budget = { left: MAX_NODES };
    const blocks = [];
    for (const node of nodes) {
      if (isHidden(node) || hiddenAbove(node)) continue;
      const tag = node.localName;
      const item = { t: KEEP.has(tag) ? tag : "div", a: KEEP.has(tag) ? (attributes(node, tag) || {}) : {}, c: [] };
      blocks.push(item);
      walk(node, item.c, budget);
    }
    if (!nodes.length) {
      for (const para of String(text || "").split(/\n+/)) if (para.trim()) blocks.push({ t: "p", a: {}, c: [para] });
    }
    const lang = document.documentElement.lang || "";
    const dir = getComputedStyle(document.body || document.documentElement).direction || "ltr";
    return { title: document.title || location.hostname, url: location.href, host: location.hostname, lang, dir,
      blocks };
  }

  function safeAttr(tag, name, value) {
    if (!ATTRS.has(name) || typeof value !== "string") return false;
    if (name === "href") return tag === "a" && SAFE_LINK.test(value);
    if (name === "src") return tag === "img" && SAFE_IMAGE.test(value);
    return true;
  }

  /* Elements from the clean description (validated again here). */
  function build(items, doc, parent) {
    for (const item of items) {
      if (typeof item === "string") {
        parent.appendChild(doc.createTextNode(item));
        continue;
      }
      if (!item || typeof item !== "object" || !KEEP.has(item.t)) continue;
      const el = doc.createElement(item.t);
      for (const [name, value] of Object.entries(item.a || {})) {
        if (safeAttr(item.t, name, value)) el.setAttribute(name, value);
      }
      if (item.t === "a") el.setAttribute("rel", "noopener noreferrer");
      if (item.t === "img") el.setAttribute("loading", "lazy");
      parent.appendChild(el);
      if (Array.isArray(item.c)) build(item.c, doc, el);
    }
    return parent;
  }

  /* The whole reader <article>: title, source line, content. */
  function article(data, doc, note) {
    const art = doc.createElement("article");
    if (data.lang) art.setAttribute("lang", data.lang);
    art.setAttribute("dir", data.dir === "rtl" ? "rtl" : "ltr");
    // CJK text reads better with more leading and no hyphenation-driven justification.
    if (/^(zh|ja|ko)\b/i.test(data.lang || "")) art.classList.add("cjk");
    const title = doc.createElement("h1");
    title.className = "title";
    title.textContent = data.title || "";
    const meta = doc.createElement("div");
    meta.className = "meta";
    meta.textContent = `${data.host || ""}${note ? ` \u00b7 ${note}` : ""}`;
    art.append(title, meta);
    const body = doc.createElement("div");
    body.className = "content";
    art.appendChild(build(data.blocks || [], doc, body));
    return art;
  }

  // Reader styles: the in-page reader (inside a shadow root) and the reader tab use the same sheet.
  const READER_CSS = `
    .reader { --bg: #fbfaf7; --fg: #1b1b1b; --muted: #666; --link: #1c5fb0; --code: #f1efe9; --rule: #ccc;
      background: var(--bg); color: var(--fg); }
    .reader.dark { --bg: #1d1f21; --fg: #e6e3dc; --muted: #9a9a9a; --link: #8ab4f8; --code: #2a2d30; --rule: #555; }
    .reader article { max-width: 42em; margin: 0 auto; padding: 56px 24px 96px; font-size: var(--size, 20px);
      line-height: 1.65; font-family: Georgia, "Noto Serif", "Noto Serif CJK JP", serif; overflow-wrap: break-word; }
    .reader article article { padding: 0; margin: 0; max-width: none; font-size: inherit; }
    .reader article.cjk { line-height: 1.9; font-family: "Noto Sans CJK JP", "Noto Serif CJK JP", sans-serif; }
    .reader h1.title { font: bold 1.6em/1.25 system-ui, sans-serif; margin: 0 0 8px; }
    .reader .meta { font: 13px system-ui, sans-serif; color: var(--muted); margin-bottom: 32px; }
    .reader img { max-width: 100%; height: auto; }
    .reader figure { margin: 1em 0; } .reader figcaption { font-size: .85em; color: var(--muted); }
    .reader pre { overflow: auto; font-size: .75em; line-height: 1.45; background: var(--code); padding: 12px;
      white-space: pre; direction: ltr; text-align: left; }
    .reader code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
    .reader table { border-collapse: collapse; display: block; overflow-x: auto; }
    .reader td, .reader th { border: 1px solid var(--rule); padding: 4px 8px; }
    .reader a { color: var(--link); }
    .reader blockquote { border-inline-start: 3px solid var(--rule); margin-inline: 0; padding-inline-start: 1em; }
    .reader .bar { position: sticky; top: 0; display: flex; gap: 6px; justify-content: flex-end; padding: 8px 12px;
      font: 13px system-ui, sans-serif; background: var(--bg); border-bottom: 1px solid var(--rule); z-index: 1; }
    .reader .bar button, .reader .bar select { font: 13px system-ui, sans-serif; padding: 3px 8px;
      color: var(--fg); background: var(--code); border: 1px solid var(--rule); border-radius: 3px; cursor: pointer; }
  `;

  const SETTINGS = { readerTheme: "light", readerFontSize: 20, readerIn: "page" };

  // Without the API (see above) a setting applies to this reader only.
  const storage = () => (api ? api.storage.local : { set: () => Promise.resolve() });

  /* Reader toolbar: theme, font size, where the reader opens. Every change is stored (chrome.storage.local). */
  function toolbar(doc, reader, settings, onClose) {
    const bar = doc.createElement("div");
    bar.className = "bar";
    const apply = () => {
      reader.classList.toggle("dark", settings.readerTheme === "dark");
      reader.style.setProperty("--size", `${settings.readerFontSize}px`);
      theme.textContent = settings.readerTheme === "dark" ? "Light" : "Dark";
      where.value = settings.readerIn;
    };
    const save = (patch) => {
      Object.assign(settings, patch);
      apply();
      return storage().set(patch);
    };
    const button = (name, label, title, fn) => {
      const b = doc.createElement("button");
      b.type = "button";
      b.dataset.action = name;
      b.textContent = label;
      b.title = title;
      b.addEventListener("click", trusted(fn));
      bar.appendChild(b);
      return b;
    };
    button("smaller", "A\u2212", "smaller text", () => save({ readerFontSize: Math.max(12, settings.readerFontSize - 2) }));
    button("larger", "A+", "larger text", () => save({ readerFontSize: Math.min(40, settings.readerFontSize + 2) }));
    const theme = button("theme", "Dark", "light / dark", () =>
      save({ readerTheme: settings.readerTheme === "dark" ? "light" : "dark" }));
    const where = doc.createElement("select");
    where.dataset.action = "reader-in";
    where.title = "where the reader view opens next time";
    for (const [value, label] of [["page", "open in the page"], ["tab", "open in a new tab"]]) {
      const o = doc.createElement("option");
      o.value = value;
      o.textContent = label;
      where.appendChild(o);
    }
    where.addEventListener("change", trusted(() => save({ readerIn: where.value })));
    bar.appendChild(where);
    if (onClose) button("close", "\u00d7", "restore the page", onClose);
    apply();
    return bar;
  }

  globalThis[KEY] = { api, tree, build, article, toolbar, READER_CSS, SETTINGS, KEEP, DROP };
})();
