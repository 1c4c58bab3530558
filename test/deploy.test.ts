// docs/deploy/ holds svc's systemd unit and the wrapper that runs svc's commands as the unit runs svc. No systemd
// starts them here, so this holds them to their promises otherwise: the unit has its sandbox, systemd-analyze finds
// no fault in it and rates its exposure 3.0 or less, its reload is refused without TLS, and the wrapper hands
// systemd-run the unit's own user, state directory and settings file, with the arguments as given.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "../src/config/index.ts";

const root = join(import.meta.dir, "..");
const unitPath = join(root, "docs", "deploy", "svc.service");
const wrapperPath = join(root, "docs", "deploy", "svc");
const unitText = readFileSync(unitPath, "utf8");
const wrapperText = readFileSync(wrapperPath, "utf8");
const dir = mkdtempSync(join(tmpdir(), "svc-deploy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The unit's assignments, each key's values in order (a key may repeat); continued lines joined, comments left out. */
function assignments(text: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const line of text.replace(/\\\n/g, " ").split("\n")) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line.trim());
    if (m) found.set(m[1]!, [...(found.get(m[1]!) ?? []), m[2]!]);
  }
  return found;
}
const unit = assignments(unitText);
const only = (key: string) => unit.get(key) ?? [];

describe("docs/deploy/svc.service", () => {
  test("runs svc as a dynamic user in its state directory, with its settings from a root-only file", () => {
    const expected = {
      ExecStart: "/opt/svc/svc",
      EnvironmentFile: "/etc/svc/svc.env",
      DynamicUser: "yes",
      User: "svc",
      StateDirectory: "svc",
      WorkingDirectory: "/var/lib/svc",
      UMask: "0077",
      Restart: "on-failure",
      KillSignal: "SIGTERM",
      LimitNOFILE: "65536",
    };
    for (const [key, value] of Object.entries(expected))
      expect({ key, values: only(key) }).toEqual({ key, values: [value] });
    // Stopping waits out svc's own drain.
    const stop = /^(\d+)s$/.exec(only("TimeoutStopSec")[0] ?? "");
    expect(Number(stop?.[1]) * 1000).toBeGreaterThan(parseConfig({}).shutdownGraceMs);
  });

  test("sandboxes it: no capabilities, a read-only system, a system call allow-list", () => {
    const expected = {
      NoNewPrivileges: "yes",
      CapabilityBoundingSet: "",
      AmbientCapabilities: "",
      ProtectSystem: "strict",
      ProtectHome: "yes",
      PrivateTmp: "yes",
      PrivateDevices: "yes",
      DevicePolicy: "closed",
      ProtectKernelTunables: "yes",
      ProtectKernelModules: "yes",
      ProtectKernelLogs: "yes",
      ProtectControlGroups: "yes",
      ProtectClock: "yes",
      ProtectHostname: "yes",
      ProtectProc: "invisible",
      ProcSubset: "pid",
      RestrictNamespaces: "yes",
      RestrictRealtime: "yes",
      RestrictSUIDSGID: "yes",
      LockPersonality: "yes",
      RemoveIPC: "yes",
      RestrictAddressFamilies: "AF_INET AF_INET6 AF_UNIX",
      SystemCallArchitectures: "native",
    };
    for (const [key, value] of Object.entries(expected))
      expect({ key, values: only(key) }).toEqual({ key, values: [value] });
    expect(only("SystemCallFilter")).toEqual(["@system-service", "~@privileged @resources"]);
    // Left out on purpose, and the unit says why: JavaScriptCore's JIT needs memory it writes and then runs.
    expect(unit.has("MemoryDenyWriteExecute")).toBe(false);
    expect(unitText).toContain("# Not MemoryDenyWriteExecute=yes: ");
  });

  test("a reload sends SIGHUP, which never stops svc (with TLS it reloads the certificate)", () => {
    expect(only("ExecReload")).toEqual(["/bin/kill -HUP $MAINPID"]);
  });

  // CI has systemd-analyze (systemd 250 or later, for --offline); elsewhere these two say they were skipped.
  const analyze = Bun.which("systemd-analyze");
  test.skipIf(!analyze)("systemd-analyze security rates its exposure 3.0 or less", () => {
    const run = Bun.spawnSync([analyze!, "security", "--offline=true", "--threshold=30", "--no-pager", unitPath]);
    const score = /Overall exposure level for svc\.service: (\d+\.\d+)/.exec(run.stdout.toString())?.[1];
    expect(score).toBeString();
    expect(Number(score)).toBeLessThanOrEqual(3.0);
    expect(run.exitCode).toBe(0); // --threshold=30 agrees: 30 is 3.0 on its scale
  });

  test.skipIf(!analyze)("systemd-analyze verify finds nothing to say about it", () => {
    // verify requires ExecStart's binary: a copy of the unit names a stand-in, and differs in nothing else.
    const binary = join(dir, "svc");
    writeFileSync(binary, "#!/bin/sh\n", { mode: 0o755 });
    const copy = unitText.replace(/^ExecStart=\/opt\/svc\/svc$/m, `ExecStart=${binary}`);
    expect(copy.split("\n").filter((line, i) => line !== unitText.split("\n")[i])).toEqual([`ExecStart=${binary}`]);
    const copyPath = join(mkdtempSync(join(dir, "unit-")), "svc.service");
    writeFileSync(copyPath, copy);
    const run = Bun.spawnSync([analyze!, "verify", copyPath]);
    expect({ exitCode: run.exitCode, said: run.stdout.toString() + run.stderr.toString() }).toEqual({
      exitCode: 0,
      said: "",
    });
  });
});

test("the docs link the unit and the wrapper, and hold no copy of the unit that could drift from it", () => {
  const operations = readFileSync(join(root, "docs", "operations.md"), "utf8");
  expect(operations).toContain("[`docs/deploy/svc.service`](deploy/svc.service)");
  expect(operations).toContain("[`docs/deploy/svc`](deploy/svc)");
  expect(readFileSync(join(root, "README.md"), "utf8")).toContain("(docs/deploy/svc.service)");
  expect(operations).not.toContain("[Service]");
});

describe("docs/deploy/svc, the wrapper", () => {
  /** The wrapper's own settings, `name=value` lines. */
  const setting = (name: string) => new RegExp(`^${name}=(.*)$`, "m").exec(wrapperText)?.[1];

  test("has the unit's binary, user, state directory, settings file and umask", () => {
    expect({
      binary: setting("binary"),
      env_file: setting("env_file"),
      user: setting("user"),
      state_directory: setting("state_directory"),
    }).toEqual({
      binary: only("ExecStart")[0],
      env_file: only("EnvironmentFile")[0],
      user: only("User")[0],
      state_directory: only("StateDirectory")[0],
    });
    expect(`/var/lib/${setting("state_directory")}`).toBe(only("WorkingDirectory")[0]!);
    expect(wrapperText).toContain(`--property=UMask=${only("UMask")[0]} `);
  });

  test("is valid bash, and shellcheck finds nothing in it where shellcheck is installed", () => {
    expect(Bun.spawnSync(["bash", "-n", wrapperPath]).exitCode).toBe(0);
    const shellcheck = Bun.which("shellcheck");
    if (!shellcheck) return;
    const run = Bun.spawnSync([shellcheck, wrapperPath]);
    expect({ exitCode: run.exitCode, said: run.stdout.toString() }).toEqual({ exitCode: 0, said: "" });
  });

  // A copy reading a settings file of the test's, run with stand-ins for systemd-run (which records what it is
  // given) and id (the caller's uid), so neither root nor systemd is needed.
  const stubs = join(dir, "bin");
  const envFile = join(dir, "svc.env");
  const called = join(dir, "called");
  const wrapper = join(dir, "svc-wrapper");
  const systemdRun = [
    "#!/bin/bash",
    '[ "$1" = --version ] && { echo "systemd $STUB_SYSTEMD (stub)"; exit 0; }',
    `printf '%s\\0' "$@" > "$STUB_CALLED"`,
    'exit "${STUB_EXIT:-0}"',
  ];
  beforeAll(() => {
    mkdirSync(stubs);
    writeFileSync(join(stubs, "systemd-run"), `${systemdRun.join("\n")}\n`, { mode: 0o755 });
    writeFileSync(join(stubs, "id"), '#!/bin/sh\necho "${STUB_UID:-0}"\n', { mode: 0o755 });
    writeFileSync(envFile, "SVC_ENV=production\n", { mode: 0o600 });
    writeFileSync(wrapper, wrapperText.replace(/^env_file=.*$/m, `env_file=${envFile}`), { mode: 0o755 });
  });

  function run(args: string[], env: Record<string, string> = {}) {
    rmSync(called, { force: true });
    const result = Bun.spawnSync([wrapper, ...args], {
      env: { PATH: `${stubs}:${process.env.PATH}`, STUB_CALLED: called, STUB_SYSTEMD: "252", ...env },
      stdin: "ignore",
    });
    return {
      exitCode: result.exitCode,
      stderr: result.stderr.toString(),
      argv: existsSync(called) ? readFileSync(called, "utf8").split("\0").slice(0, -1) : null,
    };
  }
  const properties = (literal: string[]) => [
    "--quiet",
    "--wait",
    "--collect",
    "--service-type=exec",
    "--pipe",
    ...literal,
    "--property=DynamicUser=yes",
    "--property=User=svc",
    "--property=StateDirectory=svc",
    "--property=WorkingDirectory=/var/lib/svc",
    `--property=EnvironmentFile=${envFile}`,
    "--property=UMask=0077",
    "--",
    "/opt/svc/svc",
  ];

  // The wrapper is for Linux boxes (GNU stat); elsewhere its behaviour is not tried.
  const linux = process.platform === "linux";
  test.skipIf(!linux)(
    "hands systemd-run the unit's settings and the arguments as given (systemd 254 and later)",
    () => {
      expect(run(["user", "list", "--search", "a$b c"], { STUB_SYSTEMD: "254" })).toEqual({
        exitCode: 0,
        stderr: "",
        argv: [...properties(["--expand-environment=no"]), "user", "list", "--search", "a$b c"],
      });
    },
  );

  test.skipIf(!linux)(
    "doubles each $ for a systemd-run that would expand it (before 254), and passes on the exit code",
    () => {
      expect(run(["audit", "--user", "$HOME$$"], { STUB_EXIT: "3" })).toEqual({
        exitCode: 3,
        stderr: "",
        argv: [...properties([]), "audit", "--user", "$$HOME$$$$"],
      });
    },
  );

  test.skipIf(!linux)(
    "refuses to serve, to run for anyone but root, without the settings file, or to back up out of reach",
    () => {
      const refused = (args: string[], env: Record<string, string> = {}) => {
        const { exitCode, stderr, argv } = run(args, env);
        return { exitCode, argv, said: stderr.split("\n")[0] };
      };
      expect(refused([])).toEqual({ exitCode: 2, argv: null, said: expect.stringContaining("systemctl start svc") });
      expect(refused(["serve"])).toEqual({
        exitCode: 2,
        argv: null,
        said: expect.stringContaining("runs under systemd"),
      });
      expect(refused(["user", "list"], { STUB_UID: "1000" })).toEqual({
        exitCode: 2,
        argv: null,
        said: "svc: run it as root (sudo svc …): it starts the command as the service's user",
      });
      expect(refused(["backup", "/tmp/snapshot.db"])).toEqual({
        exitCode: 2,
        argv: null,
        said: expect.stringContaining("may write only in /var/lib/svc"),
      });
      expect(run(["backup", "/var/lib/svc/snapshot.db"]).exitCode).toBe(0);
      expect(run(["backup", "snapshot.db"]).argv?.slice(-2)).toEqual(["backup", "snapshot.db"]);
      rmSync(envFile);
      try {
        expect(refused(["user", "list"])).toEqual({
          exitCode: 2,
          argv: null,
          said: `svc: no settings file ${envFile} (the unit's EnvironmentFile=)`,
        });
      } finally {
        writeFileSync(envFile, "SVC_ENV=production\n", { mode: 0o600 });
      }
    },
  );

  test.skipIf(!linux)("warns when others may read the settings file, and runs the command all the same", () => {
    chmodSync(envFile, 0o644);
    try {
      const result = run(["check"]);
      expect(result.exitCode).toBe(0);
      expect(result.stderr).toBe(
        `svc: ${envFile} holds secrets but others may read it (mode 644): chmod 600 ${envFile}\n`,
      );
    } finally {
      chmodSync(envFile, 0o600);
    }
  });
});
