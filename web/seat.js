// The browser seat: a terminal (xterm.js) joined to the student's own tutor over one
// WebSocket. Keys go to the server as the bytes a terminal would send, the screen comes back
// as the bytes a terminal would receive; control messages (join, size, refusal, end) are JSON
// text. The join code goes in the first message, never in an address or a cookie.
"use strict";
(function () {
  const form = document.getElementById("join");
  const message = document.getElementById("message");
  const nameInput = document.getElementById("name");
  const codeInput = document.getElementById("code");
  const needsCode = document.body.dataset.join === "code";
  document.getElementById("code-label").hidden = !needsCode;
  codeInput.required = needsCode;

  const encoder = new TextEncoder();
  let socket = null;
  let term = null;
  let fit = null;
  let joined = false;

  function say(text) {
    message.textContent = text;
  }

  function send(object) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(object));
  }

  // A message over 64 KiB closes the socket (the server's limit), so a long paste goes in
  // pieces; the server keeps the first 64 KiB of a paste, as it does for ssh.
  const PIECE = 16 * 1024;

  function sendBytes(bytes) {
    if (!joined || socket.readyState !== WebSocket.OPEN) return;
    for (let at = 0; at < bytes.length; at += PIECE) socket.send(bytes.subarray(at, at + PIECE));
  }

  // The terminal is made before joining, so the join can say how big it is.
  function terminal() {
    if (term) return;
    term = new Terminal({
      fontFamily: 'ui-monospace, "DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace',
      fontSize: FONT,
      scrollback: 0,
      lineHeight: LINE_HEIGHT,
      // On a Mac, Option+drag selects (Shift+drag elsewhere).
      macOptionClickForcesSelection: true,
    });
    fit = new FitAddon.FitAddon();
    term.loadAddon(fit);
    term.open(document.getElementById("terminal"));
    fitTutor();
    // Ctrl+C (Cmd+C) with text selected (Shift+drag, Option+drag on a Mac: the tutor takes
    // plain clicks) copies it, as in any page, instead of reaching the tutor, where it quits.
    // Ctrl+V pastes, as in any page (a terminal would send it as a key the tutor has no use
    // for); the browser's paste reaches the tutor as a bracketed paste.
    term.attachCustomKeyEventHandler((event) => {
      const control = (event.ctrlKey || event.metaKey) && !event.altKey;
      const copy = control && event.key === "c" && term.hasSelection();
      const paste = control && !event.shiftKey && event.key === "v";
      return !(copy || paste);
    });
    term.onData((data) => sendBytes(encoder.encode(data)));
    // Mouse reports in the legacy encoding are bytes, not text.
    term.onBinary((data) => sendBytes(Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff)));
    term.onResize((size) => {
      if (joined) send({ size: { columns: size.cols, rows: size.rows } });
    });
    window.addEventListener("resize", fitTutor);
  }

  // The tutor is laid out for 80×24 at the least: a small window (a tablet, a phone) gets a
  // smaller font before it gets too few cells, and a large one a larger font before lines
  // too long to read.
  const FONT = 15;
  // Room below the baseline, so that underscores (W_q, d_k) show at small sizes.
  const LINE_HEIGHT = 1.15;
  const SMALLEST_FONT = 8;
  const LARGEST_FONT = 24;
  const MOST_COLUMNS = 160;

  function fitTutor() {
    term.options.fontSize = FONT;
    fit.fit();
    while ((term.cols < 80 || term.rows < 24) && term.options.fontSize > SMALLEST_FONT) {
      term.options.fontSize -= 1;
      fit.fit();
    }
    while (term.cols > MOST_COLUMNS && term.options.fontSize < LARGEST_FONT) {
      term.options.fontSize += 1;
      fit.fit();
    }
    // The tutor says so too, in a terminal's words; this says what to do with the screen:
    // turning it helps only a screen held upright.
    const narrow = document.getElementById("narrow");
    narrow.hidden = term.cols >= 80 && term.rows >= 24;
    narrow.textContent =
      "This screen is too small for the tutor's 80 columns and 24 rows, even in the smallest " +
      (window.innerWidth < window.innerHeight
        ? "type: turn it sideways, or use a larger screen."
        : "type: use a larger screen or window.");
  }

  function join() {
    terminal();
    send({
      join: {
        name: nameInput.value,
        code: codeInput.value,
        columns: term.cols,
        rows: term.rows,
      },
    });
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    socket = new WebSocket(scheme + "//" + location.host + "/ws");
    socket.binaryType = "arraybuffer";
    socket.onopen = join;
    socket.onmessage = (event) => {
      if (typeof event.data !== "string") {
        term.write(new Uint8Array(event.data));
        return;
      }
      const said = JSON.parse(event.data);
      if ("joined" in said) {
        joined = true;
        form.hidden = true;
        term.focus();
      } else if ("refused" in said) {
        say(said.refused);
        if (!said.again) socket.close();
        codeInput.select();
      } else if ("ended" in said) {
        // The tutor has already written why on the screen.
        joined = false;
        document.title = "attn-tutor (session over)";
        const over = said.ended === "the class has ended";
        term.write(over ? "" : "\r\n[session over: reload the page to join again]\r\n");
      }
    };
    socket.onclose = () => {
      if (joined) {
        joined = false;
        document.title = "attn-tutor (session over)";
        term.write("\r\n[attn-tutor: the connection closed; reload the page to join again]\r\n");
      } else if (!message.textContent) {
        say("The connection closed before you were in (the class may be busy, or over). Press Join to try again.");
      }
    };
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    say("");
    if (socket && socket.readyState === WebSocket.OPEN) join();
    else connect();
  });
})();
