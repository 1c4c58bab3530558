// The subcommands of the one binary. Each gets its arguments and the environment, writes to the
// streams it is given, and returns an exit code: 0 done, 1 failed, 2 bad usage or configuration.
//
// Each command imports what it runs when it runs: `svc` serving never loads the copy, backup or
// administration code, and `svc version` loads nothing but this (the binary is split into chunks, so
// what is not imported is not even read).
import type { SecretInput } from "../admin/secret-input.ts";
import { ConfigError, parseConfig, type Env } from "../config/index.ts";
import { describeDatabase } from "../db/describe.ts";
import { AppError, UsageError } from "../errors/index.ts";
import { describeError } from "../errors/safe-errors.ts";
import { version } from "../../package.json";

export interface Io {
  out: { write(text: string): unknown };
  err: { write(text: string): unknown; isTTY?: boolean };
  /** Where a password is read from (svc admin create). */
  secrets?: SecretInput;
}

interface Command {
  /** The command's forms, one a line. */
  usage: string;
  summary: string;
  run(args: string[], env: Env, io: Io): Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  serve: {
    usage: "svc [serve]",
    summary: "Serve the API, configured by the SVC_* environment variables (see docs/configuration.md). The default.",
    async run(args, env, io) {
      if (args.length > 0)
        return usageError(io, "serve", `serve takes no arguments (got ${args.join(" ")}); it reads SVC_* variables`);
      const config = parseConfig(env);
      const { serve } = await import("./serve.ts");
      await serve(config);
      return 0;
    },
  },
  migrate: {
    usage: "svc migrate",
    summary:
      "Apply the embedded migrations to SVC_DATABASE_URL, then exit (serve also migrates at start). Besides serve, the one command that makes a new database; it says when it does.",
    async run(_, env, io) {
      const { database } = parseConfig(env);
      const [{ openStore, setAsideNotice }, { missingSqlite }, { upgradeNotice }] = await Promise.all([
        import("../db/open.ts"),
        import("../db/sqlite/file.ts"),
        import("../db/upgrades.ts"),
      ]);
      const created =
        database.kind === "sqlite" && database.path !== ":memory:" && missingSqlite(database.path) !== null;
      const store = await openStore(database, {
        onSetAside: (moved) => io.err.write(`svc migrate: ${setAsideNotice(moved)}\n`),
        onUpgrade: (step) => io.out.write(`${upgradeNotice(step)}\n`),
      });
      await store.close();
      io.out.write(
        `${created ? "created" : "migrated"} ${describeDatabase(database)}${created ? ": a new, empty database" : ""}\n`,
      );
      return 0;
    },
  },
  backup: {
    usage: "svc backup <file>\nsvc backup --list\nsvc backup --now",
    summary:
      "Write a consistent snapshot of the SQLite database to a new file, while svc keeps serving; list the snapshots at SVC_BACKUP_TO (name, bytes, time taken, svc version, database); or take one now, checked and gzipped, into SVC_BACKUP_TO, deleting this database's oldest beyond SVC_BACKUP_KEEP.",
    async run(args, env, io) {
      if (args[0]?.startsWith("--"))
        return (await import("../backup/cli.ts")).backupCommand(args, parseConfig(env), io);
      const [target, ...rest] = args;
      if (!target || rest.length > 0) return usageError(io, "backup", "give exactly one file to write");
      const { database } = parseConfig(env);
      if (database.kind !== "sqlite") {
        io.err.write(
          "svc backup: the database is PostgreSQL; back it up with pg_dump (e.g. pg_dump --format=custom --file=svc.dump <url>)\n",
        );
        return 1;
      }
      const { backupSqlite } = await import("../db/sqlite/backup.ts");
      backupSqlite(database.path, target);
      io.out.write(`backed up ${describeDatabase(database)} to ${target}\n`);
      return 0;
    },
  },
  restore: {
    usage: "svc restore --from <file | folder/latest | s3://bucket/prefix/name | s3://bucket/prefix/latest> [--force]",
    summary:
      "Bring a snapshot back into the SQLite file SVC_DATABASE_URL names, once it is read whole and checked; prints its time, svc version and row counts. latest is the database's own newest there. Stop svc first. A database already there is refused, unless --force, which keeps it as <file>.before-restore-<time>.",
    run: async (args, env, io) => (await import("../backup/cli.ts")).restoreCommand(args, parseConfig(env), io),
  },
  check: {
    usage: "svc check",
    summary:
      "Check the database SVC_DATABASE_URL names, changing nothing: SQLite's full integrity check and that its schema is only what svc's migrations make, or that PostgreSQL's svc tables are migrated, read and only svc's. Exit 1 on a problem.",
    async run(args, env, io) {
      if (args.length > 0) return usageError(io, "check", "check takes no arguments; it reads SVC_DATABASE_URL");
      const { database } = parseConfig(env);
      const { checkDatabase } = await import("../db/check.ts");
      const problems = await checkDatabase(database);
      const name = describeDatabase(database);
      if (problems.length === 0) {
        io.out.write(`${name}: ok\n`);
        return 0;
      }
      io.err.write(problems.map((problem) => `svc check: ${name}: ${problem}\n`).join(""));
      return 1;
    },
  },
  copy: {
    usage: "svc copy --from <url> --to <url> [--force] [--allow-empty]",
    summary: "Copy every user and category from an existing svc database to another, in one transaction on the target.",
    run: async (args, env, io) => (await import("../copy/index.ts")).runCopy(args, env, io.err),
  },
  admin: {
    usage: "svc admin create --username <name> --email <address> [--password-stdin]",
    summary:
      "Create an administrator. The password is asked at the terminal (not echoed), or read from stdin with --password-stdin; never taken as an argument.",
    run: async (args, env, io) => (await import("../admin/cli.ts")).adminCommand(args, parseConfig(env), io),
  },
  user: {
    usage:
      "svc user create --username <name> --email <address> [--role user|admin] [--password-stdin]\nsvc user list [--search <prefix>]\nsvc user promote|demote|disable|enable|reset-password|verify-email|mfa-reset <user>",
    summary:
      "Administer accounts on the box (a user by username, e-mail or id): create one, whatever SVC_SIGNUP says (its password asked for as admin create asks); list them; make or unmake an administrator; disable (ending every session at once) or enable; issue a one-time password reset code. Works while svc serves.",
    run: async (args, env, io) => (await import("../admin/cli.ts")).userCommand(args, parseConfig(env), io),
  },
  invitation: {
    usage: "svc invitation create [--email <address>] [--expires 7d]\nsvc invitation list\nsvc invitation revoke <id>",
    summary:
      "Invitations for sign-up while SVC_SIGNUP=invite: issue one (its code printed once; for one e-mail address, or any; lasting SVC_INVITATION_TTL unless --expires says), list them without their codes, or revoke one. Works while svc serves.",
    run: async (args, env, io) => (await import("../signup/cli.ts")).invitationCommand(args, parseConfig(env), io),
  },
  audit: {
    usage: "svc audit [--since 1h|<date-time>] [--user <user>] [--action <action>] [--limit 100] [--json]",
    summary: "Print the audit log, newest first: one line per event, or one JSON object per line with --json.",
    run: async (args, env, io) => (await import("../admin/cli.ts")).auditCommand(args, parseConfig(env), io),
  },
  version: {
    usage: "svc version",
    summary: "Print svc's version.",
    async run(_, __, io) {
      io.out.write(`svc ${version}\n`);
      return 0;
    },
  },
  healthcheck: {
    usage: "svc healthcheck",
    summary:
      "Exit 0 when the svc on SVC_HOST:SVC_PORT (or SVC_OPS_ADDRESS) answers /svc/health/ready with 200 (for a container HEALTHCHECK).",
    async run(_, env, io) {
      const config = parseConfig(env);
      // The operations listener when there is one; else the public one, over HTTPS with SVC_TLS_CERT, whose
      // certificate names the public host, not the address asked here: what is checked is readiness.
      const { host, port } = config.opsAddress ?? { host: config.host, port: config.port };
      const local = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
      const scheme = config.tls && !config.opsAddress ? "https" : "http";
      try {
        const response = await fetch(
          `${scheme}://${local.includes(":") ? `[${local}]` : local}:${port}/svc/health/ready`,
          { signal: AbortSignal.timeout(3000), tls: { rejectUnauthorized: false } },
        );
        if (response.ok) return 0;
        io.err.write(`svc healthcheck: not ready (${response.status})\n`);
      } catch (error) {
        io.err.write(`svc healthcheck: no answer: ${error instanceof Error ? error.message : String(error)}\n`);
      }
      return 1;
    },
  },
};

/** The width of a terminal that has not been asked: every line of help fits it. */
const COLUMNS = 80;

function usageError(io: Io, name: string, problem: string): number {
  io.err.write(`svc ${name}: ${problem}\n${usage(COMMANDS[name]!)}\n`);
  return 2;
}

function usage(command: Command): string {
  return wrap(command.usage, "usage: ", "       ", "           ");
}

function help(): string {
  const lines = Object.values(COMMANDS).map(
    (c) => `${wrap(c.usage, "  ", "  ", "        ")}\n${wrap(c.summary, "      ", "      ", "      ")}`,
  );
  return `svc ${version}: the Categories and Users service\n\nusage:\n${lines.join("\n")}\n\nsvc <command> --help describes one command.\n`;
}

/**
 * `text` in lines of at most COLUMNS, broken between words: its first line after `first`, each further
 * line of its own (a command's other form) after `line`, and the rest of a broken line after `rest`.
 */
function wrap(text: string, first: string, line: string, rest: string): string {
  const out: string[] = [];
  for (const [i, paragraph] of text.split("\n").entries()) {
    let current = i === 0 ? first : line;
    let empty = true;
    for (const word of paragraph.split(" ")) {
      if (!empty && current.length + 1 + word.length > COLUMNS) {
        out.push(current);
        current = rest;
        empty = true;
      }
      current += empty ? word : ` ${word}`;
      empty = false;
    }
    out.push(current);
  }
  return out.join("\n");
}

export async function runCli(argv: string[], env: Env, io: Io): Promise<number> {
  const [first, ...rest] = argv;
  if (first === "--help" || first === "-h" || first === "help") {
    io.out.write(help());
    return 0;
  }
  if (first === "--version" || first === "-v") return COMMANDS.version!.run([], env, io);
  const name = first === undefined || first.startsWith("-") ? "serve" : first;
  const command = COMMANDS[name];
  if (!command) {
    io.err.write(`svc: unknown command ${JSON.stringify(name)}\n\n${help()}`);
    return 2;
  }
  const args = first === undefined || first.startsWith("-") ? argv : rest;
  if (args.includes("--help") || args.includes("-h")) {
    io.out.write(`${usage(command)}\n\n${wrap(command.summary, "", "", "")}\n`);
    return 0;
  }
  try {
    return await command.run(args, env, io);
  } catch (error) {
    if (error instanceof ConfigError) {
      io.err.write(`svc: ${error.message}\n`);
      return 2;
    }
    if (error instanceof UsageError) return usageError(io, name, error.message);
    if (error instanceof AppError) {
      const problems = error.errors?.map((e) => `${e.field} ${e.message}`).join("; ");
      io.err.write(`svc ${name}: ${problems ?? error.message}\n`);
      return 1;
    }
    if (name === "serve") throw error;
    io.err.write(`svc ${name}: ${describeError(error)}\n`);
    return 1;
  }
}
