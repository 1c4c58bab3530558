// The one way tests run svc's command line: in process through `runCli` (fast, the default), or as a real
// process (`bun src/main.ts …` or the compiled binary) where the test needs one: a signal, a terminal, exit
// on its own, another process's view of a file. test/test-kit.test.ts holds every test file to this module.
import type { Subprocess } from "bun";
import type { SecretInput } from "../../src/admin/secret-input.ts";
import { type Io, runCli } from "../../src/process/cli.ts";

/** `src/main.ts`, the entry point `svc` is compiled from. */
export const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;

/** The command that runs svc from its source: `bun src/main.ts`. */
export const SOURCE_SVC: readonly string[] = [process.execPath, MAIN];

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** Runs `svc <argv>` in process, with this environment (nothing else of the process's), capturing both streams. */
export async function captureCli(
  argv: string[],
  env: Record<string, string | undefined> = {},
  options: { secrets?: SecretInput } = {},
): Promise<CliRun> {
  let out = "";
  let err = "";
  const io: Io = {
    out: { write: (text: string) => (out += text) },
    err: { write: (text: string) => (err += text) },
    ...(options.secrets ? { secrets: options.secrets } : {}),
  };
  const code = await runCli(argv, env as Record<string, string>, io);
  return { code, out, err };
}

export interface SpawnOptions {
  cwd?: string;
  /** The child's whole environment; the test process's own when left out. */
  env?: Record<string, string | undefined>;
  /** Written to the child's standard input, which is then closed; "inherit"/"ignore" as Bun takes them. */
  stdin?: string | Uint8Array | "ignore" | "inherit";
  /** The child is killed (SIGKILL) after this long: a failure guard, never a measure. 30 s for a command
   * run to its end, 3 minutes for a process started. */
  timeoutMs?: number;
}

export interface ProcessRun {
  code: number | null;
  signal: Subprocess["signalCode"];
  stdout: string;
  stderr: string;
}

/** The guard of a command run to its end, and of a process started (a server a test stops itself). */
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_PROCESS_TIMEOUT_MS = 180_000;

/** Runs a process to its end and returns what it wrote; killed when `timeoutMs` passes. */
export async function runProcess(command: readonly string[], options: SpawnOptions = {}): Promise<ProcessRun> {
  const proc = spawnProcess(command, { ...options, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  return { code: proc.exitCode, signal: proc.signalCode, stdout, stderr };
}

/** As runProcess, blocking the test's thread (for a child that needs nothing from it while it runs). */
export function runProcessSync(command: readonly string[], options: SpawnOptions = {}): ProcessRun {
  const { stdin } = options;
  const proc = Bun.spawnSync([...command], {
    cwd: options.cwd,
    env: options.env as Record<string, string> | undefined,
    stdin: (typeof stdin === "string" && !STDIO.has(stdin) ? new TextEncoder().encode(stdin) : (stdin ?? "ignore")) as
      | Uint8Array
      | "ignore"
      | "inherit",
    stdout: "pipe",
    stderr: "pipe",
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    killSignal: "SIGKILL",
  });
  return {
    code: proc.exitCode,
    signal: (proc.signalCode ?? null) as ProcessRun["signal"],
    stdout: proc.stdout.toString(),
    stderr: proc.stderr.toString(),
  };
}

/**
 * Starts a process with both output streams piped (or on a terminal, given `terminal`), standard input as
 * asked (closed by default); it is killed when `timeoutMs` passes, and when the test process exits.
 */
export function spawnProcess(
  command: readonly string[],
  options: Omit<SpawnOptions, "stdin"> & {
    stdin?: SpawnOptions["stdin"] | "pipe";
    terminal?: Bun.TerminalOptions;
  } = {},
): Subprocess<"pipe", "pipe", "pipe"> {
  const { stdin } = options;
  const input =
    stdin === undefined
      ? "ignore"
      : typeof stdin === "string" && !STDIO.has(stdin)
        ? new TextEncoder().encode(stdin)
        : stdin;
  const proc = Bun.spawn([...command], {
    cwd: options.cwd,
    env: options.env as Record<string, string> | undefined,
    ...(options.terminal ? { terminal: options.terminal } : { stdin: input, stdout: "pipe", stderr: "pipe" }),
  } as Bun.SpawnOptions.OptionsObject<"pipe", "pipe", "pipe">) as Subprocess<"pipe", "pipe", "pipe">;
  const guard = setTimeout(() => proc.kill("SIGKILL"), options.timeoutMs ?? DEFAULT_PROCESS_TIMEOUT_MS);
  guard.unref();
  const onExit = () => proc.kill("SIGKILL");
  process.once("exit", onExit);
  void proc.exited.then(() => {
    clearTimeout(guard);
    process.off("exit", onExit);
  });
  return proc;
}

const STDIO = new Set(["ignore", "inherit", "pipe"]);
