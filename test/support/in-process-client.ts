// @svc/client against the app in process: its fetch is the app's handle (no socket), and what the client's
// tests ask of its answers.
import { createClient, type Client, SvcError } from "../../client/src/index.ts";
import { promote, type testApp } from "../helpers.ts";
import { failure } from "./failure.ts";

type App = Awaited<ReturnType<typeof testApp>>;

/** A json-mode client of `svc` (what testApp returns), in memory. */
export function clientOf(svc: Pick<App, "app">): Client {
  const fetch = (input: RequestInfo | URL, init?: RequestInit) => svc.app.handle(new Request(input, init));
  return createClient({ baseUrl: "http://localhost", fetch: fetch as typeof globalThis.fetch });
}

/** An administrator, `root` (made by `promote`, as `svc user promote` does), signed in on a client of its own. */
export async function adminOf(app: App): Promise<{ admin: Client; root: Awaited<ReturnType<App["signUp"]>> }> {
  const root = await app.signUp("root");
  await promote(app.store, root.user.id);
  const admin = clientOf(app);
  await admin.auth.login({ username: "root", password: root.password });
  return { admin, root };
}

/** The status and code of the SvcError `promise` fails with; null when it succeeds. Any other failure is thrown. */
export async function codeOf(promise: Promise<unknown>): Promise<{ status: number; code: string } | null> {
  const error = await failure(promise);
  if (error === null) return null;
  if (!(error instanceof SvcError)) throw error;
  return { status: error.status, code: error.code };
}

/** Every item of a client's list (its pages followed). */
export async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const found: T[] = [];
  for await (const item of items) found.push(item);
  return found;
}
