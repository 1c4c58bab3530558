// The console's built files (assets.macro.ts runs the build at bundle time), in a module of their own
// so that they are loaded with the first request for the console, not with svc.
import { consoleFiles } from "./assets.macro.ts" with { type: "macro" };

export const FILES = consoleFiles("/svc/admin");
