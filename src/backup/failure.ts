// A failed backup in one line, for its log line, the admin API and `svc backup --now`: what went wrong and
// where, without a credential or a signed URL (whose query carries a signature and the key's id).
import type { S3Settings } from "../config/index.ts";
import { describeError } from "../errors/safe-errors.ts";

export function failureReason(error: unknown, s3: S3Settings): string {
  const code = (error as { code?: unknown }).code;
  let text = describeError(error).split("\n")[0]!;
  // Bun's S3 errors put what happened in the code (NoSuchBucket, ConnectionRefused), not always in the message.
  if (error instanceof Error && error.name === "S3Error" && typeof code === "string" && !text.includes(code))
    text = `${code}: ${text}`;
  for (const secret of [s3.secretAccessKey, s3.sessionToken, s3.accessKeyId])
    if (secret) text = text.replaceAll(secret, "***");
  return text.replace(/\b(https?:\/\/[^\s?#]+)[?#]\S*/g, "$1");
}
