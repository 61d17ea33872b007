/**
 * The plugin's dealings with the Pegasus service: where it is, what a session's
 * messages say, recall with a deadline, and ingest that never loses a session.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export interface Settings {
  url?: string; // fixed by the options or PEGASUS_URL; else looked up on each call
  user: string;
  token?: string;
  recallTimeoutMs: number;
  dataDir: string;
}

export interface Turn {
  role: "user" | "assistant";
  content: string;
}

type Env = Record<string, string | undefined>;

/** Where `pegasus serve` keeps its files (platformdirs' user data directory). */
export function dataDir(env: Env = process.env, home = homedir(), platform = process.platform): string {
  if (platform === "darwin") return join(home, "Library", "Application Support", "pegasus");
  if (platform === "win32") return join(env.LOCALAPPDATA ?? join(home, "AppData", "Local"), "pegasus", "pegasus");
  return join(env.XDG_DATA_HOME || join(home, ".local", "share"), "pegasus");
}

/** The running service's URL: the plugin option, PEGASUS_URL, else the file the service writes. */
export function serviceUrl(option: unknown, env: Env, folder: string): string | undefined {
  const given = typeof option === "string" && option ? option : env.PEGASUS_URL;
  if (given) return given.replace(/\/+$/, "");
  try {
    const found = JSON.parse(readFileSync(join(folder, "service.json"), "utf8"));
    return typeof found?.url === "string" ? found.url : undefined;
  } catch {
    return undefined;
  }
}

export function settingsFrom(options: Record<string, unknown> = {}, env: Env = process.env): Settings {
  const folder = typeof options.dataDir === "string" ? options.dataDir : dataDir(env);
  const timeout = Number(options.recallTimeoutMs ?? env.PEGASUS_RECALL_TIMEOUT_MS ?? 1500);
  const given = typeof options.url === "string" && options.url ? options.url : env.PEGASUS_URL;
  return {
    url: given ? given.replace(/\/+$/, "") : undefined,
    user: String(options.user ?? env.PEGASUS_USER ?? "default"),
    token: typeof options.token === "string" ? options.token : env.PEGASUS_TOKEN,
    recallTimeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : 1500,
    dataDir: folder,
  };
}

export interface PartLike {
  type: string;
  text?: string;
  synthetic?: boolean;
  ignored?: boolean;
}

/** The words of a message: its text parts, not tool calls, reasoning or synthetic text. */
export function textOf(parts: PartLike[]): string {
  return parts
    .filter((part) => part.type === "text" && !part.synthetic && !part.ignored && part.text)
    .map((part) => (part.text ?? "").trim())
    .filter(Boolean)
    .join("\n");
}

/** A session's messages as turns; the assistant's consecutive messages make one turn. */
export function turnsOf(messages: { info: { role: string }; parts: PartLike[] }[]): Turn[] {
  const turns: Turn[] = [];
  for (const { info, parts } of messages) {
    if (info.role !== "user" && info.role !== "assistant") continue;
    const content = textOf(parts);
    if (!content) continue;
    const last = turns[turns.length - 1];
    if (last && last.role === "assistant" && info.role === "assistant") last.content += `\n\n${content}`;
    else turns.push({ role: info.role, content });
  }
  return turns;
}

/** The service answered, with an error status. */
class Refused extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

export class Memory {
  private warned = false;
  private missing = false; // said once that no service runs

  constructor(
    readonly settings: Settings,
    private readonly fetcher: typeof fetch = fetch,
    private readonly log: (line: string) => void = (line) => console.error(line),
  ) {}

  /** The service's URL now: a service started after opencode is found on the next call. */
  private url(): string | undefined {
    const url = serviceUrl(this.settings.url, {}, this.settings.dataDir);
    if (url) this.missing = false;
    else if (!this.missing) {
      this.missing = true;
      this.log("pegasus: no memory service running (start `pegasus serve`): messages go on without memory");
    }
    return url;
  }

  private async post(url: string, path: string, body: unknown, timeoutMs: number): Promise<any> {
    const headers: Record<string, string> = { "Content-Type": "application/json" };
    if (this.settings.token) headers.Authorization = `Bearer ${this.settings.token}`;
    const answer = await this.fetcher(`${url}${path}`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!answer.ok) throw new Refused(answer.status, `${path} answered ${answer.status}: ${await answer.text()}`);
    return answer.json();
  }

  private warn(what: string, error: unknown): void {
    if (this.warned) return; // once per process: a stopped service is not news each message
    this.warned = true;
    this.log(`pegasus: ${what}: ${error instanceof Error ? error.message : String(error)}`);
  }

  /** The memory block for a message, or "" (no service, too slow, nothing remembered). */
  async recall(message: string, sessionID: string): Promise<string> {
    const url = message.trim() ? this.url() : undefined;
    if (!url) return "";
    try {
      const found = await this.post(
        url,
        "/recall",
        { user: this.settings.user, message, conversation_id: sessionID },
        this.settings.recallTimeoutMs,
      );
      this.warned = false;
      return typeof found?.text === "string" ? found.text : "";
    } catch (error) {
      this.warn("no memory for this message", error);
      return "";
    }
  }

  /** Sends the session to the ingest queue; without a service, leaves it for the next start. */
  async ingest(sessionID: string, turns: Turn[]): Promise<"sent" | "queued" | "refused" | "nothing"> {
    if (!turns.some((turn) => turn.role === "user")) return "nothing";
    const transcript = { id: sessionID, turns };
    const url = this.url();
    if (url) {
      try {
        const job = await this.post(url, "/ingest", { user: this.settings.user, transcript }, 10_000);
        if (job?.state === "waiting") this.log(`pegasus: the session is kept but not learned yet: ${job.waiting_for}`);
        return "sent";
      } catch (error) {
        // Refused as it is (too large, not a transcript): a later start would refuse it too.
        if (error instanceof Refused && error.status < 500) {
          this.log(`pegasus: the session was refused: ${error.message}`);
          return "refused";
        }
        this.warn("the session waits for the service's next start", error);
      }
    }
    const folder = join(this.settings.dataDir, "jobs");
    mkdirSync(folder, { recursive: true });
    const id = randomUUID().replaceAll("-", "");
    const job = { id, user: this.settings.user, transcript, conversation_id: sessionID, now: null };
    writeFileSync(join(folder, `${id}.partial`), JSON.stringify(job));
    renameSync(join(folder, `${id}.partial`), join(folder, `${id}.json`));
    return "queued";
  }
}
