/**
 * Pegasus memory for opencode.
 *
 * For each user message the plugin asks the running Pegasus service (`pegasus serve`)
 * what the user's memory holds about it, and adds the block to that turn's system
 * prompt. When a session goes idle, its user and assistant text is sent to the
 * service's ingest queue. Memory never holds a message up: recall gives up after
 * `recallTimeoutMs` (the message goes on without memory), and a session the service
 * cannot take is left in the queue folder the service reads when it next starts.
 *
 * opencode loads the default export ({ id, server }); the helpers live in memory.ts.
 */
import type { Plugin } from "@opencode-ai/plugin";

import { Memory, type PartLike, settingsFrom, textOf, turnsOf } from "./memory.js";

const PegasusMemory: Plugin = async (input, options) => {
  const memory = new Memory(settingsFrom(options ?? {}));
  const blocks = new Map<string, Promise<string>>(); // session -> its latest message's block

  return {
    "chat.message": async ({ sessionID }, { parts }) => {
      const message = textOf(parts as PartLike[]);
      if (message) blocks.set(sessionID, memory.recall(message, sessionID));
    },
    "experimental.chat.system.transform": async ({ sessionID }, output) => {
      const block = sessionID ? await blocks.get(sessionID) : undefined;
      if (block) output.system.push(block);
    },
    event: async ({ event }) => {
      if (event.type !== "session.idle") return;
      const sessionID = event.properties.sessionID;
      const answer = await input.client.session.messages({ path: { id: sessionID } });
      const messages = (answer.data ?? []) as { info: { role: string }; parts: PartLike[] }[];
      await memory.ingest(sessionID, turnsOf(messages));
    },
  };
};

export default { id: "pegasus-memory", server: PegasusMemory };
