/* Centrum page-side view, injected (with collect.js) on the first press only.
 *
 * Stages: "highlight" (outline the main content, dim the rest: ui.css keyed on two attributes), "reader" (the main
 * content rebuilt, sanitized, in a shadow root over the page), restore (every attribute and element this file added
 * is removed and the scroll position put back, so the page's DOM is exactly what it was). "message" = an error or
 * "nothing found" is shown. The elements come from globalThis.centrumNodes, the collector's id -> element map.
 */
"use strict";

(() => {
  if (globalThis.centrumView) return;

  const MARK = "data-centrum-main";
  const STAGE = "data-centrum-stage";
  // Rebuilt in the reader: structure and text only. Everything else is unwrapped (its children kept) or dropped.
  const KEEP = new Set([
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "dl", "dt", "dd", "a", "img", "figure", "figcaption",
    "blockquote", "pre", "code", "em", "strong", "b", "i", "u", "s", "sub", "sup", "small", "mark", "q", "cite",
    "abbr", "time", "br", "hr", "table", "caption", "thead", "tbody", "tfoot", "tr", "td", "th", "div", "span",
    "section", "article", "main", "header", "footer", "aside", "del", "ins", "kbd", "var", "samp",
  ]);
  // Active or foreign content: never copied, not even its text.
  const DROP = new Set([
    "script", "style", "link", "meta", "base", "iframe", "frame", "frameset", "object", "embed", "noscript",
    "template", "form", "input", "button", "select", "textarea", "option", "canvas", "svg", "math", "audio",
    "video", "dialog", "head", "title", "slot", "portal", "applet", "param",
  ]);
  const SAFE_LINK = /^(https?:|mailto:)/i;
  const SAFE_IMAGE = /^(https?:|data:image\/(png|jpe?g|gif|webp|avif);)/i;

  const SHADOW_CSS = `
    :host { all: initial !important; }
    .toast { position: fixed; top: 12px; right: 12px; z-index: 2147483647; max-width: 28em; padding: 10px 14px;
      font: 14px/1.4 system-ui, sans-serif; color: #1b1b1b; background: #fff; border-left: 5px solid #e8590c;
      box-shadow: 0 4px 18px rgba(0,0,0,.25); border-radius: 4px; white-space: pre-wrap; }
    .toast.error { border-left-color: #c92a2a; background: #fff5f5; }
    .toast button { float: right; margin-left: 10px; border: 0; background: none; font-size: 16px; cursor: pointer; }
    .reader { position: fixed; inset: 0; z-index: 2147483646; overflow: auto; background: #fbfaf7; color: #1b1b1b; }
    .reader article { max-width: 42em; margin: 0 auto; padding: 48px 24px 96px;
      font: 20px/1.65 Georgia, "Noto Serif", "Noto Serif CJK JP", serif; overflow-wrap: break-word; }
    .reader h1.title { font: bold 32px/1.25 system-ui, sans-serif; margin: 0 0 8px; }
    .reader .meta { font: 13px system-ui, sans-serif; color: #666; margin-bottom: 32px; }
    .reader img { max-width: 100%; height: auto; }
    .reader pre { overflow: auto; font-size: 15px; background: #f1efe9; padding: 12px; }
    .reader table { border-collapse: collapse; } .reader td, .reader th { border: 1px solid #ccc; padding: 4px 8px; }
    .reader a { color: #1c5fb0; }
  `;

  const state = { stage: "idle", nodes: [], text: null, algorithm: "", ui: null, shadow: null, scroll: null };

  function ui() {
    if (state.ui && state.ui.isConnected) return state.shadow;
    const el = document.createElement("centrum-ui");
    const shadow = el.attachShadow({ mode: "open" });
    const style = document.createElement("style");
    style.textContent = SHADOW_CSS;
    shadow.appendChild(style);
    document.documentElement.appendChild(el); // outside <body>: never dimmed, never part of the page's layout
    state.ui = el;
    state.shadow = shadow;
    return shadow;
  }

  function toast(text, kind = "info") {
    const shadow = ui();
    let box = shadow.querySelector(".toast");
    if (!box) {
      box = document.createElement("div");
      shadow.appendChild(box);
    }
    box.className = `toast ${kind}`;
    box.setAttribute("role", kind === "error" ? "alert" : "status");
    // A host message can quote a huge offending value: keep the box readable.
    box.textContent = text.length > 1200 ? `${text.slice(0, 1000)}\u2026${text.slice(-150)}` : text;
    const close = document.createElement("button");
    close.textContent = "\u00d7";
    close.title = "close";
    close.addEventListener("click", () => box.remove());
    box.prepend(close);
    return box;
  }

  function unmark() {
    for (const el of state.nodes) el.removeAttribute(MARK);
    document.documentElement.removeAttribute(STAGE);
  }

  function isHidden(el) {
    if (el.hidden) return true;
    const cs = getComputedStyle(el);
    return cs.display === "none" || cs.visibility === "hidden";
  }

  function copyAttributes(src, dst) {
    const tag = dst.localName;
    if (tag === "a") {
      if (SAFE_LINK.test(src.href || "")) dst.setAttribute("href", src.href); // resolved absolute URL
      dst.setAttribute("rel", "noopener noreferrer");
    } else if (tag === "img") {
      const url = src.currentSrc || src.src || "";
      if (!SAFE_IMAGE.test(url)) return false;
      dst.setAttribute("src", url);
      if (src.alt) dst.setAttribute("alt", src.alt);
    } else if ((tag === "td" || tag === "th") && src.getAttribute("colspan")) {
      const span = parseInt(src.getAttribute("colspan"), 10);
      if (span > 0 && span < 100) dst.setAttribute("colspan", String(span));
    } else if (tag === "time" && src.getAttribute("datetime")) {
      dst.setAttribute("datetime", src.getAttribute("datetime"));
    }
    for (const name of ["lang", "dir", "title"]) {
      const v = src.getAttribute(name);
      if (v) dst.setAttribute(name, v);
    }
    return true;
  }

  // Rebuild `node`'s children into `out` from scratch: only allow-listed tags and attributes are created, so no
  // script, inline handler, javascript: URL, iframe or page style can reach the reader.
  function rebuild(node, out) {
    const children = node.shadowRoot ? node.shadowRoot.childNodes : node.childNodes;
    for (const child of children) {
      if (child.nodeType === Node.TEXT_NODE) {
        out.appendChild(document.createTextNode(child.data));
      } else if (child.nodeType === Node.ELEMENT_NODE) {
        const tag = child.localName;
        if (DROP.has(tag) || isHidden(child)) continue;
        if (KEEP.has(tag)) {
          const el = document.createElement(tag);
          if (!copyAttributes(child, el)) continue;
          out.appendChild(el);
          rebuild(child, el);
        } else {
          rebuild(child, out);
        }
      }
    }
  }

  function readerArticle() {
    const article = document.createElement("article");
    const lang = document.documentElement.lang;
    if (lang) article.setAttribute("lang", lang);
    article.setAttribute("dir", getComputedStyle(document.body || document.documentElement).direction || "ltr");
    const title = document.createElement("h1");
    title.className = "title";
    title.textContent = document.title || location.hostname;
    const meta = document.createElement("div");
    meta.className = "meta";
    meta.textContent = `${location.hostname} \u00b7 Centrum (${state.algorithm}) \u00b7 press the button again to restore`;
    article.append(title, meta);
    if (state.nodes.length) {
      for (const node of state.nodes) {
        const tag = node.localName;
        const el = document.createElement(KEEP.has(tag) ? tag : "div");
        article.appendChild(el);
        rebuild(node, el);
      }
    } else {
      for (const para of String(state.text || "").split(/\n+/)) {
        if (!para.trim()) continue;
        const p = document.createElement("p");
        p.textContent = para;
        article.appendChild(p);
      }
    }
    return article;
  }

  const view = {
    get stage() {
      return state.stage;
    },

    busy() {
      toast("Centrum: analysing the page\u2026");
      return { stage: state.stage };
    },

    highlight(result) {
      const map = globalThis.centrumNodes || [];
      const nodes = (result.nodes || []).map((i) => map[i]).filter((el) => el && el.nodeType === 1 && el.isConnected);
      state.algorithm = result.algorithm || "";
      if (!nodes.length && !result.text) {
        state.stage = "message";
        toast(`Centrum found no main content on this page${result.message ? `: ${result.message}` : "."}`, "error");
        return { stage: state.stage, nodes: 0, message: result.message || "" };
      }
      state.scroll = [window.scrollX, window.scrollY];
      state.nodes = nodes;
      state.text = result.text || null;
      state.stage = "highlight";
      if (nodes.length) {
        for (const el of nodes) el.setAttribute(MARK, "");
        document.documentElement.setAttribute(STAGE, "highlight");
        const r = nodes[0].getBoundingClientRect();
        if (r.bottom < 0 || r.top > window.innerHeight) nodes[0].scrollIntoView({ block: "start" });
        toast(`Centrum (${state.algorithm}): main content outlined. Press again for the reader view.`);
      } else {
        toast(`Centrum (${state.algorithm}) found the text but no element to outline. Press again to read it.`);
      }
      return { stage: state.stage, nodes: nodes.length };
    },

    reader() {
      const shadow = ui();
      const old = shadow.querySelector(".toast");
      if (old) old.remove();
      const reader = document.createElement("div");
      reader.className = "reader";
      reader.setAttribute("role", "document");
      reader.appendChild(readerArticle());
      shadow.appendChild(reader);
      document.documentElement.setAttribute(STAGE, "reader");
      state.stage = "reader";
      return { stage: state.stage, chars: reader.textContent.length };
    },

    restore() {
      unmark();
      if (state.ui) state.ui.remove();
      state.ui = null;
      state.shadow = null;
      if (state.scroll) window.scrollTo(state.scroll[0], state.scroll[1]);
      state.nodes = [];
      state.text = null;
      state.scroll = null;
      state.stage = "idle";
      return { stage: state.stage };
    },

    error(err) {
      unmark();
      state.nodes = [];
      state.stage = "message";
      const field = err.field ? ` (${err.field})` : "";
      toast(`Centrum: ${err.message}${field}\n[${err.code}]`, "error");
      return { stage: state.stage, error: err };
    },
  };

  globalThis.centrumView = view;
})();
