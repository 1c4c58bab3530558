// Entry point of the one binary: `svc [command]`, serving by default (see src/cli.ts).
import { runCli } from "./cli.ts";

const code = await runCli(process.argv.slice(2), process.env, { out: process.stdout, err: process.stderr });
// A serving process stays up on its listening socket; every other command ends here.
if (code !== 0) process.exit(code);
