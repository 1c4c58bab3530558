// Reading a password for the CLI: from a prompt on the terminal with echo off, or all of stdin
// (--password-stdin). Never from an argument, which the shell history and `ps` would show.

export interface SecretInput {
  /** Whether stdin is a terminal someone can type at. */
  readonly isTTY: boolean;
  /** All of stdin, less one trailing line break. */
  readAll(): Promise<string>;
  /** Asks on the terminal (the prompt on stderr), without echoing what is typed. */
  ask(prompt: string): Promise<string>;
}

const ENTER = new Set(["\r", "\n"]);
const CANCEL = new Set(["\u0003", "\u0004"]); // Ctrl-C, Ctrl-D
const ERASE = new Set(["\u007f", "\b"]);

/** The process's own stdin. */
export function processSecrets(): SecretInput {
  // process.stdin only when asked for: making it costs start-up time that serving never needs.
  return {
    get isTTY() {
      return Boolean(process.stdin.isTTY);
    },
    async readAll() {
      const text = await new Response(Bun.stdin.stream()).text();
      return text.replace(/\r?\n$/, "");
    },
    ask: (prompt) =>
      new Promise((resolve, reject) => {
        const stdin = process.stdin;
        // Echo off before the prompt shows: whoever types (or pastes) the moment it appears is not echoed.
        stdin.setRawMode(true);
        process.stderr.write(prompt);
        let typed = "";
        const finish = (error?: Error) => {
          stdin.off("data", onData);
          stdin.setRawMode(false);
          stdin.pause();
          process.stderr.write("\n");
          if (error) reject(error);
          else resolve(typed);
        };
        const onData = (chunk: Buffer) => {
          for (const c of chunk.toString("utf8")) {
            if (ENTER.has(c)) return finish();
            if (CANCEL.has(c)) return finish(new Error("cancelled"));
            if (ERASE.has(c)) typed = [...typed].slice(0, -1).join("");
            else typed += c;
          }
        };
        stdin.resume();
        stdin.on("data", onData);
      }),
  };
}
