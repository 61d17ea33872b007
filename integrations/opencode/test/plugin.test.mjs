// The plugin against a stand-in Pegasus service (node:http), with opencode's hook
// inputs as opencode passes them. Run: npm test (builds, then node --test).
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import plugin from "../dist/index.js";
import { serviceUrl, settingsFrom, turnsOf } from "../dist/memory.js";

const BLOCK = "[MEMORY]\n- Ana lives in Porto";

async function service(answer) {
  const requests = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", async () => {
      const parsed = JSON.parse(body || "{}");
      requests.push({ path: req.url, body: parsed, auth: req.headers.authorization });
      const [status, reply] = await answer(req.url, parsed);
      if (status === 0) return; // never answers
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(reply));
    });
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  const url = `http://127.0.0.1:${server.address().port}`;
  return { url, requests, close: () => server.closeAllConnections() || server.close() };
}

const MESSAGES = [
  { info: { role: "user" }, parts: [{ type: "text", text: "My sister Ana moved to Porto." }] },
  { info: { role: "assistant" }, parts: [
    { type: "reasoning", text: "thinking" },
    { type: "text", text: "Porto is lovely." },
    { type: "tool", tool: "read", state: {} },
  ] },
  { info: { role: "assistant" }, parts: [{ type: "text", text: "Anything to plan?" }] },
  { info: { role: "user" }, parts: [
    { type: "text", text: "injected", synthetic: true },
    { type: "file", url: "file:///x" },
  ] },
  { info: { role: "user" }, parts: [{ type: "text", text: "Yes, a visit in May." }] },
];

function opencodeClient(messages = MESSAGES) {
  return { session: { messages: async ({ path }) => ({ data: path.id === "s1" ? messages : [] }) } };
}

async function hooks(options) {
  return plugin.server({ client: opencodeClient(), directory: "/tmp" }, options);
}

test("the default export is opencode's plugin module", () => {
  assert.equal(plugin.id, "pegasus-memory");
  assert.equal(typeof plugin.server, "function");
});

test("a message's memory goes into that turn's system prompt", async () => {
  const pegasus = await service(async () => [200, { text: BLOCK, fired: [] }]);
  try {
    const h = await hooks({ url: pegasus.url, user: "ana", token: "t0k", dataDir: mkdtempSync(join(tmpdir(), "pg-")) });
    await h["chat.message"]({ sessionID: "s1" }, { message: {}, parts: [{ type: "text", text: "Where does Ana live?" }] });
    const output = { system: ["You are opencode."] };
    await h["experimental.chat.system.transform"]({ sessionID: "s1", model: {} }, output);
    assert.deepEqual(output.system, ["You are opencode.", BLOCK]);
    assert.deepEqual(pegasus.requests[0], {
      path: "/recall", auth: "Bearer t0k",
      body: { user: "ana", message: "Where does Ana live?", conversation_id: "s1" },
    });
    // Another session gets nothing of it.
    const other = { system: [] };
    await h["experimental.chat.system.transform"]({ sessionID: "s2", model: {} }, other);
    assert.deepEqual(other.system, []);
  } finally {
    pegasus.close();
  }
});

test("a service that does not answer in time leaves the prompt as it was", async () => {
  const pegasus = await service(async () => [0]);
  try {
    const h = await hooks({ url: pegasus.url, recallTimeoutMs: 100, dataDir: mkdtempSync(join(tmpdir(), "pg-")) });
    await h["chat.message"]({ sessionID: "s1" }, { message: {}, parts: [{ type: "text", text: "hi" }] });
    const output = { system: ["base"] };
    await h["experimental.chat.system.transform"]({ sessionID: "s1", model: {} }, output);
    assert.deepEqual(output.system, ["base"]);
  } finally {
    pegasus.close();
  }
});

test("an idle session is sent to the ingest queue as turns", async () => {
  const pegasus = await service(async () => [202, { id: "job1", state: "queued" }]);
  try {
    const h = await hooks({ url: pegasus.url, user: "ana", dataDir: mkdtempSync(join(tmpdir(), "pg-")) });
    await h.event({ event: { type: "session.updated", properties: {} } });
    await h.event({ event: { type: "session.idle", properties: { sessionID: "s1" } } });
    assert.equal(pegasus.requests.length, 1);
    assert.deepEqual(pegasus.requests[0].body, {
      user: "ana",
      transcript: { id: "s1", turns: turnsOf(MESSAGES) },
    });
  } finally {
    pegasus.close();
  }
});

test("without a service the session waits in the queue folder", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "pg-"));
  const h = await hooks({ url: "http://127.0.0.1:9", user: "ana", dataDir });
  await h.event({ event: { type: "session.idle", properties: { sessionID: "s1" } } });
  const [file] = readdirSync(join(dataDir, "jobs"));
  const job = JSON.parse(readFileSync(join(dataDir, "jobs", file), "utf8"));
  assert.equal(job.user, "ana");
  assert.equal(job.conversation_id, "s1");
  assert.equal(job.transcript.turns.length, 3);
  assert.ok(file.endsWith(".json") && file.startsWith(job.id));
});

test("a session the service refuses as too large is not queued; one it cannot take now is", async () => {
  for (const [status, queued] of [[413, 0], [400, 0], [503, 1], [507, 1]]) {
    const pegasus = await service(async () => [status, { error: "no" }]);
    const dataDir = mkdtempSync(join(tmpdir(), "pg-"));
    try {
      const h = await hooks({ url: pegasus.url, user: "ana", dataDir });
      await h.event({ event: { type: "session.idle", properties: { sessionID: "s1" } } });
      const folder = join(dataDir, "jobs");
      const kept = existsSync(folder) ? readdirSync(folder).length : 0;
      assert.equal(kept, queued, `status ${status}`);
    } finally {
      pegasus.close();
    }
  }
});

test("turns keep only what was said", () => {
  assert.deepEqual(turnsOf(MESSAGES), [
    { role: "user", content: "My sister Ana moved to Porto." },
    { role: "assistant", content: "Porto is lovely.\n\nAnything to plan?" },
    { role: "user", content: "Yes, a visit in May." },
  ]);
});

test("settings: option, then environment, then the service's own file", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "pg-"));
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, "service.json"), JSON.stringify({ url: "http://127.0.0.1:8765", pid: 1 }));
  assert.equal(settingsFrom({ dataDir }, {}).url, undefined); // looked up on each call
  assert.equal(serviceUrl(undefined, {}, dataDir), "http://127.0.0.1:8765");
  assert.equal(settingsFrom({ dataDir }, { PEGASUS_URL: "http://h:1/" }).url, "http://h:1");
  assert.equal(settingsFrom({ dataDir, url: "http://o:2" }, { PEGASUS_URL: "http://h:1" }).url, "http://o:2");
  assert.equal(settingsFrom({ dataDir }, { PEGASUS_USER: "bo" }).user, "bo");
  assert.equal(serviceUrl(undefined, {}, join(dataDir, "none")), undefined);
  assert.equal(settingsFrom({ recallTimeoutMs: "x", dataDir }, {}).recallTimeoutMs, 1500);
  const xdg = settingsFrom({}, { XDG_DATA_HOME: "/data" });
  assert.equal(xdg.dataDir, process.platform === "linux" ? "/data/pegasus" : xdg.dataDir);
});

test("a service started after opencode is found on the next message; none is said once", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "pg-"));
  const said = [];
  const log = console.error;
  console.error = (line) => said.push(line);
  const pegasus = await service(async () => [200, { text: BLOCK, fired: [] }]);
  try {
    const h = await hooks({ user: "ana", dataDir });
    const ask = async (text) => {
      await h["chat.message"]({ sessionID: "s1" }, { message: {}, parts: [{ type: "text", text }] });
      const output = { system: [] };
      await h["experimental.chat.system.transform"]({ sessionID: "s1", model: {} }, output);
      return output.system;
    };
    assert.deepEqual(await ask("Where does Ana live?"), []);
    assert.deepEqual(await ask("And in May?"), []);
    assert.equal(said.length, 1);
    assert.match(said[0], /no memory service running/);
    writeFileSync(join(dataDir, "service.json"), JSON.stringify({ url: pegasus.url, pid: 1 }));
    assert.deepEqual(await ask("Where does Ana live?"), [BLOCK]);
    assert.equal(said.length, 1);
  } finally {
    console.error = log;
    pegasus.close();
  }
});

test("a session the service keeps but cannot learn yet is said", async () => {
  const pegasus = await service(async () => [202, { id: "j", state: "waiting", waiting_for: "no language model configured" }]);
  const said = [];
  const log = console.error;
  console.error = (line) => said.push(line);
  try {
    const h = await hooks({ url: pegasus.url, user: "ana", dataDir: mkdtempSync(join(tmpdir(), "pg-")) });
    await h.event({ event: { type: "session.idle", properties: { sessionID: "s1" } } });
    assert.deepEqual(said, ["pegasus: the session is kept but not learned yet: no language model configured"]);
  } finally {
    console.error = log;
    pegasus.close();
  }
});
