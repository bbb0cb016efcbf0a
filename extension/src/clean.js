/* Centrum: the sanitized reader content, shared by the in-page reader (modes/reader.js) and the reader tab
 * (reader.js); readerview.js lays it out.
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
  // Where lazy-loading scripts keep an image's real address until it scrolls into view; a data: src shorter than
  // PLACEHOLDER_DATA_URI is their blank placeholder (allowlist.json, the same lists as the host's outputs).
  const LAZY_SRC = ["data-src", "data-lazy-src", "data-original", "data-lazy", "data-url", "data-hi-res-src",
    "data-full-src", "data-echo"];
  const LAZY_SRCSET = ["data-srcset", "data-lazy-srcset"];
  const PLACEHOLDER_DATA_URI = 512;
  const MAX_NOSCRIPT_IMAGES = 10;
  const MAX_LAZY_WRAPPED = 1000; // pictures taken out of hidden wrappers (lazyInside): allowlist.json

  // Threads and comment lists (issue #44 item 2), read from class and id words as forum and comment engines write
  // them (phpBB, vBulletin, XenForo, Discourse, WordPress...): a user card (avatar, rank, Joined / Messages) gives
  // only its member's name, as small text; a post's author-and-date line is small text; a quote box is a quote;
  // signatures, avatars, reply / quote / like buttons, reply forms and page links are not what a reader reads.
  // The word lists are allowlist.json's "thread" (the host's outputs read them there), each word a regex
  // alternative between word edges (start, end, space, "_" or "-"; a quote word ends the class word: not
  // "quote-author"), and the *_WHOLE ones whole class words ("user" is no "user-content-…" heading id).
  const THREAD_DROP = [
    "post-?signature", "message-?signature", "user-?signature", "forum-?signature", "signaturecontainer",
    "post-?actions?", "message-?actions?", "action-?bar", "actionbar", "post-?controls", "postcontrols",
    "post-?buttons", "post-?tools", "reactions?-?bar", "likes?-?bar", "pagination", "pager", "page-?nav", "pagenav",
    "paging", "page-?numbers", "pagelinks", "reply-?link", "comment-?reply-?link", "quote-?button", "respond",
    "comment-?form", "reply-?form", "quick-?reply"
  ];
  const THREAD_DROP_WHOLE = [
    "signature", "usersig", "avatar"
  ];
  const THREAD_CARD = [
    "user-?info", "userinfo", "user-?card", "usercard", "user-?details", "userdetails", "post-?profile",
    "postprofile", "poster-?info", "posterinfo", "member-?info", "memberinfo", "message-?user", "post-?user",
    "postuser", "postbit-?user", "userdata", "user-?data", "user-?panel", "user-?block"
  ];
  const THREAD_CARD_WHOLE = [
    "user", "poster"
  ];
  const THREAD_META = [
    "post-?date", "postdate", "post-?time", "post-?meta", "postmeta", "post-?info", "postinfo", "post-?details",
    "message-?attribution", "message-?date", "comment-?meta", "comment-?metadata", "comment-?date",
    "comment-?author", "timestamp"
  ];
  const THREAD_QUOTE = [
    "quote", "bbcode-?quote", "bbcode_quote", "quotecontainer", "quote-?box", "quotebox", "bbquote", "postquote",
    "quoted-?post"
  ];
  const THREAD_NAME = [
    "user-?name", "username", "author", "poster", "name", "nick", "member"
  ];
  const THREAD_ACTIONS = [
    "reply", "reply with quote", "quote", "multi-?quote", "report", "like", "share", "permalink", "répondre",
    "citer", "signaler", "ответить", "цитировать", "цитата", "antworten", "zitieren", "responder", "citar", "#\\d+"
  ];
  const THREAD_INLINE = [
    "a", "abbr", "b", "bdi", "cite", "code", "em", "i", "mark", "q", "s", "small", "span", "strong", "sub", "sup",
    "time", "u"
  ];
  const MAX_CARD_CHARS = 600;
  const MAX_META_CHARS = 300;
  const MAX_NAME_CHARS = 60;
  const classWords = (list, whole = [], end = String.raw`($|[\s_-])`) => new RegExp(String.raw`(^|[\s_-])(` +
    list.join("|") + ")" + end + (whole.length ? String.raw`|(^|\s)(` + whole.join("|") + String.raw`)($|\s)` : ""),
  "iu");
  const DROP_WORDS = classWords(THREAD_DROP, THREAD_DROP_WHOLE);
  const CARD_WORDS = classWords(THREAD_CARD, THREAD_CARD_WHOLE);
  const META_WORDS = classWords(THREAD_META);
  const QUOTE_WORDS = classWords(THREAD_QUOTE, [], String.raw`($|\s)`);
  const NAME_WORDS = classWords(THREAD_NAME);
  // A link that is a post's action, by its whole text.
  const ACTION_TEXT = new RegExp(String.raw`^\s*(\+\s*)?(` + THREAD_ACTIONS.join("|") + String.raw`)\s*$`, "iu");
  const INLINE = new Set(THREAD_INLINE);

  /* What a thread's element is to the reader: "drop", "card", "meta", "quote" or "" (nothing special), from its
     class and id words and, for a link, its text. */
  function threadRole(el) {
    const words = `${typeof el.className === "string" ? el.className : ""} ${el.id || ""}`.trim();
    if (el.localName === "a" && ACTION_TEXT.test(el.textContent || "")) return "drop";
    if (!words) return "";
    if (DROP_WORDS.test(words)) return "drop";
    if (el.localName !== "blockquote" && QUOTE_WORDS.test(words)) return "quote";
    // A card or a meta line is short; a long one, or one holding a heading, is content that took such a name. The
    // text is measured only for a name that calls for it: measuring every element would cost its depth.
    const length = () => (el.textContent || "").length;
    if (CARD_WORDS.test(words)) return length() <= MAX_CARD_CHARS ? "card" : "";
    if (META_WORDS.test(words) && length() <= MAX_META_CHARS && !el.querySelector("h1, h2, h3, h4, h5, h6, p")) {
      return "meta";
    }
    return "";
  }

  /* The user card, date line, quote box or dropped element (signature, post actions) holding a chosen element, with
     its role, or null: a block filter may keep a card's pieces apart, and the pieces read as the card does, once; a
     quote box reads whole, its "X said:" line with the quoted words, unless a card, date line or dropped element
     holds it (the host's outputs.thread_holder). */
  function threadHolder(el) {
    let quote = null;
    for (let anc = el.parentElement; anc; anc = anc.parentElement) {
      const role = threadRole(anc);
      if (role === "drop" || role === "card" || role === "meta") return { el: anc, role };
      if (role === "quote" && !quote) quote = anc;
    }
    return quote ? { el: quote, role: "quote" } : null;
  }

  /* The member's name a user card shows: its element named as a name (username, author, poster), else its first
     link, bold or heading text, when short. */
  function cardName(card) {
    const named = [...card.querySelectorAll("[class], [id]")].find((el) => el.localName !== "img" &&
      NAME_WORDS.test(`${typeof el.className === "string" ? el.className : ""} ${el.id || ""}`) &&
      (el.textContent || "").trim());
    const el = named || card.querySelector("a, b, strong, h2, h3, h4, h5, h6");
    const name = el ? el.textContent.replace(/\s+/g, " ").trim() : "";
    return name.length <= MAX_NAME_CHARS ? name : "";
  }

  const absolute = (value) => {
    try {
      return new URL(value, document.baseURI).href;
    } catch (e) {
      return "";
    }
  };

  /* [url, size] candidates of a srcset (size: the width for "800w", the density times 1e-6 for "2x" so widths win,
     else 0), tokenized as the HTML standard does: a URL is a run of non-space characters. */
  function parseSrcset(value) {
    const out = [];
    for (let pos = 0, n = value.length; pos < n;) {
      while (pos < n && /[\s,]/.test(value[pos])) pos++;
      const start = pos;
      while (pos < n && !/\s/.test(value[pos])) pos++;
      let url = value.slice(start, pos);
      let descriptor = "";
      if (url.endsWith(",")) url = url.replace(/,+$/, "");
      else {
        const end = value.indexOf(",", pos) < 0 ? n : value.indexOf(",", pos);
        descriptor = value.slice(pos, end).trim();
        pos = end + 1;
      }
      if (!url) continue;
      let size = 0;
      for (const token of descriptor.split(/\s+/)) {
        const v = parseFloat(token.slice(0, -1));
        if (token.endsWith("w") && Number.isFinite(v)) size = v;
        else if (token.endsWith("x") && Number.isFinite(v)) size = v * 1e-6;
      }
      out.push([url, size]);
    }
    return out;
  }

  const lazyImage = (img) => img.localName === "img" && [...LAZY_SRC, ...LAZY_SRCSET].some((n) => img.getAttribute(n));

  /* The picture an <img> stands for, as the host's outputs choose it: a lazy loader's address, else the largest
     srcset candidate (its own, a lazy one, or its <picture>'s sources), else src unless a blank placeholder. */
  function imageUrl(img) {
    for (const name of LAZY_SRC) {
      const value = (img.getAttribute(name) || "").trim();
      if (value && !value.startsWith("data:")) return absolute(value);
    }
    const sets = [img];
    if (img.parentElement && img.parentElement.localName === "picture") {
      sets.push(...img.parentElement.querySelectorAll("source"));
    }
    const candidates = sets.flatMap((el) => [...LAZY_SRCSET, "srcset"]
      .flatMap((name) => parseSrcset(el.getAttribute(name) || ""))).filter(([url]) => !url.startsWith("data:"));
    if (candidates.length) return absolute(candidates.reduce((x, y) => (y[1] > x[1] ? y : x))[0]);
    const src = (img.getAttribute("src") || "").trim();
    if (!src || (src.startsWith("data:") && src.length < PLACEHOLDER_DATA_URI)) return "";
    return img.currentSrc || img.src || absolute(src); // the address the browser loaded it from
  }

  const ENTITIES = { amp: "&", quot: "\"", apos: "'", lt: "<", gt: ">", "#39": "'" };
  const unescape = (v) => v.replace(/&(amp|quot|apos|lt|gt|#39);/g, (m, e) => ENTITIES[e]);

  /* The images a <noscript> holds (shown by browsers without scripts): with scripts on its content is raw text,
     which is scanned for <img> tags and their src / alt only (never parsed as HTML). */
  function noscriptImages(noscript, out, budget) {
    const found = [];
    for (const [, attrs] of (noscript.textContent || "").matchAll(/<img\b([^>]*)>/gi)) {
      if (found.length >= MAX_NOSCRIPT_IMAGES) break;
      const a = {};
      for (const [, name, , dq, sq, bare] of attrs.matchAll(/([\w-]+)\s*=\s*("([^"]*)"|'([^']*)'|([^\s"'>]+))/g)) {
        a[name.toLowerCase()] = unescape(dq ?? sq ?? bare);
      }
      const src = a.src ? absolute(a.src.trim()) : "";
      if (!SAFE_IMAGE.test(src)) continue;
      found.push({ t: "img", a: a.alt ? { src, alt: a.alt } : { src }, c: [] });
    }
    budget.images += found.length;
    out.push(...found);
  }

  /* The one rule for text a reader does not see beyond the checks below (clipped, masked or filtered to nothing,
     a box that cuts its overflow at 1 px, off the page, letters too small or of the colour beneath them): the
     collector's (collect.js, injected before this file; the host's outputs read what it recorded), so the reader
     and the host's text, Markdown and HTML leave out the same text (issue #40). The reader tab only builds. */
  function seenRule() {
    const rule = globalThis[Symbol.for("centrum.seen")];
    if (!rule) throw new Error("collect.js must run before clean.js reads a page");
    return rule;
  }

  /* Text a reader of the page does not see stays out of the reader view (issues #20, #40): display none, hidden,
     visibility hidden/collapse, opacity 0 (the subtree is skipped, so an ancestor's 0 hides its descendants), as
     the collector's VISIBLE flag says from the same styles, asked of the live elements here because the snapshot's
     flags stay in the background and a display: contents element (no box, visible children) must not take its
     subtree with it; then the shared rule (off the page, clipped, too small, invisible letters...). `below`: what
     lies under the parent's text (seenRule().under). Returns {hidden, noText (its own text draws nothing), under}. */
  function look(el, below) {
    const rule = seenRule();
    const cs = getComputedStyle(el);
    const under = rule.under(el, cs, below);
    const out = { hidden: true, noText: false, under };
    if (el.hidden || cs.display === "none" || cs.visibility === "hidden" || cs.visibility === "collapse") return out;
    const contents = cs.display === "contents";
    if (!contents && parseFloat(cs.opacity) === 0) return out;
    const verdict = rule.judge(el, cs, contents ? null : el.getBoundingClientRect(), under);
    out.hidden = verdict === rule.NOTHING;
    out.noText = verdict === rule.NO_TEXT;
    return out;
  }

  const composedParent = (el) => el.parentElement || (el.parentNode && el.parentNode.host) || null;

  /* look() of a chosen element with what lies above it: hidden when an ancestor hides it (opacity 0 up the tree,
     display none, an off-screen or clipped container). */
  function lookFrom(el) {
    const chain = [];
    for (let p = composedParent(el); p; p = composedParent(p)) chain.push(p);
    let below = seenRule().canvas(el.ownerDocument);
    let above = false;
    for (const p of chain.reverse()) {
      const seen = look(p, below);
      above = above || seen.hidden;
      below = seen.under;
    }
    const seen = look(el, below);
    if (above) seen.hidden = true;
    return seen;
  }

  function attributes(src, tag, shown) {
    const a = {};
    if (tag === "a") {
      if (SAFE_LINK.test(src.href || "")) a.href = src.href; // resolved absolute URL
    } else if (tag === "img") {
      const url = imageUrl(src);
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
    } else if (tag === "details" && (src.open || shown.has(src))) {
      a.open = ""; // as the page showed it, or open because the answer holds its text (the host's `disclosed`)
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

  /* The tag the reader uses: an ARIA heading (div role="heading" aria-level="3") is a heading to its readers, so
     it stays one (h3; level 2 when none is given), whatever element the page made it of. */
  function outTag(el) {
    const tag = el.localName;
    if (DROP.has(tag) || (el.getAttribute("role") || "").trim().toLowerCase() !== "heading") return tag;
    const level = parseInt(el.getAttribute("aria-level") || "", 10);
    return `h${level >= 1 && level <= 6 ? level : 2}`;
  }

  /* The lazy pictures inside `el`, an element its box hides, not its style (a size-0 wrapper that cuts its
     overflow, kept so by a lazy loader until its script sizes it): as the host's outputs keep them (issue #44). */
  function lazyInside(el, out, budget) {
    const cs = getComputedStyle(el);
    if (el.hidden || cs.display === "none" || cs.visibility !== "visible" || parseFloat(cs.opacity) === 0) return;
    for (const img of el.querySelectorAll("img")) {
      if (budget.images >= MAX_LAZY_WRAPPED || !lazyImage(img) || getComputedStyle(img).display === "none") continue;
      const a = attributes(img, "img", budget.shown);
      if (!a) continue;
      budget.images++;
      out.push({ t: "img", a, c: [] });
    }
  }

  /* A thread's element as the reader shows it (threadRole), added to `out`: true when it was one (handled). */
  function threadItem(el, out, budget, seen) {
    const role = threadRole(el);
    if (role === "drop") return true;
    if (role === "card") {
      const name = cardName(el);
      if (name) out.push({ t: "p", a: {}, c: [{ t: "small", a: {}, c: [name] }] });
      return true;
    }
    if (role === "quote") {
      const item = { t: "blockquote", a: {}, c: [] };
      out.push(item);
      walk(el, item.c, budget, seen);
    } else if (role === "meta") {
      // One line of small text: its pieces (a name, a date, list items) joined, whatever elements held them.
      const pieces = [];
      walk(el, pieces, budget, seen);
      const SEP = "\u0000"; // between block pieces (list items, paragraphs); inline pieces run on as text does
      const joined = pieces.map((p) => (typeof p === "string" || INLINE.has(p.t) ? textOf(p) : SEP + textOf(p) + SEP))
        .join("");
      const line = joined.split(SEP).map((p) => p.replace(/\s+/g, " ").trim()).filter(Boolean).join(" \u00b7 ");
      if (line) out.push({ t: "p", a: {}, c: [{ t: "small", a: {}, c: [line] }] });
    }
    return role === "quote" || role === "meta";
  }

  const textOf = (item) => (typeof item === "string" ? item : (item.c || []).map(textOf).join(""));

  function walk(node, out, budget, seen) {
    const children = node.shadowRoot ? node.shadowRoot.childNodes : node.childNodes;
    const imagesBefore = budget.images; // a <noscript> picture counts only where the parent shows none
    for (const child of children) {
      if (budget.left-- <= 0) return;
      if (child.nodeType === Node.TEXT_NODE) {
        if (!seen.noText) out.push(child.data);
      } else if (child.nodeType === Node.ELEMENT_NODE) {
        const tag = outTag(child);
        if (tag === "noscript" && budget.images === imagesBefore) noscriptImages(child, out, budget);
        if (DROP.has(tag)) continue;
        const own = look(child, seen.under);
        // A fade-in loader keeps its image transparent until the picture arrives: a lazy image is kept.
        // A collapsed disclosure panel whose text the answer holds (the host's `disclosed`) is shown open.
        if (own.hidden && !lazyImage(child) && !budget.shown.has(child)) {
          lazyInside(child, out, budget);
          continue;
        }
        if (threadItem(child, out, budget, own)) continue;
        if (KEEP.has(tag)) {
          const a = attributes(child, tag, budget.shown);
          if (!a) continue;
          if (tag === "img") budget.images++;
          const item = { t: tag, a, c: [] };
          out.push(item);
          walk(child, item.c, budget, own);
        } else {
          walk(child, out, budget, own); // unknown or presentational wrapper: keep what is inside
        }
      }
    }
  }

  /* The clean description of the chosen elements plus the page facts the reader shows; `disclosed`: elements of
     collapsed disclosure panels the answer's text includes, shown open. */
  function tree(nodes, text, disclosed = []) {
    const budget = { left: MAX_NODES, images: 0, shown: new Set(disclosed) };
    const blocks = [];
    const done = new Set(); // thread items (cards, meta lines) already shown for chosen pieces inside them
    for (const chosen of nodes) {
      const holder = threadHolder(chosen);
      if (holder && (holder.role === "drop" || done.has(holder.el))) continue;
      if (holder) done.add(holder.el);
      const node = holder ? holder.el : chosen;
      const seen = lookFrom(node);
      if (seen.hidden || threadItem(node, blocks, budget, seen)) continue; // a chosen card, signature or quote too
      const tag = outTag(node);
      const item = { t: KEEP.has(tag) ? tag : "div", a: KEEP.has(tag) ? (attributes(node, tag, budget.shown) || {}) : {},
        c: [] };
      blocks.push(item);
      walk(node, item.c, budget, seen);
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

  globalThis[KEY] = { api, trusted, tree, build, KEEP, DROP };
})();
