/* Centrum: the native-messaging port (background side).
 *
 * One connectNative port is kept open while the background lives: spawning the host costs a Python start-up, so it
 * is paid once, not per press. Requests carry ids; the host answers in order, each answer in numbered chunks
 * (each native message is capped at 1 MB by the browsers) that are reassembled here. A disconnect fails every
 * pending request and the next request reconnects.
 */
"use strict";

(() => {
  const api = globalThis.browser ?? globalThis.chrome;

  // Chrome refuses browser -> host messages over 64 MiB; Firefox was seen to hang near 45 MB, so stay below it.
  const IS_FIREFOX = typeof api.runtime.getBrowserInfo === "function";
  const MAX_REQUEST_BYTES = IS_FIREFOX ? 40 * 1024 * 1024 : 64 * 1024 * 1024;

  class CentrumError extends Error {
    constructor(code, message, field) {
      super(message);
      this.code = code;
      if (field !== undefined && field !== null) this.field = field;
    }
  }

  // Byte length of a JSON string without always encoding it: UTF-8 takes 1-3 bytes per UTF-16 unit.
  function utf8Length(text, limit) {
    if (text.length > limit) return text.length;
    if (text.length * 3 <= limit) return text.length;
    return new TextEncoder().encode(text).length;
  }

  function portError(port) {
    // Firefox reports on port.error, Chrome on runtime.lastError (read it, or Chrome logs "unchecked").
    const lastError = api.runtime.lastError;
    return (port && port.error && port.error.message) || (lastError && lastError.message) || "";
  }

  function missingHost(detail) {
    return /not found|no such native application|forbidden|not allowed|manifest/i.test(detail);
  }

  // The page shows the code's plain sentence (errorHostMissing: not installed, run centrum install-host) above this
  // message, so the message carries only what the browser said, for a bug report: saying it again was noise.
  function hostMissing(name, detail) {
    const said = detail || "connectNative failed";
    return new CentrumError("E_HOST_MISSING", said.includes(name) ? said : `${name}: ${said}`);
  }

  class HostPort {
    constructor(name) {
      this.name = name;
      this.port = null;
      this.pending = new Map(); // id -> {resolve, reject, parts, received, timer}
      this.order = []; // ids in send order: the host answers in order, an id-less error belongs to the oldest
      this.seq = 0;
      this.answered = false; // did this port ever deliver a message (distinguishes "missing" from "crashed")
    }

    connect() {
      if (this.port) return this.port;
      const port = api.runtime.connectNative(this.name);
      this.answered = false;
      port.onMessage.addListener((msg) => this.onMessage(msg));
      port.onDisconnect.addListener(() => this.onDisconnect(port));
      this.port = port;
      return port;
    }

    onMessage(msg) {
      this.answered = true;
      if (!msg || typeof msg !== "object" || typeof msg.chunks !== "number") return;
      // An answer to a request whose id the host could not read has id null: answers come in order, so it is the
      // oldest pending one. A non-null unknown id is a late answer to a timed-out request: dropped.
      const id = msg.id === null ? this.order[0] : msg.id;
      const entry = this.pending.get(id);
      if (!entry) return;
      entry.parts[msg.chunk] = msg.data;
      entry.received += 1;
      if (entry.received < msg.chunks) return;
      this.settle(id);
      let body;
      try {
        body = JSON.parse(entry.parts.join(""));
      } catch (e) {
        entry.reject(new CentrumError("E_INTERNAL", `unreadable answer from the host: ${e.message}`));
        return;
      }
      if (body.status === "ok") entry.resolve(body.result);
      else {
        const err = body.error || {};
        entry.reject(new CentrumError(err.code || "E_INTERNAL", err.message || "host error", err.field));
      }
    }

    onDisconnect(port) {
      const detail = portError(port);
      if (this.port === port) this.port = null;
      const missing = !this.answered && missingHost(detail);
      for (const id of [...this.order]) {
        const entry = this.pending.get(id);
        this.settle(id);
        if (missing) {
          entry.reject(hostMissing(this.name, detail));
        } else {
          entry.reject(new CentrumError("E_DISCONNECTED",
            `The Centrum host exited while working (${detail || "disconnected"}); see host.log. Press again to retry.`));
        }
      }
    }

    timeout(timeoutMs) {
      // The host answers in order, so a stuck request blocks all later ones: drop the port (the browser stops the
      // host) and fail everything pending; the next request starts a fresh host.
      const port = this.port;
      this.port = null;
      if (port) port.disconnect();
      for (const id of [...this.order]) {
        const entry = this.pending.get(id);
        this.settle(id);
        entry.reject(new CentrumError("E_TIMEOUT",
          `No answer from the Centrum host within ${timeoutMs / 1000} s; see host.log.`));
      }
    }

    settle(id) {
      const entry = this.pending.get(id);
      if (entry) clearTimeout(entry.timer);
      this.pending.delete(id);
      this.order = this.order.filter((x) => x !== id);
    }

    // maxBytes: a user setting may lower the browser's limit (never raise it).
    request(type, fields = {}, timeoutMs = 120000, maxBytes = MAX_REQUEST_BYTES) {
      const limit = Math.min(maxBytes || MAX_REQUEST_BYTES, MAX_REQUEST_BYTES);
      const id = `r${++this.seq}`;
      const message = { v: 1, id, type, ...fields };
      const text = JSON.stringify(message);
      const bytes = utf8Length(text, limit);
      if (bytes > limit) {
        return Promise.reject(new CentrumError("E_REQUEST_TOO_LARGE",
          `This page is too large to analyse (${(bytes / 1048576).toFixed(1)} MiB; the limit is ` +
          `${(limit / 1048576).toFixed(1)} MiB).`));
      }
      return new Promise((resolve, reject) => {
        let port;
        try {
          port = this.connect();
        } catch (e) {
          reject(hostMissing(this.name, e.message));
          return;
        }
        const timer = setTimeout(() => this.timeout(timeoutMs), timeoutMs);
        this.pending.set(id, { resolve, reject, parts: [], received: 0, timer });
        this.order.push(id);
        try {
          port.postMessage(message);
        } catch (e) {
          this.settle(id);
          reject(new CentrumError("E_DISCONNECTED", `Could not send to the Centrum host: ${e.message}`));
        }
      });
    }
  }

  globalThis.CentrumError = CentrumError;
  globalThis.CentrumHostPort = HostPort;
  globalThis.CENTRUM_MAX_REQUEST_BYTES = MAX_REQUEST_BYTES;
})();
