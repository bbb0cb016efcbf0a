/* Centrum collector: a columnar snapshot (protocol v1, host/PROTOCOL.md) of the live, rendered DOM.
 *
 * One file, two users: the extension injects it as a content script (chrome.scripting.executeScript) and the
 * headless renderer (host/centrum/render.py) evaluates it in the page. Evaluating it defines
 * globalThis.centrumCollect(options) -> snapshot object, and every call sets globalThis.centrumNodes (element by
 * node id). The page is never written to: node ids live only in centrumNodes and in the optional `source` string.
 * Options: {source: bool (default false), offline: bool (the renderer blocked every request leaving a local page,
 * so a cross-origin stylesheet cannot have loaded), encoding: "packed" (default) or "json"}.
 *
 * Speed: one iterative walk, one getComputedStyle per element reading five properties (and the few SEEN.judge
 * reads: background, filter, mask, clip-path, text fill), one reused Range for text
 * rectangles, enum strings interned into small tables, numbers rounded to 0.1 px, parallel arrays instead of
 * per-element objects, and numeric columns packed into base64 strings (see pack()).
 */
(() => {
  "use strict";
  const VERSION = "1.4.0";

  // Pristine references, taken before any later page script can replace them. In the extension's isolated world
  // and in the renderer's isolated world the page cannot touch these at all; in the main world we at least detect
  // an override (see overridden()) and say so in page.warnings.
  const EP = Element.prototype;
  const NP = Node.prototype;
  const desc = (proto, name) => Object.getOwnPropertyDescriptor(proto, name);
  const fnToString = Function.prototype.toString;
  const gbcr = EP.getBoundingClientRect;
  const gcs = window.getComputedStyle;
  const createRange = Document.prototype.createRange;
  const rangeSelect = Range.prototype.selectNodeContents;
  const rangeRects = Range.prototype.getClientRects;
  const getAttributeNames = EP.getAttributeNames;
  const getAttribute = EP.getAttribute;
  const hasAttributes = EP.hasAttributes;
  const shadowRootGet = desc(EP, "shadowRoot").get;
  const localNameGet = desc(EP, "localName").get;
  const firstChildGet = desc(NP, "firstChild").get;
  const nextSiblingGet = desc(NP, "nextSibling").get;
  const nodeTypeGet = desc(NP, "nodeType").get;
  const dataGet = desc(CharacterData.prototype, "data").get;
  const contentDocumentGet = desc(HTMLIFrameElement.prototype, "contentDocument").get;
  const frameDocumentGet = desc(HTMLFrameElement.prototype, "contentDocument").get;  // <frameset> pages
  const innerHTMLGet = desc(EP, "innerHTML").get;
  const sheetGet = desc(HTMLLinkElement.prototype, "sheet").get;
  const toBase64 = typeof Uint8Array.prototype.toBase64 === "function" ? Uint8Array.prototype.toBase64 : null;
  const btoaRef = window.btoa;
  const fromCharCode = String.fromCharCode;
  const NATIVE = [
    ["Element.prototype.getBoundingClientRect", gbcr],
    ["window.getComputedStyle", gcs],
    ["Document.prototype.createRange", createRange],
    ["Range.prototype.selectNodeContents", rangeSelect],
    ["Range.prototype.getClientRects", rangeRects],
    ["Element.prototype.getAttributeNames", getAttributeNames],
    ["Element.prototype.getAttribute", getAttribute],
    ["Node.prototype.firstChild", firstChildGet],
    ["Node.prototype.nextSibling", nextSiblingGet],
    ["CharacterData.prototype.data", dataGet],
  ];

  const isNative = (f) => {
    try {
      return typeof f === "function" && /\{\s*\[native code\]\s*\}\s*$/.test(fnToString.call(f));
    } catch (e) {
      return false;
    }
  };

  // Names of DOM functions the page replaced (checked at call time: a page may override after this script ran).
  function overridden() {
    const out = [];
    if (!isNative(fnToString)) out.push("Function.prototype.toString");
    for (const [name, f] of NATIVE) if (!isNative(f)) out.push(name);
    const current = [
      ["Element.prototype.getBoundingClientRect", EP.getBoundingClientRect, gbcr],
      ["window.getComputedStyle", window.getComputedStyle, gcs],
      ["Range.prototype.getClientRects", Range.prototype.getClientRects, rangeRects],
    ];
    for (const [name, now, ours] of current) {
      if (now !== ours && !isNative(now) && !out.includes(name)) out.push(name);
    }
    return out;
  }

  // Flags (PROTOCOL.md "Element flags").
  const VISIBLE = 1, LINK = 2, IMAGE = 4, FIXED = 8, STICKY = 16, OPAQUE_FRAME = 32, SHADOW_HOST = 64,
    IN_FRAME = 128;
  const IMAGE_TAGS = new Set(["img", "picture", "svg", "video", "canvas"]);
  // Text inside these is code or markup, never reader-visible text.
  const NO_TEXT_TAGS = new Set(["script", "style", "noscript", "template"]);
  // HTML serialization: void elements have no end tag; raw-text elements' text is written unescaped.
  const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
    "track", "wbr", "param", "keygen", "basefont", "bgsound", "frame"]);
  const RAW_TEXT = new Set(["script", "style", "xmp", "iframe", "noembed", "noframes", "plaintext", "noscript"]);
  const ATTRS = new Set(["id", "class", "role", "itemprop", "itemtype", "href", "src", "alt", "hidden", "lang",
    "dir"]);
  const DATA_ATTR = /content|article|main/;
  // A data: URI in src/href can be megabytes; the algorithms only need to know there is one.
  const MAX_ATTR = 1024;

  const r1 = (v) => Math.round(v * 10) / 10;
  // No child nodes, or one whitespace-only text node.
  const isEmpty = (node) => {
    const c = firstChildGet.call(node);
    return c === null || (nextSiblingGet.call(c) === null && nodeTypeGet.call(c) === 3 && !/\S/.test(dataGet.call(c)));
  };
  const escText = (s) => (/[&<>\u00a0]/.test(s)
    ? s.replace(/&/g, "&amp;").replace(/\u00a0/g, "&nbsp;").replace(/</g, "&lt;").replace(/>/g, "&gt;") : s);
  // Attribute values: & nbsp " and, as current browsers serialize them (HTML 2025), < and >.
  const escAttr = (s) => (/[&"<>\u00a0]/.test(s)
    ? s.replace(/&/g, "&amp;").replace(/\u00a0/g, "&nbsp;").replace(/"/g, "&quot;").replace(/</g, "&lt;")
      .replace(/>/g, "&gt;") : s);

  /* `source` must say truthfully which element has which id: the DANA family maps its lines back to
     nodes through ` data-cx="ID"`, so no page string may spell that (text, script, comment, template content, an
     attribute the page named data-cx) and no raw text or comment may end early and let what follows pass for
     markup. Parsed pages never contain either (the tokenizer ends a script at its end tag and a comment at -->),
     so their source stays byte-identical to the browser's serialization; pages that build such nodes with DOM
     calls get an entity in the one byte that matters. */
  const CX = 'data-cx="';
  const unforgeable = (s) => (s.indexOf(CX) < 0 ? s : s.split(CX).join('data-cx&#61;"'));
  const endTags = new Map();
  function escRaw(s, tag) {
    // An end tag of the element itself, as the HTML tokenizer would end it: `</script` + space, / or >.
    if (s.indexOf("</") >= 0) {
      let re = endTags.get(tag);
      if (!re) endTags.set(tag, re = new RegExp(`</(${tag})(?=[\\t\\n\\f\\r />]|$)`, "gi"));
      s = s.replace(re, "&lt;/$1");
    }
    return unforgeable(s);
  }
  function escComment(s) {
    // "-->" and "--!>" end a comment anywhere, ">" and "->" at its start.
    if (s.indexOf(">") >= 0) s = s.replace(/--(!?)>/g, "--$1&gt;").replace(/^(-?)>/, "$1&gt;");
    return unforgeable(s);
  }

  function interner() {
    const map = new Map();
    const table = [];
    return {
      table,
      code(v) {
        let c = map.get(v);
        if (c === undefined) {
          c = table.length;
          map.set(v, c);
          table.push(v.toLowerCase());
        }
        return c;
      },
    };
  }

  // <link rel=stylesheet> outcome. Chromium gives a link that failed to load (404, missing file, blocked) either no
  // sheet or a rule-less sheet whose cssRules throws SecurityError, exactly like a cross-origin sheet that loaded.
  // So: a throw on a same-origin sheet means failed; a cross-origin sheet counts as loaded unless its resource
  // timing says HTTP >= 400, or the caller says the page is rendered offline (`offline`: the renderer blocks every
  // request leaving a local page, so a cross-origin sheet cannot have loaded).
  function stylesheetStats(doc, offline) {
    let loaded = 0, failed = 0;
    const links = doc.querySelectorAll('link[rel~="stylesheet" i]');
    const origin = location.origin;
    for (let i = 0; i < links.length; i++) {
      const link = links[i];
      if (link.disabled || /\balternate\b/i.test(link.rel) || !link.getAttribute("href")) continue;
      let sheet = null;
      try {
        sheet = sheetGet.call(link);
      } catch (e) {
        sheet = null;
      }
      if (!sheet) {
        failed++;
        continue;
      }
      const href = link.href;
      let sameOrigin = false;
      try {
        const u = new URL(href);
        sameOrigin = u.protocol === "file:" ? location.protocol === "file:" : u.origin === origin;
      } catch (e) {
        sameOrigin = false;
      }
      let status = 0;
      try {
        const entry = performance.getEntriesByName(href)[0];
        status = (entry && entry.responseStatus) || 0;
      } catch (e) {
        status = 0;
      }
      let ok;
      try {
        void sheet.cssRules;
        ok = status < 400;
      } catch (e) {
        ok = !sameOrigin && !offline && status < 400;
      }
      if (ok) loaded++;
      else failed++;
    }
    return { loaded, failed };
  }

  // ---- what a reader sees (issue #40) -----------------------------------------------------------------------------
  /* The one rule for text a reader of the page does not see, beyond the VISIBLE flag's (no box, visibility,
     opacity, off the document's top/left edge, 1x1 box): used by the reader view (clean.js calls judge() on the live
     elements, in this same content-script world) and by the host's outputs (the collector records judge() per
     element in `unseen`, PROTOCOL.md), so the two cannot disagree. No algorithm reads it: answers stay the same.
     judge(el, cs, rect, under) says NOTHING (nothing in the subtree is seen: clipped or masked to nothing, filtered
     to opacity 0, a box of at most 1 px that cuts its overflow, a 1 x 1 picture, off the document's top or left
     edge, fixed outside the viewport), NO_TEXT (the element's
     own text draws nothing, children judge for themselves: a font under MIN_FONT px, a text fill with no alpha, or
     the colour of what lies under it) or 0. `under` is what lies beneath the element's text: under(el, cs, parent's)
     from the root's (canvas()) down. */
  const NO_TEXT = 1, NOTHING = 2;
  const MIN_FONT = 3;  // px: smaller letters are specks, not text (0 and 1 px are the usual tricks)
  const MIN_CONTRAST = 1.1;  // WCAG contrast ratio (1 = same colour, 21 = black on white) below which text is not read
  const CANVAS = [255, 255, 255];  // the page's backdrop when neither <html> nor <body> paints one
  const REPLACED = new Set(["img", "picture", "video", "canvas", "svg", "iframe", "embed", "object", "input",
    "textarea", "select", "button"]);
  const MEDIA = "img, picture, video, canvas, svg, iframe, embed, object";
  const num = (v) => (v.endsWith("%") ? parseFloat(v) / 100 : parseFloat(v));

  /* [r, g, b, alpha] of a computed colour, null when its colour space is not sRGB (oklch, lab: compared as text).
     Computed colours are rgb()/rgba() with numbers in both browsers, or color(srgb r g b / a) in 0..1. */
  function rgba(value) {
    let m = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)(?:\s*[,/]\s*([\d.]+%?))?\s*\)$/.exec(value);
    if (m) return [+m[1], +m[2], +m[3], m[4] === undefined ? 1 : num(m[4])];
    m = /^color\(srgb\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)(?:\s*\/\s*([\d.]+%?))?\s*\)$/.exec(value);
    if (m) return [m[1] * 255, m[2] * 255, m[3] * 255, m[4] === undefined ? 1 : num(m[4])];
    return null;
  }

  // Alpha of any computed colour (the part after "/" in the modern colour functions).
  function alpha(value) {
    const c = rgba(value);
    if (c) return c[3];
    if (value === "transparent") return 0;
    const m = /\/\s*([\d.]+%?)\s*\)$/.exec(value);
    return m ? num(m[1]) : 1;
  }

  // Every colour in a computed value (mask gradients, shadows) has alpha 0, and nothing else (an image) paints.
  function allClear(value) {
    if (value === "none" || value.indexOf("url(") >= 0) return false;
    const colours = value.match(/(?:rgba?|color|hsla?|hwb|lab|lch|oklab|oklch)\([^()]*\)|\btransparent\b/g);
    return Boolean(colours) && colours.every((c) => alpha(c) === 0);
  }

  /* A colour as {value, rgb (null outside sRGB), a, lum (relative luminance)}: memoized, a page uses a few dozen
     colours on thousands of elements. `value` is a computed colour or an [r, g, b] triple. */
  const paints = new Map();
  function paint(value) {
    const key = typeof value === "string" ? value : `rgb(${value.join(", ")})`;
    let out = paints.get(key);
    if (out === undefined) {
      const c = typeof value === "string" ? rgba(value) : [...value, 1];
      const a = c ? c[3] : alpha(key);
      const lum = c ? luminance(c) : 0;
      out = { value: key, rgb: c ? c.slice(0, 3) : null, a, lum };
      if (paints.size < 10000) paints.set(key, out);
    }
    return out;
  }
  const blend = (top, a, below) => [0, 1, 2].map((k) => Math.round(top[k] * a + below[k] * (1 - a)));
  function luminance(rgb) {
    const [r, g, b] = [rgb[0], rgb[1], rgb[2]].map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }
  const contrast = (x, y) => (Math.max(x.lum, y.lum) + 0.05) / (Math.min(x.lum, y.lum) + 0.05);

  /* What lies under the text of an element whose parent's is `below`: {rgb, text (a colour spelled outside sRGB),
     by (the element that painted it)}; null when unknown (a background image, a translucent colour over the
     unknown) until an opaque colour covers it again; LETTERS under a background clipped to the letters (gradient
     headings: their transparent fill is how the background shows). */
  const LETTERS = { rgb: null, text: null, lum: 0, by: null };
  function under(el, cs, below) {
    if (cs === null) return below;
    const image = css(cs, "backgroundImage", "none") !== "none";
    const colour = paint(css(cs, "backgroundColor", "transparent"));
    if (css(cs, "backgroundClip", "").indexOf("text") >= 0 && (image || colour.a > 0)) return LETTERS;
    if (image) return null;
    if (colour.a === 0) return below;
    if (colour.rgb === null) return { rgb: null, text: colour.value, lum: 0, by: el };
    if (colour.a === 1) return { rgb: colour.rgb, text: "", lum: colour.lum, by: el };
    if (below === null || below.rgb === null) return null;
    const mix = paint(blend(colour.rgb, colour.a, below.rgb));
    return { rgb: mix.rgb, text: "", lum: mix.lum, by: el };
  }
  const canvas = (doc) => ({ rgb: CANVAS, text: "", lum: 1, by: doc.documentElement });

  // The pictures painted inside the element that gave the backdrop: text drawn over one of them is seen whatever its
  // colour (white letters on a dark hero photo). Asked only for the rare text the colour rule would drop; memo per
  // backdrop element.
  const mediaRects = new WeakMap();
  function overMedia(rect, by) {
    if (!by) return false;
    let rects = mediaRects.get(by);
    if (!rects) {
      rects = [];
      const found = by.querySelectorAll(MEDIA);
      for (let k = 0; k < found.length && k < 2000; k++) {
        const r = gbcr.call(found[k]);
        if (r.width > 1 && r.height > 1) rects.push(r);
      }
      mediaRects.set(by, rects);
    }
    return rects.some((r) => r.left < rect.right && rect.left < r.right && r.top < rect.bottom && rect.top < r.bottom);
  }

  // A basic shape (computed clip-path) that encloses no area of a w x h box; url() and unknown shapes do not.
  function emptyShape(value, w, h) {
    const m = /^(inset|circle|ellipse|polygon)\((.*)\)/.exec(value);
    if (!m) return false;
    const len = (v, size) => (v.endsWith("%") ? (parseFloat(v) / 100) * size : parseFloat(v));
    const args = m[2].split(/\s+at\s+/)[0].trim();
    if (m[1] === "inset") {
      const v = args.split(/\s+round\s+/)[0].split(/\s+/);
      const [t, r = t, b = t, l = r] = v;
      return len(t, h) + len(b, h) >= h || len(l, w) + len(r, w) >= w;
    }
    if (m[1] === "circle") return args !== "" && len(args, Math.hypot(w, h) / Math.SQRT2) <= 0;
    if (m[1] === "ellipse") {
      const [rx, ry] = args.split(/\s+/);
      return ry !== undefined && (len(rx, w) <= 0 || len(ry, h) <= 0);
    }
    const points = args.replace(/^(nonzero|evenodd)\s*,\s*/, "").split(",").map((p) => {
      const [x, y] = p.trim().split(/\s+/);
      return [len(x, w), len(y, h)];
    });
    let area = 0;
    for (let k = 0; k < points.length; k++) {
      const [x1, y1] = points[k], [x2, y2] = points[(k + 1) % points.length];
      area += x1 * y2 - x2 * y1;
    }
    return Math.abs(area) / 2 < 1;
  }

  // A computed property as a string: in the page's main world getComputedStyle may be the page's own function.
  const css = (cs, name, fallback) => {
    const v = cs[name];
    return typeof v === "string" ? v : fallback;
  };

  function judge(el, cs, rect, below) {
    // display: none: the VISIBLE flag and the reader's own checks say so.
    if (cs === null || css(cs, "display", "none") === "none") return 0;
    const tag = localNameGet.call(el);
    const display = css(cs, "display", "inline");
    if (display !== "contents" && rect !== null) {
      if (/opacity\(0(?:\.0*)?%?\)/.test(css(cs, "filter", "none"))) return NOTHING;
      if (allClear(css(cs, "maskImage", "none"))) return NOTHING;
      const clipPath = css(cs, "clipPath", "none");
      if (clipPath !== "none" && emptyShape(clipPath, rect.width, rect.height)) return NOTHING;
      const pos = css(cs, "position", "static");
      if (pos === "absolute" || pos === "fixed") {
        const m = /^rect\(([^)]*)\)$/.exec(css(cs, "clip", "auto"));
        if (m) {
          const [t, r, b, l] = m[1].split(/[\s,]+/).map((v) => parseFloat(v));
          if ([t, r, b, l].every(Number.isFinite) && (r - l) * (b - t) <= 1) return NOTHING;
        }
      }
      if (rect.width > 0 || rect.height > 0) {
        const view = el.ownerDocument.defaultView;
        if (pos === "fixed" ? rect.right <= 0 || rect.bottom <= 0 || rect.left >= view.innerWidth ||
            rect.top >= view.innerHeight  // a fixed box never scrolls into view
          : rect.right + view.scrollX <= 0 || rect.bottom + view.scrollY <= 0) {  // off the document's top/left edge
          return NOTHING;
        }
        // A box of at most 1 x 1 px that cuts its overflow: screen-reader-only text, a tracking pixel.
        const holds = firstChildGet.call(el) !== null;  // an empty element hides nothing (<source>, <br>)
        const cut = REPLACED.has(tag) || (holds && css(cs, "overflow", "visible") !== "visible");
        if (rect.width <= 1 && rect.height <= 1 && cut) return NOTHING;
      }
      // Overflow clips only boxes that hold their children (not inline ones, not pictures and controls).
      // <html> and <body> hand their overflow to the viewport.
      if ((rect.width <= 1 || rect.height <= 1) && display !== "inline" && !display.startsWith("table-") &&
          !REPLACED.has(tag) && tag !== "html" && tag !== "body" && firstChildGet.call(el) !== null &&
          ((rect.width <= 1 && css(cs, "overflowX", "visible") !== "visible") ||
           (rect.height <= 1 && css(cs, "overflowY", "visible") !== "visible"))) {
        return NOTHING;
      }
    }
    if (parseFloat(css(cs, "fontSize", "16px")) < MIN_FONT) return NO_TEXT;
    if (below === LETTERS) return 0;
    const fill = paint(css(cs, "webkitTextFillColor", "") || css(cs, "color", "rgb(0, 0, 0)"));
    if (below === null) {
      if (fill.a >= 0.05) return 0;
    } else if (fill.rgb === null || below.rgb === null) {
      if (fill.value !== below.text && fill.a > 0) return 0;
    } else if (contrast(fill.a === 1 ? fill : paint(blend(fill.rgb, fill.a, below.rgb)), below) >= MIN_CONTRAST) {
      return 0;
    }
    // Letters drawn another way: a stroke, or a shadow.
    if (parseFloat(css(cs, "webkitTextStrokeWidth", "0")) > 0 && alpha(css(cs, "webkitTextStrokeColor", "")) > 0) {
      return 0;
    }
    const shadow = css(cs, "textShadow", "none");
    if (shadow !== "none" && !allClear(shadow)) return 0;
    return fill.a > 0 && rect !== null && below !== null && overMedia(rect, below.by) ? 0 : NO_TEXT;
  }

  const SEEN = { NO_TEXT, NOTHING, judge, under, canvas };

  // ---- the walk -------------------------------------------------------------------------------------------------
  // One state object holds every column (parallel arrays, no object per element) and the explicit stack of
  // "levels" (a sibling list being walked), so that 10k-deep pages do not overflow the JS stack.
  function newState(wantSource) {
    const sx = window.scrollX, sy = window.scrollY;
    return {
      wantSource, sx, sy,
      tags: interner(), displays: interner(), positions: interner(), visibilities: interner(),
      parent: [], tag: [], box: [], display: [], position: [], visibility: [], opacity: [], fontSize: [],
      flags: [],
      aNode: [], aName: [], aValue: [],
      tOwner: [], tSeq: [], tText: [], tOff: [0], tRects: [],
      nodes: [],
      effOpacity: [],  // product of opacities along the ancestors (flat tree), per element
      rendered: [],    // false inside a display:none subtree (no layout box for anything below)
      under: [],       // what lies beneath each element's text (SEEN.under)
      unseenSubtree: [], unseenText: [],  // ids SEEN.judge calls NOTHING / NO_TEXT (the `unseen` section)
      src: [],
      // Frame contexts: offset of a same-origin iframe's viewport in top-document coordinates + its Range.
      frames: [{ dx: sx, dy: sy, range: createRange.call(document), flag: 0 }],
      opaqueFrames: 0,
      lvNode: [], lvParent: [], lvClose: [], lvSingle: [], lvFrame: [], lvSrc: [], sp: 0,
    };
  }

  function push(st, node, par, close, single, frame, s) {
    const sp = st.sp;
    st.lvNode[sp] = node; st.lvParent[sp] = par; st.lvClose[sp] = close; st.lvSingle[sp] = single;
    st.lvFrame[sp] = frame; st.lvSrc[sp] = s;
    st.sp = sp + 1;
  }

  function walk(st) {
    push(st, firstChildGet.call(document), -1, null, false, 0, st.wantSource);
    while (st.sp > 0) {
      const level = st.sp - 1;
      const node = st.lvNode[level];
      if (node === null) {
        if (st.lvSrc[level] && st.lvClose[level] !== null) st.src.push(st.lvClose[level]);
        st.sp--;
        continue;
      }
      st.lvNode[level] = st.lvSingle[level] ? null : nextSiblingGet.call(node);
      const par = st.lvParent[level];
      const withSrc = st.lvSrc[level];
      const type = nodeTypeGet.call(node);
      if (type === 1) visitElement(st, node, par, st.lvFrame[level], withSrc);
      else if (type === 3) visitText(st, node, par, st.lvFrame[level], withSrc);
      else if (!withSrc) continue;
      else if (type === 8) st.src.push(`<!--${escComment(dataGet.call(node))}-->`);
      else if (type === 10) st.src.push(`<!DOCTYPE ${node.name}>`);  // where the document has it
    }
  }

  function visitText(st, node, par, fi, withSrc) {
    if (par < 0) return;
    const data = dataGet.call(node);
    const ptag = st.tags.table[st.tag[par]];
    if (!NO_TEXT_TAGS.has(ptag) && /\S/.test(data)) {
      st.tOwner.push(par);
      st.tSeq.push(st.parent.length);
      st.tText.push(data);
      if (st.rendered[par]) {
        const f = st.frames[fi];
        rangeSelect.call(f.range, node);
        const rl = rangeRects.call(f.range);
        for (let k = 0; k < rl.length; k++) {
          const r = rl[k];
          if (r.width === 0 && r.height === 0) continue;
          st.tRects.push(r1(r.left + f.dx), r1(r.top + f.dy), r1(r.width), r1(r.height));
        }
      }
      st.tOff.push(st.tRects.length >> 2);
    }
    if (withSrc) st.src.push(RAW_TEXT.has(ptag) ? escRaw(data, ptag) : unforgeable(escText(data)));
  }

  // Computed style and box of one element: one getComputedStyle, one getBoundingClientRect when it has a box.
  function styleOf(st, node, par, f) {
    if (par >= 0 && !st.rendered[par]) {
      // Inside a display:none subtree nothing is laid out, and Chromium resolves such styles one ancestor chain
      // per call (quadratic in depth). Record "not displayed" and inherit the rest from the parent instead.
      return { cs: null, rect: null, disp: "none", pos: "static", vis: st.visibilities.table[st.visibility[par]],
        op: 1, fsz: st.fontSize[par], x: 0, y: 0, w: 0, h: 0 };
    }
    const cs = gcs.call(window, node);
    const disp = cs.display;
    const opStr = cs.opacity;
    const out = { cs, rect: null, disp, pos: cs.position, vis: cs.visibility,
      op: opStr === "1" ? 1 : parseFloat(opStr) || 0, fsz: r1(parseFloat(cs.fontSize) || 0), x: 0, y: 0, w: 0, h: 0 };
    if (disp !== "none") {  // a display:none element has no box (head, script, style, hidden widgets)
      const rect = out.rect = gbcr.call(node);
      out.x = r1(rect.left + f.dx); out.y = r1(rect.top + f.dy); out.w = r1(rect.width); out.h = r1(rect.height);
    }
    return out;
  }

  function visibilityFlags(s, node, tname, eff, base) {
    let fl = base;
    const { x, y, w, h } = s;
    // Off-document boxes (left: -10000px) and 1x1 "visually hidden" boxes (screen-reader-only text) show nothing.
    if (s.disp !== "none" && w > 0 && h > 0 && (w > 1 || h > 1) && s.vis === "visible" && eff > 0 && x + w > 0 &&
        y + h > 0) {
      fl |= VISIBLE;
    }
    if (s.pos === "fixed") fl |= FIXED;
    else if (s.pos === "sticky") fl |= STICKY;
    if (IMAGE_TAGS.has(tname)) fl |= IMAGE;
    // An empty element painted with a CSS background image (icon, hero banner) is an image too. Only empty ones:
    // a link with an icon and a label is text, and the extra property read stays rare.
    else if ((fl & VISIBLE) && isEmpty(node)) {
      const bg = s.cs.backgroundImage;
      if (bg !== "none" && bg.indexOf("url(") >= 0) fl |= IMAGE;
    }
    return fl;
  }

  // Kept attributes into the attrs columns; returns [flags, attribute source]. Names first (no Attr objects:
  // 10-30x cheaper than walking .attributes), values only when kept.
  function attributes(st, node, id, tname, fl, withSrc) {
    let attrSrc = "";
    if (!hasAttributes.call(node)) return [fl, attrSrc];
    const names = getAttributeNames.call(node);
    for (let k = 0; k < names.length; k++) {
      const nm = names[k];
      const keep = ATTRS.has(nm) || nm.startsWith("aria-") || (nm.startsWith("data-") && DATA_ATTR.test(nm));
      const isType = nm === "type" && tname === "input";
      if (!keep && !isType && !withSrc) continue;
      const val = getAttribute.call(node, nm);
      if (keep) {
        st.aNode.push(id);
        st.aName.push(nm);
        st.aValue.push(val.length > MAX_ATTR ? val.slice(0, MAX_ATTR) : val);
        if (nm === "href" && (tname === "a" || tname === "area")) fl |= LINK;
      } else if (isType && val.toLowerCase() === "image") {
        fl |= IMAGE;
      }
      if (withSrc) attrSrc += ` ${nm}="${escAttr(val)}"`;
    }
    return [fl, attrSrc];
  }

  function visitElement(st, node, par, fi, withSrc) {
    const id = st.parent.length;
    st.nodes.push(node);
    const lname = localNameGet.call(node);
    const tcode = st.tags.code(lname);
    const tname = st.tags.table[tcode];
    const f = st.frames[fi];
    const s = styleOf(st, node, par, f);
    const eff = (par >= 0 ? st.effOpacity[par] : 1) * s.op;
    st.rendered.push(s.disp !== "none");
    const below = SEEN.under(node, s.cs, par >= 0 ? st.under[par] : SEEN.canvas(document));
    st.under.push(below);
    const unseen = SEEN.judge(node, s.cs, s.rect, below);
    if (unseen === NOTHING) st.unseenSubtree.push(id);
    else if (unseen === NO_TEXT) st.unseenText.push(id);
    st.effOpacity.push(eff);
    const [attrFlags, attrSrc] = attributes(st, node, id, tname, visibilityFlags(s, node, tname, eff, f.flag),
      withSrc);
    let fl = attrFlags;
    st.parent.push(par);
    st.tag.push(tcode);
    st.box.push(s.x, s.y, s.w, s.h);
    st.display.push(st.displays.code(s.disp));
    st.position.push(st.positions.code(s.pos));
    st.visibility.push(st.visibilities.code(s.vis));
    st.opacity.push(s.op === 1 ? 1 : Math.round(s.op * 1000) / 1000);
    st.fontSize.push(s.fsz);
    if (withSrc) st.src.push(`<${lname}${unforgeable(attrSrc)} data-cx="${id}">`);
    if (tname === "iframe" || tname === "frame") {
      if (enterFrame(st, node, id, tname, lname, f, s, fl, withSrc)) return;
      fl |= OPAQUE_FRAME;
      st.opaqueFrames++;
    }
    let sr = null;
    try {
      sr = shadowRootGet.call(node);
    } catch (e) {
      sr = null;
    }
    if (sr) fl |= SHADOW_HOST;
    st.flags.push(fl);
    if (VOID.has(lname)) return;
    if (tname === "template") {
      // Template content is an inert fragment, not part of the rendered tree: kept only in the source.
      if (withSrc) st.src.push(`${unforgeable(innerHTMLGet.call(node))}</${lname}>`);
      return;
    }
    // Light children (closed by the element's end tag), then the shadow root on top so it is walked first.
    push(st, firstChildGet.call(node), id, withSrc ? `</${lname}>` : null, false, fi, withSrc);
    if (sr) {
      if (withSrc) st.src.push('<template shadowrootmode="open">');
      push(st, firstChildGet.call(sr), id, withSrc ? "</template>" : null, false, fi, withSrc);
    }
  }

  // A same-origin frame: its <html> becomes the frame element's child, geometry shifted by the frame's content-box
  // origin. False for a cross-origin (opaque) frame.
  function enterFrame(st, node, id, tname, lname, f, s, fl, withSrc) {
    let doc = null;
    try {
      doc = (tname === "iframe" ? contentDocumentGet : frameDocumentGet).call(node);
    } catch (e) {
      doc = null;
    }
    if (!doc || !doc.documentElement) return false;
    let dx = f.dx, dy = f.dy;
    if (s.cs && s.rect) {
      dx += s.rect.left + (parseFloat(s.cs.borderLeftWidth) || 0) + (parseFloat(s.cs.paddingLeft) || 0);
      dy += s.rect.top + (parseFloat(s.cs.borderTopWidth) || 0) + (parseFloat(s.cs.paddingTop) || 0);
    }
    st.frames.push({ dx, dy, range: createRange.call(doc), flag: IN_FRAME });
    st.flags.push(fl);
    if (withSrc) st.src.push(`</${lname}>`);
    push(st, doc.documentElement, id, null, true, st.frames.length - 1, false);  // iframes are not inlined
    return true;
  }

  // ---- packed columns (PROTOCOL.md "Packed columns") -------------------------------------------------------------
  // A numeric column as base64 of zigzag LEB128 varints of round(value * scale), optionally of the differences
  // between neighbours: the browser hands one string to native messaging instead of converting 10^5 numbers one by
  // one, the host decodes it with numpy, and small numbers take one byte.
  const LIMIT = 4294967295;  // |round(value * scale)|: deltas then stay within the host's five varint bytes
  function varint(values, scale, delta) {
    const n = values.length;
    const out = new Uint8Array(n * 5 + 8);
    let p = 0, prev = 0;
    for (let i = 0; i < n; i++) {
      let x = scale === 1 ? values[i] : Math.round(values[i] * scale);
      if (!(x === x)) x = 0;  // NaN never comes from a layout; a number keeps the column decodable
      else if (x > LIMIT) x = LIMIT;
      else if (x < -LIMIT) x = -LIMIT;
      if (delta) {
        const d = x - prev;
        prev = x;
        x = d;
      }
      let z = x >= 0 ? x * 2 : -x * 2 - 1;
      if (z < 2147483648) {  // 32-bit integer operations, the common case
        while (z >= 128) {
          out[p++] = (z & 127) | 128;
          z >>>= 7;
        }
      } else {
        while (z >= 128) {
          out[p++] = (z % 128) + 128;
          z = Math.floor(z / 128);
        }
      }
      out[p++] = z;
    }
    const column = { varint: base64(out.subarray(0, p)), count: n };
    if (scale !== 1) column.scale = scale;
    if (delta) column.delta = true;
    return column;
  }

  function base64(bytes) {
    if (toBase64) return toBase64.call(bytes);
    let bin = "";
    for (let i = 0; i < bytes.length; i += 8192) bin += fromCharCode.apply(null, bytes.subarray(i, i + 8192));
    return btoaRef.call(window, bin);
  }

  const PACKED = {
    elements: { parent: [1, true], tag: [1, false], box: [10, false], display: [1, false], position: [1, false],
      visibility: [1, false], opacity: [1000, false], font_size: [10, false], flags: [1, false] },
    attrs: { node: [1, true] },
    text: { owner: [1, true], seq: [1, true], rect_offsets: [1, true], rects: [10, false] },
    unseen: { subtree: [1, true], text: [1, true] },
  };

  // The same snapshot with its numeric columns packed (the JSON number-list form stays valid protocol).
  function pack(snapshot) {
    const out = { ...snapshot };
    for (const section of Object.keys(PACKED)) {
      if (!snapshot[section]) continue;  // an optional section (unseen) another collector did not send
      const cols = { ...snapshot[section] };
      for (const [name, [scale, delta]] of Object.entries(PACKED[section])) {
        if (Array.isArray(cols[name])) cols[name] = varint(cols[name], scale, delta);
      }
      out[section] = cols;
    }
    return out;
  }

  function pageInfo(st, options, warnings) {
    const de = document.documentElement;
    let dir = "ltr";
    try {
      dir = gcs.call(window, document.body || de).direction || "ltr";
    } catch (e) {
      dir = "ltr";
    }
    if (st.opaqueFrames) warnings.push(`${st.opaqueFrames} cross-origin frame(s) recorded as opaque boxes`);
    return {
      url: String(location.href),
      title: String(document.title || ""),
      lang: de ? (de.getAttribute("lang") || "") : "",
      dir,
      viewport: [window.innerWidth, window.innerHeight],
      document: de ? [de.scrollWidth, de.scrollHeight] : [0, 0],
      scroll: [r1(st.sx), r1(st.sy)],
      dpr: window.devicePixelRatio || 1,
      collector: VERSION,
      timing: { collect_ms: 0 },
      stylesheets: stylesheetStats(document, !!options.offline),
      warnings,
    };
  }

  /* Options: {source: bool, offline: bool, encoding: "packed" (default) | "json" (number lists, the original
     form)}. Epoch times of the last call (start, walked, end) are left in globalThis.centrumCollectTiming for
     `centrum bench`. */
  function collect(options) {
    options = options || {};
    const now = () => performance.timeOrigin + performance.now();
    const t0 = now();
    const warnings = [];
    const bad = overridden();
    if (bad.length) warnings.push(`overridden by the page: ${bad.join(", ")}`);
    const st = newState(!!options.source);
    walk(st);
    const t1 = now();
    globalThis.centrumNodes = st.nodes;
    let snapshot = {
      protocol: 1,
      page: pageInfo(st, options, warnings),
      enums: { tag: st.tags.table, display: st.displays.table, position: st.positions.table,
        visibility: st.visibilities.table },
      elements: { parent: st.parent, tag: st.tag, box: st.box, display: st.display, position: st.position,
        visibility: st.visibility, opacity: st.opacity, font_size: st.fontSize, flags: st.flags },
      attrs: { node: st.aNode, name: st.aName, value: st.aValue },
      text: { owner: st.tOwner, seq: st.tSeq, text: st.tText, rect_offsets: st.tOff, rects: st.tRects },
      unseen: { subtree: st.unseenSubtree, text: st.unseenText },
    };
    if (st.wantSource) snapshot.source = st.src.join("");
    if (options.encoding !== "json") snapshot = pack(snapshot);
    const t2 = now();
    snapshot.page.timing.collect_ms = Math.round((t2 - t0) * 10) / 10;
    snapshot.page.timing.pack_ms = Math.round((t2 - t1) * 10) / 10;
    globalThis.centrumCollectTiming = { start: t0, walked: t1, end: t2 };
    return snapshot;
  }

  globalThis.centrumCollect = collect;
  globalThis.centrumPack = pack;
  globalThis.centrumCollectorVersion = VERSION;
  // Under a symbol, as clean.js is: a page element id="centrumSeen" cannot stand in for it.
  globalThis[Symbol.for("centrum.seen")] = SEEN;
})();
