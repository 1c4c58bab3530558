// The compiled binary refusing to start on a TLS file it cannot use (test/e2e/support/tls.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { cleanUpTls, emptyFolderWithBinary, openssl, pki, prepareTls, SECRET, start, svcIn } from "./support/tls.ts";
import { runProcessSync } from "../support/cli.ts";

beforeAll(prepareTls, 120_000);
afterAll(cleanUpTls);

describe("refuses to start on a TLS file it cannot use: one line naming the variable, exit 2, nothing touched", () => {
  const refusal = (env: () => Record<string, string>, line: () => string) => async () => {
    const dir = emptyFolderWithBinary();
    const proc = runProcessSync([...svcIn(dir)], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", SVC_PORT: "0", SVC_JWT_SECRET: SECRET, ...env() },
      // A refusal is immediate; one that hangs (a FIFO read whole) is a failure, not a stuck suite.
      timeoutMs: 20_000,
    });
    expect({ code: proc.code, stderr: proc.stderr, stdout: proc.stdout }).toEqual({
      code: 2,
      stderr: `${line()}\n`,
      stdout: "",
    });
    expect(existsSync(join(dir, "data"))).toBe(false);
  };

  test(
    "a certificate file that holds no certificate",
    refusal(
      () => ({ SVC_TLS_CERT: pki.a.key, SVC_TLS_KEY: pki.a.key }),
      () => `svc: SVC_TLS_CERT: ${pki.a.key}: no PEM certificate in it (-----BEGIN CERTIFICATE-----)`,
    ),
  );
  test("a damaged certificate", async () => {
    const damaged = join(pki.dir, "damaged.pem");
    const pem = await Bun.file(pki.a.chain).text();
    await Bun.write(
      damaged,
      pem.replace(/(-----BEGIN CERTIFICATE-----\n)(.{40})/, "$1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
    );
    await refusal(
      () => ({ SVC_TLS_CERT: damaged, SVC_TLS_KEY: pki.a.key }),
      () => `svc: SVC_TLS_CERT: ${damaged}: certificate 1 of 2 is not valid PEM`,
    )();
  });
  test(
    "a missing certificate file",
    refusal(
      () => ({ SVC_TLS_CERT: join(pki.dir, "nowhere.pem"), SVC_TLS_KEY: pki.a.key }),
      () => `svc: SVC_TLS_CERT: ${join(pki.dir, "nowhere.pem")}: no such file`,
    ),
  );
  test(
    "a missing key file",
    refusal(
      () => ({ SVC_TLS_CERT: pki.a.chain, SVC_TLS_KEY: join(pki.dir, "nowhere.key") }),
      () => `svc: SVC_TLS_KEY: ${join(pki.dir, "nowhere.key")}: no such file`,
    ),
  );
  test(
    "a folder for a file",
    refusal(
      () => ({ SVC_TLS_CERT: pki.a.chain, SVC_TLS_KEY: pki.dir }),
      () => `svc: SVC_TLS_KEY: ${pki.dir}: a folder, not a file`,
    ),
  );
  test("a FIFO for the key: refused without opening it for a read that would wait for a writer", async () => {
    const fifo = join(pki.dir, "key.fifo");
    if (!existsSync(fifo)) expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    await refusal(
      () => ({ SVC_TLS_CERT: pki.a.chain, SVC_TLS_KEY: fifo }),
      () => `svc: SVC_TLS_KEY: ${fifo}: not a regular file (a FIFO)`,
    )();
  });
  test(
    "a device for the certificate, which would never end",
    refusal(
      () => ({ SVC_TLS_CERT: "/dev/zero", SVC_TLS_KEY: pki.a.key }),
      () => "svc: SVC_TLS_CERT: /dev/zero: not a regular file (a character device)",
    ),
  );
  test("a file far larger than any certificate chain", async () => {
    const large = join(pki.dir, "large.pem");
    await Bun.write(large, `${await Bun.file(pki.a.chain).text()}${"#".repeat(2 * 1024 * 1024)}`);
    await refusal(
      () => ({ SVC_TLS_CERT: large, SVC_TLS_KEY: pki.a.key }),
      () => `svc: SVC_TLS_CERT: ${large}: 2.0 MiB, larger than the 1 MiB a certificate chain or key could need`,
    )();
  });
  test(
    "a key file that holds no key",
    refusal(
      () => ({ SVC_TLS_CERT: pki.a.chain, SVC_TLS_KEY: pki.a.chain }),
      () => `svc: SVC_TLS_KEY: ${pki.a.chain}: no PEM private key in it`,
    ),
  );
  test("an encrypted key", async () => {
    const encrypted = join(pki.dir, "encrypted.key");
    openssl(["pkey", "-in", pki.a.key, "-aes256", "-passout", "pass:secret", "-out", encrypted], pki.dir);
    await refusal(
      () => ({ SVC_TLS_CERT: pki.a.chain, SVC_TLS_KEY: encrypted }),
      () =>
        `svc: SVC_TLS_KEY: ${encrypted}: the key is encrypted; svc needs it unencrypted (readable by svc's user alone)`,
    )();
  });
  test(
    "another certificate's key",
    refusal(
      () => ({ SVC_TLS_CERT: pki.a.chain, SVC_TLS_KEY: pki.b.key }),
      () => `svc: SVC_TLS_KEY: ${pki.b.key}: not the private key of the certificate in SVC_TLS_CERT (${pki.a.chain})`,
    ),
  );
  test.skipIf(process.getuid?.() === 0)("a key svc's user cannot read", async () => {
    const unreadable = join(pki.dir, "unreadable.key");
    copyFileSync(pki.a.key, unreadable);
    chmodSync(unreadable, 0o000);
    await refusal(
      () => ({ SVC_TLS_CERT: pki.a.chain, SVC_TLS_KEY: unreadable }),
      () => `svc: SVC_TLS_KEY: ${unreadable}: permission denied: svc's user cannot read it`,
    )();
  });
  test(
    "a certificate without its key",
    refusal(
      () => ({ SVC_TLS_CERT: pki.a.chain }),
      () => 'svc: SVC_TLS_KEY: a PEM key file, required when SVC_TLS_CERT is set (both or neither) (got "")',
    ),
  );
  test(
    "a key without its certificate",
    refusal(
      () => ({ SVC_TLS_KEY: pki.a.key }),
      () => 'svc: SVC_TLS_CERT: a PEM certificate file, required when SVC_TLS_KEY is set (both or neither) (got "")',
    ),
  );
  test(
    "an operations address without a port",
    refusal(
      () => ({ SVC_OPS_ADDRESS: "127.0.0.1" }),
      () => 'svc: SVC_OPS_ADDRESS: host:port, such as 127.0.0.1:9090 or [::1]:9090 (got "127.0.0.1")',
    ),
  );
});
