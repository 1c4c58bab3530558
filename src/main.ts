// Entry point of the one binary: `svc [command]`, serving by default (see src/cli.ts).
// No top-level await: the binary is compiled to bytecode (faster start), which does not allow it.
import { processSecrets } from "./admin/secret-input.ts";
import { runCli, type Io } from "./cli.ts";

// The process's streams are made on first use: Bun builds process.stdout and process.stderr as
// Node streams, some 3 ms of a start-up that `svc serve` never needs them for (it logs through
// Bun.stdout).
const io: Io = {
  out: { write: (text) => process.stdout.write(text) },
  err: {
    write: (text) => process.stderr.write(text),
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
