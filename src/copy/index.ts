// `svc copy --from <url> --to <url> [--force]`: every user (hashes and token versions included, so
// logins and tokens keep working) and every category, in one transaction on the target.
import { parseArgs } from "node:util";
import { ConfigError, parseDatabaseUrl, type Env } from "../config.ts";
import { describeDatabase, openStore } from "../db/open.ts";
import { LoadRefused, type Counts, type Store, type UserRecord } from "../db/store.ts";
import { describeError } from "../safe-errors.ts";

const PAGE = 1000;

interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** Returns the exit code: 0 copied, 1 refused or failed (the target is left as it was), 2 bad usage. */
export async function runCopy(args: string[], env: Env, out: Output): Promise<number> {
  let options: { from: string; to: string; force: boolean };
  try {
    const { values } = parseArgs({ args, options: { from: { type: "string" }, to: { type: "string" }, force: { type: "boolean", default: false } } });
    if (!values.from || !values.to) throw new Error("--from and --to are both required");
    options = { from: values.from, to: values.to, force: values.force ?? false };
  } catch (error) {
    out.write(`svc copy: ${(error as Error).message}\nusage: svc copy --from <url> --to <url> [--force]\n`);
    return 2;
  }

  let from, to;
  try {
    from = parseDatabaseUrl(options.from, env, "--from");
    to = parseDatabaseUrl(options.to, env, "--to");
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    out.write(`svc copy: ${error.message}\n`);
    return 2;
  }
  if (describeDatabase(from) === describeDatabase(to)) {
    out.write("svc copy: --from and --to name the same database\n");
    return 2;
  }

  const stores: Store[] = [];
  try {
    const source = await openStore(from);
    stores.push(source);
    const target = await openStore(to);
    stores.push(target);
    const expected = await source.counts();
    out.write(`copying ${expected.users} users and ${expected.categories} categories from ${describeDatabase(from)} to ${describeDatabase(to)}\n`);
    const progress = (loaded: Counts) => {
      if (out.isTTY) out.write(`\r  users ${loaded.users}/${expected.users}  categories ${loaded.categories}/${expected.categories}`);
    };
    const copied = await target.load(
      { users: pages(source), categories: await source.categories.list() },
      { replace: options.force, expect: expected, onProgress: progress },
    );
    if (out.isTTY) out.write("\n");
    out.write(`copied ${copied.users} users and ${copied.categories} categories; counts match the source\n`);
    return 0;
  } catch (error) {
    if (out.isTTY) out.write("\n");
    const hint = error instanceof LoadRefused && !options.force ? " (use --force to replace its contents)" : "";
    out.write(`svc copy: nothing copied: ${describeError(error)}${hint}\n`);
    return 1;
  } finally {
    for (const store of stores) await store.close();
  }
}

/** Every user, a page at a time in id order. */
async function* pages(source: Store): AsyncGenerator<UserRecord[]> {
  let after: string | undefined;
  for (;;) {
    const page = await source.users.list(after === undefined ? { limit: PAGE } : { limit: PAGE, after });
    if (page.length === 0) return;
    yield page;
    after = page[page.length - 1]!.id;
  }
}
