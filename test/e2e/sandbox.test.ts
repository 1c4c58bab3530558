// The sandbox of docs/deploy/svc.service does not break svc: the compiled binary serves, streams, stops and runs
// its commands under the unit's restrictions, which sandbox/jail.sh and sandbox/seccomp.c reproduce without systemd
// (no systemd runs here to start the unit). The system call allow-list comes from the unit's own SystemCallFilter=
// lines, and a call outside it kills svc (where the unit says EPERM), so a Bun upgrade that needs a new one fails
// here rather than on a server. Needs root, gcc, libseccomp 2, unshare, setpriv and systemd-analyze: CI has them;
// elsewhere the file is skipped, saying so.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compiledBinary } from "./support/binary.ts";

const root = join(import.meta.dir, "..", "..");
const JAIL_UID = 61999; // jail.sh's user
const SECRET = "sandbox-test-secret-of-at-least-32-bytes";
const ldconfig = Bun.which("ldconfig") ?? Bun.which("/sbin/ldconfig");
const libraries = ldconfig ? Bun.spawnSync([ldconfig, "-p"]).stdout.toString() : "";
const libseccomp = /\s(\/\S*libseccomp\.so\.2)$/m.exec(libraries)?.[1];
const tools = ["gcc", "unshare", "setpriv", "prlimit", "systemd-analyze"].filter((tool) => !Bun.which(tool));
const missing = [...tools, ...(libseccomp ? [] : ["libseccomp.so.2"]), ...(process.getuid?.() === 0 ? [] : ["root"])];
if (missing.length > 0) console.warn(`test/e2e/sandbox.test.ts skipped: no ${missing.join(", ")} here`);

/** The system calls a systemd filter group stands for, as this machine's systemd lists them. */
function members(group: string): string[] {
  const listed = Bun.spawnSync(["systemd-analyze", "syscall-filter", "--no-pager", group]).stdout.toString();
  return listed
    .split("\n")
    .slice(1)
    .map((line) => line.trim())
    .filter((name) => name !== "" && !name.startsWith("#"))
    .flatMap((name) => (name.startsWith("@") ? members(name) : [name]));
}

/** The unit's SystemCallFilter= lines, in order: an allow-list, then what `~` lines take out of it. */
function allowList(): string[] {
  const lines = [...readFileSync(join(root, "docs/deploy/svc.service"), "utf8").matchAll(/^SystemCallFilter=(.*)$/gm)];
  const allowed = new Set<string>();
  for (const [, value] of lines) {
    const denied = value!.startsWith("~");
    for (const item of value!.replace(/^~/, "").split(/\s+/))
      for (const name of item.startsWith("@") ? members(item) : [item])
        if (denied) allowed.delete(name);
        else allowed.add(name);
  }
  return [...allowed].sort();
}

let work: string;
let state: string;
let bin: string;

beforeAll(async () => {
  if (missing.length > 0) return;
  work = mkdtempSync(join(tmpdir(), "svc-sandbox-"));
  state = join(work, "state");
  bin = join(work, "bin");
  mkdirSync(state, { mode: 0o700 });
  chownSync(state, JAIL_UID, JAIL_UID); // as systemd gives StateDirectory= to the unit's user
  mkdirSync(bin);
  // A copy: the jail's user must be able to read it where the jail can see it.
  copyFileSync(await compiledBinary(), join(bin, "svc"));
  chmodSync(join(bin, "svc"), 0o755);
  const seccomp = [join(import.meta.dir, "sandbox", "seccomp.c"), libseccomp!];
  const cc = Bun.spawnSync(["gcc", "-O2", "-Wall", "-Werror", "-o", join(bin, "seccomp"), ...seccomp]);
  if (cc.exitCode !== 0) throw new Error(`seccomp.c: ${cc.stderr.toString()}`);
  const calls = allowList();
  if (!calls.includes("read") || calls.includes("setuid")) throw new Error(`a strange allow-list: ${calls.join(" ")}`);
  writeFileSync(join(bin, "system-calls"), `${calls.join("\n")}\n`);
}, 180_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

const env = { PATH: process.env.PATH ?? "", SVC_ENV: "production", SVC_JWT_SECRET: SECRET, SVC_HOST: "127.0.0.1" };

/** COMMAND in the jail, to its end. */
function jailed(command: string[], stdin?: string) {
  const run = Bun.spawnSync([join(import.meta.dir, "sandbox", "jail.sh"), state, bin, ...command], {
    env: { ...env, SVC_PORT: "0" },
    stdin: stdin === undefined ? "ignore" : Buffer.from(stdin),
  });
  return {
    exitCode: run.exitCode,
    signal: run.signalCode ?? null,
    out: run.stdout.toString(),
    err: run.stderr.toString(),
  };
}

describe.skipIf(missing.length > 0)("svc under the unit's sandbox", () => {
  test("the jail holds: another user, no capabilities, a read-only system; a call off the list kills", () => {
    const probe = jailed(["/bin/sh", "-c", "id -u; touch /usr/svc-probe || true; grep CapEff /proc/self/status"]);
    expect(probe.out).toBe(`${JAIL_UID}\nCapEff:\t0000000000000000\n`);
    expect(probe.err).toContain("Read-only file system");
    // setpriority(2) is in @resources, which the unit takes out.
    expect(jailed(["/usr/bin/nice", "-n", "5", "true"]).signal).toBe("SIGSYS");
  });

  test("serves, streams a subscription's events, and stops cleanly", async () => {
    const proc = Bun.spawn([join(import.meta.dir, "sandbox", "jail.sh"), state, bin, "/mnt/bin/svc"], {
      env: { ...env, SVC_PORT: "0" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const reader = proc.stdout.getReader();
    let text = "";
    while (!text.includes('"svc listening"')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`svc exited: ${text}${await new Response(proc.stderr).text()}`);
      text += new TextDecoder().decode(value);
    }
    const base = JSON.parse(text.split("\n").find((l) => l.includes('"svc listening"'))!).address as string;
    const post = (path: string, body: unknown, token?: string, accept?: string) =>
      fetch(`${base}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(accept ? { accept } : {}),
        },
        body: JSON.stringify(body),
      });

    expect((await fetch(`${base}/svc/health`)).status).toBe(200);
    const account = { username: "kim", email: "kim@example.com", password: "correct horse" };
    expect((await post("/svc-api/v1/users/create", account)).status).toBe(201);
    const login = await post("/svc-api/v1/auth/login", { username: "kim", password: account.password });
    const { token } = await login.json();
    const events = await post(
      "/graphql",
      { query: "subscription { categoryEvents { kind category { name } } }" },
      token,
      "text/event-stream",
    );
    const stream = events.body!.getReader();
    const made = await post(
      "/graphql",
      { query: 'mutation { createCategory(input: { name: "Books" }) { name } }' },
      token,
    );
    expect(await made.json()).toEqual({ data: { createCategory: { name: "Books" } } });
    let received = "";
    while (!received.includes('"Books"')) received += new TextDecoder().decode((await stream.read()).value);
    await stream.cancel();
    expect(received).toContain('"kind":"CREATED"');

    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    expect(proc.signalCode).toBeNull();
  }, 30_000);

  test("runs the commands on the service's database, whose files stay the service user's alone", () => {
    const admin = ["/mnt/bin/svc", "admin", "create", "--username", "root", "--email", "root@example.com"];
    expect(jailed([...admin, "--password-stdin"], "a long admin secret, really\n").exitCode).toBe(0);
    const list = jailed(["/mnt/bin/svc", "user", "list"]);
    expect({ exitCode: list.exitCode, kim: list.out.includes("kim"), root: list.out.includes("root") }).toEqual({
      exitCode: 0,
      kim: true,
      root: true,
    });
    for (const command of [["backup", "snapshot.db"], ["audit"], ["check"], ["migrate"]])
      expect({ command, ...jailed(["/mnt/bin/svc", ...command]) }).toMatchObject({ command, exitCode: 0 });
    for (const file of ["data/svc.db", "snapshot.db"]) {
      const { uid, mode } = statSync(join(state, file));
      expect({ file, uid, mode: mode & 0o777 }).toEqual({ file, uid: JAIL_UID, mode: 0o600 });
    }
  });
});
