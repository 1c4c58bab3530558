// The common-password list as one string (see common-passwords.ts): its own module, loaded on first use.
import { commonPasswordLines } from "./common-passwords.macro.ts" with { type: "macro" };

/** Sorted lines, with a line break before the first and after the last. */
export const COMMON_PASSWORD_LINES = `\n${commonPasswordLines()}\n`;
