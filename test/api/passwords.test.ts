import { describe, expect, test } from "bun:test";
import { dictionary } from "@zxcvbn-ts/language-common";
import { isCommonPassword, isOnSortedLines } from "../../src/auth/common-passwords.ts";
import { expectProblem, testApp } from "../helpers.ts";

const CREATE = "/svc-api/v1/users/create";

describe("password rules (NIST SP 800-63B)", () => {
  test("the bundled list of common passwords holds more than 10,000 entries", () => {
    expect(dictionary["passwords-common"].length).toBeGreaterThan(10_000);
  });

  // The list is searched as one sorted string (for its memory): it must answer as a Set of it would.
  test("the list finds every entry of zxcvbn-ts's, in any case, and nothing that is not on it", async () => {
    const listed = dictionary["passwords-common"];
    const set = new Set(listed.map((p) => p.toLowerCase()));
    for (const password of listed) {
      if (!(await isCommonPassword(password)) || !(await isCommonPassword(password.toUpperCase())))
        throw new Error(`not found: ${password}`);
    }
    const near = listed
      .flatMap((p) => [`${p}\u0001`, `${p.slice(0, -1)}`, `0${p}`, `${p}~`])
      .filter((p) => !set.has(p));
    expect(near.length).toBeGreaterThan(150_000);
    for (const password of [...near, "", "\n", "a\nb", "\uffff", "zzzzzzzzzzzzzzzzzzzz"]) {
      if (await isCommonPassword(password)) throw new Error(`found, though not listed: ${JSON.stringify(password)}`);
    }
  });

  test("the sorted-lines search at its edges", () => {
    const text = "\nb\nd\nf\n";
    expect(["a", "b", "c", "d", "e", "f", "g", ""].map((w) => isOnSortedLines(text, w))).toEqual([
      false,
      true,
      false,
      true,
      false,
      true,
      false,
      false,
    ]);
    expect(isOnSortedLines("\nonly\n", "only")).toBe(true);
    expect(isOnSortedLines("\n\n", "x")).toBe(false);
  });

  test.each([["password123"], ["qwertyuiop"], ["iloveyou1"], ["Password1"], ["PASSWORD123"], ["11111111"]])(
    "refuses the common password %p at sign-up, without regard to case",
    async (password) => {
      const { call, store } = await testApp();
      const reply = await call("POST", CREATE, { body: { username: "ann", email: "ann@example.com", password } });
      expectProblem(reply, 400, "validation_failed");
      expect(reply.body.errors).toEqual([{ field: "password", message: expect.stringContaining("common") }]);
      expect(await store.users.findByLogin("ann")).toBeNull();
    },
  );

  test("refuses a common password as the new password", async () => {
    const { call, signUp } = await testApp();
    const { token, password } = await signUp();
    const reply = await call("PUT", "/svc-api/v1/users/password", {
      token,
      body: { current_password: password, new_password: "letmein123" },
    });
    expectProblem(reply, 400, "validation_failed");
    expect(reply.body.errors[0].field).toBe("new_password");
  });

  test("sets no composition rules: lower-case words, spaces, any script are fine", async () => {
    const { call } = await testApp();
    for (const [i, password] of [
      "correct horse battery",
      "пароль без цифр",
      "パスワードは長いです",
      "zzzzzzzzzzzzzzzz x",
    ].entries()) {
      const reply = await call("POST", CREATE, {
        body: { username: `user${i}`, email: `u${i}@example.com`, password },
      });
      expect(reply.status).toBe(201);
    }
  });

  test("normalises Unicode, so one password typed two ways logs in", async () => {
    const { call } = await testApp();
    const composed = "café au lait!"; // é as one code point
    const decomposed = "cafe\u0301 au lait!"; // e + combining accent
    expect(
      (await call("POST", CREATE, { body: { username: "ann", email: "a@b.co", password: composed } })).status,
    ).toBe(201);
    expect(
      (await call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password: decomposed } })).status,
    ).toBe(200);
  });
});
