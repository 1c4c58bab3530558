// Entry point of the one binary: `svc [command]`, serving by default (see src/cli.ts).
// No top-level await: the binary is compiled to bytecode (faster start), which does not allow it.
import { processSecrets } from "./admin/secret-input.ts";
import { runCli } from "./cli.ts";

const io = { out: process.stdout, err: process.stderr, secrets: processSecrets() };
void runCli(process.argv.slice(2), process.env, io).then((code) => {
  // A serving process stays up on its listening socket; every other command ends here.
  if (code !== 0) process.exit(code);
});
