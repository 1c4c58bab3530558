// Entry point of the one binary: `svc [command]`, serving by default (see src/process/cli.ts).
// No top-level await: the binary is compiled to bytecode (faster start), which does not allow it.
import { processSecrets } from "./admin/secret-input.ts";
import { runCli, type Io } from "./process/cli.ts";

/**
 * Writes to one of the process's streams until its reader goes away (`svc user list | head -1`): the rest
 * of the output has nobody to read it, and the command still finishes its work (a copy, a backup). Node's
 * streams report the broken pipe as an error event after the write, which unheard would end the process
 * with a stack trace. The stream is made on the first write: Bun builds process.stdout and process.stderr
 * as Node streams, time a start-up of `svc serve` never needs them for (it logs through Bun.stdout; bench/results.md, "Figures behind the code").
 */
function writer(stream: () => NodeJS.WriteStream): (text: string) => void {
  let unread = false;
  let watched = false;
  return (text) => {
    if (unread) return;
    const target = stream();
    if (!watched) {
      watched = true;
      target.on("error", (error: NodeJS.ErrnoException) => {
        if (error.code !== "EPIPE") throw error;
        unread = true;
      });
    }
    target.write(text);
  };
}

const io: Io = {
  out: { write: writer(() => process.stdout) },
  err: {
    write: writer(() => process.stderr),
    get isTTY() {
      return process.stderr.isTTY;
    },
  },
  secrets: processSecrets(),
};
void runCli(process.argv.slice(2), process.env, io).then((code) => {
  // A serving process stays up on its listening socket; every other command ends here.
  if (code !== 0) process.exit(code);
});
