// A view of a feature svc may run without (mail, backups): svc's refusal says so, and how to turn it on.
import { ApiError } from "./api.ts";

/**
 * Runs `read`; resolves to null when it succeeds, and to svc's detail when svc answers that the feature is
 * turned off (an ApiError of `code`). Any other failure is thrown.
 */
export async function unlessTurnedOff(code: string, read: () => Promise<void>): Promise<string | null> {
  try {
    await read();
    return null;
  } catch (error) {
    if (error instanceof ApiError && error.code === code) return error.detail;
    throw error;
  }
}
