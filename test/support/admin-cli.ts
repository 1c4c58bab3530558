// What the tests of `svc admin`, `svc user`, `svc invitation` and `svc audit` share (test/admin-cli*.test.ts,
// test/user-cli.test.ts): fresh SQLite databases, the commands run in process, and a look at what they did.
import { expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SecretInput } from "../../src/admin/secret-input.ts";
import { parseConfig } from "../../src/config/index.ts";
import { openStore } from "../../src/db/open.ts";
import { captureCli } from "./cli.ts";

/** The folder the fresh databases are in, removed when the test process ends. */
export const dir = mkdtempSync(join(tmpdir(), "svc-admin-cli-"));
process.once("exit", () => rmSync(dir, { recursive: true, force: true }));

export const PASSWORD = "correct horse battery";

let files = 0;
export const freshUrl = () => `sqlite:${join(dir, `svc-${++files}.db`)}`;
/** A new, empty svc database, made as an operator would: with `svc migrate`. */
export async function freshDatabase(): Promise<string> {
  const url = freshUrl();
  expect((await cli(url, ["migrate"])).code).toBe(0);
  return url;
}
/** What every command on a database says first on stderr: which database it is. */
export const using = (command: string, url: string) => `svc ${command}: using ${url}\n`;

/** Stdin as a pipe holding `text`, or as a terminal answering each prompt in turn. */
export function secrets(text: string | null, answers: string[] = []): SecretInput {
  return {
    isTTY: text === null,
    readAll: async () => (text ?? "").replace(/\r?\n$/, ""),
    ask: async () => answers.shift() ?? "",
  };
}

/** `svc <argv>` in process on the database at `url`. */
export function cli(url: string, argv: string[], stdin: SecretInput = secrets(null)) {
  return captureCli(argv, { SVC_DATABASE_URL: url, SVC_ENV: "test", SVC_PASSWORD_COST: "minimal" }, { secrets: stdin });
}

export const create = (url: string, username: string, stdin = secrets(`${PASSWORD}\n`), extra = ["--password-stdin"]) =>
  cli(url, ["admin", "create", "--username", username, "--email", `${username}@example.com`, ...extra], stdin);

/** The same database as a store, for looking at what a command did. */
export async function inspect<T>(url: string, look: (store: Awaited<ReturnType<typeof openStore>>) => Promise<T>) {
  const store = await openStore(parseConfig({ SVC_DATABASE_URL: url }).database);
  try {
    return await look(store);
  } finally {
    await store.close();
  }
}
