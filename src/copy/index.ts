// `svc copy --from <url> --to <url> [--force] [--allow-empty]`: every user (hashes and token versions
// included, so logins and tokens keep working) and every category, in one transaction on the target.
// The source is only read, and the target written: each must be an svc database that exists (svc
// migrate makes a new one); nothing is created by a copy.
import { parseArgs } from "node:util";
import { ConfigError, parseDatabaseUrl, type Env } from "../config/index.ts";
import { describeDatabase, openFailure, openStore } from "../db/open.ts";
import {
  CATEGORY_FIELDS,
  LoadRefused,
  NoSuchDatabase,
  USER_FIELDS,
  type CategoryRecord,
  type Counts,
  type Store,
  type UserRecord,
} from "../db/store.ts";
import { describeError } from "../errors/safe-errors.ts";
import { unstorable } from "../lib/text.ts";
import { sourcePages } from "./pages.ts";

const USAGE = "usage: svc copy --from <url> --to <url> [--force] [--allow-empty]";

interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** Returns the exit code: 0 copied, 1 refused or failed (the target is left as it was), 2 bad usage. */
export async function runCopy(args: string[], env: Env, out: Output): Promise<number> {
  let options: { from: string; to: string; force: boolean; allowEmpty: boolean };
  try {
    const { values } = parseArgs({
      args,
      options: {
        from: { type: "string" },
        to: { type: "string" },
        force: { type: "boolean", default: false },
        "allow-empty": { type: "boolean", default: false },
      },
    });
    if (!values.from || !values.to) throw new Error("--from and --to are both required");
    options = {
      from: values.from,
      to: values.to,
      force: values.force ?? false,
      allowEmpty: values["allow-empty"] ?? false,
    };
  } catch (error) {
    out.write(`svc copy: ${(error as Error).message}\n${USAGE}\n`);
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
    // Neither is migrated (only serve and migrate do): one an earlier svc migrated is refused in one line.
    const source = await openStore(from, { existing: true }).catch((error: unknown) => {
      throw openFailure(from, error);
    });
    stores.push(source);
    const target = await openStore(to, { existing: true })
      .catch(makeItFirst)
      .catch((error: unknown) => {
        throw openFailure(to, error);
      });
    stores.push(target);
    const expected = await source.counts();
    const factors = await source.mfa.counts();
    const identities = await source.identities.count();
    const present = await target.counts();
    if (isEmpty(expected) && !isEmpty(present) && !options.allowEmpty) {
      throw new CopyRefused(
        `the source ${describeDatabase(from)} holds no users or categories while the target holds ${present.users} users and ${present.categories} categories (--allow-empty copies an empty source on purpose)`,
      );
    }
    out.write(
      `copying ${expected.users} users and ${expected.categories} categories from ${describeDatabase(from)} to ${describeDatabase(to)}\n`,
    );
    const progress = (loaded: Counts) => {
      if (out.isTTY)
        out.write(
          `\r  users ${loaded.users}/${expected.users}  categories ${loaded.categories}/${expected.categories}`,
        );
    };
    const { users, ...pages } = sourcePages(source);
    const copied = await target.load(
      {
        ...pages,
        users: storable(users),
        categories: (await source.categories.list()).map(storableCategory),
        identity: await source.categoryEvents.identity(),
      },
      {
        replace: options.force,
        expect: expected,
        expectFactors: factors,
        expectIdentities: identities,
        onProgress: progress,
      },
    );
    if (out.isTTY) out.write("\n");
    out.write(`copied ${copied.users} users and ${copied.categories} categories; counts match the source\n`);
    out.write(
      `second factors: ${factors.totp} authenticator apps, ${factors.recoveryCodes} recovery codes, ${factors.passkeys} passkeys; counts match the source\n`,
    );
    out.write(`identities at OpenID providers: ${identities}; the count matches the source\n`);
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

/** A target that is not there: the copy makes none (a misspelt one would take the data), and says how to. */
function makeItFirst(error: unknown): never {
  if (!(error instanceof NoSuchDatabase)) throw error;
  throw new NoSuchDatabase(`${error.message}: make it first with \`svc migrate\` (SVC_DATABASE_URL=the target)`);
}

/** What the source holds cannot, or should not, be copied as it is. */
class CopyRefused extends Error {
  override name = "CopyRefused";
}

function isEmpty(counts: Counts): boolean {
  return counts.users === 0 && counts.categories === 0;
}

/** The first field of a record holding text no database may store (see text.ts); null when none. */
function unstorableField<T extends object>(record: T, fields: readonly (keyof T)[]): string | null {
  for (const field of fields) {
    const value = record[field];
    if (typeof value === "string" && unstorable(value)) return String(field);
  }
  return null;
}

function refuseRow(kind: string, id: string, field: string): never {
  throw new CopyRefused(
    `${kind} ${id} has U+0000 or an unpaired UTF-16 surrogate in its ${field}; correct or delete it on the source, then copy again`,
  );
}

/** The pages, refusing (with the row named) a user whose text the target could not store. */
async function* storable(users: AsyncIterable<UserRecord[]>): AsyncGenerator<UserRecord[]> {
  for await (const page of users) {
    for (const user of page) {
      const field = unstorableField(user, USER_FIELDS);
      if (field) refuseRow("user", user.id, field);
    }
    yield page;
  }
}

function storableCategory(category: CategoryRecord): CategoryRecord {
  const field = unstorableField(category, CATEGORY_FIELDS);
  if (field) refuseRow("category", category.id, field);
  return category;
}
