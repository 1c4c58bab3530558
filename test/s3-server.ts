// A local S3-compatible server for the backup tests: s3rver (a fake S3 on Koa, run in the test's own
// process), offline, on a port of its own, storing in a folder the test owns. It takes the keys the tests
// set (recognisable, so that a test can look for them in every line svc wrote). Stopped and started
// again on the same port and folder, it is storage that went away and came back with what it held.
// (s3rver checks that a request's key id is one it knows, not its
// version 4 signature: a wrong secret goes unnoticed here.)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";
// s3rver keeps its accounts in a registry of its own; the default one's keys are S3RVER/S3RVER.
import AWSAccount from "s3rver/lib/models/account.js";
import { freePort } from "./ports.ts";

export const S3_ACCESS_KEY = "AKIASVCTESTKEYID0042";
export const S3_SECRET_KEY = "svc-test-secret-key-f00dcafe-0123456789";
export const BUCKET = "svc-backups";

export interface S3Server {
  endpoint: string;
  /** The S3_* variables svc reads, for this server and its keys. */
  env: Record<string, string>;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and deletes what it stored. */
  close(): Promise<void>;
}

let keysMade = false;

export async function startS3Server(): Promise<S3Server> {
  if (!keysMade) {
    AWSAccount.DUMMY_ACCOUNT.createKeyPair(S3_ACCESS_KEY, S3_SECRET_KEY);
    keysMade = true;
  }
  const directory = mkdtempSync(join(tmpdir(), "svc-s3-"));
  const port = freePort();
  let server: S3rver | null = null;
  const start = async () => {
    server = new S3rver({
      address: "127.0.0.1",
      port,
      silent: true,
      directory,
      configureBuckets: [{ name: BUCKET, configs: [] }],
    });
    await server.run();
  };
  const stop = async () => {
    await server?.close();
    server = null;
  };
  await start();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    env: {
      S3_ENDPOINT: endpoint,
      S3_REGION: "us-east-1",
      S3_ACCESS_KEY_ID: S3_ACCESS_KEY,
      S3_SECRET_ACCESS_KEY: S3_SECRET_KEY,
    },
    stop,
    start,
    async close() {
      await stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
