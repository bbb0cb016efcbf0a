/* Centrum collector: a columnar snapshot (protocol v1, host/PROTOCOL.md) of the live, rendered DOM.
 *
 * One file, two users: the extension injects it as a content script (chrome.scripting.executeScript) and the
 * headless renderer (host/centrum/render.py) evaluates it in the page. Evaluating it defines
 * globalThis.centrumCollect(options) -> snapshot object, and every call sets globalThis.centrumNodes (element by
 * node id). The page is never written to: node ids live only in centrumNodes and in the optional `source` string.
 * Options: {source: bool (default false), offline: bool (the renderer blocked every request leaving a local page,
 * so a cross-origin stylesheet cannot have loaded)}.
 *
 * Speed (issue #10: < 100 ms for 10k elements): one iterative walk, one getComputedStyle per element reading five
 * properties, one reused Range for text rectangles, enum strings interned into small tables, numbers rounded to
 * 0.1 px, parallel arrays instead of per-element objects.
 */
(() => {
  "use strict";
  const VERSION = "1.2.0";

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

  /* `source` must say truthfully which element has which id (issue #20): the DANA family maps its lines back to
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

  function collect(options) {
    const t0 = performance.now();
    const wantSource = !!(options && options.source);
    const warnings = [];
    const bad = overridden();
    if (bad.length) warnings.push(`overridden by the page: ${bad.join(", ")}`);

    const tags = interner(), displays = interner(), positions = interner(), visibilities = interner();
    const parent = [], tag = [], box = [], display = [], position = [], visibility = [], opacity = [],
      fontSize = [], flags = [];
    const aNode = [], aName = [], aValue = [];
    const tOwner = [], tSeq = [], tText = [], tOff = [0], tRects = [];
    const nodes = [];
    const effOpacity = [];  // product of opacities along the ancestors (flat tree), per element
    const rendered = [];    // false inside a display:none subtree (no layout box for anything below)
    const src = [];

    const sx = window.scrollX, sy = window.scrollY;
    // Frame contexts: offset of a same-origin iframe's viewport in top-document coordinates + its Range.
    const frames = [{ dx: sx, dy: sy, range: createRange.call(document), flag: 0 }];
    let opaqueFrames = 0;

    // Explicit stack of "levels" (a sibling list being walked), as parallel arrays: 10k-deep pages do not overflow
    // the JS stack, and no object is allocated per element.
    const lvNode = [], lvParent = [], lvClose = [], lvSingle = [], lvFrame = [], lvSrc = [];
    let sp = 0;
    const push = (node, par, close, single, frame, s) => {
      lvNode[sp] = node; lvParent[sp] = par; lvClose[sp] = close; lvSingle[sp] = single; lvFrame[sp] = frame;
      lvSrc[sp] = s; sp++;
    };

    push(firstChildGet.call(document), -1, null, false, 0, wantSource);

    while (sp > 0) {
      const level = sp - 1;
      const node = lvNode[level];
      if (node === null) {
        if (lvSrc[level] && lvClose[level] !== null) src.push(lvClose[level]);
        sp--;
        continue;
      }
      lvNode[level] = lvSingle[level] ? null : nextSiblingGet.call(node);
      const par = lvParent[level];
      const fi = lvFrame[level];
      const withSrc = lvSrc[level];
      const type = nodeTypeGet.call(node);

      if (type === 3) {  // text
        const data = dataGet.call(node);
        if (par >= 0) {
          const ptag = tags.table[tag[par]];
          if (!NO_TEXT_TAGS.has(ptag) && /\S/.test(data)) {
            tOwner.push(par);
            tSeq.push(parent.length);
            tText.push(data);
            if (rendered[par]) {
              const f = frames[fi];
              rangeSelect.call(f.range, node);
              const rl = rangeRects.call(f.range);
              for (let k = 0; k < rl.length; k++) {
                const r = rl[k];
                if (r.width === 0 && r.height === 0) continue;
                tRects.push(r1(r.left + f.dx), r1(r.top + f.dy), r1(r.width), r1(r.height));
              }
            }
            tOff.push(tRects.length >> 2);
          }
          if (withSrc) src.push(RAW_TEXT.has(ptag) ? escRaw(data, ptag) : unforgeable(escText(data)));
        }
        continue;
      }
      if (type === 8) {  // comment
        if (withSrc) src.push(`<!--${escComment(dataGet.call(node))}-->`);
        continue;
      }
      if (type === 10) {  // doctype, where the document has it (a comment may come first)
        if (withSrc) src.push(`<!DOCTYPE ${node.name}>`);
        continue;
      }
      if (type !== 1) continue;

      // ---- element ----
      const id = parent.length;
      nodes.push(node);
      const lname = localNameGet.call(node);
      const tcode = tags.code(lname);
      const tname = tags.table[tcode];
      const f = frames[fi];
      const pr = par >= 0 ? rendered[par] : true;
      let cs = null, rect = null, disp, pos, vis, op, fsz, x = 0, y = 0, w = 0, h = 0;
      if (pr) {
        cs = gcs.call(window, node);
        disp = cs.display; pos = cs.position; vis = cs.visibility;
        const opStr = cs.opacity;
        op = opStr === "1" ? 1 : parseFloat(opStr) || 0;
        fsz = r1(parseFloat(cs.fontSize) || 0);
        if (disp !== "none") {  // a display:none element has no box (head, script, style, hidden widgets)
          rect = gbcr.call(node);
          x = r1(rect.left + f.dx); y = r1(rect.top + f.dy); w = r1(rect.width); h = r1(rect.height);
        }
      } else {
        // Inside a display:none subtree nothing is laid out, and Chromium resolves such styles one ancestor chain
        // per call (quadratic in depth: 4 s for a 5000-deep hidden chain). Record "not displayed" and inherit the
        // rest from the parent instead of asking.
        disp = "none"; pos = "static"; vis = visibilities.table[visibility[par]]; op = 1; fsz = fontSize[par];
      }
      const isRendered = pr && disp !== "none";
      const eff = (par >= 0 ? effOpacity[par] : 1) * op;
      rendered.push(isRendered);
      effOpacity.push(eff);

      let fl = f.flag;
      // Off-document boxes (left: -10000px) and 1x1 "visually hidden" boxes (screen-reader-only text) show nothing.
      if (isRendered && w > 0 && h > 0 && (w > 1 || h > 1) && vis === "visible" && eff > 0 && x + w > 0 && y + h > 0) {
        fl |= VISIBLE;
      }
      if (pos === "fixed") fl |= FIXED;
      else if (pos === "sticky") fl |= STICKY;
      if (IMAGE_TAGS.has(tname)) fl |= IMAGE;
      // An empty element painted with a CSS background image (icon, hero banner) is an image too. Only empty ones:
      // a link with an icon and a label is text, and the extra property read stays rare.
      else if ((fl & VISIBLE) && isEmpty(node)) {
        const bg = cs.backgroundImage;
        if (bg !== "none" && bg.indexOf("url(") >= 0) fl |= IMAGE;
      }

      // Attributes: names first (no Attr objects: 10-30x cheaper than walking .attributes), values only when kept.
      let attrSrc = "";
      if (hasAttributes.call(node)) {
        const names = getAttributeNames.call(node);
        for (let k = 0; k < names.length; k++) {
          const nm = names[k];
          const keep = ATTRS.has(nm) || nm.startsWith("aria-") || (nm.startsWith("data-") && DATA_ATTR.test(nm));
          const isType = nm === "type" && tname === "input";
          if (!keep && !isType && !withSrc) continue;
          const val = getAttribute.call(node, nm);
          if (keep) {
            aNode.push(id);
            aName.push(nm);
            aValue.push(val.length > MAX_ATTR ? val.slice(0, MAX_ATTR) : val);
            if (nm === "href" && (tname === "a" || tname === "area")) fl |= LINK;
          } else if (isType && val.toLowerCase() === "image") {
            fl |= IMAGE;
          }
          if (withSrc) attrSrc += ` ${nm}="${escAttr(val)}"`;
        }
      }

      parent.push(par);
      tag.push(tcode);
      box.push(x, y, w, h);
      display.push(displays.code(disp));
      position.push(positions.code(pos));
      visibility.push(visibilities.code(vis));
      opacity.push(op === 1 ? 1 : Math.round(op * 1000) / 1000);
      fontSize.push(fsz);

      if (withSrc) src.push(`<${lname}${unforgeable(attrSrc)} data-cx="${id}">`);
      const isVoid = VOID.has(lname);

      if (tname === "iframe" || tname === "frame") {
        let doc = null;
        try {
          doc = (tname === "iframe" ? contentDocumentGet : frameDocumentGet).call(node);
        } catch (e) {
          doc = null;
        }
        if (doc && doc.documentElement) {
          // Same origin: its <html> becomes our child; geometry shifted by the frame's content-box origin.
          let dx = f.dx, dy = f.dy;
          if (cs && rect) {
            dx += rect.left + (parseFloat(cs.borderLeftWidth) || 0) + (parseFloat(cs.paddingLeft) || 0);
            dy += rect.top + (parseFloat(cs.borderTopWidth) || 0) + (parseFloat(cs.paddingTop) || 0);
          }
          frames.push({ dx, dy, range: createRange.call(doc), flag: IN_FRAME });
          flags.push(fl);
          if (withSrc) src.push(`</${lname}>`);
          push(doc.documentElement, id, null, true, frames.length - 1, false);  // iframes are not inlined
          continue;
        }
        fl |= OPAQUE_FRAME;
        opaqueFrames++;
      }

      let sr = null;
      try {
        sr = shadowRootGet.call(node);
      } catch (e) {
        sr = null;
      }
      if (sr) fl |= SHADOW_HOST;
      flags.push(fl);

      if (isVoid) continue;
      if (tname === "template") {
        // Template content is an inert fragment, not part of the rendered tree: kept only in the source.
        if (withSrc) src.push(`${unforgeable(innerHTMLGet.call(node))}</${lname}>`);
        continue;
      }
      // Light children (closed by the element's end tag), then the shadow root on top so it is walked first.
      push(firstChildGet.call(node), id, withSrc ? `</${lname}>` : null, false, fi, withSrc);
      if (sr) {
        if (withSrc) src.push('<template shadowrootmode="open">');
        push(firstChildGet.call(sr), id, withSrc ? "</template>" : null, false, fi, withSrc);
      }
    }

    if (opaqueFrames) warnings.push(`${opaqueFrames} cross-origin frame(s) recorded as opaque boxes`);
    const de = document.documentElement;
    const body = document.body;
    let dir = "ltr";
    try {
      dir = gcs.call(window, body || de).direction || "ltr";
    } catch (e) {
      dir = "ltr";
    }
    globalThis.centrumNodes = nodes;
    const snapshot = {
      protocol: 1,
      page: {
        url: String(location.href),
        title: String(document.title || ""),
        lang: de ? (de.getAttribute("lang") || "") : "",
        dir,
        viewport: [window.innerWidth, window.innerHeight],
        document: de ? [de.scrollWidth, de.scrollHeight] : [0, 0],
        scroll: [r1(sx), r1(sy)],
        dpr: window.devicePixelRatio || 1,
        collector: VERSION,
        timing: { collect_ms: 0 },
        stylesheets: stylesheetStats(document, !!(options && options.offline)),
        warnings,
      },
      enums: { tag: tags.table, display: displays.table, position: positions.table,
        visibility: visibilities.table },
      elements: { parent, tag, box, display, position, visibility, opacity, font_size: fontSize, flags },
      attrs: { node: aNode, name: aName, value: aValue },
      text: { owner: tOwner, seq: tSeq, text: tText, rect_offsets: tOff, rects: tRects },
    };
    if (wantSource) snapshot.source = src.join("");
    snapshot.page.timing.collect_ms = Math.round((performance.now() - t0) * 10) / 10;
    return snapshot;
  }

  globalThis.centrumCollect = collect;
  globalThis.centrumCollectorVersion = VERSION;
})();
