// Entry point of the one binary: `svc [command]`, serving by default (see src/cli.ts).
// No top-level await: the binary is compiled to bytecode (faster start), which does not allow it.
import { runCli } from "./cli.ts";

void runCli(process.argv.slice(2), process.env, { out: process.stdout, err: process.stderr }).then((code) => {
  // A serving process stays up on its listening socket; every other command ends here.
  if (code !== 0) process.exit(code);
});
