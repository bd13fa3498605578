// sbx code-context driver for JavaScript (run as `node -e <this>`).
//
// Protocol: as the Python driver's. Requests are JSON lines on fd 3, frames
// JSON lines on fd 4 ("ready"; per run "result"s, at most one "error", then
// "done"); the user's output is plain fds 1 and 2.
//
// Code runs in this process's own global context with vm's
// runInThisContext, so globals and top-level var/let/const/function
// declarations persist from run to run (declaring the same let or const
// twice is a SyntaxError, as in a browser console). The value of the last
// expression is the main result; a Promise there is awaited. SIGINT
// interrupts synchronous code (breakOnSigint) and an await in progress.
//
// Top-level await works as in node's own REPL, with the REPL's rewrite
// (internal/repl/await, hence --expose-internals): a cell that awaits runs
// as an async function whose top-level declarations are hoisted out of it,
// so they persist too (a const becomes a let). Synchronous code after an
// await in such a cell cannot be interrupted by SIGINT; the agent kills the
// context if a timeout's interrupt is not obeyed.
(function () {
  'use strict';
  const fs = require('fs');
  const net = require('net');
  const util = require('util');
  const vm = require('vm');
  const stringify = JSON.stringify;
  const parse = JSON.parse;

  const frameFd = 4;
  function send(frame) {
    const data = Buffer.from(stringify(frame) + '\n');
    let off = 0;
    while (off < data.length) {
      try {
        off += fs.writeSync(frameFd, data, off);
      } catch (e) {
        if (e.code !== 'EAGAIN') throw e;
      }
    }
  }

  // Absent (a node without it, or without --expose-internals): a cell with
  // a top-level await is a SyntaxError, as before.
  let processTopLevelAwait = null;
  try { ({ processTopLevelAwait } = require('internal/repl/await')); } catch (_) { }

  // withAwait returns the code rewritten for top-level await, or null when
  // it has none (or cannot be parsed: compiling it as it is reports that).
  function withAwait(code) {
    if (!processTopLevelAwait || !code.includes('await')) return null;
    try { return processTopLevelAwait(code); } catch (_) { return null; }
  }

  let seq = 0;
  let interrupt = null; // rejects the await in progress
  process.on('SIGINT', () => { if (interrupt) interrupt(); });
  // Errors in callbacks after a run ended must not end the context.
  process.on('uncaughtException', (e) => {
    try { fs.writeSync(2, 'Uncaught ' + (e && e.stack ? e.stack : util.inspect(e)) + '\n'); } catch (_) { }
  });
  process.on('unhandledRejection', (e) => {
    try { fs.writeSync(2, 'Unhandled rejection ' + (e && e.stack ? e.stack : util.inspect(e)) + '\n'); } catch (_) { }
  });

  function bundle(value) {
    const data = { 'text/plain': util.inspect(value) };
    if (value !== null && typeof value === 'object') {
      const proto = Object.getPrototypeOf(value);
      if (Array.isArray(value) || proto === Object.prototype || proto === null) {
        try {
          const s = stringify(value);
          if (s !== undefined) data['application/json'] = parse(s);
        } catch (_) { }
      }
    }
    return data;
  }

  function errorFrame(e) {
    if (e instanceof Error || (e && typeof e === 'object' && 'stack' in e)) {
      // Drop the driver's own frames: keep the message and the cells.
      const stack = String(e.stack || '').split('\n').filter((l) => !/^\s+at /.test(l) || l.includes('cell-')).join('\n');
      return { type: 'error', seq, name: String(e.name || 'Error'), value: String(e.message || ''), traceback: stack };
    }
    return { type: 'error', seq, name: 'Error', value: 'Uncaught ' + util.inspect(e), traceback: '' };
  }

  // settle awaits a promise; SIGINT rejects the wait.
  function settle(p) {
    return new Promise((resolve, reject) => {
      interrupt = () => reject(new Error('Interrupted by SIGINT while awaiting a promise'));
      p.then(resolve, reject);
    });
  }

  async function run(req) {
    const saved = {};
    for (const [k, v] of Object.entries(req.env || {})) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
    try {
      const wrapped = withAwait(req.code);
      const script = new vm.Script(wrapped === null ? req.code : wrapped, { filename: 'cell-' + seq });
      let value = script.runInThisContext({ breakOnSigint: true, displayErrors: false });
      if (wrapped !== null) {
        // The async function answers {value} for a last expression.
        const out = await settle(value);
        value = out === undefined ? undefined : out.value;
      }
      if (value && typeof value.then === 'function') value = await settle(value);
      if (value !== undefined) send({ type: 'result', seq, main: true, data: bundle(value) });
    } catch (e) {
      send(errorFrame(e));
    } finally {
      interrupt = null;
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k]; else process.env[k] = v;
      }
    }
  }

  // Requests are handled one at a time, in order.
  let queue = Promise.resolve();
  let buf = '';
  const input = new net.Socket({ fd: 3, readable: true, writable: false });
  input.setEncoding('utf8');
  input.on('data', (chunk) => {
    buf += chunk;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      let req;
      try { req = parse(line); } catch (_) { continue; }
      queue = queue.then(async () => {
        seq = req.seq;
        await run(req);
        send({ type: 'done', seq });
      });
    }
  });
  input.on('end', () => process.exit(0));
  send({ type: 'ready' });
})();
