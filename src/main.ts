// Entry point of the one binary: `svc` or `svc serve` serves; `svc copy` moves data between databases.
import { ConfigError, parseConfig } from "./config.ts";
import { runCopy } from "./copy/index.ts";
import { serve } from "./serve.ts";

const USAGE = `usage: svc [serve]                                 serve the API (configured by SVC_* variables)
       svc copy --from <url> --to <url> [--force]   copy every user and category between databases`;

const [command, ...args] = process.argv.slice(2);

try {
  if (command === undefined || command === "serve") {
    await serve(parseConfig(process.env));
  } else if (command === "copy") {
    process.exitCode = await runCopy(args, process.env, process.stderr);
  } else {
    console.error(command === "--help" || command === "-h" ? USAGE : `svc: unknown command ${JSON.stringify(command)}\n${USAGE}`);
    process.exitCode = command === "--help" || command === "-h" ? 0 : 2;
  }
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`svc: ${error.message}`);
  process.exit(2);
}
