// SVC_BACKUP_EVERY, SVC_BACKUP_TO, SVC_BACKUP_KEEP and the S3 client's variables, as parseConfig reads them.
import { describe, expect, test } from "bun:test";
import { ConfigError, parseConfig } from "../src/config/index.ts";
import { captureCli } from "./support/cli.ts";

const refusal = (env: Record<string, string>) => {
  try {
    parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error("accepted");
};

/** A key pair, which a bucket needs. */
const keys = { S3_ACCESS_KEY_ID: "AKIAEXAMPLE", S3_SECRET_ACCESS_KEY: "secret" };

describe("backup settings", () => {
  test("are off by default: no schedule, no destination, 14 kept", () => {
    expect(parseConfig({}).backup).toEqual({ everySeconds: null, to: null, keep: 14, s3: {} });
  });

  test("read a schedule, a folder and how many to keep", () => {
    const { backup } = parseConfig({ SVC_BACKUP_EVERY: "6h", SVC_BACKUP_TO: "/backups/svc", SVC_BACKUP_KEEP: "30" });
    expect(backup).toMatchObject({ everySeconds: 21600, to: { kind: "folder", path: "/backups/svc" }, keep: 30 });
  });

  test("read a bucket and a prefix, which always ends in a slash", () => {
    const to = (value: string) => parseConfig({ SVC_BACKUP_TO: value, ...keys }).backup.to;
    expect(to("s3://my-bucket")).toEqual({ kind: "s3", bucket: "my-bucket", prefix: "" });
    expect(to("s3://my-bucket/")).toEqual({ kind: "s3", bucket: "my-bucket", prefix: "" });
    expect(to("s3://my-bucket/svc/box-1")).toEqual({ kind: "s3", bucket: "my-bucket", prefix: "svc/box-1/" });
    expect(to("s3://my-bucket/svc/")).toEqual({ kind: "s3", bucket: "my-bucket", prefix: "svc/" });
  });

  test("take the S3 client's settings from S3_*, else AWS_*, as Bun's client does", () => {
    const { s3 } = parseConfig({
      SVC_BACKUP_TO: "s3://b-1/p",
      S3_ENDPOINT: "http://127.0.0.1:9000",
      AWS_ENDPOINT: "https://ignored.example.com",
      AWS_REGION: "eu-west-1",
      AWS_ACCESS_KEY_ID: "AKIAEXAMPLE",
      S3_SECRET_ACCESS_KEY: "secret",
      AWS_SESSION_TOKEN: "session",
    }).backup;
    expect(s3).toEqual({
      endpoint: "http://127.0.0.1:9000",
      region: "eu-west-1",
      accessKeyId: "AKIAEXAMPLE",
      secretAccessKey: "secret",
      sessionToken: "session",
    });
  });

  test("a bucket needs both keys, from S3_* or AWS_*: without them start-up stops with one line naming them (#53 item 8)", () => {
    const missing =
      "SVC_BACKUP_TO: a bucket needs S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)";
    expect(refusal({ SVC_BACKUP_TO: "s3://b-1/p" })).toStartWith(missing);
    expect(refusal({ SVC_BACKUP_TO: "s3://b-1/p", S3_ACCESS_KEY_ID: "AKIAEXAMPLE" })).toStartWith(missing);
    expect(refusal({ SVC_BACKUP_TO: "s3://b-1/p", AWS_SECRET_ACCESS_KEY: "secret" })).toStartWith(missing);
    expect(refusal({ SVC_BACKUP_TO: "s3://b-1/p", S3_ACCESS_KEY_ID: "AKIAEXAMPLE" })).not.toContain("AKIAEXAMPLE");
    const mixed = { SVC_BACKUP_TO: "s3://b-1/p", AWS_ACCESS_KEY_ID: "AKIAEXAMPLE", S3_SECRET_ACCESS_KEY: "secret" };
    expect(parseConfig(mixed).backup.to).toEqual({ kind: "s3", bucket: "b-1", prefix: "p/" });
  });

  test("serve and the backup commands stop with that one line and exit 2 (#53 item 8)", async () => {
    for (const argv of [["serve"], ["backup", "--now"], ["backup", "--list"]]) {
      const { code, err } = await captureCli(argv, { SVC_BACKUP_TO: "s3://b-1/p" });
      expect({ argv, code, err }).toEqual({
        argv,
        code: 2,
        err: 'svc: SVC_BACKUP_TO: a bucket needs S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) set (got "s3://b-1/p")\n',
      });
    }
  });

  test("a schedule needs a destination", () => {
    expect(refusal({ SVC_BACKUP_EVERY: "1h" })).toStartWith("SVC_BACKUP_TO: required when SVC_BACKUP_EVERY is set");
  });

  test("refuse a bad period, count or destination, naming the variable", () => {
    expect(refusal({ SVC_BACKUP_EVERY: "often", SVC_BACKUP_TO: "b" })).toStartWith("SVC_BACKUP_EVERY: a duration");
    expect(refusal({ SVC_BACKUP_KEEP: "0" })).toStartWith("SVC_BACKUP_KEEP: an integer from 1");
    expect(refusal({ SVC_BACKUP_TO: "https://example.com/backups" })).toStartWith("SVC_BACKUP_TO: a folder, or s3://");
    expect(refusal({ SVC_BACKUP_TO: "s3://" })).toStartWith("SVC_BACKUP_TO: a folder, or s3://");
  });

  test("refuse keys written into SVC_BACKUP_TO, without repeating them", () => {
    const message = refusal({ SVC_BACKUP_TO: "s3://AKIAEXAMPLE:very-secret@bucket/prefix" });
    expect(message).toContain("S3_ACCESS_KEY_ID");
    expect(message).not.toContain("very-secret");
    expect(message).not.toContain("AKIAEXAMPLE");
  });

  test("are SQLite's only: on PostgreSQL they point to pg_dump", () => {
    const postgres = { SVC_DATABASE_URL: "postgres://svc:pw@db.example.com/svc" };
    expect(refusal({ ...postgres, SVC_BACKUP_EVERY: "6h", SVC_BACKUP_TO: "/b" })).toStartWith(
      "SVC_BACKUP_EVERY: SQLite only: back PostgreSQL up with pg_dump",
    );
    expect(refusal({ ...postgres, SVC_BACKUP_TO: "/b" })).toStartWith("SVC_BACKUP_TO: SQLite only");
  });

  test("need a database in a file", () => {
    expect(refusal({ SVC_DATABASE_URL: "sqlite::memory:", SVC_BACKUP_TO: "/b" })).toStartWith(
      "SVC_BACKUP_TO: a database in a file",
    );
  });
});
