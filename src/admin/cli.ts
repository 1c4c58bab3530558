// `svc admin`, `svc user` and `svc audit` (and signup/cli.ts's `svc invitation`): administration on the box, through the same services as the
// API, on whatever database SVC_DATABASE_URL names, while svc may be serving from it (every change is
// a transaction; caches on every instance see it at their next request).
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { CLI_ORIGIN, isAuditAction, AUDIT_ACTIONS } from "../audit/model.ts";
import type { Config } from "../config/index.ts";
import { describeDatabase, openFailure, openStore } from "../db/open.ts";
import { ROLES, type AuditFilter, type Role, type Store, type UserRecord } from "../db/store.ts";
import { AppError, UsageError } from "../errors/index.ts";
import { parseId } from "../lib/ids.ts";
import { createLoggers } from "../observability/log.ts";
import { accountServices } from "../process/services.ts";
import { auditEventView, parseSince } from "./model.ts";
import type { SecretInput } from "./secret-input.ts";

/** What a command writes to and reads from. */
export interface CommandIo {
  out: { write(text: string): unknown };
  err: { write(text: string): unknown };
  secrets?: SecretInput;
}

/** Rows read per statement when a command walks a whole table. */
const PAGE = 1000;

/**
 * Opens the store and the services, runs `work`, and closes the store whatever happens. Only an svc
 * database that is there: run in the wrong folder, a command must not make an empty one and report
 * success on it. Which database it is goes to stderr, out of the way of what the command prints.
 */
export async function withServices<T>(
  command: string,
  config: Config,
  io: CommandIo,
  work: (store: Store, services: ReturnType<typeof accountServices>) => Promise<T>,
): Promise<T> {
  // Never migrated here (only serve and migrate do): one an earlier svc migrated is refused in one line.
  const store = await openStore(config.database, { existing: true }).catch((error: unknown) => {
    throw openFailure(config.database, error);
  });
  io.err.write(`svc ${command}: using ${describeDatabase(config.database)}\n`);
  try {
    const { logger } = createLoggers("warn", { write: (line: string) => void io.err.write(line) });
    return await work(store, accountServices(config, store, logger));
  } finally {
    await store.close();
  }
}

const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);

/** A user named by id, username or e-mail; throws AppError not_found naming what was given. */
async function findUser(store: Store, name: string): Promise<UserRecord> {
  const id = parseId(name);
  const user = id ? await store.users.findById(id) : await store.users.findByLogin(name);
  if (!user) throw new AppError("not_found", `no user is named ${JSON.stringify(name)} (by username, e-mail or id)`);
  return user;
}

/** `svc user <verb> <user>`: `act` does the verb to the user its one argument names, and says what it did. */
function onUser(
  args: string[],
  config: Config,
  io: CommandIo,
  act: (target: UserRecord, services: ReturnType<typeof accountServices>) => Promise<string>,
): Promise<number> {
  const { positionals } = options(args, {}, 1);
  return withServices("user", config, io, async (store, services) => {
    io.out.write(await act(await findUser(store, positionals[0]!), services));
    return 0;
  });
}

/** The options `spec` names, and exactly `positionals` arguments besides, each `what` the command takes. */
export function options<T extends ParseArgsOptionsConfig>(
  args: string[],
  spec: T,
  positionals = 0,
  what = "user (username, e-mail or id)",
) {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: T; strict: true; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args, options: spec, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (parsed.positionals.length !== positionals) {
    throw new UsageError(
      positionals === 0 ? `unexpected ${parsed.positionals.join(" ")}` : `give exactly ${positionals} ${what}`,
    );
  }
  return parsed;
}

/** `svc admin create --username U --email E [--password-stdin]` */
export async function adminCommand(args: string[], config: Config, io: CommandIo): Promise<number> {
  const [verb, ...rest] = args;
  if (verb !== "create")
    throw new UsageError(verb ? `unknown admin command ${JSON.stringify(verb)}` : "say what to do: create");
  const values = accountOptions(rest, { role: false });
  const password = await readPassword(io, values.passwordStdin, "admin");
  if (password === null) return 1;
  return withServices("admin", config, io, async (_, { users }) => {
    // The operator on the box vouches for the address: the first administrator can sign in whatever
    // SVC_EMAIL_VERIFICATION says, before any mail is delivered.
    const user = await users.create({ username: values.username, email: values.email, password }, CLI_ORIGIN, {
      role: "admin",
      actor: null,
      emailVerified: true,
    });
    io.out.write(`created administrator ${user.username} (${user.id})\n`);
    return 0;
  });
}

/** A new account's options: --username and --email (required), --password-stdin, and --role where taken. */
function accountOptions(args: string[], { role: takesRole }: { role: boolean }) {
  if (args.some((arg) => arg === "--password" || arg.startsWith("--password="))) {
    throw new UsageError(
      "a password is never taken as an argument (the shell history and ps would show it): type it at the prompt, or pipe it with --password-stdin",
    );
  }
  const { values } = options(args, {
    username: { type: "string" },
    email: { type: "string" },
    "password-stdin": { type: "boolean" },
    ...(takesRole && { role: { type: "string" } }),
  });
  const { username, email, role = "user" } = values as { username?: string; email?: string; role?: string };
  if (!username || !email) throw new UsageError("--username and --email are required");
  if (!isRole(role)) throw new UsageError(`--role must be one of ${ROLES.join(", ")}`);
  return { username, email, role, passwordStdin: Boolean(values["password-stdin"]) };
}

/** The new password, from stdin or asked twice at the terminal. null: refused (and said why). */
async function readPassword(io: CommandIo, fromStdin: boolean, command: string): Promise<string | null> {
  const secrets = io.secrets;
  if (fromStdin) {
    if (!secrets) throw new UsageError("no stdin to read the password from");
    return secrets.readAll();
  }
  if (!secrets?.isTTY) {
    throw new UsageError("no terminal to ask for the password: pipe it in with --password-stdin");
  }
  const first = await secrets.ask("Password: ");
  const again = await secrets.ask("Password again: ");
  if (first !== again) {
    io.err.write(`svc ${command}: the passwords differ; nothing was created\n`);
    return null;
  }
  return first;
}

/** `svc user create|list|promote|demote|disable|enable|reset-password|verify-email|mfa-reset` */
export async function userCommand(args: string[], config: Config, io: CommandIo): Promise<number> {
  const [verb, ...rest] = args;
  switch (verb) {
    case "create": {
      // As an administrator would through the API: any role, whatever SVC_SIGNUP says.
      const { username, email, role, passwordStdin } = accountOptions(rest, { role: true });
      const password = await readPassword(io, passwordStdin, "user");
      if (password === null) return 1;
      return withServices("user", config, io, async (_, { admin }) => {
        const user = await admin.create(null, { username, email, password, role, email_verified: true }, CLI_ORIGIN);
        io.out.write(`created ${user.role === "admin" ? "administrator" : "user"} ${user.username} (${user.id})\n`);
        return 0;
      });
    }
    case "list": {
      const { values } = options(rest, { search: { type: "string" } });
      return withServices("user", config, io, async (store) => {
        io.out.write(`${["id", "username", "email", "role", "status", "last login", "email verified"].join("\t")}\n`);
        for (let after: string | undefined; ; ) {
          const page = await store.users.search({ search: values.search, limit: PAGE, ...(after && { after }) });
          for (const u of page) {
            const fields = [u.id, u.username, u.email, u.role, u.status, u.lastLoginAt ?? "never", u.emailVerifiedAt];
            io.out.write(`${fields.map((field) => field ?? "no").join("\t")}\n`);
          }
          if (page.length < PAGE) return 0;
          after = page.at(-1)!.id;
        }
      });
    }
    case "promote":
    case "demote":
    case "disable":
    case "enable": {
      const change = {
        promote: { role: "admin" },
        demote: { role: "user" },
        disable: { status: "disabled" },
        enable: { status: "active" },
      }[verb] as { role?: "admin" | "user"; status?: "active" | "disabled" };
      return onUser(rest, config, io, async (target, { admin }) => {
        const changed = await admin.update(null, target.id, change, CLI_ORIGIN);
        const ended = verb === "disable" && target.status === "active" ? " (its sessions and tokens ended)" : "";
        return `${changed.username}: role ${changed.role}, ${changed.status}${ended}\n`;
      });
    }
    case "verify-email":
      return onUser(rest, config, io, async (target, { admin }) => {
        const marked = await admin.markEmailVerified(null, target.id, CLI_ORIGIN);
        const already = target.emailVerifiedAt !== null ? " (already)" : "";
        return `${marked.username}: ${marked.email} verified${already} at ${marked.emailVerifiedAt}\n`;
      });
    case "reset-password":
      return onUser(rest, config, io, async (target, { admin }) => {
        const issued = await admin.issueReset(null, target.id, CLI_ORIGIN);
        return `reset code for ${target.username}: ${issued.reset_code}\nexpires ${issued.expires_at}; redeem it with POST /svc-api/v1/auth/password-reset\n`;
      });
    case "mfa-reset":
      // The way back in for a user who lost their phone: they sign in with the password alone and enrol again.
      return onUser(rest, config, io, async (target, { admin }) => {
        await admin.resetFactors(null, target.id, CLI_ORIGIN);
        return `${target.username}: second factors cleared (authenticator app, recovery codes, passkeys); they sign in with the password alone\n`;
      });
    default:
      throw new UsageError(verb ? `unknown user command ${JSON.stringify(verb)}` : "say what to do");
  }
}

/** `svc audit [--since 1h] [--user U] [--action A] [--limit N] [--json]`: newest first. */
export async function auditCommand(args: string[], config: Config, io: CommandIo): Promise<number> {
  const { values } = options(args, {
    since: { type: "string" },
    user: { type: "string" },
    action: { type: "string" },
    limit: { type: "string" },
    json: { type: "boolean" },
  });
  const filter: AuditFilter = { limit: 100 };
  if (values.limit !== undefined) {
    const limit = /^\d{1,6}$/.test(values.limit) ? Number(values.limit) : 0;
    if (limit < 1) throw new UsageError("--limit must be a whole number from 1 to 999999");
    filter.limit = limit;
  }
  if (values.since !== undefined) {
    const since = parseSince(values.since);
    if (!since)
      throw new UsageError(
        "--since must be a duration (30m, 24h, 7d) or an ISO-8601 date-time, reaching back no further than the year 0000",
      );
    filter.since = since;
  }
  if (values.action !== undefined) {
    if (!isAuditAction(values.action)) throw new UsageError(`--action must be one of ${AUDIT_ACTIONS.join(", ")}`);
    filter.action = values.action;
  }
  return withServices("audit", config, io, async (store) => {
    if (values.user !== undefined) {
      // A deleted user is still in the log: their id is taken as it is.
      filter.userId = parseId(values.user) ?? (await findUser(store, values.user)).id;
    }
    let left = filter.limit;
    for (let before: string | undefined; left > 0; ) {
      const page = await store.audit.list({ ...filter, limit: Math.min(left, PAGE), ...(before && { before }) });
      for (const e of page) {
        if (values.json) {
          io.out.write(`${JSON.stringify(auditEventView(e))}\n`);
        } else {
          const who = (id: string | null) => id ?? "-";
          io.out.write(
            `${[e.at, e.action, e.outcome, `actor=${who(e.actorId)}`, `target=${who(e.targetId)}`, `from=${e.clientAddress ?? "-"}`, e.detail ?? ""].join("  ").trimEnd()}\n`,
          );
        }
      }
      left -= page.length;
      if (page.length < PAGE) break;
      before = page.at(-1)!.id;
    }
    return 0;
  });
}
